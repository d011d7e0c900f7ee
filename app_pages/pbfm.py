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
with plain flow matching, flow matching plus lambda x residual (lambda 0.1 to 300), residual guidance at sampling and
PBFM without unrolling, each trained with three seeds on fields from the project's own solvers. **None of these
miniature models produces physical fields**: their residuals equal those of solver fields with white noise added to
u, of a fifth to a half of u's spread on Darcy and more than half on the heat equation (the table's
*noise-equivalent* column); the one exception, FM + 300 x residual, reaches a small residual by leaving the data
distribution.
""", details_md=r"""
Flow matching on the linear path $x_t=(1-t)x_0+t x_1$, target $x_1-x_0$. The residual loss is
$\mathbb{E}\,[t\cdot\mathrm{mean}|R(\hat x_1)|]$ where $\hat x_1$ integrates the learned field from $t$ to 1 in
$n$ Euler steps ($n$ = 1 to 4 over four stages of training, gradients through the steps) and $R$ is the solver's own
finite-difference residual on de-normalised fields (the solver's fields give $|R|\approx 10^{-13}$). ConFIG
(`conflictfree` package): with unit gradients $u_i$, $g_u=\mathrm{normalise}(\mathrm{pinv}([u_1,u_2]^\top)\mathbf 1)$,
$g=(\sum_i g_i^\top g_u)\,g_u$, equal positive cosine to both losses. The **distribution error** is the energy distance
of samples to 500 held-out solver fields (another data seed, never trained on) on **standardised channels** (each
channel divided by its held-out standard deviation: on raw Darcy fields log k, std 0.81, outweighs u, std 0.072, and a
raw distance hardly sees the physical channel); the table also gives it per channel and on raw fields. The
**noise-equivalent** std reads a residual as the std of white noise on u that, added to solver fields, gives the
same mean |residual| (both residuals are linear in u). For Darcy, the **solution error** compares a sample's u with
the solver's u for the sample's own log k (median relative RMS error; 0 for a physical field, 1 for u = 0). The grey
dotted line of the Pareto plot is solver fields plus white noise on u: up to about half of u's spread such fields
stay as close to the data as any model and have a smaller residual than most.
The models are MLPs with 3 hidden layers of 256 (the paper uses U-Nets and transformers on 2-D fields);
`python -m backend.train pbfm` trains them. Why they are not physical: the expander "Why are the samples not
physical?" compares wider, longer-trained and per-node-normalised models.
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
                    format_func=METHODS.label, help="lambda 30, 100, 300 and PBFM without unrolling are trained on "
                                                    "Darcy only; on the heat equation they are left out.")
    go = st.form_submit_button("Sample and score", icon=":material/play_arrow:", type="primary")

if go:
    skipped = [m for m in methods if m not in jobs.available(case)]
    if skipped:
        st.caption("No models for this PDE (left out): " + ", ".join(METHODS.label(m) for m in skipped))
    try:
        config = jobs.SampleConfig(case, int(n), int(steps), tuple(m for m in methods if m not in skipped),
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
    st.plotly_chart(figs.pareto(r["rows"], r.get("references", [])), key="pbfm_pareto_fig")
    rows = {row["method"]: row for row in r["rows"]}
    if (p := rows.get("pbfm")) and (f := rows.get("fm")):
        st.warning(f"Not physical: PBFM's mean |residual| {p['mean_residual']:.3g} equals solver fields with white "
                   f"noise of std {p['noise_std']:.3g} on u ({100 * p['noise_rel']:.0f} % of u's spread); flow "
                   f"matching's {f['mean_residual']:.3g} equals {f['noise_std']:.3g} ({100 * f['noise_rel']:.0f} %)."
                   + (f" A Darcy sample's u is {100 * p['solution_error']:.0f} % (PBFM) and "
                      f"{100 * f['solution_error']:.0f} % (FM) away from the solver's u for its own log k."
                      if p.get("solution_error") is not None else ""), icon=":material/warning:")
    ch = ["log k", "u"] if r["case"] == "darcy" else ["u"]
    table = pd.DataFrame(r["rows"]).drop(columns=["method"]).rename(columns={
        "energy_distance": "ED (standardised)", **{f"ed_channel_{i}": f"ED {c}" for i, c in enumerate(ch)},
        "energy_distance_raw": "ED (raw fields)", "noise_std": "noise-equivalent std",
        "noise_rel": "noise-equivalent / std(u)"})
    show_metrics_table(table, key="pbfm_table")
    st.caption(f"{r['n']} samples per model, {r['steps']} Euler steps, seeds {r['seeds']}, against 500 held-out "
               "solver fields; ED: energy distance (lower is closer to the data); sample_seconds: wall time to draw "
               "them on this machine (guidance needs a gradient per step). Pareto: no other method is better on both "
               "axes (seed means; the claims panel reads the front with intervals).")
    if refs := r.get("references"):
        st.caption("References (solver fields of another seed, same axes): " + "; ".join(
            f"{x['label']}: ED {x['energy_distance']:.3g}, mean |R| {x['mean_residual']:.2g}" for x in refs))
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

with st.expander("Why are the samples not physical? (Darcy, seed 0: capacity, training steps, normalisation)"):
    st.markdown("Flow matching and PBFM beside the same models trained wider (3 x 512), four times longer (8,000 "
                "steps) and with per-node normalisation (each node its own mean and scale, so the Dirichlet ends are "
                "exact and small-u nodes are not drowned by the channel's scale); `python -m backend.train pbfm "
                "--diagnostics` trains them. Training length matters most: flow matching trained four times longer "
                "comes close to the data and cuts the residual several times, yet its u is still further from the "
                "solver's than a physical field's would be; the shipped 2,000-step models are under-trained (the "
                "claim 'physical' in the panel above records the numbers).")
    if st.button("Evaluate the diagnostic models", key="pbfm_diag_go", icon=":material/troubleshoot:"):
        diag = run_job("PBFM diagnostics", jobs.run_diagnostics, jobs.DiagnosticsConfig(), time_cap_s=120)
        if diag is not None:
            res_all["diag"] = diag.to_json()
    if dg := res_all.get("diag"):
        show_metrics_table(pd.DataFrame(dg["rows"]).drop(columns=["method"]), key="pbfm_diag_table")

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
