"""AppTest of the delta-Adapter page: opens without running anything, the default preset (synthetic, DLinear) trains
the adapters and baselines, the mask and the calibration tabs run (on the small macro preset), a user CSV trains its own backbone, and a bad
upload shows an error."""

from __future__ import annotations

from backend.forecast.adapter import data as dt
from tests.app.conftest import Widget, open_page


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
    csv = dt.to_csv_bytes(dt.macro())
    at.file_uploader(key="deltaadapter_upload").set_value(("macro.csv", csv, "text/csv")).run()
    assert not at.error, [e.value for e in at.error]
    at.button(key="FormSubmitter:deltaadapter_form-Train adapters and baselines").click().run(timeout=120)
    assert not at.exception, at.exception
    a = at.session_state["deltaadapter_result"]["adapt"]
    assert a["series"]["name"] == "macro.csv" and "trained here" in a["backbone_source"]
    at.file_uploader(key="deltaadapter_upload").set_value(("bad.csv", b"time,a\n1,2\n2,x\n", "text/csv")).run()
    assert not at.exception
    assert any("rows" in e.value or "non-numeric" in e.value for e in at.error)


UPLOADS = [
    Widget("deltaadapter", "multiseries", "deltaadapter_upload", [("radio", "deltaadapter_source", "Your CSV")],
           bad="bad_latin1.csv", odd="odd_crlf.csv"),
    Widget("deltaadapter", "backbone_state", "deltaadapter_state_upload", [("radio", "deltaadapter_source", "Your CSV")],
           bad="bad_trunc_third.safetensors", odd="odd_float16.safetensors"),
]
