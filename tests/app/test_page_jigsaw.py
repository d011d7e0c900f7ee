"""AppTest of the Visual Jigsaw page: opens without running anything, solves a preset puzzle with both policies and
scores a typed answer (the race), solves an upload, refuses a bad upload, re-scores the shipped policies on the quick
preset, shows the tiny VLM's recorded before/after, orders the frames of a held-out clip and of a pan over the
first tab's image. The page's job is the CLI's (``jigsaw solve`` on the golden's
preset) with the golden's numbers, and the jobs pickle."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from tests.app.conftest import NOT_AN_IMAGE, image_widget, open_page, png_bytes

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "jigsaw.json"
UPLOADS = [image_widget("jigsaw", "jigsaw_img")]


def test_opens_without_running_anything() -> None:
    at = open_page("jigsaw")
    assert not at.exception
    for k in ("jigsaw_result", "jigsaw_eval", "jigsaw_vlm"):
        assert k not in at.session_state
    assert not at.get("plotly_chart")


def test_preset_solves_and_races() -> None:
    at = open_page("jigsaw")
    at.text_input(key="jigsaw_answer").set_value("1, 2, 3, 4, 5, 6, 7, 8, 9")
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    s = at.session_state["jigsaw_result"]["summary"]
    assert s["grid"] == 3 and len(s["answers"]) == 2 and s["race"]["valid"]
    assert len(at.get("plotly_chart")) == 1


def test_upload_solves_and_bad_input_is_refused() -> None:
    at = open_page("jigsaw")
    at.selectbox(key="jigsaw_img_choice").set_value("Upload your own").run()
    at.file_uploader(key="jigsaw_img_upload").set_value(("me.png", png_bytes(1), "image/png")).run()
    at.radio(key="jigsaw_grid").set_value(2).run()
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert at.session_state["jigsaw_result"]["summary"]["grid"] == 2
    at.file_uploader(key="jigsaw_img_upload").set_value(("bad.png", NOT_AN_IMAGE, "image/png")).run()
    assert at.error


def test_quick_evaluation_and_vlm_tabs() -> None:
    at = open_page("jigsaw")
    at.button[1].click().run(timeout=180)
    assert not at.exception, at.exception
    r = at.session_state["jigsaw_eval"]
    assert r["puzzles"] == 128 and len(r["rows"]) == 12 and set(r["paired"]) == {"2", "3"}
    at.button[2].click().run(timeout=60)
    assert not at.exception, at.exception
    assert at.session_state["jigsaw_vlm"]["recorded"]["qa_questions"] >= 500
    assert len(at.get("plotly_chart")) == 3


def test_clip_ordering_tab_orders_a_held_out_clip_and_a_pan_over_the_image() -> None:
    at = open_page("jigsaw")
    at.text_input(key="jigsaw_clip_answer").set_value("4, 3, 2, 1")
    at.button[3].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    s = at.session_state["jigsaw_clip"]["summary"]
    assert s["grid"] == 0 and len(s["truth"]) == 4 and len(s["answers"]) == 2 and s["race"]["valid"]
    at.selectbox(key="jigsaw_clip_source").set_value("image").run()
    at.button[3].click().run(timeout=120)
    assert not at.exception, at.exception
    assert at.session_state["jigsaw_clip"]["summary"]["config"]["source"] == "upload"


def test_page_job_gives_the_cli_golden() -> None:
    from backend.scenes.jigsaw import jobs as J

    spec = json.loads(GOLDEN.read_text())
    argv = spec["argv"]
    preset = argv[argv.index("--preset") + 1]
    cfg = J.SolveConfig(grid=int(argv[argv.index("--grid") + 1]))
    got = J.run_solve(J.preset_image(preset), cfg).summary()
    exp = spec["expected"]
    assert got["truth"] == exp["truth"]
    for a, b in zip(got["answers"], exp["answers"], strict=True):
        assert a["reward"] == b["reward"] and a["answer"] == b["answer"] and a["correct"] == b["correct"]
    assert pickle.loads(pickle.dumps(J.run_solve)) is J.run_solve
    assert pickle.loads(pickle.dumps(cfg)) == cfg
