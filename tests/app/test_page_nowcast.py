"""AppTest of the nowcasting page: opens instantly, runs a synthetic preset (network + pysteps extrapolation + NWP),
runs an uploaded radar sequence on the radar-only path, and shows a clear error for a bad upload; the page's job
(``jobs.run_forecast`` with the config the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from backend.forecast.nowcast import jobs
from backend.forecast.nowcast.baselines import MODEL_FILE
from backend.forecast.nowcast.io import example_npz, load_radar, to_model_grid
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip

FAST = ["model", "extrapolation", "nwp", "persistence"] if MODEL_FILE.is_file() else ["extrapolation", "nwp"]


def _page() -> AppTest:
    at = open_page("nowcast", timeout=180)
    assert not at.exception
    return at


def _run(at: AppTest, methods: list[str], leads: int = 16) -> AppTest:
    at.multiselect(key="nowcast_methods").set_value(methods)
    at.slider(key="nowcast_leads").set_value(leads)
    next(b for b in at.button if b.label == "Run nowcasts").click().run()
    return at


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.radio(key="nowcast_src").set_value("Upload radar").run()
    at.file_uploader[0].set_value((name, data, "application/octet-stream")).run()
    return at


def test_opens_instantly_and_runs_a_preset() -> None:
    at = _page()
    assert len(at.get("plotly_chart")) == 0  # nothing heavy before the button
    _run(at, FAST)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    df = at.dataframe[0].value
    assert len(df) == len(FAST) and (df["seconds"] >= 0).all()
    assert df["CRPS 1-8 h"].notna().all()
    charts = at.get("plotly_chart")
    assert len(charts) >= 5  # animation, probabilities, skill, reliability, sources, costs
    assert len(at.get("download_button")) == 3


@pytest.mark.skipif(not MODEL_FILE.is_file(), reason="network weights not trained yet")
def test_threshold_and_metric_controls_redraw_without_rerunning() -> None:
    at = _page()
    _run(at, ["model", "nwp"], leads=8)
    at.select_slider(key="nowcast_thr").set_value(4.0).run()
    at.radio(key="nowcast_metric").set_value("csi").run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) >= 5


def test_upload_runs_on_the_radar_only_path() -> None:
    at = _upload(_page(), "radar.npz", example_npz(3, 10))
    assert not at.error, [e.value for e in at.error]
    _run(at, ["extrapolation", "persistence", "nwp"], leads=8)
    assert not at.exception and not at.error, [e.value for e in at.error]
    df = at.dataframe[0].value
    assert set(df["method"]) == {"LK extrapolation", "Persistence"}  # the NWP channel is skipped for uploads
    captions = " ".join(c.value for c in at.caption)
    assert "radar-only path" in captions and "NWP channel: needs the NWP channel" in captions


def test_bad_upload_shows_an_error() -> None:
    buf = io.BytesIO()
    bad = np.ones((5, 32, 32), np.float32)
    bad[2, 3, 4] = np.nan
    np.savez(buf, precip=bad, timestep_min=np.float32(10))
    at = _upload(_page(), "bad.npz", buf.getvalue())
    assert not at.exception
    assert any("NaN" in e.value for e in at.error)


@pytest.mark.skipif(not MODEL_FILE.is_file(), reason="network weights not trained yet")
def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page set to the golden's case and methods (``tests/cli_golden/nowcast.json``) hands the runner the job the
    CLI runs and a config equal to the CLI's; the page offers 4 leads at least, so the captured config runs with the
    golden's 2."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "nowcast.json").read_text())
    assert golden["argv"] == ["nowcast", "run", "--case", "seed=3", "--method", "model", "--method", "persistence",
                              "--leads", "2", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = _page()
    at.number_input(key="nowcast_seed_13").set_value(3)
    _run(at, ["model", "persistence"], leads=4)
    assert not at.exception, at.exception
    [(fn, (source, config, name))] = calls
    assert fn is jobs.run_forecast and source == 3
    assert config == jobs.ForecastConfig(("model", "persistence"), leads=4)  # every other setting at the CLI's
    got = fn(source, dataclasses.replace(config, leads=2), name).summary()
    expected = golden["expected"]
    for path in golden["volatile"]:
        got, expected = strip(got, path.split(".")), strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_job_and_config_pickle() -> None:
    """The job, its config and an uploaded sequence pickle (the Ray executor sends them to a worker)."""
    grid = to_model_grid(load_radar(example_npz(3, 8), "radar.npz"))
    job = (jobs.run_forecast, grid, jobs.ForecastConfig(("persistence",), leads=4, hold_out=False), "radar.npz")
    fn, seq, config, name = pickle.loads(pickle.dumps(job))
    assert fn is jobs.run_forecast and config == job[2] and name == "radar.npz"
    assert np.array_equal(seq.frames, grid.frames) and seq.notes == grid.notes
    evaluate = (jobs.run_evaluate, jobs.EvaluateConfig(cases=2))
    assert pickle.loads(pickle.dumps(evaluate)) == evaluate


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "nowcast",
        "radar",
        "nowcast_upload",
        [("radio", "nowcast_src", "Upload radar")],
        bad="bad_npz_nan.npz",
        odd="odd_classic.nc",
    ),
]
