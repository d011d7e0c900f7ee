"""AppTest: the models page lists recorded metadata without loading, and runs each live check on user input."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from streamlit.testing.v1 import AppTest

from tests.app.conftest import image_widget, open_page


def _page() -> AppTest:
    at = open_page("models", timeout=120)
    assert not at.exception
    return at


def _png(seed: int = 0) -> bytes:
    arr = (np.random.default_rng(seed).random((80, 120, 3)) * 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_opening_loads_nothing():
    import sys

    before = set(getattr(sys.modules.get("ui.models"), "_LOADED", set()))  # other pages' tests may have loaded models
    at = _page()
    assert at.dataframe[0].value.shape[0] == 4
    after = set(getattr(sys.modules.get("ui.models"), "_LOADED", set()))
    assert after == before


def test_text_and_generation_checks():
    at = _page()
    at.button[0].click()  # first form: Compare
    at.run()
    assert not at.exception
    sim = next(m for m in at.metric if m.label == "Cosine similarity")
    assert abs(float(sim.value) - 0.655) < 0.01
    at.text_area[0].set_value("What is the capital of France?")
    at.slider[0].set_value(12)
    at.button[1].click()
    at.run()
    assert not at.exception
    assert any("Paris" in t.value for t in at.text)


def test_vision_preset_upload_and_bad_upload():
    at = _page()
    go = at.button(key="models_vis_go")
    go.click()
    at.run()
    assert not at.exception and len(at.get("plotly_chart")) >= 1
    at.selectbox(key="models_vis_choice").set_value("Upload your own").run()
    at.file_uploader(key="models_vis_upload").set_value(("mine.png", _png(), "image/png")).run()
    at.button(key="models_vis_go").click()
    at.run()
    assert not at.exception and len(at.get("plotly_chart")) >= 1
    at.file_uploader(key="models_vis_upload").set_value(("fake.png", b"not an image at all" * 20, "image/png")).run()
    assert not at.exception
    assert any("not an image" in e.value for e in at.error)


def test_classifier_preset():
    at = _page()
    at.button(key="models_cls_go").click()
    at.run()
    assert not at.exception
    assert len(at.get("plotly_chart")) >= 1


def test_training_scenes_preview_shows_scenes_masks_and_depth():
    """The scenes tab renders on opening (numpy only: no model, no torch job): one contact sheet of six frames,
    images over instance masks over depth; the clip and the iLLaVA scenes are one click away."""
    at = _page()
    sheet = next(im for im in at.image if "frames of 96 px" in im.captions[0])
    assert "seed 0" in sheet.captions[0]
    at.radio(key="models_scenes_kind").set_value("A clip (camera pan, moving objects)").run()
    assert not at.exception and any("6 frames of 96 px" in im.captions[0] for im in at.image)
    at.radio(key="models_scenes_kind").set_value("iLLaVA scenes (held-out)").run()
    at.number_input(key="models_scenes_seed").set_value(3).run()
    assert not at.exception
    assert any("frames of 224 px, seed 3" in im.captions[0] for im in at.image)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    image_widget("models", "models_vis"),
    image_widget("models", "models_cls"),
]


def test_jobs_refuse_bad_input_and_pickle():
    """The page's jobs check their arguments before loading anything, and they pickle (the Ray executor)."""
    import pickle

    import pytest

    from backend.errors import InputError
    from backend.models import jobs

    with pytest.raises(InputError, match="empty"):
        jobs.run_similarity("  ", "b", encoder=object())
    with pytest.raises(InputError, match="at most"):
        jobs.run_generate("x" * (jobs.MAX_PROMPT_CHARS + 1), 16, lm=object())
    with pytest.raises(InputError, match="New tokens"):
        jobs.run_generate("hello", 65, lm=object())
    with pytest.raises(InputError, match="resolution"):
        jobs.run_patch_features(None, 100, encoder=object())
    for fn in (jobs.run_similarity, jobs.run_generate, jobs.run_patch_features, jobs.run_classify):
        assert pickle.loads(pickle.dumps(fn)) is fn
