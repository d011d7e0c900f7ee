"""AppTest of the motion-forecasting page: opens without running anything, samples the first preset (K futures per
method, figures, table, downloads), moves the time slider, takes an upload with the honest note, refuses a non-image
upload; the page's job is the CLI golden's job with the same settings, and the jobs and configs pickle."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import NOT_AN_IMAGE, image_widget, open_page

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "nextmotion.json"


@pytest.fixture(scope="module")
def at() -> AppTest:
    return open_page("nextmotion", timeout=120)


def test_opens_without_running_anything(at: AppTest) -> None:
    assert not at.exception
    assert "nextmotion_result" not in at.session_state
    assert not at.get("plotly_chart")


def test_first_preset_samples_every_method(at: AppTest) -> None:
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["nextmotion_result"]
    assert set(r["samples"]) == {"flow", "regressor", "noisy_regressor", "retrieval", "static"}
    assert r["samples"]["flow"].shape == (8, 14, 14, 8, 2)
    rows = {row["method"]: row for row in r["summary"]["rows"]}
    assert rows["truth"]["coverage"] == 1.0 and rows["static"]["coverage"] == 0.0
    assert len(at.get("plotly_chart")) == 2 and len(at.get("download_button")) == 2
    at.slider(key="nextmotion_t").set_value(3).run()
    assert not at.exception


def test_upload_and_bad_upload() -> None:
    from PIL import Image

    from backend.forecast.nextmotion.world import make_scene

    app = open_page("nextmotion", timeout=120)
    app.selectbox(key="nextmotion_img_choice").set_value("Upload your own").run()
    app.file_uploader[0].set_value(("notes.png", NOT_AN_IMAGE, "image/png")).run()
    assert not app.exception and app.error
    buf = io.BytesIO()
    Image.fromarray(make_scene(260_000, "peak").image).resize((224, 224)).save(buf, format="PNG")
    app.file_uploader[0].set_value(("scene.png", buf.getvalue(), "image/png")).run()
    assert not app.exception and not app.error
    app.button[0].click().run(timeout=120)
    assert not app.exception and not app.error, [e.value for e in app.error]
    r = app.session_state["nextmotion_result"]
    assert r["truth"] is None and r["summary"]["notes"]


UPLOADS = [image_widget("nextmotion", "nextmotion_img")]


def test_page_job_is_the_cli_job() -> None:
    """The page's default preset run, with the golden's settings, gives the golden's rows."""
    from dataclasses import asdict

    from backend.forecast.nextmotion import jobs as J
    from tests.test_cli import strip

    golden = json.loads(GOLDEN.read_text())
    cfg = J.SampleConfig(**{k: tuple(v) if isinstance(v, list) else v
                            for k, v in golden["expected"]["config"].items()})
    assert asdict(cfg) == {k: tuple(v) if isinstance(v, list) else v for k, v in golden["expected"]["config"].items()}
    got = J.run_sample(None, cfg).summary()
    for path in golden["volatile"]:
        got = strip(got, path.split("."))
    exp = golden["expected"]
    assert [r["method"] for r in got["rows"]] == [r["method"] for r in exp["rows"]]
    for a, b in zip(got["rows"], exp["rows"], strict=True):
        for key in ("best_of_k_mse", "coverage", "lrtl"):
            assert a.get(key) == pytest.approx(b.get(key), rel=1e-4, abs=1e-3), (a["method"], key)


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.forecast.nextmotion import jobs as J

    for obj in (J.run_sample, J.run_eval, J.SampleConfig(), J.EvalConfig()):
        assert pickle.loads(pickle.dumps(obj)) == obj
