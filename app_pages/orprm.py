"""OR-PRM: gates that clean operations-research data, and a step-level reward model for best-of-N."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.reasoning.orprm import inputs as I
from backend.reasoning.orprm import jobs as J
from backend.reasoning.orprm.modeller import FLAWS, kinds
from backend.reasoning.orprm.select import SELECTORS
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import orprm as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("orprm", """
**OR-PRM** cleans operations-research training data with three gates (the model executes; its solution satisfies the
problem's constraints and reproduces the recorded optimum; a judge checks the formulation) and trains a *process
reward model* that scores each modelling step, to pick the best of N candidate formulations. Here the problems come
from six templates with exact optima (HiGHS in scipy) and a stochastic modeller, not an LLM, writes the formulations
with flaws at rates you set.
""", details_md="""
**Formulations** are in the paper's five-tuple form: sets, parameters, variables, objective, constraints; each is
shown as structured text and solved as an executable model (`scipy.optimize.milp`).

**The modeller** stands in for an LLM modeller: it writes each problem's formulation, at the chosen rate with one flaw
(wrong objective sense, a missing constraint, a unit error, a wrong recorded optimum, a wrong variable domain, swapped
coefficients), and half the time rewrites it in an equivalent way (blocks reordered, a block in other units, a
redundant bound), as real modellers do.

**Gates.** Gate 1 compiles and solves. Gate 2 checks the solver's solution against every constraint the problem
states and the recorded optimum against the stated objective there (an LLM does this in the paper). Gate 3 stands in
for the paper's GPT-4o judge: a structural comparison with the problem's entities that reads no numbers, so it also
rejects right but rewritten formulations. Gates 1 and 2 must catch every wrong optimum from a missing constraint or a
misrecording (a relaxation's wrong optimum breaks a stated constraint); unit errors, swaps and tightened domains can
slip through all three.

**The PRM** is discriminative here (generative in the paper): a logistic head on 20 features of each step read against
the problem (numbers found and in place, structure, coverage of the stated constraints, the solve's outcome, and their
running minimum), trained on step labels that turn 0 at the first flaw (`python -m backend.train orprm`, three
seeds) with four flaw kinds; domain errors and swaps are held out for best-of-N. A candidate's score is its weakest step.
""")
claims_panel("orprm")


@st.cache_resource(max_entries=3, show_spinner="Loading the reward model")
def _prm(seed: int):  # noqa: ANN202
    return J.load_prm(seed)


def _kinds_picker(spec: str, key: str) -> str:
    chosen = st.multiselect("Flaw kinds", list(FLAWS), kinds(spec), format_func=FLAWS.label, key=key)
    return ",".join(chosen) if chosen else ""


MODES = ["Clean a dataset", "Best-of-N with the PRM", "Your model"]
mode = bound(st.radio, "Input", MODES, horizontal=True, key="orprm_mode")

if mode == MODES[0]:
    preset = bound(st.selectbox, "Preset", list(I.PRESETS), key="orprm_preset")
    p = I.PRESETS[preset]
    with st.form("orprm_clean_form"):
        c1, c2, c3 = st.columns(3)
        samples = bound(c1.select_slider, "Samples", [60, 100, 150, 200, 300, 600], p["samples"], key="orprm_samples")
        rate = bound(c2.slider, "Share of flawed formulations", 0.0, 1.0, p["flaw_rate"], 0.02, key="orprm_rate")
        variation = bound(c3.slider, "Share of equivalent rewritings", 0.0, 1.0, 0.5, 0.05, key="orprm_var")
        picked = _kinds_picker(p["kinds"], f"orprm_kinds_{preset}")
        go = st.form_submit_button("Run the gates", icon=":material/filter_alt:", type="primary")
    if go:
        try:
            cfg = J.CleanConfig(**(p | {"samples": int(samples), "flaw_rate": float(rate), "kinds": picked,
                                        "variation": float(variation)}))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["orprm_clean_config"] = cfg
            res = run_job("Gates", J.run_clean, cfg, time_cap_s=300)
            if res is not None:
                st.session_state["orprm_clean"] = res.to_dict()
                record_run("orprm", {"samples": cfg.samples, "rate": cfg.flaw_rate, "kinds": cfg.kinds},
                           {"corrupted": res.corrupted, "kept": res.kept, "kept flawed": res.kept_flawed})
    if r := st.session_state.get("orprm_clean"):
        m = st.columns(5)
        for col, (lab, v) in zip(m, [("samples", r["samples"]), ("flawed", r["flawed"]),
                                     ("wrong recorded optimum", r["corrupted"]), ("kept by the gates", r["kept"]),
                                     ("flawed among kept", r["kept_flawed"])], strict=True):
            col.metric(lab, v)
        st.plotly_chart(figs.sankey(r), key="orprm_sankey")
        st.markdown("**Which gate catches which flaw** (each gate judged on its own; cells: rejected / samples, and "
                    "corrupted labels that gates 1-2 miss / corrupted labels)")
        st.plotly_chart(figs.gate_matrix(r), key="orprm_matrix")
        df = pd.DataFrame(r["table"]).drop(columns=["kind"]).set_index("label").reset_index()
        show_metrics_table(df, key="orprm_table")
        co = r["costs"]
        st.caption(f"Costs per sample: gate 1 {co['execution_ms_per_sample']:.2f} ms (solving included when the "
                   f"modeller's solution is not reused), gate 2 {co['feasibility_ms_per_sample']:.2f} ms, gate 3 "
                   f"{co['judge_ms_per_sample']:.3f} ms; writing the dataset {co['generation_s']:.1f} s.")
        with st.expander("Rejected examples with the gate's reason"):
            for e in r["examples"]:
                st.markdown(f"**{r['labels'][e['kind']]}** ({e['problem']}; recorded {e['label']:g}, optimum "
                            f"{e['optimum']:g}): rejected by {r['gate_labels'][e['gate']]}: {e['reason']}  \n"
                            f"_{e['text'][:400]}_")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Gate counts (JSON)", r | {"provenance": provenance(r["config"]["seed"], **{
                k: v for k, v in r["config"].items() if k != "seed"})},
                          "orprm_clean.json", key="orprm_clean_json")
        with d2:
            csv_download("Table (CSV)", df, "orprm_gates.csv", key="orprm_clean_csv")
elif mode == MODES[1]:
    preset = bound(st.selectbox, "Preset", list(I.BON_PRESETS), key="orprm_bon_preset")
    p = I.BON_PRESETS[preset]
    with st.form("orprm_bon_form"):
        c1, c2, c3, c4 = st.columns(4)
        n = bound(c1.select_slider, "N candidates", [4, 8, 16, 32], p["n"], key="orprm_n")
        problems = bound(c2.select_slider, "Problems", [10, 20, 30, 40, 80], p["problems"], key="orprm_problems")
        rate = bound(c3.slider, "Share of flawed candidates", 0.0, 1.0, 0.7, 0.05, key="orprm_bon_rate")
        seed = bound(c4.selectbox, "PRM training seed", list(J.PRM_SEEDS), key="orprm_prm_seed")
        picked = _kinds_picker(p["kinds"], f"orprm_bon_kinds_{preset}")
        go = st.form_submit_button("Select the best of N", icon=":material/checklist:", type="primary")
    if go:
        try:
            cfg = J.BonConfig(**(p | {"n": int(n), "problems": int(problems), "flaw_rate": float(rate),
                                      "kinds": picked, "prm_seed": int(seed)}))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["orprm_bon_config"] = cfg
            res = run_job("Best-of-N", J.run_bon, cfg, _prm(cfg.prm_seed), time_cap_s=300)
            if res is not None:
                st.session_state["orprm_bon"] = res.to_dict()
                record_run("orprm", {"N": cfg.n, "problems": cfg.problems, "kinds": cfg.kinds},
                           {f"{SELECTORS.label(k)} BoN@{cfg.n}": v[-1] for k, v in res.curves.items()})
    if r := st.session_state.get("orprm_bon"):
        c = r["config"]
        st.plotly_chart(figs.bon_curves(r, f"{c['problems']} problems, flaw kinds {c['kinds']}"), key="orprm_curves")
        ns = r["ns"]
        cols = [x for x in (1, 2, 4, 8, 16, 32) if x in ns]
        show_metrics_table([{"selector": r["labels"][k], **{f"BoN@{x}": v[ns.index(x)] for x in cols}}
                            for k, v in r["curves"].items()], key="orprm_bon_table")
        co = r["costs"]
        st.caption(f"pass@1 {r['pass_at_1']:.3f}; PRM step AUROC {r['step_auroc']:.3f}, answer AUROC "
                   f"{r['answer_auroc']:.3f}. Per candidate: gates {co['gates_ms_per_candidate']:.2f} ms, PRM "
                   f"{co['prm_ms_per_candidate']:.2f} ms ({co['prm_parameters']} parameters). Candidates: "
                   + ", ".join(f"{FLAWS.label(k)} {v}" for k, v in r["flaw_counts"].items()))
        ex = r["examples"]
        a, b = st.columns(2)
        pi = a.selectbox("Problem", range(len(ex)), format_func=lambda i: ex[i]["problem"], key="orprm_ex")
        cands = ex[pi]["candidates"]
        ci = b.selectbox("Candidate", range(len(cands)), key="orprm_cand", format_func=lambda j: (
            f"#{j}: {cands[j]['flaw_label']}, PRM {cands[j]['prm']:.3f}, {'right' if cands[j]['correct'] else 'wrong'}"))
        st.markdown(f"_{ex[pi]['text']}_ (optimum {ex[pi]['optimum']:g})")
        st.plotly_chart(figs.step_scores(cands[ci]), key="orprm_steps")
        st.code("\n".join(s["text"] for s in cands[ci]["steps"]), language=None)
        json_download("Curves and examples (JSON)", r | {"provenance": provenance(c["seed"], **{
            k: v for k, v in c.items() if k != "seed"})}, "orprm_bon.json", key="orprm_bon_json")
else:
    up = file_input("lp_json", "Your model (five-tuple JSON)", "orprm_upload")
    st.caption(f"Limits: {I.KINDS[0].limits}. Infeasible or unbounded models are refused with the reason.")
    text = st.text_area("Model (JSON: sets, parameters, variables, objective, constraints, optional label)",
                        json.dumps(up[1], indent=1) if up else I.EXAMPLE_LP, height=260, key="orprm_text")
    if st.button("Validate and solve", icon=":material/play_arrow:", type="primary", key="orprm_lp_go"):
        try:
            cfg = J.LpConfig(text, name=up[0] if up else "the model")
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            res = run_job("Solving", J.run_lp, cfg, time_cap_s=60)
            st.session_state["orprm_lp"] = res.to_dict() if res is not None else None
    if q := st.session_state.get("orprm_lp"):
        st.code("\n".join(s["text"] for s in q["steps"]), language=None)
        st.markdown(f"**Optimum {q['objective']:.6g}** ({q['size']['variables']} variables, "
                    f"{q['size']['integer_variables']} integer, {q['size']['rows']} rows; {q['seconds']:.3f} s)")
        for g in q["gates"].values():
            (st.success if g["passed"] else st.warning)(f"{g['label']}: {g['reason']}")
        show_metrics_table(q["solution"], key="orprm_solution")
        json_download("Model, solution and verdicts (JSON)", q, "orprm_model.json", key="orprm_lp_json")
show_history("orprm")
