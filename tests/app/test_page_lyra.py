"""AppTest of the Lyra page: opens without running anything, renders the preset scene's camera path with the fast
methods, moves the orbit-angle slider, scores the shipped networks on the quick preset, renders an upload and refuses
a bad one. The page's job is the CLI's (``lyra render`` on the golden's settings) with the golden's numbers, and the
job and its config pickle."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from tests.app.conftest import NOT_AN_IMAGE, image_widget, open_page, png_bytes

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "lyra.json"
UPLOADS = [image_widget("lyra", "lyra_img")]


def test_opens_without_running_anything() -> None:
    at = open_page("lyra")
    assert not at.exception
    assert "lyra_result" not in at.session_state and "lyra_eval" not in at.session_state
    assert not at.get("plotly_chart")


def test_preset_renders_the_path_and_the_slider_moves() -> None:
    at = open_page("lyra")
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["lyra_result"]
    assert res.reference == "truth" and len(res.deltas) == 8 and "lyra" in res.psnr
    assert len(at.get("plotly_chart")) == 3
    at.select_slider(key="lyra_angle").set_value(0).run()
    assert not at.exception


def test_quick_evaluation_preset() -> None:
    at = open_page("lyra")
    at.button[1].click().run(timeout=180)
    assert not at.exception, at.exception
    r = at.session_state["lyra_eval"]
    assert len(r["psnr"]["warp"]) == 12 and len(at.get("plotly_chart")) == 1


def test_upload_renders_and_bad_input_is_refused() -> None:
    at = open_page("lyra")
    at.selectbox(key="lyra_img_choice").set_value("Upload your own").run()
    at.file_uploader(key="lyra_img_upload").set_value(("me.png", png_bytes(1, (80, 60)), "image/png")).run()
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    res = at.session_state["lyra_result"]
    assert res.reference == "teacher" and res.truth is None
    at.file_uploader(key="lyra_img_upload").set_value(("bad.png", NOT_AN_IMAGE, "image/png")).run()
    assert at.error


def test_page_job_gives_the_cli_golden() -> None:
    from backend.scenes.lyra import jobs as J

    spec = json.loads(GOLDEN.read_text())
    argv = spec["argv"]
    val = lambda k, d: type(d)(argv[argv.index(k) + 1]) if k in argv else d  # noqa: E731
    cfg = J.RenderConfig(scene=val("--scene", 0), path=val("--path", "orbit"), views=val("--views", 8),
                         methods=val("--methods", "fast"))
    got = J.run_render(cfg).to_dict()
    exp = spec["expected"]
    assert got["deltas"] == exp["deltas"]
    for k, v in exp["psnr"].items():
        assert got["psnr"][k] == v and got["ssim"][k] == exp["ssim"][k]
    assert pickle.loads(pickle.dumps(J.run_render)) is J.run_render
    assert pickle.loads(pickle.dumps(cfg)) == cfg
