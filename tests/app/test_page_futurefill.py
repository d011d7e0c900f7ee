"""AppTest of the FutureFill page: opens instantly, runs every method on a preset, redraws the animation from stored
numbers, accepts an uploaded series and refuses bad uploads."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.conftest import Widget, open_page


def _small(at: AppTest) -> AppTest:
    at.select_slider(key="futurefill_new").set_value(512)
    at.slider(key="futurefill_filters").set_value(4)
    at.select_slider(key="futurefill_maxlen").set_value(2048)
    at.select_slider(key="futurefill_anim").set_value(16)
    return at


def test_page_opens_without_running_anything() -> None:
    at = open_page("futurefill", timeout=60)
    assert not at.exception
    assert not at.session_state["futurefill_result"]
    assert not at.get("plotly_chart")


def test_preset_run_draws_agreement_animation_and_costs() -> None:
    at = open_page("futurefill", timeout=120)
    _small(at)
    at.button[0].click().run()  # the form's submit button
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["futurefill_result"]["run"]
    assert {row["method"] for row in r["metrics"]} == {"naive", "epoched", "continuous", "prompted"}
    assert max(row["max |u - naive|"] for row in r["metrics"]) <= 1e-10
    assert all(2.2 <= v <= 2.5 for v in r["bench"]["mac_ratios"]["continuous"])
    assert len(at.get("plotly_chart")) == 4  # series, animation, call timeline, log-log costs
    assert at.dataframe and at.success
    at.radio(key="futurefill_anim_method").set_value("epoched").run()  # redraw from stored events
    assert not at.exception
    assert len(at.get("download_button")) == 3


def test_upload_series_and_bad_uploads() -> None:
    at = open_page("futurefill", timeout=120)
    at.radio(key="futurefill_source").set_value("Upload a series").run()
    assert at.button[0].disabled  # nothing to run yet
    at.file_uploader(key="futurefill_upload").set_value(("bad.txt", b"1\n2\nthree\n" * 10, "text/plain")).run()
    assert any("not numbers" in e.value for e in at.error)
    at.file_uploader(key="futurefill_upload").set_value(("flat.csv", b"x\n" + b"3\n" * 50, "text/csv")).run()
    assert any("constant" in e.value for e in at.error)
    data = "\n".join(f"{v:.5f}" for v in __import__("numpy").sin(__import__("numpy").arange(300) / 7.0)).encode()
    at.file_uploader(key="futurefill_upload").set_value(("sine.txt", data, "text/plain")).run()
    assert not at.error
    _small(at)
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["futurefill_result"]["run"]
    assert r["prompt_len"] == 300 and r["params"]["series"] == "sine.txt"
    assert r["fit"]["r2"] > 0.9


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "futurefill",
        "series",
        "futurefill_upload",
        [("radio", "futurefill_source", "Upload a series")],
        bad="bad_latin1.txt",
        odd="odd_crlf.txt",
    ),
]
