"""AppTest of the Tactic page: opens without running anything, runs a small capture of the built-in text and draws
the figures, redraws another head without recomputing, runs an uploaded text, and refuses a bad upload."""

from __future__ import annotations

from backend.tokens.tactic_eval import builtin_text
from tests.app.conftest import Widget, open_page


def test_opens_without_running_anything() -> None:
    at = open_page("tactic", timeout=60)
    assert not at.exception
    assert "tactic_result" not in at.session_state
    assert not at.get("plotly_chart")


def test_small_run_draws_figures_and_upload() -> None:
    at = open_page("tactic", timeout=240)
    at.select_slider(key="tactic_tokens").set_value(512)
    at.multiselect(key="tactic_layers").set_value([0, 3])
    at.select_slider(key="tactic_queries").set_value(8)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["tactic_result"]
    assert res["layers"] == [0, 3] and res["queries"] == 8
    assert set(res["methods"]) == {"tactic", "oracle_top_p", "top_k", "quest", "window"}
    assert len(at.get("plotly_chart")) == 5  # need heatmap, error vs tokens, mass, score curve, positions
    before = res["methods"]["tactic"]["mass_mean"]
    at.selectbox(key="tactic_pick_head").set_value(4).run()
    assert not at.exception
    assert at.session_state["tactic_result"]["methods"]["tactic"]["mass_mean"] == before
    # the user's own text
    at.radio(key="tactic_src").set_value("Upload your own").run()
    text = builtin_text()[200_000:212_000].encode()
    at.file_uploader(key="tactic_upload").set_value(("notes.txt", text, "text/plain")).run()
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "notes.txt" in at.session_state["tactic_result"]["text"]["source"]
    # a text too short for the context
    at.file_uploader(key="tactic_upload").set_value(("short.txt", b"just a few words", "text/plain")).run()
    at.button[0].click().run()
    assert any("tokens" in e.value for e in at.error)


def test_bad_upload_is_refused() -> None:
    at = open_page("tactic", timeout=60)
    at.radio(key="tactic_src").set_value("Upload your own").run()
    at.file_uploader(key="tactic_upload").set_value(("bad.txt", b"\xff\xfe\x00binary\x00", "text/plain")).run()
    assert at.error
    assert "tactic_result" not in at.session_state


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "tactic",
        "text_corpus",
        "tactic_upload",
        [("radio", "tactic_src", "Upload your own")],
        bad="bad_utf16.txt",
        odd="odd_crlf.txt",
    ),
]
