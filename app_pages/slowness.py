"""Temporal slowness in central vision: gaze crops + time-contrastive learning vs full frames + augmentation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.scenes.slowness import inputs as I
from backend.scenes.slowness import jobs as J
from backend.scenes.slowness.learn import ARMS, CROP_RANGE, DELTA_RANGE
from ui.claims import claims_panel
from ui.figures import slowness as figs
from ui.inputs import image_input, skimage_presets
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("slowness", """
A person sees sharply only where they look, and what they look at changes slowly. The paper trains a self-supervised
encoder (MoCo v3) on **crops around the gaze** of egocentric video with **frames close in time as positive pairs**,
and finds better object representations than training on **full frames with augmentations**. Here the video is a
procedural egocentric stream (a held object over cluttered backgrounds, fixations and pans), the gaze comes from a
spectral-residual saliency model computed on each frame, and the four arms of the 2 x 2 ablation are small CNNs with
three seeds each, probed linearly on held-out object photos.
""", details_md="""
**Stream.** 160 clips of 24 frames at 64 x 64 px. Each clip shows one of 32 object instances (8 shape categories x 4
colour/texture variants) held in front of the camera: it turns, scales and drifts while the light changes. The backdrop
is one of 8 background classes (4 texture types x 2 colour tones) with pale clutter, wider than the view; the camera
alternates fixations with pans, which move the backdrop and distractor objects but not the held object. Categories
co-occur with backgrounds (the usual background in 75 % of clips).

**Gaze.** The peak of the frame's spectral-residual saliency (Hou & Zhang 2007), away from the border. The rendered
object position is never used; the page reports how often the gaze lands on the object as a check.

**Arms.** View: the whole frame, or the *crop* x *crop* window around the gaze (both resized to 32 px). Positive pair:
two augmentations of one frame, or two frames 1..DeltaT apart in the same clip, each augmented (as in the paper's code:
random resized crop 20-100 %, colour jitter, blur, flips). MoCo v3: projector and predictor MLPs, EMA key encoder,
symmetric InfoNCE at temperature 0.2, 400 steps of 128 pairs (`python -m backend.train slowness`).

**Probes.** Logistic regression on the frozen 64-d features of object-centred photos (other poses, light and
backgrounds than the test photos) for instance (32-way), category (8) and background (8). Swaps (ImageNet-9 style):
the test photo rendered again with an object of another category in the same pose (foreground swap) or on another
background class (background swap), scored against the original category.

**Where the miniature departs from the paper.** Procedural stream instead of Ego4D (5 fps, about 64M frames); a
classical saliency model instead of GLC; a 75k-parameter CNN at 32 px instead of ResNet-50 / ViT at 224 px; 400 steps
instead of one epoch; instance / category / background probes only (no fine-grained, scene or CKA-GloVe analyses).
Two results differ from the paper's (the claims panel has the numbers): every arm, the full-frame one included, loses
far more category accuracy under a foreground swap than under a background swap (the probe photos show one large
object); and in the crop sweep the smallest crop (16 px, a 2x zoom) gives the best instance probe, where the paper
finds its smallest crop (112 px) too small.
""")
claims_panel("slowness")



def _scene_photo(i: int):  # noqa: ANN202 - PIL.Image.Image
    from PIL import Image

    from backend.scenes.ego import make_photo
    from backend.scenes.slowness.probe import PHOTO_SEEDS

    return Image.fromarray(make_photo(PHOTO_SEEDS + 900_000 + i).image)


tab_probe, tab_stream, tab_nn = st.tabs(["Ablation and probes", "Frame strip and pairs", "Nearest neighbours"])

with tab_probe:
    preset = preset_choice("slowness", {name: {"slowness_train": p["train_per_instance"],
                                               "slowness_test": p["test_per_instance"]}
                                        for name, p in I.PRESETS.items()}, label="Probe size", horizontal=True)
    with st.form("slowness_probe_form"):
        c1, c2, c3 = st.columns(3)
        train_n = bound(c1.select_slider, "Training photos per instance", [4, 6, 10, 20, 30, 40], 4,
                        key="slowness_train")
        test_n = bound(c2.select_slider, "Test photos per instance", [2, 4, 6, 12, 20, 40], 2, key="slowness_test")
        seeds = bound(c3.multiselect, "Seeds", list(J.SEEDS), list(J.SEEDS), key="slowness_seeds")
        sweep = st.checkbox("Also the crop-side and DeltaT sweeps (8 more encoders)", value=False,
                            key="slowness_sweep")
        go = st.form_submit_button("Probe the shipped encoders", icon=":material/science:", type="primary")
    if go:
        try:
            cfg = J.ProbeConfig(seeds=tuple(seeds), train_per_instance=int(train_n), test_per_instance=int(test_n))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["slowness_probe_config"] = cfg
            res = run_job("Probing", J.run_probe, cfg, time_cap_s=600)
            if res is not None:
                st.session_state["slowness_result"] = res.to_dict()
                ours, base = ARMS.names("ours")[0], ARMS.names("baseline")[0]
                record_run("slowness", {"preset": preset, "seeds": len(cfg.seeds), "photos": cfg.train_per_instance},
                           {f"{ARMS.label(a)} instance": res.means[a]["instance"] for a in (ours, base)
                            if a in res.means})
            if sweep:
                sw = run_job("Sweeps", J.run_sweep, J.SweepConfig(int(train_n), int(test_n)), time_cap_s=600)
                if sw is not None:
                    st.session_state["slowness_sweep_result"] = sw.to_dict()
    if r := st.session_state.get("slowness_result"):
        st.subheader("The 2 x 2 ablation")
        st.plotly_chart(figs.ablation_grid(r), key="slowness_grid")
        a, b = st.columns(2)
        a.plotly_chart(figs.seed_lines(r, "instance"), key="slowness_seeds_fig")
        b.plotly_chart(figs.swap_bars(r), key="slowness_swaps")
        if g := r["paired"].get("instance"):
            st.markdown(f"**Instance probe, central + temporal minus full frame + augmentation:** {g['gain']:+.3f} "
                        f"(95 % interval {g['low']:+.3f} to {g['high']:+.3f}, {g['n']} paired seeds; the paper: "
                        f"+7.97 points with ResNet-50 on Ego4D).")
        rows = [{"arm": r["labels"][x["arm"]], **{k: v for k, v in x.items() if k != "arm"}} for x in r["rows"]]
        show_metrics_table(rows, key="slowness_table")
        co = r["costs"]
        st.caption("Costs per encoder: " + "; ".join(
            f"{r['labels'][k]}: {v['parameters']:,} parameters, {v['train_s']:.0f} s training, "
            f"{v['probe_s']:.2f} s to probe" for k, v in co.items())
            + f". {r['photos']['train']} training and {r['photos']['test']} test photos.")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Probe results (JSON)", r, "slowness_probe.json", key="slowness_json")
        with d2:
            csv_download("Per arm and seed (CSV)", pd.DataFrame(rows), "slowness_probe.csv", key="slowness_csv")
    if sw := st.session_state.get("slowness_sweep_result"):
        st.subheader("Probe accuracy against crop side and DeltaT (central + temporal, seed 0)")
        st.plotly_chart(figs.sweep_lines(sw), key="slowness_sweep_fig")

with tab_stream:
    with st.form("slowness_stream_form"):
        c1, c2, c3 = st.columns(3)
        clip = c1.number_input("Clip", 0, 999_999, 0, key="slowness_clip")
        crop = bound(c2.slider, "Crop side (px of the 64-px frame)", CROP_RANGE[0], CROP_RANGE[1], J.CROP, 4,
                     key="slowness_crop")
        delta = bound(c3.slider, "DeltaT (frames)", DELTA_RANGE[0], DELTA_RANGE[1], J.DELTA_T, key="slowness_dt")
        go_s = st.form_submit_button("Show the clip", icon=":material/movie:")
    if go_s:
        try:
            scfg = J.StreamConfig(clip=int(clip), crop=int(crop), delta_t=int(delta))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            scfg = None
        if scfg is not None:
            s = run_job("Stream", J.run_stream, scfg, time_cap_s=120)
            if s is not None:
                st.session_state["slowness_stream"] = {
                    "strip": figs.frame_strip(s.frames, s.saliency, s.boxes, s.crops, s.gaze),
                    "pairs": {a: figs.pair_sheet(p) for a, p in s.pairs.items()}, **s.to_dict(),
                    "arm_labels": s.arm_labels}
    if s := st.session_state.get("slowness_stream"):
        st.markdown(f"**{s['labels']['instance']}** on *{s['labels']['background']}*; the gaze lands on the object in "
                    f"{s['gaze_on_object']:.0%} of the frames (rows: frame with crop window, saliency, crop).")
        st.image(s["strip"], width="stretch")
        for arm, sheet in s["pairs"].items():
            st.markdown(f"**{s['arm_labels'][arm]}**: frames (t, t') " +
                        ", ".join(f"({a}, {b})" for a, b in s["pair_frames"][arm]))
            st.image(sheet)

with tab_nn:
    presets = {f"Scene photo {i + 1} (held-out)": (lambda i=i: _scene_photo(i)) for i in range(3)}
    presets.update({f"Photo: {k}": v for k, v in skimage_presets().items()})
    label, image = image_input("slowness_img", presets)
    k = st.slider("Neighbours", 1, 10, 5, key="slowness_k")
    if st.button("Find nearest neighbours", icon=":material/search:", key="slowness_nn_go") and image is not None:
        try:
            ncfg = J.NeighbourConfig(k=int(k))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            ncfg = None
        if ncfg is not None:
            n = run_job("Neighbours", J.run_neighbours, np.asarray(image.convert("RGB")), ncfg, time_cap_s=120)
            if n is not None:
                st.session_state["slowness_nn"] = {"query": n.query, "label": label, **n.to_dict(),
                                                   "thumbs": {a: figs.thumbs([n.gallery[x["index"]] for x in ns])
                                                              for a, ns in n.neighbours.items()}}
    if n := st.session_state.get("slowness_nn"):
        st.image(n["query"], caption=f"{n['label']} (as the encoders see it before the resize to 32 px)", width=128)
        for arm, ns in n["neighbours"].items():
            st.markdown(f"**{n['labels'][arm]}**: " + "; ".join(
                f"{x['label']} ({x['similarity']:.2f})" for x in ns))
            st.image(n["thumbs"][arm])
        st.caption("The gallery holds held-out scene photos and scikit-image photographs (a second source: no encoder "
                   "saw a real photo in training).")
show_history("slowness")
