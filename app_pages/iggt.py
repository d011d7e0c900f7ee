"""IGGT: per-pixel instance features consistent across views, clustered into masks matched across views."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.scenes.iggt import inputs as I
from backend.scenes.iggt import jobs as J
from backend.scenes.iggt.data import MAX_VIEWS, MIN_VIEWS, SPLIT_LABELS
from ui.claims import claims_panel
from ui.figures import iggt as figs
from ui.inputs import multi_image_input
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("iggt", """
**IGGT** learns, from several views of a scene, a feature for every pixel such that pixels of the same object are
close *in every view* and pixels of different objects are far apart; clustering the features of all views at once
then gives instance masks that are already matched across views. Here a small network over frozen DINOv2 features,
trained on rendered scenes of boxes and spheres, is compared with clustering each view separately and matching the
clusters with the Hungarian algorithm, on scenes with shapes or textures it never saw.
""", details_md="""
**Data.** Procedural scenes of 2-4 solid objects on a floor, ray-cast at 224 pixels (`backend.scenes.scene3d`), with
exact depth and instance ids on the 64 x 64 output grid. Cameras on an orbit, 35-70 degrees apart. Training: 120
scenes of boxes and spheres, plain or striped, each object its own colour, 3 views each. **Held out:** scenes of
cylinders (a shape never seen), scenes with checkered objects (a texture never seen) and scenes whose objects all
share one colour. On the last the learned features fall below both baselines: with colour identifying every object
in training, the miniature network learned colour as its instance cue.

**Network (0.2M parameters, three seeds).** DINOv2 ViT-S/14 patch features of each view (16 x 16, frozen), a linear
embedding plus patch-position and view embeddings (view 1 is the reference), two pairs of frame attention (within a
view) and global attention (across all views: the cross-view attention), then a DPT-style head fused with a shallow
convolution of the pixels: log depth (L1 loss) and an 8-d feature per pixel. **Loss** (the paper's): 2 x mean distance
of same-instance pixel pairs + 1 x mean max(0, 1 - distance) of different-instance pairs, over 128 pixels per view
sampled from all views of a scene (floor and sky count as one instance). 400 steps of 4 scenes.

**Segmenters.** *Ours:* one HDBSCAN (scikit-learn) over the features of all views, each pixel then joins the nearest
cluster mean; a cluster spans views, so its masks are matched. *Ablation:* the same features clustered per view and
matched by `scipy.optimize.linear_sum_assignment`. *Baselines:* per-view HDBSCAN of DINOv2 features (upsampled,
PCA 16) matched by the cosine of mean features; per-view HDBSCAN of colour, the network's *predicted* depth and
position, matched by mean colour.

**Metrics.** A ground-truth track is an object's masks in all views; predicted tracks are matched one to one by the
Hungarian algorithm on IoU over all views. *T-mIoU*: mean matched IoU. *T-SR*: share of objects seen in two or more
views whose matched track has IoU >= 0.5 in every view where the object is visible.

**Where the miniature departs from the paper.** A 0.2M-parameter network on frozen DINOv2 features instead of the
1B-parameter VGGT-style transformer (no camera or point-map heads, no window-shifted cross-attention: the instance
branch reads the depth branch's features); rendered toy scenes instead of InsScene-15K / ScanNet++; a per-view DINOv2
clustering baseline instead of SAM2; means over pixel pairs where the paper sums. Uploaded photos are far outside the
training data: their masks are shown, but nothing here says they are right.
""")
claims_panel("iggt")


@st.cache_resource(max_entries=1, show_spinner="Loading the IGGT networks")
def _models():  # noqa: ANN202
    return J.load_models()


tab_seg, tab_eval = st.tabs(["Segment a scene", "Held-out benchmark"])

with tab_seg:
    MODES = ["Preset scenes", "Your photos"]
    mode = bound(st.radio, "Views", MODES, horizontal=True, key="iggt_mode")
    photos = None
    preset = None
    if mode == MODES[0]:
        preset = bound(st.selectbox, "Scene", list(I.PRESETS), key="iggt_preset")
    else:
        got = multi_image_input("iggt_upload", MIN_VIEWS, MAX_VIEWS, check=I.check_view_count,
                                label=f"Upload {MIN_VIEWS}-{MAX_VIEWS} photos of one scene")
        if got is not None:
            photos = got
            st.caption(f"{len(got[1])} photos: " + ", ".join(f"{n} ({im.size[0]}x{im.size[1]})"
                                                             for n, im in zip(*got, strict=True))
                       + ". Out of distribution: the network has only seen rendered boxes and spheres.")
    with st.form("iggt_form"):
        c1, c2 = st.columns(2)
        seed = bound(c1.selectbox, "Network seed", list(J.SEEDS), key="iggt_seed")
        mcs = bound(c2.slider, "HDBSCAN min_cluster_size", 5, 100, 20, 5, key="iggt_mcs")
        go = st.form_submit_button("Segment and match", icon=":material/view_in_ar:", type="primary")
    if go:
        cfg = None
        try:
            if mode == MODES[0]:
                cfg = J.SegmentConfig(**I.PRESETS[preset], seed=int(seed), min_cluster_size=int(mcs))
            elif photos is None:
                st.error(f"Upload {MIN_VIEWS}-{MAX_VIEWS} photos of one scene first.", icon=":material/error:")
            else:
                cfg = J.SegmentConfig(split=J.PHOTOS, views=len(photos[1]), seed=int(seed), min_cluster_size=int(mcs))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            cfg = None
        if cfg is not None:
            st.session_state["iggt_config"] = cfg
            res = run_job("Segmenting", J.run_segment, cfg, photos=photos[1] if photos else None,
                          photo_names=tuple(photos[0]) if photos else (), encoder=get_model("dinov2"),
                          models=_models(), time_cap_s=120)
            if res is not None:
                st.session_state["iggt_result"] = res
                record_run("iggt", {"scene": preset or "photos", "seed": cfg.seed, "min_cluster_size": cfg.min_cluster_size},
                           {f"{res.labels_of[m]} T-mIoU": v["t_miou"] for m, v in res.metrics.items()}
                           or {f"{res.labels_of[m]} tracks": len(res.tracks[m][0]) for m in res.tracks})
    if res := st.session_state.get("iggt_result"):
        st.markdown(f"**{res.source}**, {len(res.names)} views. " + " ".join(res.notes))
        st.plotly_chart(figs.views_figure(res), key="iggt_views")
        rows = []
        for m, label in res.labels_of.items():
            met = res.metrics.get(m, {})
            rows.append({"segmenter": label, "T-mIoU": met.get("t_miou"), "T-SR": met.get("t_sr"),
                         "tracks per view": " / ".join(str(len(t)) for t in res.tracks[m]),
                         "clustering s": res.costs["segment_s"][m]})
        show_metrics_table(rows, key="iggt_table")
        co = res.costs
        extra = ""
        if res.depth_absrel is not None:
            extra = (f" Depth AbsRel {res.depth_absrel:.3f}; same-object pixel pairs across views closer than the "
                     f"margin: {100 * (res.pairs_within_margin or 0):.0f} %.")
        st.caption(f"DINOv2 ({co['dinov2_parameters']:,} parameters, frozen) took {co['dinov2_s']:.2f} s for the "
                   f"views, the network ({co['network_parameters']:,} parameters) {co['network_s']:.3f} s; both "
                   f"baselines and the ablation use the same features or predictions.{extra}")
        with st.expander("Features and depth", expanded=False):
            st.plotly_chart(figs.features_figure(res), key="iggt_features")
        json_download("Masks, matches and scores (JSON)", res.to_dict(arrays=True), "iggt_segment.json",
                      key="iggt_json")
        show_history("iggt")

with tab_eval:
    size = preset_choice("iggt", {"Quick: 2 scenes per held-out split": {"iggt_scenes": 2},
                                  "Standard: 6 scenes per held-out split": {"iggt_scenes": 6}},
                         label="Benchmark size", horizontal=True)
    with st.form("iggt_eval_form"):
        c1, c2, c3 = st.columns(3)
        scenes = bound(c1.select_slider, "Scenes per split", [2, 4, 6, 12, 24], 2, key="iggt_scenes")
        views = bound(c2.select_slider, "Views", [2, 3, 4], 3, key="iggt_views_n")
        seeds = bound(c3.multiselect, "Seeds", list(J.SEEDS), list(J.SEEDS), key="iggt_seeds")
        go_e = st.form_submit_button("Score every segmenter", icon=":material/science:", type="primary")
    if go_e:
        try:
            ecfg = J.EvalConfig(scenes=int(scenes), views=int(views), seeds=tuple(seeds))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            ecfg = None
        if ecfg is not None:
            er = run_job("Scoring", J.run_eval, ecfg, encoder=get_model("dinov2"), models=_models(), time_cap_s=900)
            if er is not None:
                st.session_state["iggt_eval"] = er.to_dict()
                record_run("iggt", {"benchmark scenes": ecfg.scenes, "views": ecfg.views, "seeds": len(ecfg.seeds)},
                           {f"{er.labels[m]} T-mIoU ({s})": er.summary[s][m]["t_miou"] for s in er.summary
                            for m in er.summary[s]})
    if r := st.session_state.get("iggt_eval"):
        st.plotly_chart(figs.benchmark_bars(r), key="iggt_bars")
        table = [{"split": SPLIT_LABELS[s], "segmenter": r["labels"][m], "T-mIoU": v["t_miou"], "T-SR": v["t_sr"],
                  "seconds per scene": r["seconds"][m]} for s, rows in r["summary"].items() for m, v in rows.items()]
        show_metrics_table(table, key="iggt_eval_table")
        for s in r["summary"]:
            w = [x for seed in r["pairs_within_margin"][s].values() for x in seed if x is not None]
            st.caption(f"{SPLIT_LABELS[s]}: same-object pixel pairs across views closer than the margin M = 1: "
                       f"{100 * sum(w) / max(len(w), 1):.1f} % (mean over scenes and seeds). The paper: ScanNet++ "
                       "T-mIoU 73.0 vs 44.2 for SAM2, T-SR 98.9 vs 57.9.")
        d1, d2 = st.columns(2)
        with d1:
            json_download("Scores per scene (JSON)", r, "iggt_benchmark.json", key="iggt_eval_json")
        with d2:
            csv_download("Means (CSV)", pd.DataFrame(table), "iggt_benchmark.csv", key="iggt_eval_csv")
