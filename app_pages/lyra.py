"""Lyra: one view -> 3-D Gaussians in one forward pass, distilled from a camera-conditioned view generator."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.scenes.lyra import inputs as I
from backend.scenes.lyra import jobs as J
from ui.claims import claims_panel
from ui.figures import lyra as figs
from ui.inputs import image_input, skimage_presets
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("lyra", """
A camera-controlled generator (the **teacher**) can imagine how a scene looks from other viewpoints, but each view
costs a network call and the views need not agree in 3-D. **Lyra** distils it: a **student** maps one image to a set
of 3-D Gaussians in a single forward pass, trained only on the teacher's imagined views, never on real multi-view
data; any viewpoint is then a fast render. Drag the orbit angle to compare the teacher's views with the student's
renders, the true views and the baselines.
""", details_md="""
**Scenes.** Procedural 3-D scenes (2-4 boxes, spheres and cylinders with plain, striped or checkered textures on a
ground plane under a sky; `backend.scenes.scene3d`), seen from an orbit camera (radius 3.6, elevation 22 degrees,
50 degree field of view) at 32 x 32 pixels. The first view is the input; the path moves the camera along the orbit by
up to 40 degrees either side. Preset scenes are held out (never seen in training) and have true views, so PSNR / SSIM
are against the truth.

**Teacher.** Like GEN3C, the paper's camera-controlled model, it conditions on a 3-D cache: the first view splatted
at a monocular depth network's depth into the target view. A small U-Net with a camera-conditioned fully connected
bottleneck and FiLM at every scale refines that warp (fills the holes, fixes the edges); it is trained with L1 on true
renders of 1,000 training scenes at random orbit offsets, then frozen: it plays the video diffusion model, which
learnt its 3-D knowledge from videos. It is deliberately small, deterministic and blurry.

**Student (ours).** A U-Net (first view + the teacher's 4 x 4 latent and depth of it) giving one 3-D Gaussian per
2 x 2 pixel cell: a correction of the teacher's inverse depth along the cell's ray, a 3-D offset, three scales, a
rotation, an opacity and a colour residual;
256 Gaussians per scene, rendered by the lab's differentiable splatting (`backend.scenes.splat`: EWA projection,
depth-sorted alpha compositing). It is trained for 200 steps to make its renders at 8 offsets per training scene
match the **teacher's** views there (plus the input view); three seeds ship.

**Baselines.** *Depth warp*: every pixel of the first view splatted as an opaque disc at the depth of the monocular
depth network (trained on true depth; the teacher's 3-D cache before refinement). *Per-scene optimisation*: Gaussians
initialised from the depth warp and fitted with Adam to the teacher's 8 path views of this one scene. *Upper bound*:
the same student trained on the true renders instead of the teacher's views (the paper has no such reference).

**Where the miniature departs from the paper.** A deterministic regression network instead of a video diffusion
model (GEN3C), 32 x 32 images instead of 704 x 1280 video, a short orbit instead of multi-trajectory camera paths,
one Gaussian per 2 x 2 pixels of the input view instead of Gaussians decoded from every latent frame, MSE instead of
MSE + LPIPS + depth losses, no dynamic (4-D) scenes, no text prompts. A photo you upload is cropped to a square and
shrunk to 32 x 32; the networks have only seen procedural scenes, so expect guesses, and there is no true view to
score against: the page scores the methods against the teacher's views instead.
""")
claims_panel("lyra")

tab_path, tab_eval = st.tabs(["Render a camera path", "Evaluate the shipped students"])


def _preset(scene: int):  # noqa: ANN202 - PIL.Image.Image
    return lambda: I.preset_image(scene)


with tab_path:
    presets = {name: _preset(kw["scene"]) for name, kw in I.PRESETS.items()}
    presets.update({f"Photo: {k}": v for k, v in skimage_presets().items()})
    label, image = image_input("lyra_img", presets, label="First view")
    if image is not None and label not in I.PRESETS:
        st.caption(f"The {image.size[0]} x {image.size[1]} image is cropped to a square and resized to 32 x 32; "
                   "it has no true views, so PSNR / SSIM compare with the teacher's views.")
    with st.form("lyra_form"):
        c1, c2, c3 = st.columns(3)
        path = bound(c1.selectbox, "Camera path", list(J.PATHS), key="lyra_path",
                     format_func=lambda p: {"orbit": "orbit -35 to +35 deg", "left": "left 0 to -40 deg",
                                            "right": "right 0 to +40 deg"}.get(p, p))
        views = bound(c2.slider, "Views along the path", 2, J.MAX_VIEWS, 8, key="lyra_views")
        seed = bound(c3.selectbox, "Student seed", list(J.STUDENT_SEEDS), key="lyra_seed")
        c4, c5 = st.columns([2, 1])
        methods = bound(c4.multiselect, "Methods (per-scene optimisation takes seconds)", list(J.METHODS),
                        J.fast_methods(), key="lyra_methods", format_func=J.METHODS.label)
        steps = bound(c5.slider, "Per-scene optimisation steps", 5, 200, 30, 5, key="lyra_steps")
        go = st.form_submit_button("Render the path", icon=":material/play_arrow:", type="primary")
    if go:
        if image is None:
            st.error("Pick a preset or upload an image first.", icon=":material/error:")
        else:
            try:
                cfg = J.RenderConfig(scene=I.PRESETS.get(label, {}).get("scene", 0), path=path, views=int(views),
                                     seed=int(seed), methods=",".join(methods) or "", steps=int(steps))
            except InputError as err:
                st.error(str(err), icon=":material/error:")
                cfg = None
            if cfg is not None:
                res = run_job("Rendering", J.run_render, cfg, None if label in I.PRESETS else image, time_cap_s=300)
                if res is not None:
                    st.session_state["lyra_result"] = res
                    record_run("lyra", {"image": label, "path": cfg.path, "views": cfg.views, "seed": cfg.seed},
                               {f"{res.labels[k]} PSNR": v for k, v in res.mean_psnr.items()}, seed=cfg.seed)
    if (res := st.session_state.get("lyra_result")) is not None:
        st.caption(res.source)
        angle = st.select_slider("Orbit angle (drag)", options=list(range(len(res.deltas))),
                                 value=len(res.deltas) // 2, format_func=lambda i: f"{res.deltas[i]:+.1f} deg",
                                 key="lyra_angle")
        st.plotly_chart(figs.angle_views(res, angle), key="lyra_one")
        st.markdown("**Every view of the path**")
        st.plotly_chart(figs.view_strip(res), key="lyra_strip")
        st.plotly_chart(figs.metric_lines(res), key="lyra_metrics")
        rows = [{"method": res.labels[k], "mean PSNR (dB)": res.mean_psnr.get(k), "mean SSIM": res.mean_ssim.get(k),
                 "3-D build (ms)": round(1000 * c["build_s"], 2), "render (ms / view)": round(1000 *
                 c["render_s_per_view"], 2), "Gaussians": c["gaussians"] or None} for k, c in res.costs.items()]
        show_metrics_table(rows, key="lyra_table")
        st.caption("Build: seconds to make the 3-D representation (one forward pass for the students, a depth map for "
                   "the warp, the whole fit for per-scene optimisation); the teacher builds nothing and pays a "
                   "network call per view. Renders are the lab's CPU splatting at 32 x 32.")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Metrics and costs (JSON)", res.to_dict(), "lyra_render.json", key="lyra_json")
        with d2:
            csv_download("Per view (CSV)", pd.DataFrame([{"method": k, "offset": d, "psnr": p, "ssim": s}
                                                        for k in res.psnr for d, p, s in
                                                        zip(res.deltas, res.psnr[k], res.ssim[k], strict=True)]),
                         "lyra_views.csv", key="lyra_csv")
        show_history("lyra")

with tab_eval:
    preset_choice("lyra", {"Quick: 12 held-out scenes": {"lyra_n": 12},
                           "Standard: 48 held-out scenes": {"lyra_n": 48}}, label="Evaluation size", horizontal=True)
    with st.form("lyra_eval_form"):
        n = bound(st.select_slider, "Held-out scenes", [12, 24, 48, 96], 12, key="lyra_n")
        go_e = st.form_submit_button("Score the shipped networks", icon=":material/science:", type="primary")
    if go_e:
        try:
            ecfg = J.EvalConfig(scenes=int(n))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            ecfg = None
        if ecfg is not None:
            er = run_job("Scoring", J.run_eval, ecfg, time_cap_s=300)
            if er is not None:
                st.session_state["lyra_eval"] = er.to_dict()
                record_run("lyra", {"held-out scenes": ecfg.scenes}, er.mean_psnr)
    if r := st.session_state.get("lyra_eval"):
        st.plotly_chart(figs.eval_figure(r), key="lyra_eval_fig")
        show_metrics_table([{"arm": k, "mean PSNR (dB)": v, "mean SSIM": r["mean_ssim"][k]}
                            for k, v in r["mean_psnr"].items()], key="lyra_eval_table")
        st.caption(f"{len(next(iter(r['psnr'].values())))} held-out scenes, true views at {r['deltas']} degrees "
                   f"(between the teacher's supervision offsets); scored in {r['seconds']:.1f} s.")
        json_download("Scores (JSON)", r, "lyra_eval.json", key="lyra_eval_json")
