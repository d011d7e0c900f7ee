"""AppTest of the Soft Best-of-N page: opens instantly, runs the hackable preset, redraws the per-N plots without
recomputing, switches presets, scores pasted and uploaded candidate answers with MiniLM and refuses a bad upload."""

from __future__ import annotations

import math

from tests.app.conftest import Widget, open_page


def test_opens_without_running_anything() -> None:
    at = open_page("softbon", timeout=60)
    assert not at.exception
    assert not at.session_state["softbon_result"]
    assert not at.get("plotly_chart")


def test_hackable_preset_sweep_and_redraw() -> None:
    at = open_page("softbon", timeout=60)
    at.button[0].click().run()  # form submit: 3% hackable preset, calibrated selection
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["softbon_result"]["random"]
    i32 = r["ns"].index(32)
    assert 0 < r["best_beta_per_n"][i32] < math.inf and r["best_true_per_n"][i32] > r["bon_true_per_n"][i32]
    assert len(at.get("plotly_chart")) == 4  # heatmap, KL vs bound, reward vs beta, regret terms
    assert len(at.get("download_button")) == 2
    before = r["expected_true_reward"]
    at.select_slider(key="softbon_n").set_value(8).run()
    assert not at.exception
    assert at.session_state["softbon_result"]["random"]["expected_true_reward"] == before  # redraw only
    at.selectbox(key="softbon_preset").set_value("Clean proxy (proxy = true reward)").run()
    assert at.slider(key="softbon_hack").value == 0.0
    at.button[0].click().run()
    r = at.session_state["softbon_result"]["random"]
    assert all(b == "inf" for b in r["best_beta_per_n"][1:])  # clean proxy: hard BoN is best


def test_text_mode_paste_upload_and_bad_upload() -> None:
    at = open_page("softbon", timeout=120)
    at.radio(key="softbon_mode").set_value("Your candidate answers (text)").run()
    at.text_input(key="softbon_scores").set_value("1, 1, 0, 0.8, 0.3, 0.2")
    at.button[0].click().run()  # the default example with MiniLM
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    t = at.session_state["softbon_result"]["text"]
    assert len(t["labels"]) == 6 and len(at.get("plotly_chart")) == 1
    best = max(range(6), key=lambda i: t["proxy"][i])
    assert "Paris" in t["labels"][best] and "Lyon" not in t["labels"][best]
    upload = b"Berlin is the capital of Germany.\n\nThe capital of Germany is Bonn.\n\nGermany's capital: Berlin.\n"
    at.file_uploader(key="softbon_upload").set_value(("answers.txt", upload, "text/plain")).run()
    at.text_input(key="softbon_ref").set_value("Berlin is the capital of Germany.")
    at.text_input(key="softbon_scores").set_value("")
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert len(at.session_state["softbon_result"]["text"]["labels"]) == 3
    at.file_uploader(key="softbon_upload").set_value(("bad.txt", b"\x00\x01binary\xff", "text/plain")).run()
    assert any("binary" in e.value for e in at.error)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "softbon",
        "candidates",
        "softbon_upload",
        [("radio", "softbon_mode", "Your candidate answers (text)")],
        bad="bad_one_answer.txt",
        odd="odd_crlf.txt",
    ),
]
