"""STDDN crowd simulation: pick a held-out scene or upload trajectories, run every method, compare rollouts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.forecast.crowd import jobs
from backend.forecast.crowd.inputs import PRESETS, SAMPLE, SAMPLE_FPS
from backend.forecast.crowd.interface import METHODS
from backend.runtime import ASSETS, provenance
from ui.claims import claims_panel
from ui.figures import crowd as figs
from ui.inputs import decoded
from ui.inputs import upload as trajectory_upload
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("crowd", """
Learned crowd simulators predict each pedestrian's next move and roll out for minutes, so errors pile up. **STDDN**
trains its per-agent network together with a differentiable **density neural ODE** (the continuity equation on a
grid), which shapes training only: at inference it costs the same as the network alone. Pick a held-out scene, run
every method and compare the rollouts.
""", details_md="""
Learned crowd simulators predict each pedestrian's next move and roll out for minutes, so errors pile up. **STDDN**
trains its per-agent network (an equivariant graph net over the 6 nearest neighbours in view, a recurrent history
encoder and a goal term) together with a **density neural ODE**: a soft, differentiable density map puts every agent on
a grid (a softmax of -T·distance² over cells, so the cells sum to the head count), and a learned graph over the cells
moves density from each agent's cells at *t* to its cells at *t + 1*, weighted by its speed and a **cross-grid**
signal, as in the continuity equation ∂ρ/∂t + ∇·(ρv) = 0. The ODE only shapes training: at inference STDDN is the
per-agent network alone, as cheap as the ablation trained **without** it.

**What you see**: scenes the models never saw in training (our generator mixes social-force and ORCA walkers with
hidden per-agent parameters and noise; no public crowd data can be downloaded here). Every agent gets its first 2 s
(25 frames) from the ground truth, then each method simulates it until it leaves. Panels share axes and the density
colour scale; dots are coloured by the direction of their destination.
""")
claims_panel("crowd")

SAMPLE_OPTION = f"Sample CSV (bottleneck, {SAMPLE_FPS:g} fps)"
OPTIONS = [*PRESETS, SAMPLE_OPTION, "Upload your own CSV"]
STRIDE = 2  # OT and MMD every 2nd frame
results: dict = st.session_state.setdefault("crowd_result", {})

with st.expander("Upload format (CSV)", icon=":material/description:"):
    st.markdown("""
A UTF-8 CSV with a header naming **`frame, id, x, y`** (any order; other columns are ignored): `frame` an integer at the
frame rate you give (frames per second), `id` a pedestrian (number or text), `x, y` in **metres**. Each track is
resampled to 0.08 s steps by cubic interpolation; its destination is its last position; there are no walls. Limits:
5 MB, 600 pedestrians, 180 s, coordinates within 1 km. Missing columns, non-numbers, repeated (frame, id) rows, a single
frame or absurd coordinates are refused with a message.
""")

preset_choice("crowd", {
    "Light: a 10 s clip": {"crowd_seconds": 10},
    "Full: a 60 s clip (the length of the recorded evaluation)": {"crowd_seconds": 60},
}, horizontal=True, help="Generated scenes only; an upload always uses its whole length.")
with st.form("crowd_form"):
    c1, c2, c3 = st.columns([2, 1, 1])
    source = bound(c1.selectbox, "Scene", OPTIONS, key="crowd_source")
    seconds = bound(c2.slider, "Simulated seconds", 5, 60, 10, key="crowd_seconds",
                        help="Length of the generated clip (uploads use their whole length).")
    seed = bound(c3.number_input, "Seed", 0, 10_000, 0, key="crowd_seed")
    methods = bound(st.multiselect, "Methods", list(METHODS), default=list(METHODS), key="crowd_methods",
                             format_func=METHODS.label)
    c1, c2 = st.columns([3, 1])
    with c1:
        upload = trajectory_upload("trajectories", "Your trajectories (used with 'Upload your own CSV')",
                                   "crowd_upload", "frame,id,x,y in metres; at most 5 MB")
    fps = bound(c2.number_input, "Frame rate of the CSV (fps)", 0.1, 100.0, 12.5, key="crowd_fps")
    run = st.form_submit_button("Simulate", icon=":material/play_arrow:", type="primary")


if run:
    out = None
    try:
        config = jobs.SimulateConfig(tuple(methods), float(seconds), int(seed), stride=STRIDE)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        config = None
    if config is not None and source in PRESETS:
        params = {"scene": PRESETS[source], "seconds": seconds}
        out = run_job("Crowd simulation", jobs.run_simulate, PRESETS[source], config, time_cap_s=300)
    elif config is not None:
        got, rate = ((SAMPLE.name, SAMPLE.read_bytes()), SAMPLE_FPS) if source == SAMPLE_OPTION else (upload, fps)
        if got is None:
            st.error("Upload a CSV first (or pick a scene).", icon=":material/error:")
        elif (clip := decoded("trajectories", got, fps=rate)) is not None:
            params = {"input": got[0], "fps": rate}
            out = run_job("Crowd simulation", jobs.run_simulate, clip, config, time_cap_s=300)
    if out is not None:
        results.clear()
        results.update({"table": out.table, "gt_collisions": out.gt_collisions, "clip": out.clip, **out.view,
                        "costs": out.costs, "provenance": provenance(int(seed), out.assets, methods=list(config.methods),
                                                                     source=source, **params)})
        record_run("crowd", {"source": source, "seconds": seconds, "methods": methods},
                   {f"{k} {x['label']}": x[k] for x in out.table for k in ("MAE", "collisions")}, seed=int(seed))

if results:
    r = results
    c = r["clip"]
    st.subheader(f"{c['name']}: {c['seconds']:.0f} s, {c['agents']} pedestrians (up to {c['max_present']} at once)")
    rows = [{"method": x["label"], "MAE (m)": x["MAE"], "OT": x["OT"], "MMD": x["MMD"], "FDE (m)": x["FDE"],
             "collisions / agent": x["collisions"], "wall crossings / agent": x.get("wall_crossings"),
             "ms per simulated s": x["ms_per_sim_second"],
             "simulated s per wall s": x["sim_s_per_wall_s"]} for x in r["table"]]
    metrics_df = pd.DataFrame(rows).round(4)
    show_metrics_table(metrics_df, key="crowd_metrics")
    st.caption(f"Averaged over frames after each agent's warm-up; OT/MMD every 2nd frame. Ground-truth collisions "
               f"(< 0.5 m) per agent: {r['gt_collisions']:.4f}. Inference time is the method's own step time on this "
               "server."
               + (f" Learned networks: {r['costs']['parameters']:,} parameters, about "
                  f"{r['costs']['macs_per_agent_step']:,} multiply-adds per agent and step (neighbour search aside); "
                  "STDDN and its ablation share the architecture." if r.get("costs") else ""))
    col1, col2 = st.columns([1, 2])
    col1.plotly_chart(figs.cost_quality(r["table"]), key="crowd_cost")
    col2.plotly_chart(figs.error_curves(r["curves"]), key="crowd_curves")
    st.plotly_chart(figs.rollout_animation(r["panels"], r["times"], r["colors"], r["walls"], r["bounds"],
                                           title="Rollouts over their soft density (press Play or drag the slider)"),
                    key="crowd_anim")
    if o := r.get("ode"):
        st.plotly_chart(figs.density_triplet(
            {"ODE (continuity graph)": o["ode"], "DDM of STDDN's positions": o["prediction"],
             "DDM of the truth": o["truth"]}, o["cx"], o["cy"],
            f"Training view: density {o['seconds']:.2f} s after frame {o['t0']} (T = {o['T']:.2f}, "
            f"density loss {o['loss_rho']:.4f})"), key="crowd_ode")
        st.caption("During training the ODE starts from the true density and is driven by the network's own moves; "
                   "its mismatch with the true density is the density loss. At inference only the network runs.")
    from backend.forecast.crowd.csvio import trajectories_frame  # light: numpy/pandas only

    d1, d2, d3 = st.columns(3)
    with d1:
        csv_download("Rollouts (CSV)", trajectories_frame(r["gt"], r["positions"], r["dt"], r["ids"]),
                     "crowd_rollouts.csv", "crowd_dl_roll")
    with d2:
        csv_download("Metrics (CSV)", metrics_df, "crowd_metrics.csv", "crowd_dl_metrics")
    with d3:
        json_download("Report (JSON)", {"clip": c, "metrics": r["table"], "ground_truth_collisions": r["gt_collisions"],
                                        "provenance": r["provenance"]}, "crowd_report.json", "crowd_dl_json")



@st.fragment
def kernel_explorer() -> None:
    """How the DDM temperature T widens or sharpens each agent's soft cell assignment (numpy only, instant)."""
    T = st.slider("T (DDM temperature)", 0.05, 10.0, 1.0, 0.05, key="crowd_T",
                  help="Each agent spreads over cells with weights softmax(-T distance²); the cells sum to the count.")
    pts = np.array([[[4.3, 5.6], [5.1, 6.2], [12.5, 12.5], [15.0, 4.0]]], np.float32)
    d, cx, cy = figs.density_frames(pts, (0.0, 0.0, 20.0, 20.0), 1.0, T)
    st.plotly_chart(figs.density_triplet({f"4 agents, T = {T:g} (sum {d[0].sum():.3f})": d[0]}, cx, cy,
                                         "Differentiable density mapping on 1 m cells"), key="crowd_T_fig")


with st.expander("The soft density kernel (T slider)", icon=":material/blur_on:"):
    kernel_explorer()

with st.expander("Recorded held-out evaluation (60 s clips, shipped weights)", icon=":material/table:"):
    rec = ASSETS / "crowd_eval.json"
    if rec.is_file():
        data = json.loads(rec.read_text())
        show_metrics_table(pd.DataFrame(data["table"]).drop(columns=["method"]).round(4), key="crowd_recorded")
        st.caption(f"`python -m backend.train crowd --evaluate`: 4 held-out scenes x {data['seconds']:.0f} s, seed "
                   f"{data['seed']}.")
        from backend.forecast.crowd.evaluate import (
            ablation_summary,
            ablation_text,
            control_text,
            guard_text,
            wall_text,  # light: they read JSON files
        )

        st.markdown(ablation_text(ablation_summary()))
        if "walls" in data:  # why the learned agents leak through walls (recorded diagnostics)
            st.markdown(wall_text(data["walls"]))
        if "wall_guard" in data:
            st.markdown(guard_text(data["wall_guard"]))
        if "density_control" in data:
            st.markdown(control_text(data["density_control"], ablation_summary(), data.get("walls")))
        st.caption("Latency: the paper's speed-up is against a multi-step diffusion sampler (SPDiff). No diffusion "
                   "baseline is trained here; STDDN's inference cost per step equals its trajectory network alone "
                   "(same parameters and multiply-adds as the ablation, the ODE never runs; tested), and "
                   "benchmarks/crowd.py shows only the cost of calling that network K = 10 times per step.")
    else:
        st.info("No recorded evaluation yet: run `python -m backend.train crowd`.")
show_history("crowd")
