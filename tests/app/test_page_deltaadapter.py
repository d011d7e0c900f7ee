"""AppTest of the delta-Adapter page: opens without running anything, the default preset (synthetic, DLinear) trains
the adapters and baselines, the mask and the calibration tabs run (on the small macro preset), a user CSV trains its
own backbone, and a bad upload shows an error; the page's job (``jobs.run_adapt`` with the config the page builds)
gives the numbers of the CLI golden, and the jobs pickle."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

from backend.forecast.deltaadapter import data as dt
from backend.forecast.deltaadapter import jobs
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_opens_without_running_anything() -> None:
    at = open_page("deltaadapter", timeout=60)
    assert not at.exception
    assert not at.session_state["deltaadapter_result"]
    assert not at.get("plotly_chart")


def test_default_preset_mask_and_calibration() -> None:
    at = open_page("deltaadapter", timeout=120)
    at.button(key="FormSubmitter:deltaadapter_form-Train adapters and baselines").click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    a = at.session_state["deltaadapter_result"]["adapt"]
    assert a["unchanged"] and a["rows"]["ada_xy"]["mse"] < a["rows"]["frozen"]["mse"]
    assert len(at.get("plotly_chart")) == 3  # forecast, per-horizon, costs
    at.selectbox(key="deltaadapter_preset").set_value("macro").run()  # the small preset for the other tabs
    at.button(key="FormSubmitter:deltaadapter_mask_form-Train the mask").click().run(timeout=120)
    assert not at.exception, at.exception
    assert 0 < at.session_state["deltaadapter_result"]["mask"]["kept"] <= 1
    at.button(key="FormSubmitter:deltaadapter_cal_form-Calibrate").click().run(timeout=120)
    assert not at.exception, at.exception
    c = at.session_state["deltaadapter_result"]["calib"]
    assert c["qc_monotone"] and set(c["table"]) >= {"cc", "qc", "split", "cqr", "aci"}
    assert len(at.get("plotly_chart")) == 6


def test_user_csv_trains_a_backbone_and_bad_upload_errors() -> None:
    at = open_page("deltaadapter", timeout=60)
    at.radio(key="deltaadapter_source").set_value("Your CSV").run()
    at.number_input(key="deltaadapter_lookback").set_value(16).run()
    at.number_input(key="deltaadapter_horizon").set_value(4).run()
    at.slider(key="deltaadapter_shift").set_value(0.6).run()
    csv = dt.to_csv_bytes(dt.macro())
    at.file_uploader(key="deltaadapter_upload").set_value(("macro.csv", csv, "text/csv")).run()
    assert not at.error, [e.value for e in at.error]
    at.button(key="FormSubmitter:deltaadapter_form-Train adapters and baselines").click().run(timeout=120)
    assert not at.exception, at.exception
    a = at.session_state["deltaadapter_result"]["adapt"]
    assert a["series"]["name"] == "macro.csv" and "trained here" in a["backbone_source"]
    assert a["series"]["shift_at"] == int(0.6 * len(dt.macro().values))
    at.file_uploader(key="deltaadapter_upload").set_value(("bad.csv", b"time,a\n1,2\n2,x\n", "text/csv")).run()
    assert not at.exception
    assert any("rows" in e.value or "non-numeric" in e.value for e in at.error)


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page set to the golden's preset and backbone (``tests/cli_golden/deltaadapter.json``) hands the runner the
    job the CLI runs and a config equal to the CLI's but for the methods (the page runs every method), so the captured
    config runs with the golden's four."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "deltaadapter.json").read_text())
    assert golden["argv"] == ["deltaadapter", "run", "--data", "macro", "--backbone", "dlinear", "--methods",
                              "frozen,revin,refit,ewma", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("deltaadapter", timeout=60)
    at.selectbox(key="deltaadapter_preset").set_value("macro").run()
    at.button(key="FormSubmitter:deltaadapter_form-Train adapters and baselines").click().run(timeout=60)
    assert not at.exception, at.exception
    [(fn, (data, config, state))] = calls
    assert fn is jobs.run_adapt and data == "macro" and state is None
    assert config == jobs.AdaptConfig("dlinear")  # delta 0.1, additive, no zero-init, every method, seed 0
    got = fn(data, dataclasses.replace(config, methods=("frozen", "revin", "refit", "ewma")), state).summary()
    expected = golden["expected"]
    for path in golden["volatile"]:
        got, expected = strip(got, path.split(".")), strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_jobs_and_configs_pickle() -> None:
    """The jobs, their configs, a user's series and backbone state pickle (the Ray executor sends them to a
    worker)."""
    from backend.forecast.deltaadapter.backbones import read_state
    from backend.forecast.deltaadapter.inputs import backbone_state, multiseries

    series, state = dt.read_csv(multiseries(), name="s.csv"), ("b.safetensors", read_state(backbone_state()))
    for job in ((jobs.run_adapt, series, jobs.AdaptConfig("mlp", methods=("frozen", "ada_xy")), state),
                (jobs.run_select, "macro", jobs.SelectConfig(kappa=0.5), None),
                (jobs.run_calibrate, "macro", jobs.CalibrateConfig(method="mapie"), None)):
        fn, data, config, st = pickle.loads(pickle.dumps(job))
        assert fn is job[0] and config == job[2]
        assert (data == job[1]) if isinstance(data, str) else (data.values == series.values).all()
        assert st is None or sorted(st[1]) == sorted(state[1])


def test_own_forecasts_tab_runs_on_the_example_and_an_upload() -> None:
    from backend.forecast.deltaadapter.inputs import forecast_table
    from backend.forecast.deltaadapter.pipeline import TABULATED

    at = open_page("deltaadapter", timeout=60)
    at.button(key="FormSubmitter:deltaadapter_own_form-Post-process the forecasts").click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    o = at.session_state["deltaadapter_result"]["own"]
    assert set(o["points"]) == {"forecast", "linear", "ada_y"} and set(o["intervals"]) == set(TABULATED)
    at.radio(key="deltaadapter_own_source").set_value("Your CSV").run()
    at.file_uploader(key="deltaadapter_own_upload").set_value(("mine.csv", forecast_table(3, 300), "text/csv")).run()
    assert not at.error, [e.value for e in at.error]
    at.button(key="FormSubmitter:deltaadapter_own_form-Post-process the forecasts").click().run(timeout=120)
    assert not at.exception, at.exception
    assert at.session_state["deltaadapter_result"]["own"]["table"]["name"] == "mine.csv"


UPLOADS = [
    Widget("deltaadapter", "multiseries", "deltaadapter_upload", [("radio", "deltaadapter_source", "Your CSV")],
           bad="bad_latin1.csv", odd="odd_crlf.csv"),
    Widget("deltaadapter", "backbone_state", "deltaadapter_state_upload", [("radio", "deltaadapter_source", "Your CSV")],
           bad="bad_trunc_third.safetensors", odd="odd_float16.safetensors"),
    Widget("deltaadapter", "forecast_table", "deltaadapter_own_upload",
           [("radio", "deltaadapter_own_source", "Your CSV")], bad="bad_latin1.csv", odd="odd_daylight_saving.csv"),
]
