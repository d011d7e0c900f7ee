"""CatalystBench: a shared LM backbone with task-routed heads vs text-only and single-task fine-tuning."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.data.catalystbench import inputs as I
from backend.data.catalystbench import jobs as J
from backend.errors import InputError
from ui.claims import claims_panel
from ui.figures import catalystbench as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("catalystbench", """
**MFT** (multi-head full-task fine-tuning) trains one shared LM backbone on every task of a mixed benchmark; a task-type
token routes the last hidden state to a classification MLP, a regression MLP or the LM head. Here the backbone is
SmolLM2-135M with LoRA on its last layer and the benchmark is built from real element data (`mendeleev`): three
regression targets, two classifications and extraction of a melting point from sentences; the page compares MFT with
single-task (ST), text-only (FT) and multi-head single-task (MST) fine-tuning and with gradient boosting and a regex.
""", details_md="""
**Benchmark.** 118 element records from `mendeleev`: Pauling electronegativity, log10 density and covalent radius
(regression, R^2), the element series (10 classes) and Goldschmidt class (5 classes) (accuracy), and the melting point
read from two generated sentences per element with distractor numbers (exact match). The input of every non-extraction
task is the same record sentence (name, symbol, atomic number, period, group, block, atomic weight); gradient boosting
gets those numbers as features. 30 % of the elements (35) are held out for every task. The average score is the mean
of the six task scores with each R^2 floored at 0 (a text answer such as "1111" for a log density would otherwise
make one seed's R^2 hugely negative and swamp the average); the per-task R^2 is shown unfloored.

**Methods.** The 29 lower layers of SmolLM2-135M are frozen and their output is cached; each method trains a LoRA
(rank 4 on the query and value projections of the last layer) and, for MST and MFT, an MLP head (hidden 16) per
classification and regression task on those states, for 3 epochs with Adam. ST and MST train one model per task; FT and
MFT one model for all tasks. Text answers (ST and FT everywhere, and the extraction task for every method) come from
the LM head: regression numbers are generated greedily and parsed; class names and extracted numbers are scored by exact
match of greedy decoding. MFT's loss is the weighted sum of the mean cross-entropy of the classification rows, the mean
squared error of the standardised regression targets and the mean token cross-entropy of the text rows (weights 1).

**Departures from the paper.** The paper fine-tunes ChemLLM-7B on catalysis literature and DFT data (Faradaic efficiency,
adsorption energy, d-band centre, ...) with LoRA r = 8 on the whole model, and grades text tasks with similarity
scores, LLM judges and experts. Here: a 135M backbone, LoRA on one layer, element properties instead of catalysis data,
and exact-match grading, 3 epochs. On one shared CPU thread each method x seed trained in 6-48 s (the text-output
methods spend another 20-60 s generating their regression answers at evaluation); caching the frozen layers' states
of all 759 rows took about 5 minutes once (`python -m backend.train catalystbench`, about 15 minutes in all).
""")
claims_panel("catalystbench")


@st.cache_resource(max_entries=1, show_spinner="Loading SmolLM2-135M")
def _lm():  # noqa: ANN202
    from backend.models.lm import load_causal_lm

    return load_causal_lm()


PRESET_NAMES = list(I.PRESETS)
SEED_CHOICES = list(J.SEEDS)
tab_bench, tab_pred = st.tabs(["Benchmark", "Your records and sentences"])

with tab_bench:
    preset = bound(st.selectbox, "Preset", PRESET_NAMES, key="catalystbench_preset")
    p = I.PRESETS[preset]
    with st.form("catalystbench_form"):
        c1, c2 = st.columns(2)
        methods = c1.multiselect("Methods", list(J.METHOD_NAMES), default=list(J.METHOD_NAMES),
                                 format_func=J.METHODS.label, key="catalystbench_methods")
        seeds = c2.multiselect("Seeds", list(J.SEEDS), default=list(p.get("seeds", J.SEEDS)), key="catalystbench_seeds")
        go = st.form_submit_button("Show the benchmark", icon=":material/science:", type="primary")
    if go:
        try:
            cfg = J.BenchmarkConfig(methods=tuple(methods), seeds=tuple(seeds), source=p["source"],
                                    elements=int(p.get("elements", 0)))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            lm = _lm() if cfg.source == "reevaluate" else None
            res = run_job("Benchmark", J.run_benchmark, cfg, lm, time_cap_s=1800)
            if res is not None:
                st.session_state["catalystbench_result"] = res.to_dict()
                record_run("catalystbench", {"preset": preset, "seeds": len(cfg.seeds)},
                           {f"{res.labels[m]} average": res.mean(m, "average") for m in res.scores})
    if r := st.session_state.get("catalystbench_result"):
        st.plotly_chart(figs.task_metrics(r), key="catalystbench_bars")
        rows = []
        for m, per in r["scores"].items():
            co = r["costs"].get(m, {})
            rows.append({"method": r["labels"][m],
                         **{t: round(sum(v) / len(v), 3) for t, v in per.items()},
                         "trainable parameters": co.get("trainable_parameters"),
                         "train s / seed": round(co.get("train_s", float("nan")), 1),
                         "estimated s / seed": round(co.get("estimate_s", float("nan")), 1)})
        show_metrics_table(rows, key="catalystbench_table")
        st.caption(f"{r['rows']} test rows; seeds {r['config']['seeds']}; source: {r['config']['source']}. "
                   "Costs on one CPU thread: training on cached states, with the estimate made before training.")
        if r["comparisons"] and len(r["config"]["seeds"]) > 1:
            st.plotly_chart(figs.gains(r), key="catalystbench_gains")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Benchmark (JSON)", r, "catalystbench.json", key="catalystbench_json")
        with d2:
            csv_download("Per-task metrics (CSV)", pd.DataFrame(rows), "catalystbench.csv", key="catalystbench_csv")
    show_history("catalystbench")

with tab_pred:
    st.markdown("Predictions of every method (one shipped seed) and of the baselines for element-like records and "
                f"for sentences that state a melting point (at most {J.MAX_RECORDS} records and "
                f"{J.MAX_SENTENCES} sentences).")
    got = file_input("element_records", "Records (CSV)", key="catalystbench_upload")
    recs = got[1] if got else None
    if recs is None:
        from backend.data.catalystbench.records import read_records

        recs = read_records(I.element_records(), name="the example records")
        st.caption("No upload: the example records (two real elements and an invented one).")
    st.dataframe(pd.DataFrame(recs), hide_index=True)
    text = st.text_area("Sentences (one per line)", "\n".join(I.EXAMPLE_SENTENCES), key="catalystbench_sentences")
    seed = bound(st.selectbox, "Seed", SEED_CHOICES, key="catalystbench_seed")
    if st.button("Predict", icon=":material/online_prediction:", key="catalystbench_predict"):
        try:
            cfg_p = J.PredictConfig(records=tuple(tuple(sorted(x.items())) for x in recs),
                                    sentences=tuple(s.strip() for s in text.splitlines() if s.strip()), seed=int(seed))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg_p = None
        if cfg_p is not None:
            res_p = run_job("Predicting", J.run_predict, cfg_p, _lm(), time_cap_s=600)
            if res_p is not None:
                st.session_state["catalystbench_pred"] = res_p.to_dict()
    if q := st.session_state.get("catalystbench_pred"):
        df = pd.DataFrame(q["rows"])
        wide = df.pivot_table(index=["input", "task"], columns="label", values="text", aggfunc="first").reset_index()
        st.dataframe(wide, hide_index=True)
        csv_download("Predictions (CSV)", df, "catalystbench_predictions.csv", key="catalystbench_pred_csv")
