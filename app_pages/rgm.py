"""RGM: a self-supervised process reward model on the policy's own hidden states."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.reasoning.rgm import inputs as I
from backend.reasoning.rgm import jobs as J
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import rgm as figs
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.reasoning import candidate_cache, domain_note, grammar_expander, tiny_reasoner
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("rgm", """
The **Reflective Generative Model** makes the policy its own process reward model: a small head (the **SPRM**) reads
the policy's penultimate-layer state at the end of every reasoning step and scores it, trained from final-answer
correctness alone with the *SPR loss*, which trains only the steps whose own verdict agrees with the outcome. A trace's
score is the geometric mean of its step scores; best-of-k picks the highest. Here the policy is the tiny reasoner.
""", details_md="""
**Steps.** The paper ends a step at `.\\n\\n` inside the thinking span; the tiny reasoner writes
`<think> a op b = c ; ... </think> answer`, so a step ends at each ` ;` and the last at `</think>`.

**Heads.** Linear(c, 2c) -> ReLU -> Dropout 0.5 -> Linear(2c, 1) on the penultimate layer (c = 192, 74k parameters),
trained on 3,200 sampled traces labelled only by their final answer, with the SPR loss and, as the baseline, plain BCE
that copies the outcome to every step; three training seeds each (`python -m backend.train rgm`). The first wrong
step of a trace is the first that departs from the grammar's gold solution; the AUROC measures how well step scores
separate the steps before it from the steps at and after it.

**Aggregations.** Geometric mean (the paper's), product, arithmetic mean, last step only (an outcome reward model).
A product punishes long traces, so it is compared with the geometric mean twice: on all traces (where length and
correctness are correlated) and on traces of one length only.
""")
claims_panel("rgm")
grammar_expander()


@st.cache_resource(max_entries=1, show_spinner="Loading the SPRM heads")
def _models():  # noqa: ANN202
    return tiny_reasoner(), J.load_heads()


MODES = ["Evaluate on problems", "Your question"]
mode = bound(st.radio, "Input", MODES, horizontal=True, key="rgm_mode")
if mode == MODES[0]:
    preset = bound(st.selectbox, "Preset", list(I.PRESETS), key="rgm_preset")
    p = I.PRESETS[preset]
    with st.form("rgm_eval_form"):
        c1, c2 = st.columns(2)
        problems = bound(c1.select_slider, "Problems", [10, 20, 40, 80], p["problems"], key="rgm_problems")
        k = bound(c2.select_slider, "k for best-of-k", [2, 4, 8, 16], p["k"], key="rgm_k")
        go = st.form_submit_button("Score and select", icon=":material/grading:", type="primary")
    if go:
        try:
            cfg = J.EvalConfig(**(p | {"problems": int(problems), "k": int(k)}))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["rgm_eval_config"] = cfg
            reasoner, heads = _models()
            res = run_job("SPRM evaluation", J.run_eval, cfg, reasoner, heads, candidate_cache(), time_cap_s=600)
            if res is not None:
                st.session_state["rgm_eval"] = res.to_dict()
                record_run("rgm", {"preset": preset, "problems": cfg.problems, "k": cfg.k},
                           {f"AUROC {n}": v for n, v in res.locate_auroc.items()}
                           | {f"{res.labels[n]} best-of-{cfg.k}": v[res.ks.index(cfg.k)] for n, v in res.bon.items()})
    if r := st.session_state.get("rgm_eval"):
        c = r["config"]
        a, b = st.columns(2)
        a.plotly_chart(figs.auroc_bars(r["locate_auroc"]), key="rgm_auroc")
        b.plotly_chart(figs.bon(r["ks"], r["bon"], r["labels"]), key="rgm_bon")
        st.plotly_chart(figs.strips(r["strips"], "Step scores of the traces of the first problems (SPR head, seed 0; "
                                                 "black: the first wrong step)"), key="rgm_strips")
        rows = [{"traces": name, **{r["labels"][a]: v for a, v in vals.items()}} for name, vals in r["by_length"].items()]
        st.caption(f"Best-of-{c['k']} accuracy by aggregation; correlation of trace length with correctness "
                   f"{r['length_correlation']:+.3f}; pass@1 of the traces {r['pass_at_1']:.3f}.")
        show_metrics_table(rows, key="rgm_gp")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Evaluation (JSON)", r | {"provenance": provenance(c["seed"], **{
                k: v for k, v in c.items() if k != "seed"})}, "rgm_eval.json",
                          key="rgm_json")
        with d2:
            csv_download("Best-of-k (CSV)", pd.DataFrame({"k": r["ks"], **{r["labels"][n]: v for n, v in
                                                                             r["bon"].items()}}),
                         "rgm_bon.csv", key="rgm_csv")
else:
    question = st.text_input("Question (in the tiny reasoner's grammar)", I.EXAMPLE_QUESTION, key="rgm_question")
    with st.form("rgm_q_form"):
        c1, c2, c3 = st.columns(3)
        n = bound(c1.select_slider, "Traces", [2, 4, 8, 16], 8, key="rgm_n")
        temp = bound(c2.select_slider, "Temperature", [0.6, 0.7, 0.8, 0.9, 1.0], 0.8, key="rgm_temp")
        head = bound(c3.selectbox, "Head", ["spr_s0", "spr_s1", "spr_s2", "bce_s0", "bce_s1", "bce_s2"],
                     key="rgm_head")
        go_q = st.form_submit_button("Sample and score", icon=":material/grading:", type="primary")
    if go_q:
        try:
            cfg_q = J.ScoreConfig(question, n=int(n), temperature=float(temp), head=head)
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg_q = None
        if cfg_q is not None:
            reasoner, heads = _models()
            res = run_job("Scoring", J.run_score, cfg_q, reasoner, heads, time_cap_s=300)
            if res is not None:
                st.session_state["rgm_q"] = res.to_dict()
    if q := st.session_state.get("rgm_q"):
        domain_note(q["domain"])
        rows = [{"problem": 0, "sample": i, "correct": None, "first_wrong": None, "scores": t["steps"]}
                for i, t in enumerate(q["traces"])]
        st.plotly_chart(figs.strips(rows, "Step scores of each trace"), key="rgm_q_strips")
        df = pd.DataFrame([{"#": i, "answer": t["answer"], **{q["labels"][a]: t[a] for a in q["picks"]},
                            "text": t["text"]} for i, t in enumerate(q["traces"])])
        show_metrics_table(df, key="rgm_q_table")
        st.caption("Picks: " + "; ".join(f"{q['labels'][a]}: #{i}" for a, i in q["picks"].items())
                   + f". The SPRM costs {q['costs']['sprm_ms_per_trace']:.2f} ms per trace on top of generation "
                   f"({q['costs']['sprm_parameters']:,} parameters).")
        json_download("Traces and scores (JSON)", q, "rgm_question.json", key="rgm_q_json")
show_history("rgm")
