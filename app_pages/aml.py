"""AML: alignment-aware masked learning for referring segmentation, against random block masking and no masking."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.errors import InputError
from backend.scenes.aml import inputs as I
from backend.scenes.aml import jobs as J
from backend.scenes.aml.masking import MASKINGS
from ui.claims import claims_panel
from ui.figures import aml as figs
from ui.inputs import image_input, skimage_presets
from ui.layout import csv_download, json_download, page_header, show_metrics_table
from ui.models import get_model
from ui.runner import run_job
from ui.state import bound, preset_choice, record_run, show_history

page_header("aml", """
Referring segmentation outlines the one object a sentence names ("the red circle left of the square"). **AML** changes
only training: a gradient-free first pass scores how well each image region matches the sentence (**PatchMax**), the
blocks of weakly matched pixels are zeroed, and the ordinary loss is applied to the masked image. Here three small
heads over frozen DINOv2 and MiniLM features (AML, random blocks at AML's rate, no masking; five seeds each) are
compared on procedural scenes.
""", details_md="""
**Data.** 112 x 112 scenes of 3-5 coloured shapes (`backend.scenes`), each with one templated expression that names
exactly one object: colour and shape, shape alone, size among same-looking twins ("the small black square"), or a
relation to a landmark ("the red diamond left of the circle"). Half the scenes copy the target's look onto another
object, so size or relation is needed. Training: 1,600 scenes on plain and gradient backdrops with flat and striped
objects. The **held-out source** (the claims) changes the backdrops (grating, fractal), the textures (checkered,
dotted), the clutter and the phrasing ("the circle coloured red", "the red circle, the smaller one", "... to the left
of ...").

**Model.** Frozen DINOv2 ViT-S/14 patch tokens (8 x 8 patches of 14 px) and MiniLM token states, computed once and
cached; a trained head of 91k parameters: linear projections to 48 dimensions, cross-attention of patches to tokens,
FiLM by the sentence, convolutions, an image path at 28 x 28, bilinear upsampling. 400 steps of 32 samples.

**AML** (as the official code computes it): the head's visual and text features, L2-normalised, times one fixed
Gaussian matrix (256 columns); similarities / 0.05, a softmax over each patch's tokens, the maximum over tokens
(PatchMax); bilinear upsampling to pixels; pixels below tau = 0.4 are weak; a random quarter of them (rho = 0.25, the
masked share in the official `mask_image_with_relevance`) are selected, and every block holding a selected pixel is
zeroed, in the cached patch tokens and in the image path. **Random blocks** zero as many blocks per sample, anywhere.

**Where the miniature departs from the paper.** Frozen encoders and a small head instead of a fine-tuned Swin-B / BERT
model (so blocks are zeroed in features, not in the pixels the encoder sees); one block = one 14-pixel patch (the
paper: 32-pixel blocks on 480-pixel images); a softmax temperature, since cosines of normalised features in [-1, 1]
would give a flat softmax; synthetic scenes instead of RefCOCO; 400 training steps. Your own photo is resized to
112 x 112 and segmented by heads that have only seen flat coloured shapes: expect guesses on real photos.
""")
claims_panel("aml")

tab_seg, tab_eval = st.tabs(["Segment an image", "Evaluate the shipped heads"])


def _preset(name: str):  # noqa: ANN202 - PIL.Image.Image
    from PIL import Image

    return lambda: Image.fromarray(J.preset_sample(name)[0])


with tab_seg:
    presets = {name: _preset(name) for name in I.PRESETS}
    presets.update({f"Photo: {k}": v for k, v in skimage_presets().items()})
    label, image = image_input("aml_img", presets)
    gt, default_text = None, "the red circle"
    if label in I.PRESETS:
        _, default_text, gt = J.preset_sample(label)
    elif image is not None:
        st.caption(f"The {image.size[0]} x {image.size[1]} image is resized to 112 x 112 for the encoder; there is no "
                   "ground truth, so no IoU.")
    with st.form("aml_form"):
        text = st.text_input(f"Referring expression (1-{J.MAX_CHARS} characters)", default_text,
                             max_chars=J.MAX_CHARS + 80, key=f"aml_text_{label}")
        c1, c2, c3, c4 = st.columns(4)
        seed = bound(c1.selectbox, "Seed of the heads", list(J.SEEDS), key="aml_seed")
        tau = bound(c2.slider, "tau (weak below)", 0.05, 0.95, 0.4, 0.05, key="aml_tau")
        rho = bound(c3.slider, "rho (share of weak pixels selected)", 0.05, 1.0, 0.25, 0.05, key="aml_rho")
        draw = bound(c4.number_input, "Draw", 0, 10_000, 0, key="aml_draw")
        go = st.form_submit_button("Segment with every head", icon=":material/play_arrow:", type="primary")
    if go:
        if image is None:
            st.error("Pick a preset or upload an image first.", icon=":material/error:")
        else:
            try:
                cfg = J.SegmentConfig(text=text, seed=int(seed), tau=float(tau), rho=float(rho), draw=int(draw))
            except InputError as err:
                st.error(str(err), icon=":material/error:")
                cfg = None
            if cfg is not None:
                res = run_job("Segmenting", J.run_segment, image, cfg, gt,
                              encoders=(get_model("dinov2"), get_model("minilm")), time_cap_s=120)
                if res is not None:
                    st.session_state["aml_result"] = {"segment": res, "summary": res.summary(), "image": label}
                    record_run("aml", {"image": label, "text": cfg.text, "seed": cfg.seed, "tau": cfg.tau,
                                       "rho": cfg.rho},
                               {f"{p['label']} IoU": p["iou"] for p in res.panels if p["iou"] is not None}
                               or {f"{p['label']} area": p["area"] for p in res.panels}, seed=cfg.seed)
    if (state := st.session_state.get("aml_result")) and "segment" in state:
        res = state["segment"]
        st.markdown(f"**{res.text}** (word pieces: {' '.join(res.tokens)})")
        st.plotly_chart(figs.panels_figure(res), key="aml_panels")
        rows = [{"head": p["label"], "IoU (%)": p["iou"], "mask area (px)": p["area"],
                 "zeroed blocks": int(p["blocks"].sum()), "mean PatchMax": round(float(p["patchmax"].mean()), 3)}
                for p in res.panels]
        show_metrics_table(rows, key="aml_seg_table")
        st.caption(f"{res.seconds:.2f} s for the features and the {len(res.panels)} heads. The blocks column shows "
                   "what each head's training masking would zero on this image (AML: from the head's own PatchMax; "
                   "random: the same count anywhere; none: nothing). At inference no head masks anything.")
        json_download("Masks and maps (JSON)", state["summary"], "aml_segment.json", key="aml_seg_json")
        show_history("aml")

with tab_eval:
    size = preset_choice("aml", {"Quick: 60 held-out scenes": {"aml_n": 60},
                                 "Standard: 300 held-out scenes": {"aml_n": 300}}, label="Evaluation size",
                         horizontal=True)
    with st.form("aml_eval_form"):
        c1, c2, c3 = st.columns(3)
        split = bound(c1.selectbox, "Scenes", list(J.SPLITS), key="aml_split",
                      format_func=lambda s: {"heldout": "held-out source", "val": "training source (val)"}[s])
        n = bound(c2.select_slider, "Scenes scored", [60, 150, 300, 600, 1000], 60, key="aml_n")
        seeds = bound(c3.multiselect, "Seeds", list(J.SEEDS), list(J.SEEDS), key="aml_seeds")
        go_e = st.form_submit_button("Score the shipped heads", icon=":material/science:", type="primary")
    if go_e:
        try:
            ecfg = J.EvalConfig(split=split, n=int(n), seeds=tuple(seeds))
        except InputError as err:
            st.error(str(err), icon=":material/error:")
            ecfg = None
        if ecfg is not None:
            er = run_job("Scoring", J.run_evaluate, ecfg, time_cap_s=600)
            if er is not None:
                st.session_state["aml_eval"] = er.to_dict()
                record_run("aml", {"split": ecfg.split, "n": ecfg.n, "seeds": len(ecfg.seeds)},
                           {f"{MASKINGS.label(m)} mIoU": er.means[m]["miou"] for m in er.means})
    if r := st.session_state.get("aml_eval"):
        means = [{"head": r["labels"][m], **{k: round(v, 2) for k, v in d.items()},
                  "training s": round(r["seconds"][m], 1),
                  "blocks zeroed in training": " / ".join(f"{100 * (x['masked_share'] or 0):.0f} %"
                                                          for x in r["rows"] if x["masking"] == m),
                  "time overhead": f"{100 * r['overhead'].get(m, 0.0):+.0f} %"} for m, d in r["means"].items()]
        st.subheader(f"Means over {len(r['config']['seeds'])} seeds, {r['n']} {r['split']} scenes")
        show_metrics_table(means, key="aml_means")
        for b, d in r["paired"].items():
            g, o = d["miou"], d["oiou"]
            st.markdown(f"**AML minus {r['labels'][b]}:** mIoU {g['gain']:+.2f} (95 % interval {g['low']:+.2f} to "
                        f"{g['high']:+.2f}), oIoU {o['gain']:+.2f} ({o['low']:+.2f} to {o['high']:+.2f}), "
                        f"{g['n']} paired seeds. The paper: AML +0.8 mIoU over the previous best; random masking "
                        "+0.15.")
        a, b = st.columns([3, 2])
        a.plotly_chart(figs.curves_figure(r), key="aml_curves")
        b.plotly_chart(figs.seed_lines(r), key="aml_seedlines")
        st.caption(f"Each head: {r['params']:,} trained parameters; scoring took {r['eval_seconds']:.1f} s. Training "
                   "seconds exclude evaluation; the overhead is the per-seed ratio to the unmasked run (the paper: "
                   "+17.2 % training time).")
        rows = [{"head": r["labels"][x["masking"]], **{k: v for k, v in x.items() if k != "masking"}}
                for x in r["rows"]]
        d1, d2 = st.columns(2)
        with d1:
            json_download("Scores (JSON)", r, "aml_scores.json", key="aml_eval_json")
        with d2:
            csv_download("Per head and seed (CSV)", pd.DataFrame(rows), "aml_scores.csv", key="aml_eval_csv")
