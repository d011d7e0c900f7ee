"""AppTest of the AML page: opens without running anything, segments a preset scene with every head, scores the
shipped heads on the quick preset, segments an upload, refuses a bad upload and an empty expression. The page's job
is the CLI's (``aml segment`` on the golden's preset) with the golden's numbers, and the jobs pickle."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from tests.app.conftest import NOT_AN_IMAGE, image_widget, open_page, png_bytes

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "aml.json"
UPLOADS = [image_widget("aml", "aml_img")]


def test_opens_without_running_anything() -> None:
    at = open_page("aml")
    assert not at.exception
    assert "aml_result" not in at.session_state and "aml_eval" not in at.session_state
    assert not at.get("plotly_chart")


def test_preset_segments_with_every_head() -> None:
    at = open_page("aml")
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    s = at.session_state["aml_result"]["summary"]
    assert len(s["panels"]) == 3 and all(p["iou"] is not None for p in s["panels"])
    assert len(at.get("plotly_chart")) == 1


def test_quick_evaluation_preset() -> None:
    at = open_page("aml")
    at.button[1].click().run(timeout=180)
    assert not at.exception, at.exception
    r = at.session_state["aml_eval"]
    assert r["n"] == 60 and len(r["rows"]) == 15 and set(r["paired"])
    assert len(at.get("plotly_chart")) == 2


def test_upload_segments_and_bad_input_is_refused() -> None:
    at = open_page("aml")
    at.selectbox(key="aml_img_choice").set_value("Upload your own").run()
    at.file_uploader(key="aml_img_upload").set_value(("me.png", png_bytes(1), "image/png")).run()
    at.text_input(key="aml_text_me.png").set_value("the red circle")
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert all(p["iou"] is None for p in at.session_state["aml_result"]["summary"]["panels"])
    at.text_input(key="aml_text_me.png").set_value("   ")
    at.button[0].click().run(timeout=60)
    assert at.error and "empty" in at.error[0].value
    at.file_uploader(key="aml_img_upload").set_value(("bad.png", NOT_AN_IMAGE, "image/png")).run()
    assert at.error


def test_page_job_gives_the_cli_golden() -> None:
    from backend.scenes.aml import jobs as J

    spec = json.loads(GOLDEN.read_text())
    argv = spec["argv"]
    preset = argv[argv.index("--preset") + 1]
    img, text, gt = J.preset_sample(preset)
    res = J.run_segment(img, J.SegmentConfig(text=text), mask=gt)
    got = res.summary()
    for a, b in zip(got["panels"], spec["expected"]["panels"], strict=True):
        assert a["masking"] == b["masking"] and a["area"] == b["area"] and a["iou"] == b["iou"]
        assert a["mask_rle"] == b["mask_rle"]
    assert pickle.loads(pickle.dumps(J.run_segment)) is J.run_segment
    assert pickle.loads(pickle.dumps(J.SegmentConfig(text=text))) == J.SegmentConfig(text=text)
