"""Embedded models: what runs offline, where it comes from, and a live check of each on the user's own input."""

from __future__ import annotations

import streamlit as st

from backend.errors import InputError
from backend.models import jobs
from backend.runtime import provenance
from ui.figures.models import image_and_pca, topk_bar
from ui.inputs import image_input
from ui.layout import json_download, show_metrics_table
from ui.models import get_model
from ui.runner import run_job

st.title("Embedded models")
st.markdown(
    "Every page of the lab runs offline on these models, which ship inside Python packages (no hub downloads). "
    "Slow conversions (GGUF dequantisation, ONNX to transformers) run once and are cached as safetensors in the user "
    "cache folder. Each role also accepts a **Hugging Face name** (already in the local cache) or a **local folder**. "
    "The table shows recorded metadata: opening this page loads nothing."
)

from backend.models import MODELS, recorded_metadata  # noqa: E402 - light: no torch at import

meta = recorded_metadata()
rows = []
for mid, spec in MODELS.items():
    m = meta.get(mid, {})
    rows.append({
        "id": mid, "role": spec.role, "model": spec.title, "default source": spec.default_source,
        "parameters": f"{spec.parameters:,}", "licence": spec.license,
        "last measured load (s)": m.get("load_s"), "sanity": m.get("sanity"),
    })
show_metrics_table(rows)

tabs = st.tabs(["Text encoder", "Causal LM", "Vision encoder", "Classifier", "Training scenes"])
results: dict = st.session_state.setdefault("models_results", {})


def loaded(model_id: str, source: str | None = None):  # noqa: ANN201
    """The cached model, or None with the reason shown in the page (a name that is not found offline)."""
    try:
        return get_model(model_id, source)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        return None


def source_box(key: str) -> str | None:
    label = "Model (blank = embedded default; or a Hugging Face name / local folder)"
    return st.text_input(label, key=key).strip() or None


with tabs[0]:
    with st.form("models_text"):
        src = source_box("models_text_src")
        a = st.text_input("Sentence A", "A cat sits on the mat.", max_chars=jobs.MAX_SENTENCE_CHARS)
        b = st.text_input("Sentence B", "A kitten is resting on a rug.", max_chars=jobs.MAX_SENTENCE_CHARS)
        go = st.form_submit_button("Compare", icon=":material/play_arrow:")
    if go and (enc := loaded("minilm", src)) is not None:
        results["text"] = run_job("Sentence similarity", jobs.run_similarity, a, b, enc) or results.get("text")
    if r := results.get("text"):
        st.metric("Cosine similarity", f"{r['cosine']:.3f}", help=f"{r['seconds']} s, model {r['source']}")

with tabs[1]:
    with st.form("models_lm"):
        src = source_box("models_lm_src")
        prompt = st.text_area("Prompt", "What is the capital of France?", max_chars=jobs.MAX_PROMPT_CHARS)
        n_new = st.slider("New tokens", *jobs.NEW_TOKENS, 30)
        go = st.form_submit_button("Generate", icon=":material/play_arrow:")
    if go and (lm := loaded("smollm2", src)) is not None:
        results["lm"] = run_job("Generation", jobs.run_generate, prompt, n_new, lm, time_cap_s=180) or results.get("lm")
    if r := results.get("lm"):
        st.text(r["text"])
        st.caption(f"{r['new_tokens']} new tokens at most in {r['seconds']} s · {r['source']}")

with tabs[2]:
    label, img = image_input("models_vis")
    size = st.select_slider("Resolution (px; 14-px patches)", jobs.SIZES, 224, key="models_vis_size")
    if st.button("Show patch features", key="models_vis_go", disabled=img is None, icon=":material/play_arrow:"):
        results["vision"] = run_job("DINOv2 patch features", jobs.run_patch_features, img, size, label,
                                    loaded("dinov2")) or results.get("vision")
    if r := results.get("vision"):
        st.plotly_chart(image_and_pca(r["image"], r["pca"]), key="models_pca_fig")
        st.caption(f"{r['tokens']} patch tokens in {r['seconds']} s. Similar colours = similar features "
                   "(the first three principal components of this image's patch tokens).")

with tabs[3]:
    label, img = image_input("models_cls")
    if st.button("Classify", key="models_cls_go", disabled=img is None, icon=":material/play_arrow:"):
        results["cls"] = run_job("EfficientNet-Lite0", jobs.run_classify, img, label,
                                 loaded("efficientnet")) or results.get("cls")
    if r := results.get("cls"):
        st.plotly_chart(topk_bar([f"{n} ({i})" for i, n, _ in r["top"]], [p for *_, p in r["top"]]),
                        key="models_top5_fig")
        st.caption(f"{r['seconds']} s on CPU")

with tabs[4]:
    from backend import scenes

    st.markdown(
        "The vision miniatures train on scenes the lab renders (`backend.scenes`): shapes with colours and textures "
        "on backgrounds with clutter, under changing light, each with exact per-pixel instance masks and depth. "
        "Rows: the images, their instance masks, their depth (near is bright)."
    )
    c1, c2 = st.columns([3, 1])
    kind = c1.radio("Show", ["Scenes", "A clip (camera pan, moving objects)", "iLLaVA scenes (held-out)"],
                    horizontal=True, key="models_scenes_kind")
    first = int(c2.number_input("First seed", 0, 100_000, 0, key="models_scenes_seed"))
    if kind.startswith("iLLaVA"):
        from backend.tokens.illava import scenes as illava_scenes

        frames = [illava_scenes.make_scene(illava_scenes.HELDOUT_SEED0 + first + i).frame() for i in range(6)]
    elif kind.startswith("A clip"):
        frames = scenes.make_clip(first, scenes.SceneConfig(size=96), scenes.Motion(frames=6, camera_speed=4)).frames
    else:
        frames = scenes.make_scenes(range(first, first + 6), scenes.SceneConfig(size=96))
    side = frames[0].image.shape[0]
    st.image(scenes.contact_sheet(frames), caption=f"{len(frames)} frames of {side} px, seed {first}: "
             + "; ".join(", ".join(o.label for o in f.objects) or "no objects" for f in frames[:2]) + "; ...")

from backend.models import EXTRA_MODELS  # noqa: E402 - light: presence checks look for files only

with st.expander("Models outside the embedded set (trained by the project, or a separate install)"):
    st.markdown("`make run` and `make test` never fetch these; the status says whether each can load here.")
    show_metrics_table([
        {"id": m.id, "role": m.role, "model": m.title, "parameters": f"{m.parameters:,}", "licence": m.license,
         "status": "installed" if m.is_present() else "not installed", "how to get it": m.install, "note": m.note}
        for m in EXTRA_MODELS.values()
    ])

if results:
    report = {k: {kk: vv for kk, vv in v.items() if kk not in ("image", "pca")} for k, v in results.items()}
    json_download("Download results (JSON)", {"results": report, **provenance(None)}, "models_check.json",
                  key="models_dl")
    st.caption("Recorded load times come from `python -m backend models check NAME --record`.")
