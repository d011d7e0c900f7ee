"""Watermark-based attribution (arXiv 2404.04254): one watermark per user, bounds-optimal codes, attribution among many
users after post-processing. Thin page: inputs -> backend jobs (backend.watermark.attribution.jobs) -> figures."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st
from PIL import Image

from backend.errors import InputError
from backend.io import ImageLimits
from backend.runtime import ASSETS, provenance
from backend.watermark import photo_eval as PE
from backend.watermark.attacks import ATTACKS
from backend.watermark.attribution import bounds as A
from backend.watermark.attribution import inputs, jobs
from backend.watermark.attribution.users import UserRegistry
from backend.watermark.codes import STRATEGIES
from backend.watermark.registry import BACKENDS
from ui.claims import claims_panel
from ui.figures import attribution as fig
from ui.inputs import image_input
from ui.layout import csv_download, image_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("attribution", """
A service gives **every user their own n-bit watermark** and embeds it in everything the user generates. For a suspect
image it decodes the bits, **detects** (is the best bitwise accuracy over all users >= tau?) and **attributes** (to
the best-matching user). The paper bounds both rates from the watermark's bit accuracy and the users' pairwise
distances, and picks the codes (A-BSTA) that maximise those bounds.
""", details_md="""
Two watermarks run underneath: the lab's own
**TinyHiDDeN** (64 bits; a HiDDeN-style encoder/decoder whose code repeats as a periodic tile so that the decoder can
re-synchronise after crops; trained offline on scikit-image photos and procedural images, evaluated on held-out photos:
*astronaut, camera, coffee, chelsea, rocket*) and the classical **dwtDctSvd / dwtDct** of `invisible-watermark`.
tau is set from a target false-detection rate with the paper's Thm 3 bound and shown with every result. A-BSTA serves
up to 10,000 users (it grows superlinearly); a million users use random codes.
""")
claims_panel("attribution")
LIMITS = ImageLimits(max_bytes=10 * 2**20, max_pixels=4_200_000, max_side=4096, min_side=32)
try:
    reg = UserRegistry()
except InputError as err:  # a corrupt database file: say so instead of failing the page
    st.error(f"{err} The page reads the file named by $METHOD_LAB_ATTRIBUTION_DB (default: the user cache).")
    st.stop()
presets = {name: (lambda n=name: Image.fromarray(inputs.preset_image(n))) for name in inputs.PRESETS}
tab_embed, tab_users, tab_eval, tab_theory = st.tabs(["Embed and attribute", "Users", "Evaluation", "Bounds"])

with tab_users:
    st.caption(f"Users database (SQLite): `{reg.path}` · {reg.count():,} users · {reg.n_bits}-bit codes · "
               f"{reg.strategies() or 'no users yet'}")
    with st.form("attr_create"):
        c1, c2 = st.columns(2)
        count = c1.number_input("New users", 1, 1_000_000, 1000, step=100, key="attr_new_users")
        strategy = c2.selectbox("Code selection", list(STRATEGIES), format_func=STRATEGIES.label, key="attr_strategy",
                                help="A-BSTA grows superlinearly: up to 10,000 users here. A million users use random "
                                     "codes (seconds).")
        create = st.form_submit_button("Create users", icon=":material/group_add:")
    if create and (made := run_job("Creating users", jobs.run_create_users, reg.path,
                                   jobs.CreateUsersConfig(int(count), strategy), time_cap_s=600)):
        st.success(f"Created users {made.first_id}-{made.last_id} ({strategy}); {made.total_users:,} users in total.")
    if reg.count():
        show_metrics_table([{"id": u.id, "code (hex)": u.hex(reg.n_bits), "strategy": u.strategy}
                            for u in reg.list(10)], key="attr_users_tbl")
    with st.form("attr_pool"):
        n_cmp = st.slider("Compare strategies at N users (n = 64)", 100, 3000, 1000, 100, key="attr_pool_n")
        compare = st.form_submit_button("Compare code pools", icon=":material/compare:")
    if compare and (pools := run_job("Selecting codes", jobs.run_compare_pools, jobs.ComparePoolsConfig(int(n_cmp)))):
        st.session_state["attribution_pools"] = {k: (np.asarray(pools.counts[k]), pools.max_ba[k], pools.seconds[k])
                                                 for k in pools.counts}
    if pools_ := st.session_state.get("attribution_pools"):
        st.plotly_chart(fig.pairwise_histogram({k: v[0] for k, v in pools_.items()}, 64,
                                               {k: v[1] for k, v in pools_.items()}), key="attr_pool_fig")

with tab_embed:
    label, pil = image_input("attr_img", presets, LIMITS)
    c1, c2, c3 = st.columns(3)
    backend = bound(c1.selectbox, "Watermark", [BACKENDS[k].name for k in BACKENDS], format_func=BACKENDS.label,
                    key="attribution_backend")
    psnr_db = bound(c2.slider, "PSNR budget (learned, dB)", 30.0, 44.0, 36.0, 0.5, disabled=not BACKENDS[backend].learned,
                    key="attribution_psnr")
    fpr = bound(c3.select_slider, "Target false-detection rate", [1e-2, 1e-3, 1e-4, 1e-5, 1e-6], 1e-4,
                key="attribution_fpr")
    with st.form("attr_run"):
        n_users = reg.count()
        uid = bound(st.number_input, f"User id (1-{max(n_users, 1):,}; create users in the Users tab)", 1,
                    max(n_users, 1), min(17, max(n_users, 1)), key="attribution_uid")
        cols = st.columns(4)
        chain = []
        for i, name in enumerate(["jpeg", "resize", "crop", "noise"]):
            a = ATTACKS[name]
            v = bound(cols[i].slider, f"{name} ({a.unit})", float(a.low), float(a.high), float(a.identity),
                      key=f"attribution_{name}")
            if v != a.identity:
                chain.append(f"{name}:{v:g}")
        adv = bound(st.selectbox, "Adversarial post-processing", ["none", "wevade-bq:300", "wevade-w:4"],
                    key="attribution_adv",
                    help="black-box with a 300-query budget, or white-box PGD (learned only) at eps 4/255")
        if adv != "none":
            chain.append(adv)
        go_ = st.form_submit_button("Embed, attack, attribute", icon=":material/play_arrow:", type="primary",
                                    disabled=pil is None)
    if go_ and pil is not None:
        if n_users == 0:
            run_job("Creating 1,000 users (A-BSTA)", jobs.run_create_users, reg.path,
                    jobs.CreateUsersConfig(1000, jobs.DEFAULT_STRATEGY))
        try:
            config = jobs.TraceConfig(user=int(uid), backend=backend, psnr=float(psnr_db),
                                      attack="+".join(chain) or "none", target_fpr=float(fpr))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            config = None
        res = None if config is None else run_job("Embedding and attributing", jobs.run_trace, np.asarray(pil),
                                                  reg.pool(), config)
        if res:
            res = asdict(res)
            st.session_state["attribution_result"] = res
            record_run("attribution", {"image": label, "backend": backend, "PSNR budget": psnr_db, "FPR": fpr,
                                       "user": int(uid), "attack": "+".join(chain) or "none"},
                       {"bit accuracy": res["bit_accuracy"], "PSNR (dB)": res["psnr"],
                        "attributed correctly": float(res["detected"] and res["attributed_user"] == res["user_id"]),
                        "tau": res["tau"]})
    if r := st.session_state.get("attribution_result"):
        att = r["attacked"]
        st.plotly_chart(fig.image_row({"original": r["original"], "watermarked": r["watermarked"],
                                       "residual (amplified)": r["residual"], f"after {r['attack']}": att}),
                        key="attr_imgs")
        verdict = (f"detected, attributed to user {r['attributed_user']}" if r["detected"] else "not detected")
        (st.success if r["detected"] and r["attributed_user"] == r["user_id"] else st.warning)(
            f"{verdict} · p-value {r['p_value']:.2e} (chance that clean content matches some user this well) · "
            f"tau = {r['tau']:.4f} ({r['tau_bits']} of {r['n_bits']} bits) for {r['num_users']:,} users")
        show_metrics_table([{"backend": r["backend_label"], "PSNR (dB)": round(r["psnr"], 2),
                             "SSIM": round(r["ssim"], 4), "bit accuracy": r["bit_accuracy"],
                             "embed (ms)": round(1e3 * r["seconds"]["embed"], 1),
                             "decode (ms)": round(1e3 * r["seconds"]["decode"], 1),
                             "match (ms)": round(1e3 * r["seconds"]["match"], 2), "queries": r["queries"]}],
                           key="attr_metrics")
        c1, c2 = st.columns(2)
        c1.plotly_chart(fig.topk_bar(r["top_users"], r["top_scores"], r["tau"], r["user_id"]), key="attr_top")
        c2.plotly_chart(fig.bit_grid(r["decoded"], r["reference"]), key="attr_bits")
        image_download("Watermarked image (PNG)", Image.fromarray(r["watermarked"]), "watermarked.png", "attr_png")
        report = {k: v for k, v in r.items() if k not in ("original", "watermarked", "residual", "attacked")}
        report["provenance"] = provenance(0, [ASSETS / "attribution_tinyhidden.safetensors"],
                                          backend=r["backend"], attack=r["attack"], user=r["user_id"])
        json_download("Report (JSON)", report, "attribution_report.json", "attr_json")

with tab_eval:
    shipped = ASSETS / "attribution_eval.json"
    if shipped.is_file():
        ev = json.loads(shipped.read_text())
        st.markdown(ev.get("summary_md", ""))
        for sweep in ev.get("sweeps", []):
            st.plotly_chart(fig.rates_vs_strength(sweep["rows"], sweep["attack"], sweep["unit"]),
                            key=f"attr_sweep_{sweep['attack']}")
        if ev.get("clean_bit_frequency"):
            st.plotly_chart(fig.clean_bit_frequency(ev["clean_bit_frequency"]), key="attr_freq")
        df = pd.DataFrame([r for s in ev.get("sweeps", []) for r in s["rows"]])
        if not df.empty:
            csv_download("Evaluation rows (CSV)", df, "attribution_eval.csv", "attr_eval_csv")
    photos = json.loads(PE.ATTRIBUTION_OUT.read_text()) if PE.ATTRIBUTION_OUT.is_file() else None
    if photos is not None:
        st.subheader("Both held-out sets side by side")
        st.caption("Set 1: the sweeps above (A-BSTA codes). Set 2: " + photos["note"])
        both = PE.attribution_side_by_side(json.loads(shipped.read_text()) if shipped.is_file() else None, photos)
        show_metrics_table(pd.DataFrame(both).round(4), key="attr_both_sets")
        csv_download("Both sets (CSV)", pd.DataFrame(both), "attribution_both_sets.csv", "attr_both_csv")
    with st.form("attr_eval_live"):
        st.caption("Live rerun on a small subset (held-out images; learned and dwtDctSvd; A-BSTA and random codes).")
        attack = st.selectbox("Attack", ["jpeg", "resize", "crop", "noise", "blur"])
        k_imgs = st.slider("Images", 2, 8, 4)
        live_go = st.form_submit_button("Run live evaluation", icon=":material/science:")
    if live_go:
        config = jobs.SweepConfig(attack=attack, strengths=tuple(ATTACKS[attack].sweep[:3]),
                                  backends=jobs.LIVE_BACKENDS, strategies=jobs.LIVE_STRATEGIES, count=int(k_imgs),
                                  **inputs.LIVE_SWEEP)
        if swept := run_job("Evaluating", jobs.run_sweep, config, time_cap_s=600):
            st.session_state["attribution_live"] = {"attack": attack, "rows": swept.rows}
    if live := st.session_state.get("attribution_live"):
        st.plotly_chart(fig.rates_vs_strength(live["rows"], live["attack"], ATTACKS[live["attack"]].unit),
                        key="attr_live_fig")
        show_metrics_table(pd.DataFrame(live["rows"]).round(4), key="attr_live_tbl")

with tab_theory:
    c = st.columns(4)
    n = c[0].select_slider("n (bits)", [32, 48, 64], 64)
    tau = c[1].slider("tau", 0.55, 1.0, 0.9, 0.005)
    beta = c[2].slider("beta (bit accuracy)", 0.6, 1.0, 0.99, 0.005)
    gamma = c[3].slider("gamma", 0.0, 0.2, 0.05, 0.01)
    c = st.columns(3)
    a_min = c[0].slider("alpha_min", 0.0, 1.0, 0.2, 0.01)
    a_max = c[1].slider("alpha_max", 0.0, 1.0, 0.8, 0.01)
    s_log = c[2].slider("users (log10)", 0.0, 9.0, 8.0, 0.5)
    s = int(round(10**s_log))
    b = jobs.run_bounds(jobs.BoundsConfig(n=n, beta=beta, tau=tau, alpha_min=a_min, alpha_max=a_max, users=s,
                                          gamma=gamma))
    rows = {"TDR >= (Thm 1)": float("nan") if b.tdr_lower_bound_thm1 is None else b.tdr_lower_bound_thm1,
            "TAR >= (Thm 4)": b.tar_lower_bound_thm4, "FDR <= (Thm 2)": b.fdr_upper_bound_thm2,
            "FDR <= (Thm 3)": b.fdr_upper_bound_thm3}
    show_metrics_table([{k: f"{v:.10f}" for k, v in rows.items()}], key="attr_bounds_tbl")
    st.caption("Defaults = the paper's Table 5 (10^8 users, n 64, beta 0.99, gamma 0.05, tau 0.9). Thm 2 is vacuous "
               "there (n(1 - tau + alpha_max) = 57.6, so P[B <= 57] is about 1): that is why Table 5 uses Thm 3.")
    st.plotly_chart(fig.binomial_thresholds(n, beta, A.binomial_pmf(n, beta), b.detection_threshold_bits,
                                            b.attribution_threshold_bits), key="attr_pmf")
    from backend.watermark.attribution.evaluation import measured_betas, theory_vs_users
    betas = {"your beta": beta, **measured_betas(ASSETS / "attribution_eval.json")}
    with st.form("attr_sim"):
        st.caption("Curves: Thm 4 TAR bounds (random codes, union-bound alpha_max) for your beta and for the learned "
                   "watermark's measured bit accuracy per attack; Thm 3 FDR bound. Points: simulated decodes.")
        sim_go = st.form_submit_button("Simulate 10^2-10^5 users at your beta", icon=":material/casino:")
    if sim_go and (sim := run_job("Simulating", jobs.run_simulate, jobs.SimulateConfig(n, beta, tau))):
        st.session_state["attribution_sim"] = asdict(sim)
    sim = st.session_state.get("attribution_sim")
    points = {"simulated TAR": (sim["users"], sim["tar"]), "simulated FDR": (sim["users"], sim["fdr"])} if sim else {}
    st.plotly_chart(fig.rates_vs_users(theory_vs_users(n, betas, tau, np.unique(np.logspace(2, 8, 25).astype(int))),
                                       points), key="attr_users_curve")
show_history("attribution")
