"""AppTest of the temporal-slowness page: opens without running anything, runs the quick probe preset on the shipped
encoders, shows a stream clip, finds neighbours of an upload, refuses a bad upload. The page's job is the CLI's
(``slowness probe``) with the golden's settings, and the jobs pickle."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import NOT_AN_IMAGE, image_widget, open_page, png_bytes

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "slowness.json"


def test_opens_without_running_anything() -> None:
    at = open_page("slowness")
    assert not at.exception
    assert "slowness_result" not in at.session_state
    assert not at.get("plotly_chart")


def test_quick_preset_runs() -> None:
    at = open_page("slowness")
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["slowness_result"]
    assert len(r["rows"]) == 12 and set(r["paired"]) >= {"instance", "fg_drop"}
    assert len(at.get("plotly_chart")) == 3


def test_stream_clip_shows_pairs() -> None:
    at = open_page("slowness")
    at.slider(key="slowness_crop").set_value(24)
    at.button[1].click().run(timeout=60)
    assert not at.exception, at.exception
    s = at.session_state["slowness_stream"]
    assert s["config"]["crop"] == 24 and len(s["pairs"]) == 4


def test_upload_neighbours_and_bad_upload() -> None:
    at = open_page("slowness")
    at.selectbox(key="slowness_img_choice").set_value("Upload your own").run()
    at.file_uploader(key="slowness_img_upload").set_value(("me.png", png_bytes(1), "image/png")).run()
    at.button(key="slowness_nn_go").click().run(timeout=60)
    assert not at.exception, at.exception
    assert len(at.session_state["slowness_nn"]["neighbours"]) == 4
    at.file_uploader(key="slowness_img_upload").set_value(("bad.png", NOT_AN_IMAGE, "image/png")).run()
    assert at.error


UPLOADS = [image_widget("slowness", "slowness_img")]


def test_page_job_is_the_cli_job() -> None:
    from backend.scenes.slowness import jobs as J

    spec = json.loads(GOLDEN.read_text())
    argv = spec["argv"]
    kw = {"models": argv[argv.index("--model") + 1], "seeds": tuple(int(s) for s in argv[argv.index("--seeds") + 1]
                                                                    .split(",")),
          "train_per_instance": int(argv[argv.index("--train-per-instance") + 1]),
          "test_per_instance": int(argv[argv.index("--test-per-instance") + 1])}
    res = J.run_probe(J.ProbeConfig(**kw)).to_dict()
    exp = spec["expected"]
    assert res["rows"] == exp["rows"] and res["means"] == exp["means"]


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.scenes.slowness import jobs as J

    for obj in (J.run_probe, J.run_sweep, J.run_stream, J.run_neighbours, J.ProbeConfig(), J.SweepConfig(),
                J.StreamConfig(), J.NeighbourConfig()):
        assert pickle.loads(pickle.dumps(obj)) == obj
