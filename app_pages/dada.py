"""DADA: a parameter-free optimizer against learning-rate-tuned baselines on convex problems."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.optim.dada import jobs as J
from backend.optim.dada import problems as P
from backend.optim.dada.baselines import TUNED
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import dada as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("dada", r"""
**DADA** (Dual Averaging with Distance Adaptation) needs **no learning rate**: it sets its step from how far the
iterates have travelled from the start. **The race**: DADA and DoG run once; gradient descent and AdaGrad-norm run
once **per learning rate** of a 15-value grid (15x the gradient evaluations), and a slider shows how much they depend
on that choice.
""", details_md=r"""
DADA averages normalised gradients around the start $x_0$ and sets the step from how far the iterates have travelled:
$\bar r_k = \max(\bar r, \max_{t\le k}\|x_t - x_0\|)$, weights $a_k = \bar r_k/\|g_k\|$,
$x_{k+1} = \mathrm{proj}_Q\big(x_0 - \tfrac{1}{\beta_{k+1}}\sum_{i\le k} a_i g_i\big)$ with
$\beta_k = 2\sqrt2\,\sqrt{k+1}$. One setting works for nonsmooth, smooth and higher-order smooth convex problems, with
or without constraints. The initial guess $\bar r = 10^{-6}(1+\|x_0\|)$ is deliberately tiny: the estimate grows
geometrically, so a misjudgement $\rho$ costs about $\log^2\rho$ warm-up steps (the plateau at the start is that
warm-up, not a bug). The constants follow the project spec (see `backend/optim/dada/dada.py` for what was checked
against the paper).
""")
claims_panel("dada")
res_all: dict = st.session_state.setdefault("dada_result", {})

UPLOAD = "Upload a CSV"
c1, c2 = st.columns([1, 2])
problem = bound(c1.selectbox, "Problem", list(P.PROBLEMS), key="dada_problem", format_func=P.PROBLEMS.label)
table, dataset, shown = None, J.ProblemConfig.dataset, None
with_table = P.reads_table(problem)
if with_table:
    src = bound(c2.radio, "Data", [*P.DATASETS, UPLOAD], horizontal=True, key="dada_data",
                help="The first three ship with scikit-learn (no download).")
    if src == UPLOAD:
        with c2:
            got = file_input("table", "CSV with a header row: numeric feature columns, the label in the last column",
                             key="dada_upload",
                             help="10 to 100,000 rows, 2 to 50 classes, features x classes <= 10,000; 20 MB.")
        if got is not None:
            shown = got
            table = got[1]
    else:
        dataset = src
        shown = (f"sklearn:{src}", P.bundled_table(src))
    if shown is not None:
        name, t = shown
        st.caption(f"{name}: {t.X.shape[0]} rows, {t.X.shape[1] - 1} features (standardised) + bias, "
                   f"{len(t.classes)} classes: {', '.join(t.classes[:8])}.")
ready = not with_table or shown is not None

with st.form("dada_form"):
    c1, c2, c3, c4 = st.columns(4)
    dim = bound(c1.select_slider, "Dimension d", list(J.DIM_CHOICES), 100, key="dada_dim",
                disabled=with_table)
    iters = bound(c2.select_slider, "Iterations", list(J.ITER_CHOICES), 2000, key="dada_iters")
    constraint = bound(c3.selectbox, "Constraint", list(P.CONSTRAINTS), key="dada_constraint",
                       help="The worst-case chain is unconstrained by construction.")
    radius = bound(c4.number_input, "Box half-width / simplex sum", *J.RADIUS_RANGE, 1.0, key="dada_radius")
    c1, c2, c3, c4 = st.columns(4)
    kappa = bound(c1.select_slider, "Condition number (quadratic)", list(J.KAPPA_CHOICES), 1e4, key="dada_kappa",
                  format_func=lambda v: f"{v:.0e}")
    p_pow = bound(c2.select_slider, "Power p (chain)", list(J.P_CHOICES), 4, key="dada_p")
    chain = bound(c2.radio, "Chain variant", list(P.CHAIN_VARIANTS), horizontal=True, key="dada_chain",
                  help="dada: the paper's experiment, x0 = (1, ..., 1), x* = 0. nesterov: with -x_1, x*_i = d-i+1 "
                       "(much harder: one coordinate of progress per gradient).")
    lam = bound(c3.select_slider, "L2 coefficient (logistic)", list(J.LAM_CHOICES), 1e-3, key="dada_lam")
    log_rbar = bound(c4.slider, "log10 of the initial guess rbar (relative)", *J.LOG_RBAR_RANGE, -6, key="dada_rbar",
                     help="rbar = 10^x (1 + ||x0||); the paper's default is 1e-6.")
    sweep = bound(st.checkbox, "Also sweep rbar from 1e-8 to 10 (sensitivity)", value=True, key="dada_sweep")
    go = st.form_submit_button("Run the race", icon=":material/play_arrow:", type="primary", disabled=not ready)

if go and ready:
    try:
        configs = (J.ProblemConfig(problem, int(dim), constraint=constraint, radius=float(radius), kappa=float(kappa),
                                   p=float(p_pow), chain=chain, lam=float(lam), dataset=dataset),
                   J.RaceConfig(int(iters), rbar_rel=10.0**log_rbar, curve_points=1000,
                                sensitivity_grid=J.RBAR_GRID_DEFAULT if sweep else ()))
    except InputError as err:
        st.error(str(err))
        configs = None
    res = None if configs is None else run_job("DADA race", J.run_race, *configs, table, time_cap_s=300)
    if res is not None:
        out = res_all["race"] = res.to_json()
        finals = {f"final gap {row['key']}": row["final_gap"] for row in out["summary"]}
        spread = {}
        if sens := out.get("sensitivity"):
            spread = {"DADA rbar spread (x)": max(sens["finals"]["dada"]) / min(sens["finals"]["dada"])}
        record_run("dada", out["params"], {**finals, **spread})

if r := res_all.get("race"):
    pr = r["problem"]
    st.markdown(f"**{pr['name']}**, d = {pr['dim']}, constraint {pr['constraint']}; f* = {r['f_star']:.6g} "
                f"({pr['f_star_method']}); f(x0) - f* = {pr['f0_minus_fstar']:.4g}.")

    @st.fragment
    def race_view() -> None:
        tuned = [r["curves"][m] for m in TUNED if m in r["curves"]]
        lrs = tuned[0]["values"] if tuned else [1.0]
        lr = st.select_slider("Learning rate of GD and AdaGrad-norm", lrs, lrs[tuned[0]["best_index"] if tuned else 0],
                              format_func=lambda v: f"{v:.1e}", key="dada_lr")
        st.plotly_chart(figs.race(r, lr), key="dada_race_fig")
        c1, c2 = st.columns(2)
        c1.plotly_chart(figs.lr_sensitivity(r, lr), key="dada_lr_fig")
        c2.plotly_chart(figs.distance(r, r.get("dist_x0_xstar")), key="dada_rbar_fig")

    race_view()
    show_metrics_table(pd.DataFrame(r["summary"]).drop(columns=["key"]), key="dada_table")
    st.caption("final_gap: best (f - f*)/(f(x0) - f*) after the last iteration; iters_to_0.01: first iteration at or "
               "below 1e-2; GD/AdaGrad-norm: the best learning rate of the grid, chosen after the fact.")
    if s := r.get("sensitivity"):
        st.plotly_chart(figs.rbar_sensitivity(s["grid"], s["finals"]), key="dada_sens_fig")
        spread = max(s["finals"]["dada"]) / min(s["finals"]["dada"])
        st.caption(f"DADA's final gap varies by {spread:.1f}x over rbar in 1e-8..10 (claim: about one order of "
                   "magnitude at most).")
    json_download("Download results (JSON)", {**r, "provenance": provenance(0, **r["params"])}, "dada_race.json",
                  key="dada_dl_json")
    csv_download("Download summary (CSV)", pd.DataFrame(r["summary"]), "dada_summary.csv", key="dada_dl_csv")
    rows = {"iteration": r["iterations"]}
    for m, c in r["curves"].items():
        for v, g in zip(c["values"], c["gaps"]):
            rows[f"{m} {c['setting']}={v:.3g}"] = g
    csv_download("Download curves (CSV)", pd.DataFrame(rows), "dada_curves.csv", key="dada_dl_curves")
show_history("dada")
