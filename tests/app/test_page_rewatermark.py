"""AppTest of the self-re-watermarking page: opens instantly, a preset run (plain vs SRW: rounds, cross-model, PGD),
an upload, a bad upload (not an image), a too-small and a too-large upload and a classical baseline refusing a small image;
the page's job (``jobs.run_attack`` with the config the page builds) gives the numbers of ``rewatermark run --json``
on the same image and settings, and the job and its config pickle."""

from __future__ import annotations

import dataclasses
import io
import pickle

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from backend.watermark.rewatermark import inputs, jobs
from backend.watermark.rewatermark import lipschitz as L
from tests.app.conftest import image_widget, open_page
from tests.test_cli import run_json, same, strip


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = open_page("rewatermark", timeout=120)
    assert not at.exception
    return at


def _png(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_preset_run(app: AppTest) -> None:
    n_before = len(app.get("plotly_chart"))
    app.selectbox(key="rewatermark_img_choice").set_value("chelsea")
    app.selectbox(key="rewatermark_baseline").set_value("plain")
    app.selectbox(key="rewatermark_defended").set_value("srw")
    app.slider(key="rewatermark_rounds").set_value(2)
    app.button[0].click().run()
    assert not app.exception
    assert not app.error, [e.value for e in app.error]
    res = app.session_state["rewatermark_result"]["run"]
    assert set(res["models"]) == {"plain", "srw"}
    for d in res["models"].values():
        assert len(d["acc_a"]) == 2 and {"x", "x_w", "rw1", "rw2", "cross", "pgd"} <= set(d["images"])
    # rounds curve, attack bars, two image strips and two bit grids
    assert len(app.get("plotly_chart")) >= n_before + 6
    df = app.dataframe[0].value
    assert {"stage", "bit acc A", "bit acc B"} <= set(df.columns)
    assert ((df["bit acc A"] >= 0) & (df["bit acc A"] <= 1)).all()


def test_upload_bad_upload_and_small_image(app: AppTest) -> None:
    app.selectbox(key="rewatermark_img_choice").set_value("Upload your own").run()
    rng = np.random.default_rng(0)
    img = (rng.random((96, 80, 3)) * 255).astype(np.uint8)
    app.file_uploader(key="rewatermark_img_upload").set_value(("mine.png", _png(img), "image/png")).run()
    app.slider(key="rewatermark_rounds").set_value(1)
    app.select_slider(key="rewatermark_eps").set_value(0.0)
    app.button[0].click().run()
    assert not app.exception
    assert not app.error, [e.value for e in app.error]
    assert app.session_state["rewatermark_result"]["run"]["models"]["srw"]["images"]["x"].shape == (96, 80, 3)

    # the classical baseline needs 256 px: a clear message, no crash
    app.selectbox(key="rewatermark_baseline").set_value("dwtDctSvd")
    app.button[0].click().run()
    assert not app.exception
    assert app.error and "256" in app.error[0].value

    app.file_uploader(key="rewatermark_img_upload").set_value(("notes.png", b"this is not an image", "image/png")).run()
    assert not app.exception
    assert app.error and "not" in app.error[0].value.lower()

    app.file_uploader(key="rewatermark_img_upload").set_value(("tiny.png", _png(img[:20, :20]), "image/png")).run()
    assert not app.exception
    assert app.error and "32 px" in app.error[0].value

    huge = np.zeros((2100, 2100, 3), np.uint8)  # 4.4 MP > the page's 4.2 MP limit (a small PNG file)
    app.file_uploader(key="rewatermark_img_upload").set_value(("huge.png", _png(huge), "image/png")).run()
    assert not app.exception
    assert app.error, "a too-large image must be refused with a message"
    print("huge:", app.error[0].value)


@pytest.mark.skipif(not L.weights_path("srw").is_file(), reason="shipped rewatermark weights missing")
def test_page_job_equals_cli_run(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:
    """The page's preset run (chelsea, plain vs SRW, one round, PGD at eps 0.03) hands the runner the job the CLI
    runs; that job for SRW alone gives the numbers ``rewatermark run`` prints for the same image file and settings."""
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("rewatermark", timeout=120)
    at.selectbox(key="rewatermark_img_choice").set_value("chelsea")
    at.selectbox(key="rewatermark_baseline").set_value("plain")
    at.selectbox(key="rewatermark_defended").set_value("srw")
    at.slider(key="rewatermark_rounds").set_value(1)
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (image, config))] = calls
    assert fn is jobs.run_attack and np.array_equal(image, inputs.preset_image("chelsea"))
    assert config == jobs.AttackConfig(models=("plain", "srw"), rounds=1, cross="tinyhidden", pgd_eps=0.03)

    path = tmp_path / "chelsea.png"
    Image.fromarray(image).save(path)
    cli = run_json(["rewatermark", "run", str(path), "--model", "srw", "--rounds", "1", "--cross", "tinyhidden",
                    "--pgd-eps", "0.03", "--json"], capsys)
    got = fn(image, dataclasses.replace(config, models=("srw",))).models["srw"].to_json()
    for key in ("seconds", "images", "provenance"):
        got, cli = strip(got, [key]), strip(cli, [key])
    assert same(got, cli) is None, same(got, cli)


def test_job_and_config_pickle() -> None:
    """The jobs, their configs and an image pickle (the Ray executor sends them to a worker)."""
    image = np.zeros((40, 48, 3), np.uint8)
    job = (jobs.run_attack, image, jobs.AttackConfig(models=("plain", "srw"), rounds=2, cross="tinyhidden"))
    fn, img, config = pickle.loads(pickle.dumps(job))
    assert fn is jobs.run_attack and config == job[2] and np.array_equal(img, image)
    evaluate = (jobs.run_evaluate, jobs.EvaluateConfig(models=("plain", "srw"), rounds=1, pgd_iters=2))
    assert pickle.loads(pickle.dumps(evaluate)) == evaluate


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"rounds": 0}, "rounds must be between 1 and 10"),
        ({"tiles": 9}, "tiles must be between 1 and 8"),
        ({"pgd_eps": -0.1}, "PGD eps must be between 0"),
        ({"models": ("nope",)}, "Valid names"),
        ({"models": ()}, "Name at least one model"),
        ({"cross": "nope"}, "Valid names"),
        ({"seed": -1}, "seed must be an integer of at least 0"),
    ],
)
def test_config_refuses_bad_settings(settings: dict, words: str) -> None:
    from backend.errors import InputError

    with pytest.raises(InputError, match=words):
        jobs.AttackConfig(**settings)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    image_widget("rewatermark", "rewatermark_img"),
]
