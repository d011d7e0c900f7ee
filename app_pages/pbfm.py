"""PBFM: flow matching whose samples also satisfy a PDE, against plain FM, weighted residual losses and guidance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.physics.pbfm import jobs
from backend.physics.pbfm.inputs import PRESETS as CASES
from backend.physics.pbfm.pbfm import METHODS
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import pbfm as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("pbfm", r"""
A generative model of PDE solutions should produce fields that are both *typical* (close to the data distribution)
and *physical* (small PDE residual). **PBFM** trains flow matching with a second loss, the residual of the unrolled
one-step estimate, and combines the two gradients by **ConFIG** (a direction that improves both). Here it is compared
with plain flow matching, flow matching plus lambda x residual for five lambdas, and residual guidance at sampling,
each trained with three seeds on fields from the project's own solvers.
""", details_md=r"""
Flow matching on the linear path $x_t=(1-t)x_0+t x_1$, target $x_1-x_0$. The residual loss is
$\mathbb{E}\,[t\cdot\mathrm{mean}|R(\hat x_1)|]$ where $\hat x_1$ integrates the learned field from $t$ to 1 in
$n$ Euler steps ($n$ = 1 to 4 over four stages of training, gradients through the steps) and $R$ is the solver's own
finite-difference residual on de-normalised fields (the solver's fields give $|R|\approx 10^{-13}$). ConFIG
(`conflictfree` package): with unit gradients $u_i$, $g_u=\mathrm{normalise}(\mathrm{pinv}([u_1,u_2]^\top)\mathbf 1)$,
$g=(\sum_i g_i^\top g_u)\,g_u$, equal positive cosine to both losses. The **distribution error** is the energy distance
of samples to held-out solver fields (another data seed, never trained on). The models are MLPs with 3 hidden layers of
256 (the paper uses U-Nets and transformers on 2-D fields); `python -m backend.train pbfm` trains them.
""")
claims_panel("pbfm")
res_all: dict = st.session_state.setdefault("pbfm_result", {})

with st.form("pbfm_form"):
    c1, c2, c3, c4 = st.columns(4)
    case = bound(c1.selectbox, "PDE", list(CASES), key="pbfm_case", format_func=lambda c: CASES[c].label)
    n = bound(c2.select_slider, "Samples per model", [64, 128, 256, 512], 128, key="pbfm_n")
    steps = bound(c3.select_slider, "Euler steps", [10, 20, 50, 100], 50, key="pbfm_steps")
    all_seeds = bound(c4.checkbox, "All three seeds", value=True, key="pbfm_seeds",
                      help="Off: seed 0 only (faster); the Pareto plot then has no spread.")
    methods = bound(st.multiselect, "Methods", list(METHODS), list(METHODS), key="pbfm_methods",
                    format_func=METHODS.label)
    go = st.form_submit_button("Sample and score", icon=":material/play_arrow:", type="primary")

if go:
    try:
        config = jobs.SampleConfig(case, int(n), int(steps), tuple(methods),
                                   jobs.MODEL_SEEDS if all_seeds else jobs.MODEL_SEEDS[:1])
    except InputError as err:
        st.error(str(err))
        config = None
    res = None if config is None else run_job("PBFM sampling", jobs.run_sample, config, time_cap_s=600)
    if res is not None:
        out = res.to_json()
        res_all["run"] = out
        record_run("pbfm", {"case": out["case"], "n": out["n"], "steps": out["steps"], "seeds": len(out["seeds"])},
                   {f"residual {r['method']}": r["mean_residual"] for r in out["rows"]})

if r := res_all.get("run"):
    ex = {m: np.asarray(v) for m, v in r["examples"].items()}
    solver = np.asarray(r["solver"])
    st.plotly_chart(figs.pareto(r["rows"]), key="pbfm_pareto_fig")
    show_metrics_table(pd.DataFrame(r["rows"]).drop(columns=["method"]), key="pbfm_table")
    st.caption(f"{r['n']} samples per model, {r['steps']} Euler steps, seeds {r['seeds']}; sample_seconds: wall time "
               "to draw them on this machine (guidance needs a gradient per step). Pareto: no other method is better "
               "on both axes (seed means).")
    main_ex = {m: ex[m] for m in ex if METHODS.get(m).lam == 0}  # the weighted sums are in the Pareto plot
    if r["case"] == "darcy":
        st.plotly_chart(figs.darcy_samples(main_ex, solver), key="pbfm_samples_fig")
    else:
        st.plotly_chart(figs.heat_samples(main_ex, solver), key="pbfm_samples_fig")
    st.plotly_chart(figs.residual_maps({m: np.asarray(v) for m, v in r["example_residuals"].items()
                                        if m in main_ex}), key="pbfm_residual_fig")
    json_download("Download results (JSON)", {k: v for k, v in r.items() if k not in ("examples", "solver")}
                  | {"provenance": provenance(0, case=r["case"])}, "pbfm_scores.json", key="pbfm_dl_json")
    csv_download("Download per-seed scores (CSV)", pd.DataFrame(r["runs"]), "pbfm_runs.csv", key="pbfm_dl_csv")

with st.expander("Gradient dial: the two losses' gradients on a live training step"):
    if st.button("Compute on one batch", key="pbfm_dial_go", icon=":material/explore:"):
        dial = run_job("PBFM gradient dial", jobs.run_gradient_dial, jobs.DialConfig(case), time_cap_s=60)
        if dial is not None:
            res_all["dial"] = dial.to_json()
    if d := res_all.get("dial"):
        st.plotly_chart(figs.gradient_dial(d), key="pbfm_dial_fig")

with st.expander("Your own field: its residual and the nearest samples"):
    got = file_input("pde_field", "NPZ (array 'field') or CSV of one field", key="pbfm_upload",
                     help="Darcy: [2, 64] rows log k and u; heat: [1, 8, 32] (time levels x nodes); finite floats, "
                          "no object arrays; 2 MB.")
    if got is not None:
        from backend.physics.pbfm.evaluation import nearest_samples

        field = got[1]
        chk = jobs.run_residual(field, jobs.ResidualConfig())  # one field: quick, no job queue
        st.metric(f"Mean |residual| ({chk.case})", f"{chk.mean_residual:.4g}",
                  help=f"The solver's own fields: {chk.solver_mean_residual:.2g}")
        st.plotly_chart(figs.residual_maps({"your field": np.asarray(chk.residual)}), key="pbfm_upload_res_fig")
        if (r := res_all.get("run")) and r["case"] == chk.case:
            near = nearest_samples(field, {m: np.asarray(v) for m, v in r["examples"].items()}, k=1)
            st.caption("Nearest of the shown samples (Euclidean): "
                       + "; ".join(f"{METHODS.label(m)} #{i[0]}" for m, i in near.items()))
show_history("pbfm")
