"""Dual randomized smoothing: a per-input noise level, chosen and certified by a second smoothed model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.robustness.dualrs import inputs as I
from backend.robustness.dualrs import jobs as J
from backend.robustness.dualrs.configs import CertifyConfig, TrainConfig
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import dualrs as figs
from ui.inputs import file_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header(
    "dualrs",
    r"""
**Randomized smoothing** classifies $x$ by the majority vote of a base model under Gaussian noise of level $\sigma$
and certifies an L2 radius around it; a small $\sigma$ is accurate but certifies little, a large one blurs fine
structure. **Dual RS** lets a second smoothed model pick $\sigma$ per input and certifies that choice too; the final
radius is the smaller of the two certificates.
""",
    details_md=r"""
**Randomized smoothing** (Cohen et al.) classifies $x$ by the majority vote of a base model on $x+\delta$,
$\delta\sim N(0,\sigma^2 I)$, and certifies an L2 radius $R=\sigma\,\Phi^{-1}(\underline{p_A})$ from a Clopper-Pearson
lower bound on the top vote (CERTIFY: $n_0$ samples pick the class, $n$ fresh samples bound it). A small $\sigma$ is
accurate but certifies only small radii; a large $\sigma$ certifies large radii but blurs fine structure. **Dual RS**
lets $\sigma$ depend on the input: a *variance estimator*, itself smoothed at $\sigma_e \ge \max\Sigma$, picks
$\sigma(x)\in\Sigma$ and certifies that this choice is constant within $R_\sigma$; the classifier smoothed at that
$\sigma$ certifies $R_c$. The final radius is $\min(R_\sigma, R_c)$, each stage at $\alpha/2$ (union bound).

**What you see**: one small MLP per $\sigma$ is trained under that noise (these are also the global-$\sigma$ baselines),
then the estimator on soft labels $\propto e^{R_c(x,\sigma_i)}$ with class-balance weights and consistency
regularisation (the paper's recipe). The plane is coloured by the chosen $\sigma$; click a test point (or pick its
number) to draw its two certified discs. The curves compare certified accuracy; the attack panel shows the lowest
votes that PGD + random search reach inside each certified ball (the certificate says they stay above 1/2).
""",
)
claims_panel("dualrs")
res_all: dict = st.session_state.setdefault("dualrs_result", {})

c1, c2 = st.columns([1, 2])
source = bound(c1.radio,
    "Data",
    [*I.PRESETS, "Upload a CSV"],
    key="dualrs_source",
    format_func=lambda s: s if s == "Upload a CSV" else f"preset: {s}",
)
data = None
if source == "Upload a CSV":
    with c2:
        got = file_input(
            "points2d",
            "CSV with columns x, y, label (header optional)",
            key="dualrs_upload",
            help="20..20,000 rows, 2..10 classes with >= 5 rows each; 5 MB. Features are "
            "centred and divided by one scale; radii are in those units.",
        )
    if got is not None:
        data = got[1]
        c2.caption(
            f"{got[0]}: {len(data.x_train)} train / {len(data.x_test)} test points, classes "
            f"{', '.join(data.class_names)}; scale {data.scale:.4g} (radius x scale = your units)."
        )
else:
    c2.caption(I.PRESETS.entry(source).about)

SIZES = {
    "Light: 100 test points, no attack check": {"dualrs_test": 100, "dualrs_attack": False},
    "Full: 200 test points and the attack check": {"dualrs_test": 200, "dualrs_attack": True},
}
preset_choice("dualrs", SIZES, horizontal=True,
              help="Light is the default; Full adds PGD + random search inside every certified ball (about twice the "
                   "time).")

with st.form("dualrs_form"):
    c1, c2, c3, c4 = st.columns(4)
    sigmas = bound(c1.multiselect,
        "Noise levels Sigma", list(J.SIGMA_CHOICES), list(TrainConfig.sigmas), key="dualrs_sigmas"
    )
    n = bound(c2.select_slider,
        "CERTIFY samples n",
        list(J.N_CHOICES),
        2000,
        key="dualrs_n",
        help="The paper uses n = 10,000 (slower here: about 5x the time of 2,000).",
    )
    alpha = bound(c3.select_slider, "alpha", list(J.ALPHA_CHOICES), 0.001, key="dualrs_alpha")
    n_test = bound(c4.select_slider, "Test points", list(J.TEST_CHOICES), 100, key="dualrs_test")
    c1, c2 = st.columns(2)
    seed = bound(c1.number_input, "Seed", 0, 10_000, 0, key="dualrs_seed")
    do_attack = bound(c2.checkbox,
        "Run the attack check (PGD + random search in each certified ball)", False, key="dualrs_attack"
    )
    go = st.form_submit_button(
        "Train and certify",
        icon=":material/play_arrow:",
        type="primary",
        disabled=source == "Upload a CSV" and data is None,
    )


if go:
    try:  # the job imports torch when it runs, so that opening the page stays instant
        config = J.RunConfig(J.RunConfig.data if data is not None else source,
                             TrainConfig(sigmas=tuple(sorted(float(s) for s in sigmas))),
                             CertifyConfig(n=int(n), alpha=float(alpha)), max_test=int(n_test),
                             attack=bool(do_attack), seed=int(seed))
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        config = None
    res = None if config is None else run_job("Dual RS: train and certify", J.run_certify, data, config,
                                              time_cap_s=600)
    if res is not None:
        out = res_all["run"] = res.to_dict()
        acc = {f"{row['method']} ACR": row["average_certified_radius"] for row in out["summary"]["table"]}
        record_run("dualrs", {"data": source, "sigmas": sorted(sigmas), "n": int(n), "alpha": float(alpha),
                              "test points": int(n_test), "attack check": bool(do_attack)},
                   {**acc, "share of radii dual >= best":
                    out["summary"]["dual_vs_best_single"]["share_of_radii_where_dual_ge_best"]}, seed=int(seed))

if r := res_all.get("run"):
    from backend.robustness.dualrs.dualrs import METHODS  # torch: already loaded by the job that made the result

    s = r["summary"]
    st.markdown(
        f"**{r['dataset']}**: Sigma = {r['sigmas']}, sigma_e = {r['sigma_e']:g}, {len(r['y_test'])} test "
        f"points. Dual RS >= the best single sigma on "
        f"**{100 * s['dual_vs_best_single']['share_of_radii_where_dual_ge_best']:.0f}%** of the radius grid."
    )

    @st.fragment
    def plane_view() -> None:
        sel = st.session_state.get("dualrs_plane")
        pts = (sel or {}).get("selection", {}).get("points", []) if isinstance(sel, dict) else []
        picked = [p.get("customdata") for p in pts if p.get("customdata") is not None]
        if picked and picked != st.session_state.get("dualrs_last_pick"):  # a new click on the plane wins once
            st.session_state["dualrs_last_pick"] = picked
            st.session_state["dualrs_point"] = int(np.ravel(picked[0])[0])
        idx = st.number_input("Test point #", 0, len(r["y_test"]) - 1, key="dualrs_point")
        st.plotly_chart(figs.plane(r, int(idx)), key="dualrs_plane", on_select="rerun", selection_mode="points")
        d = r["dual"]
        sig = "abstain" if d["sigma_idx"][idx] < 0 else f"{r['sigmas'][d['sigma_idx'][idx]]:g}"
        rows = [
            {
                "method": METHODS.label("dual"),
                "sigma": sig,
                "prediction": int(d["pred"][idx]),
                "R_sigma": d["r_sigma"][idx],
                "R_c": d["r_c"][idx],
                "radius": d["radius"][idx],
            }
        ]
        rows += [
            {
                "method": f"{METHODS.label('global')} sigma={k:g}",
                "sigma": f"{k:g}",
                "prediction": int(b["pred"][idx]),
                "radius": b["radius"][idx],
            }
            for k, b in r["baselines"].items()
        ]
        st.caption(
            f"Test point #{idx} at ({r['x_test'][idx][0]:.3f}, {r['x_test'][idx][1]:.3f}), true class "
            f"{int(r['y_test'][idx])} (prediction -1 = abstain)."
        )
        show_metrics_table(rows, key="dualrs_point_table")

    plane_view()
    st.plotly_chart(figs.curves(r["radii"], r["curves"]), key="dualrs_curves")
    table = pd.DataFrame(s["table"])
    table["samples per point"] = [r["samples_per_point"][m] for m in table["method"]]
    show_metrics_table(table, key="dualrs_table")
    st.caption(
        f"Training: {s['timings_s']['train experts']:.1f} s for {len(r['sigmas'])} experts, "
        f"{s['timings_s']['train estimator']:.1f} s for the estimator; {s['parameters']} parameters. "
        f"Share of test points routed to each sigma: {s['chosen_sigma_share_test']}."
    )
    if a := r.get("attack"):
        st.plotly_chart(
            figs.attack_margins(a["radius"], a["class_vote"], a["sigma_vote"], a["flipped"], a["summary"]["factor"]),
            key="dualrs_attack_fig",
        )
        sa = a["summary"]
        st.caption(
            f"Attack: {sa['attacked_points']} certified points, {sa['flips']} confirmed flips "
            f"({sa['raw_flips']} raw Monte Carlo flips), lowest class vote {sa['min_class_vote']}, "
            f"lowest sigma vote {sa['min_sigma_vote']}, {sa['seconds']} s."
        )
    per_point = pd.DataFrame(
        {
            "x": r["x_test"][:, 0],
            "y": r["x_test"][:, 1],
            "label": r["y_test"],
            **{f"dual {k}": v for k, v in r["dual"].items()},
            **{f"sigma={k:g} {f}": v for k, b in r["baselines"].items() for f, v in b.items()},
        }
    )
    json_download(
        "Download results (JSON)",
        {
            **s,
            "curves": {"radius": r["radii"], **r["curves"]},
            "attack": (r.get("attack") or {}).get("summary"),
            "provenance": provenance(r["seed"], dataset=r["dataset"], **s["certify"]),
        },
        "dualrs_results.json",
        key="dualrs_dl_json",
    )
    csv_download("Download per-point certificates (CSV)", per_point, "dualrs_points.csv", key="dualrs_dl_csv")
    csv_download("Download the metrics table (CSV)", table, "dualrs_table.csv", key="dualrs_dl_table")
show_history("dualrs")
