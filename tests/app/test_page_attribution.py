"""AppTest of the watermark attribution page: preset -> embed/attack/attribute, an upload, a bad upload, users; the
page's job (``jobs.run_trace`` with the config the page builds) gives the numbers of ``attribution embed`` then
``attribution attribute --json`` on the same image, user and settings; the jobs and their configs pickle."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from backend.watermark.attribution import inputs, jobs
from tests.app.conftest import image_widget, open_page
from tests.test_cli import run_json, same


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    from backend.watermark.attribution.users import UserRegistry

    path = tmp_path_factory.mktemp("attr") / "users.sqlite"
    UserRegistry(path).create_users(200, "absta", seed=0)
    return path


@pytest.fixture
def app(db_path, monkeypatch):
    monkeypatch.setenv("METHOD_LAB_ATTRIBUTION_DB", str(db_path))
    at = open_page("attribution", timeout=60)
    assert not at.exception
    return at


def _click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label == label).click()
    return at.run()


def test_preset_embed_attack_attribute(app):
    app.slider(key="attribution_jpeg").set_value(60.0)
    _click(app, "Embed, attack, attribute")
    assert not app.exception
    r = app.session_state["attribution_result"]
    assert r["user_id"] == 17 and r["attack"] == "jpeg:60" and r["num_users"] == 200
    assert r["psnr"] > 30 and 0 < r["ssim"] <= 1
    assert len(r["top_users"]) == 5
    assert len(app.get("plotly_chart")) >= 5  # images, top-5, bit grid + the bounds tab's two charts
    assert any("tau =" in (m.value or "") for m in [*app.success, *app.warning])
    assert not app.error


def test_upload_and_bad_upload(app):
    app.selectbox(key="attr_img_choice").set_value("Upload your own").run()
    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    Image.fromarray((rng.random((120, 160, 3)) * 255).astype(np.uint8)).save(buf, format="PNG")
    app.file_uploader(key="attr_img_upload").set_value(("mine.png", buf.getvalue(), "image/png")).run()
    assert not app.exception and not app.error
    _click(app, "Embed, attack, attribute")
    assert not app.exception
    assert app.session_state["attribution_result"]["original"].shape == (120, 160, 3)
    app.file_uploader(key="attr_img_upload").set_value(("notes.png", b"this is not an image", "image/png")).run()
    assert not app.exception
    assert app.error and "not an image" in app.error[0].value


def test_classical_backend_refuses_small_upload(app):
    app.selectbox(key="attr_img_choice").set_value("Upload your own").run()
    buf = io.BytesIO()
    Image.fromarray(np.full((100, 100, 3), 128, np.uint8)).save(buf, format="PNG")
    app.file_uploader(key="attr_img_upload").set_value(("small.png", buf.getvalue(), "image/png")).run()
    app.selectbox(key="attribution_backend").set_value("dwtDctSvd").run()
    _click(app, "Embed, attack, attribute")
    assert not app.exception
    assert app.error and "256" in app.error[0].value


def test_users_tab_create_and_compare_pools(tmp_path, monkeypatch):
    monkeypatch.setenv("METHOD_LAB_ATTRIBUTION_DB", str(tmp_path / "fresh.sqlite"))
    at = open_page("attribution", timeout=60)
    assert not at.exception
    at.number_input(key="attr_new_users").set_value(50)
    at.selectbox(key="attr_strategy").set_value("random")
    _click(at, "Create users")
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Created users 1-50" in s.value for s in at.success)
    at.slider(key="attr_pool_n").set_value(100)
    _click(at, "Compare code pools")
    assert not at.exception
    pools = at.session_state["attribution_pools"]
    assert set(pools) == {"random", "nrg", "absta"} and pools["absta"][1] < pools["random"][1]


def test_corrupt_database_shows_a_clear_message(tmp_path, monkeypatch):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database" * 200)
    monkeypatch.setenv("METHOD_LAB_ATTRIBUTION_DB", str(bad))
    at = open_page("attribution", timeout=60)
    assert not at.exception
    assert at.error and "not a usable users database" in at.error[0].value


def test_bounds_tab_table5_and_simulation(app):
    table = app.dataframe[-1].value
    assert float(table["TAR >= (Thm 4)"][0]) == pytest.approx(0.9999962280431393, abs=1e-9)
    assert float(table["FDR <= (Thm 3)"][0]) == pytest.approx(0.05998120543727691, abs=1e-9)
    _click(app, "Simulate 10^2-10^5 users at your beta")
    assert not app.exception
    sim = app.session_state["attribution_sim"]
    assert list(sim["users"]) == [100, 1000, 10_000, 100_000] and min(sim["tar"]) > 0.9


def test_page_job_equals_cli_embed_and_attribute(db_path, monkeypatch, tmp_path, capsys) -> None:
    """The page's preset (chelsea, user 17, TinyHiDDeN at 36 dB, no post-processing, FPR 1e-4) hands the runner
    ``jobs.run_trace``; its numbers are those of ``attribution embed`` and ``attribution attribute`` on the same image
    (the watermarked PNG is lossless)."""
    monkeypatch.setenv("METHOD_LAB_ATTRIBUTION_DB", str(db_path))
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("attribution", timeout=60)
    at.selectbox(key="attr_img_choice").set_value("chelsea")
    _click(at, "Embed, attack, attribute")
    assert not at.exception, at.exception
    [(fn, (image, pool, config))] = calls
    assert fn is jobs.run_trace and np.array_equal(image, inputs.preset_image("chelsea"))
    assert config == jobs.TraceConfig(user=17, backend="tinyhidden", psnr=36.0, attack="none", target_fpr=1e-4)
    page = fn(image, pool, config)

    src, out = tmp_path / "chelsea.png", tmp_path / "marked.png"
    Image.fromarray(image).save(src)
    db = ["--db", str(db_path)]
    emb = run_json(["attribution", "embed", "--user", "17", str(src), str(out), "--psnr", "36", *db, "--json"], capsys)
    att = run_json(["attribution", "attribute", str(out), "--fpr", "1e-4", *db, "--json"], capsys)
    got = {"psnr": round(page.psnr, 3), "ssim": round(page.ssim, 5), "tau": page.tau, "detected": page.detected,
           "user": page.attributed_user, "p": page.p_value, "bits": "".join(map(str, page.decoded)),
           "top": [{"user": u, "bitwise_accuracy": v} for u, v in zip(page.top_users, page.top_scores, strict=True)]}
    cli = {"psnr": emb["psnr_db"], "ssim": emb["ssim"], "tau": att["tau"], "detected": att["detected"],
           "user": att["attributed_user"], "p": att["p_value"], "bits": att["decoded_bits"], "top": att["top"]}
    assert got["user"] == 17 and same(got, cli) is None, same(got, cli)


def test_jobs_and_configs_pickle(db_path) -> None:
    """The jobs, their configs, an image and the users' pool pickle (the Ray executor sends them to a worker)."""
    from backend.watermark.attribution.users import UserRegistry

    pool = UserRegistry(db_path, create=False).pool()
    image = np.zeros((40, 48, 3), np.uint8)
    fn, img, got, config = pickle.loads(pickle.dumps((jobs.run_trace, image, pool, jobs.TraceConfig(user=17))))
    assert fn is jobs.run_trace and config == jobs.TraceConfig(user=17) and np.array_equal(img, image)
    assert np.array_equal(got.codes, pool.codes) and np.array_equal(got.ids, pool.ids)
    for job in [(jobs.run_create_users, db_path, jobs.CreateUsersConfig(10)),
                (jobs.run_compare_pools, jobs.ComparePoolsConfig(100)),
                (jobs.run_sweep, jobs.SweepConfig(backends=jobs.LIVE_BACKENDS, **inputs.LIVE_SWEEP)),
                (jobs.run_evaluate, None, jobs.EvaluateConfig(attacks=("jpeg:50",), users=100, count=3)),
                (jobs.run_simulate, jobs.SimulateConfig()), (jobs.run_bounds, jobs.BoundsConfig())]:
        assert pickle.loads(pickle.dumps(job)) == job


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: jobs.TraceConfig(user=1, backend="nope"), "Valid names"),
        (lambda: jobs.TraceConfig(user=1, attack="shear:3"), "Unknown attack"),
        (lambda: jobs.TraceConfig(user=0), "user id must be at least 1"),
        (lambda: jobs.CreateUsersConfig(0), "count must be between 1 and 2,000,000"),
        (lambda: jobs.CreateUsersConfig(10, "nope"), "Valid names"),
        (lambda: jobs.SweepConfig(strengths=()), "at least one strength"),
        (lambda: jobs.SweepConfig(attack="jpeg", strengths=(500.0,)), "outside"),
        (lambda: jobs.AttributeConfig(target_fpr=0.0), "false-detection rate must be in"),
        (lambda: jobs.BoundsConfig(tau=0.4), "greater than 0.5"),
    ],
)
def test_configs_refuse_bad_settings(make, words: str) -> None:
    from backend.errors import InputError

    with pytest.raises(InputError, match=words):
        make()


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    image_widget("attribution", "attr_img"),
]
