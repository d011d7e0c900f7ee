"""RainPro-8 miniature: probabilistic 8-hour precipitation nowcasts from radar + satellite + NWP, against pysteps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.forecast.nowcast.inputs import PRESETS
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.inputs import decoded
from ui.inputs import upload as radar_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

KEY = "nowcast_result"


@st.cache_data(max_entries=1)
def _example() -> bytes:
    from backend.forecast.nowcast.io import example_npz

    return example_npz()


page_header("nowcast", """
**What it does.** RainPro-8 fuses radar, satellite and numerical weather prediction (NWP) in one compact network
that gives, **for every lead time up to 8 hours in one forward pass**, the probability that rain exceeds each
threshold (0.1 ... 16 mm/h). Here it runs on seeded synthetic cases against pysteps, the NWP channel and an MSE U-Net.
""", details_md="""
**What it does.** RainPro-8 fuses radar, geostationary satellite and numerical weather prediction (NWP) in one compact
network that outputs, **for every lead time up to 8 hours in a single forward pass**, the probability that rain exceeds
each threshold of a ladder (0.1 ... 16 mm/h). The probabilities are consistent by construction: the network predicts
ordered rain-rate bins and P(R >= t) sums the bins above t, so it can never increase with the threshold.

**Our miniature.** No radar archive can be downloaded here, so the lab generates seeded synthetic cases: power-law rain
fields that move, grow, decay and initiate convective cells on a 64 x 64 grid of 4 km pixels, every 15 minutes; a
satellite-like channel that sees clouds 45 minutes before they rain; and an NWP-like channel (16 km, hourly, with
documented position, timing and amplitude errors) that overtakes extrapolation after about 2-3 hours. The network
(1.2M parameters, a U-Net with a MaxViT block) was trained on these cases; the rivals are **pysteps** (persistence,
Lucas-Kanade extrapolation, S-PROG, the STEPS ensemble and STEPS blended with the NWP channel), the NWP channel
itself, and a U-Net of the same size trained with MSE. Every method is scored on the same threshold ladder.

**What you see.** Forecast vs observation animated on one colour scale; exceedance-probability maps; skill vs lead for
every method (CRPS: lower is better; CSI and FSS: higher is better); reliability and rank histograms; run times.
""")
claims_panel("nowcast")

src = bound(st.radio, "Input", ["Synthetic case", "Upload radar"], horizontal=True, key="nowcast_src")
upload, name, hold = None, "upload", True
if src == "Synthetic case":
    c1, c2 = st.columns([2, 1])
    preset = bound(c1.selectbox, "Preset", list(PRESETS), key="nowcast_preset")
    seed = int(bound(c2.number_input, "Seed", 0, 10**6, PRESETS[preset], key=f"nowcast_seed_{PRESETS[preset]}"))
else:
    got = radar_upload("radar", "Radar sequence", key="nowcast_upload",
                       help="NPZ with `precip` (T, H, W) in mm/h and `timestep_min`; NetCDF classic with `precip` "
                            "(time, y, x) and `time` in minutes; or a ZIP of grayscale PNG frames (scale below).")
    c1, c2, c3 = st.columns(3)
    step = bound(c1.number_input, "Minutes between frames (if not in the file)", 5.0, 60.0, 15.0, key="nowcast_step")
    px = bound(c2.number_input, "Pixel size km (if not in the file)", 0.1, 50.0, 4.0, key="nowcast_px")
    scale = bound(c3.number_input, "PNG: mm/h per grey level", 0.01, 10.0, 0.25, key="nowcast_scale")
    hold = bound(st.checkbox, "Use the first 4 frames as input and the rest as truth (verification)", True, key="nowcast_hold")
    st.caption("3-96 frames of 16-1024 px, at most 20 MB, rain rate 0-500 mm/h, evenly spaced. The sequence is "
               "cropped to a square, resized to 64 x 64 and interpolated to 15-minute steps; uploads run on the "
               "radar-only path (no satellite or NWP: blended STEPS and the NWP channel are skipped).")
    st.download_button("Example upload (NPZ)", _example(), "nowcast_example.npz", key="nowcast_example",
                       on_click="ignore", icon=":material/download:")
    seq = decoded("radar", got, timestep_min=step, pixel_km=px, png_scale=scale)
    if seq is not None:
        from backend.forecast.nowcast.io import to_model_grid

        try:
            upload, name = to_model_grid(seq), got[0]
            st.success(f"{got[0]}: {upload.frames.shape[0]} frames on the model grid. " + "; ".join(upload.notes))
        except InputError as err:
            st.error(str(err), icon=":material/error:")

# scipy loads here, after the header is drawn
from backend.forecast.nowcast import jobs  # noqa: E402
from backend.forecast.nowcast.baselines import ENSEMBLES, METHODS, MODEL_FILE, UNET_FILE  # noqa: E402

LIGHT = [m for m in METHODS if m not in ENSEMBLES]  # the 20-member pysteps ensembles take most of a full run's time
preset_choice("nowcast", {
    "Light: every method but the two STEPS ensembles, 8 h of leads": {"nowcast_methods": LIGHT},
    "Full: with STEPS and blended STEPS (20 members each)": {"nowcast_methods": list(METHODS)},
}, horizontal=True, help="The STEPS ensembles take about three quarters of a full run.")
with st.form("nowcast_form"):
    methods = bound(st.multiselect, "Methods", list(METHODS), default=LIGHT, format_func=METHODS.label,
                    key="nowcast_methods")
    leads = bound(st.slider, "Leads (15-minute steps)", 4, 32, 32, key="nowcast_leads")
    submitted = st.form_submit_button("Run nowcasts", icon=":material/play_arrow:", type="primary",
                               disabled=src == "Upload radar" and upload is None)

if submitted:
    try:
        config = jobs.ForecastConfig(tuple(methods), int(leads), hold_out=bool(hold))
    except InputError as err:
        st.warning(str(err))
        config = None
    out = None if config is None else run_job("Nowcasting", jobs.run_forecast, seed if upload is None else upload,
                                              config, name, time_cap_s=600)
    if out is not None:
        res = {**out.view, "npz": out.forecast_file, "source": f"seed={seed}" if upload is None else "upload"}
        st.session_state[KEY] = res
        crps = {f"CRPS 1-8 h {row['method']}": row.get("CRPS 1-8 h") for row in res["table"]}
        record_run("nowcast", {"source": res["source"], "methods": list(config.methods), "leads": config.leads},
                   crps, seed=seed if upload is None else None)

res = st.session_state.get(KEY)
if res:
    from ui.figures import nowcast as fig

    for n in res["notes"] + [f"{METHODS.label(k)}: {v}" for k, v in res["skipped"].items()] + list(res["model_notes"].values()):
        st.caption(n)
    show_metrics_table(res["table"], key="nowcast_table")
    leads_min, scores = res["leads_min"], res["scores"]
    tabs = st.tabs(["Animation", "Probabilities", "Skill vs lead", "Reliability & ensembles", "Sources & costs"])
    with tabs[0]:
        options = list(res["rain"])
        shown = st.multiselect("Show beside the observation", options, default=options[:2], max_selections=3,
                               format_func=METHODS.label, key="nowcast_shown")
        panels = ({"truth": res["truth"].astype(np.float32)} if res["truth"] is not None else {})
        panels.update({k: res["rain"][k].astype(np.float32) for k in shown})
        st.caption("The network's map is its median (the highest threshold with P >= 0.5); STEPS maps are ensemble "
                   "medians. Probabilities are in the next tab.")
        if panels:
            st.plotly_chart(fig.animated_maps(panels, leads_min),
                            key="nowcast_anim")
    with tabs[1]:
        from backend.forecast.nowcast.verify import THRESHOLDS_MMH

        prob_src = {**res["probs"]}
        ours = next((m for m in METHODS.names("ours") if m in prob_src), None)
        if ours is None:
            st.info("Run the network (model) to see its exceedance probabilities.")
        else:
            thr = st.select_slider("Threshold (mm/h)", list(THRESHOLDS_MMH), 1.0, key="nowcast_thr")
            k = list(THRESHOLDS_MMH).index(thr)
            show = [t for t in (3, 7, 15, 31) if t < res["n_leads"]]
            truth = None if res["truth"] is None else res["truth"].astype(np.float32)
            st.plotly_chart(fig.probability_maps(prob_src[ours].astype(np.float32), truth, thr, k, leads_min, show),
                            key="nowcast_prob")
    with tabs[2]:
        if not scores:
            st.info("No truth to verify against (uploads without held-back frames).")
        else:
            c1, c2 = st.columns(2)
            metric = c1.radio("Metric", ["crps", "csi", "fss"], horizontal=True, key="nowcast_metric")
            thr_s = c2.radio("Threshold (mm/h)", ["1.0", "4.0"] + (["0.2", "8.0"] if metric == "csi" else []),
                             horizontal=True, key="nowcast_thr_s")
            st.plotly_chart(fig.skill_curves(scores, leads_min, metric, thr_s), key="nowcast_skill")
            st.caption("One case is noisy: `python -m backend nowcast evaluate` pools many held-out cases "
                       "(benchmarks/results/nowcast.md).")
    with tabs[3]:
        if scores:
            st.plotly_chart(fig.reliability(scores), key="nowcast_rel")
            if any(s.get("rank_histogram") for s in scores.values()):
                st.plotly_chart(fig.rank_histograms(scores), key="nowcast_rank")
        for name, mem in res["members"].items():
            st.plotly_chart(fig.member_gallery(mem.astype(np.float32), min(15, res["n_leads"] - 1), leads_min,
                                               METHODS.label(name)), key=f"nowcast_mem_{name}")
    with tabs[4]:
        st.plotly_chart(fig.input_panels(res["inputs_last"].astype(np.float32), res["satellite_last"], res["nwp_first"],
                                         res["motion"]), key="nowcast_inputs")
        st.plotly_chart(fig.costs_bar(res["table"]), key="nowcast_costs")
    report = {"source": res["source"], "table": res["table"], "scores": scores, "notes": res["notes"],
              "provenance": provenance(res["seed"], [MODEL_FILE, UNET_FILE], methods=list(res["rain"]),
                                       leads=res["n_leads"], source=res["source"])}
    c1, c2, c3 = st.columns(3)
    with c1:
        json_download("Scores (JSON)", report, "nowcast_scores.json", key="nowcast_json")
    with c2:
        csv_download("Metrics (CSV)", pd.DataFrame(res["table"]), "nowcast_metrics.csv", key="nowcast_csv")
    with c3:
        st.download_button("Forecast (NPZ)", res["npz"], "nowcast_forecast.npz", key="nowcast_npz", on_click="ignore",
                           icon=":material/download:")
show_history("nowcast")
