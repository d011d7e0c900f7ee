"""AppTest of the STaMP page: opens without running anything, runs a small real evaluation of SmolLM2 (one window
of 128 tokens, no Hadamard rows) with the figures, the table and the downloads, takes an upload and refuses a bad
one and an unsupported bit setting."""

from __future__ import annotations

import pytest

from tests.app.conftest import Widget, open_page


def test_opens_without_running_anything() -> None:
    at = open_page("stamp", timeout=60)
    assert not at.exception
    assert not at.session_state["stamp_result"]
    assert not at.get("plotly_chart")
    assert any("Average activation bits" in c.value for c in at.caption)


@pytest.fixture(scope="module")
def ran():
    at = open_page("stamp", timeout=60)
    at.select_slider(key="stamp_seqlen").set_value(128)
    at.select_slider(key="stamp_k").set_value(4)
    at.checkbox(key="stamp_hadamard").set_value(False)
    next(b for b in at.button if b.label == "Quantize and evaluate").click().run(timeout=600)
    return at


def test_small_run_draws_results(ran) -> None:
    at = ran
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["stamp_result"]["last"]
    ppl = {x["method"]: x["ppl"] for x in r["rows"]}
    assert set(ppl) == {"dense", "a4", "a4_first_k", "stamp"}
    assert r["config"]["seqlen"] == 128 and r["tokens"] == 128
    assert abs(next(x["avg_bits"] for x in r["rows"] if x["method"] == "stamp") - (4 + 4 * 4 / 128)) < 1e-12
    keys = {c.key for c in at.get("plotly_chart")} if hasattr(at.get("plotly_chart")[0], "key") else set()
    assert len(at.get("plotly_chart")) >= 4, keys
    assert len(at.get("download_button")) == 2


def test_upload_and_bad_upload(ran) -> None:
    at = ran
    at.radio(key="stamp_src").set_value("Upload your own").run()
    at.file_uploader(key="stamp_upload").set_value(("bad.txt", b"\x00\x01binary\xff", "text/plain")).run()
    assert any("binary" in e.value for e in at.error)
    at.file_uploader(key="stamp_upload").set_value(("short.txt", b"def f():\n    return 1\n", "text/plain")).run()
    assert not at.exception
    next(b for b in at.button if b.label == "Quantize and evaluate").click().run(timeout=600)
    assert not at.exception
    assert any("tokens" in e.value for e in at.error), [e.value for e in at.error]  # too short for 2 windows


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget("stamp", "text_corpus", "stamp_upload", [("radio", "stamp_src", "Upload your own")],
           bad="bad_utf16.txt", odd="odd_crlf.txt"),
]
