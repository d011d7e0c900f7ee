"""What Happens Next?: K futures of a point-trajectory grid from one image, the latent flow model against baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
from PIL import Image

from backend.errors import InputError
from backend.forecast.nextmotion import inputs as I
from backend.forecast.nextmotion import jobs as J
from backend.forecast.nextmotion.methods import METHODS
from backend.forecast.nextmotion.world import make_scene
from backend.runtime import provenance
from ui.claims import claims_panel
from ui.figures import nextmotion as figs
from ui.inputs import image_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, record_run, show_history

page_header("nextmotion", """
**What Happens Next?** forecasts how the things in a still image will move by *generating the trajectories of a grid
of points* (motion, not pixels): a latent flow model, conditioned on DINOv2 features of the image, turns K noise
seeds into K possible futures. Here the world is a 2-D physics simulation (pymunk) of falling, sliding, colliding and
tipping blocks and balls; a ball on a peak or a square on its corner can go either way, and the image does not say
which.
""", details_md="""
**Data.** Scenes of 112 × 112 pixels simulated by pymunk (Chipmunk2D): blocks and balls dropped in the air, on
ramps, a ball resting on the apex of a triangle and a square balanced on its corner. In the last two a hidden nudge
decides left or right, so each has two known outcomes. The trajectories of a grid of points with stride 8 (14 × 14
points) over 8 steps of 0.1 s are the targets: a point on a body follows the body's rigid motion, the rest stays put.
2,000 scenes train the models; presets and claims use held-out seeds.

**Generator.** Frozen DINOv2 ViT-S/14 patch tokens (8 × 8) of the image; an image-conditioned VAE compresses the
14 × 14 × 8 × 2 grid to a 7 × 7 × 4 latent (spatial downsampling only; Huber reconstruction + beta KL); a
rectified-flow transformer (self-attention over latent cells, cross-attention to the patch tokens) maps Gaussian
noise to latents in 12 Euler steps; the VAE decodes them. Sample j uses noise seed `seed + j`.

**Baselines.** A deterministic *regressor* from the same tokens (one answer, the mean of the futures it saw);
*regressor + noise*, its prediction plus Gaussian noise with the spread of its training residuals (K draws, so
best-of-K compares like with like); *retrieval* of the futures of the K training scenes nearest in mean DINOv2 token;
*static*, nothing moves.

**Metrics.** Best-of-K MSE (px² per point and step) against the realised future; *coverage*: the share of the
scene's possible outcomes that some sample reaches (MSE below 0.2 × the MSE between the outcomes); *LRTL*,
‖M − rank-5 SVD(M)‖ of the whole grid's trajectory matrix (points × 2T): rigid motion of a few objects is low-rank.

**Departures from the paper.** Convolutional VAE and regressor instead of spatio-temporal transformers, a 2-block
flow model, T = 8 instead of 16-30, a 2-D simulator instead of Kubric and real video; the paper's FVMD is a Frechet
distance on pooled displacements here. An uploaded image that does not look like these scenes gives motion unlike
anything real: the models know nothing else.
""")
claims_panel("nextmotion")


def _preset_image(name: str):  # noqa: ANN202
    p = I.PRESETS[name]
    return lambda: Image.fromarray(make_scene(p["scene_seed"], p["kind"]).image)


label, image = image_input("nextmotion_img", {name: _preset_image(name) for name in I.PRESETS})
preset = I.PRESETS.get(label)
if image is not None and preset is None:
    st.caption(f"The {image.size[0]} × {image.size[1]} image is resized to 112 × 112 (8 × 8 DINOv2 patches). "
               "Images unlike the simulator's give motion unlike anything real.")

with st.form("nextmotion_form"):
    c1, c2, c3, c4 = st.columns(4)
    k = bound(c1.slider, "K futures per method", 1, 16, 8, key="nextmotion_k")
    stride = bound(c2.selectbox, "Grid stride (px)", list(J.STRIDES), key="nextmotion_stride",
                   help="8: the models' 14 × 14 grid; 16: every other point (clearer streaks).")
    seed = bound(c3.number_input, "Noise seed", 0, 10_000, 0, key="nextmotion_seed")
    model_seed = bound(c4.selectbox, "Training seed", list(J.SEEDS), key="nextmotion_model_seed")
    methods = bound(st.multiselect, "Methods", METHODS.names(), METHODS.names(), format_func=METHODS.label,
                    key="nextmotion_methods")
    go = st.form_submit_button("Sample futures", icon=":material/moving:", type="primary")

if go and image is not None:
    try:
        cfg = J.SampleConfig(k=int(k), stride=int(stride), seed=int(seed), model_seed=int(model_seed),
                             methods=tuple(methods), **(preset or {}))
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        cfg = None
    if cfg is not None:
        st.session_state["nextmotion_config"] = cfg
        res = run_job("Sampling futures", J.run_sample, None if preset else image, cfg, time_cap_s=120)
        if res is not None:
            st.session_state["nextmotion_result"] = {
                "image": res.image, "points": res.points, "samples": res.samples, "truth": res.truth,
                "summary": res.summary(), "config": cfg}
            record_run("nextmotion", {"input": label, "K": cfg.k, "stride": cfg.stride, "training seed": cfg.model_seed},
                       {f"{r['label']} {m}": r[m] for r in res.rows for m in ("best_of_k_mse", "coverage")
                        if r.get(m) is not None}, seed=cfg.seed)
elif go:
    st.error("Choose a preset or upload an image first.", icon=":material/error:")

if r := st.session_state.get("nextmotion_result"):
    s = r["summary"]
    for note in s["notes"]:
        st.info(note, icon=":material/info:")
    steps = next(iter(r["samples"].values())).shape[-2]
    t = bound(st.slider, "Time step (0.1 s each)", 1, steps, steps, key="nextmotion_t")
    st.plotly_chart(figs.futures(r["image"], r["points"], r["samples"], int(t), r["truth"]), key="nextmotion_fig")
    st.caption(f"{s['source']}: each colour is one sample (noise seed {r['config'].seed} + j); only points that "
               "move are drawn. The regressor's K samples are one and the same prediction.")
    st.plotly_chart(figs.metric_bars(s["rows"]), key="nextmotion_bars")
    table = [{"method": row["label"], "best-of-K MSE (px²)": row.get("best_of_k_mse"),
              "coverage": row.get("coverage"), "LRTL": row["lrtl"], "seconds": row["seconds"],
              "parameters": row["parameters"]} for row in s["rows"]]
    show_metrics_table(table, key="nextmotion_table")
    d1, d2 = st.columns(2)
    with d1:
        c = r["config"]
        json_download("Metrics and mean tracks (JSON)", s | {"provenance": provenance(
            c.seed, k=c.k, stride=c.stride, model_seed=c.model_seed)}, "nextmotion.json", key="nextmotion_json")
    with d2:
        flat = [{"method": name, "sample": j, "row": i, "col": jj, "step": tt + 1,
                 "dx": float(v[j, i, jj, tt, 0]), "dy": float(v[j, i, jj, tt, 1])}
                for name, v in r["samples"].items() for j in range(v.shape[0])
                for i, jj in zip(*np.nonzero(np.abs(v[j]).sum((-1, -2)) > 1.0), strict=True)
                for tt in range(v.shape[-2])]
        csv_download("Moving points' trajectories (CSV)", pd.DataFrame(flat), "nextmotion_tracks.csv",
                     key="nextmotion_csv")
show_history("nextmotion")
