"""AppTest of the Vintix II / DPT page: opens without running anything, runs the default two-peak task (three heads
side by side, the density narrowing with context, the entropy curve), a K-armed task online against UCB1 and
Thompson sampling (the second run adds the history chart), an uploaded task, and refuses bad uploads and bad text."""

from __future__ import annotations

from tests.app.conftest import Widget, open_page


def test_page_opens_without_running_anything() -> None:
    at = open_page("vintix", timeout=60)
    assert not at.exception
    assert not at.session_state["vintix_result"]
    assert not at.get("plotly_chart")


def test_bimodal_then_karm_with_history() -> None:
    at = open_page("vintix", timeout=120)
    at.button[0].click().run()  # the form's submit: two equal peaks, 64 context tuples
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["vintix_result"]["run"]
    assert r["family"] == "cont" and set(r["heads"]) == {"flow", "gaussian", "mixture"}
    assert len(at.get("plotly_chart")) == 3  # heads side by side, density vs context, entropy curve
    assert len(at.get("download_button")) == 2
    at.radio(key="vintix_task").set_value("karm").run()
    at.select_slider(key="vintix_horizon").set_value(32)
    at.select_slider(key="vintix_replicas").set_value(8)
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["vintix_result"]["run"]
    assert r["family"] == "karm" and set(r["regret"]["agents"]) == {"dpt", "ucb", "thompson"}
    assert len(r["regret"]["agents"]["dpt"]["cum_regret"]) == 32
    assert len(at.get("plotly_chart")) == 3 + 1  # entropy, policy, regret + the run-history chart (2 runs)


def test_upload_and_bad_input() -> None:
    at = open_page("vintix", timeout=120)
    at.radio(key="vintix_task").set_value("upload").run()
    assert at.button[0].disabled
    at.file_uploader(key="vintix_upload").set_value(("bad.csv", b"mean\n0.5\n", "text/csv")).run()
    assert any("give 2 to 10" in e.value for e in at.error)
    at.file_uploader(key="vintix_upload").set_value(("m.csv", b"mean\n0.2\n0.8\n0.5\n", "text/csv")).run()
    assert not at.error
    at.select_slider(key="vintix_horizon").set_value(16)
    at.select_slider(key="vintix_replicas").set_value(8)
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["vintix_result"]["run"]
    assert r["means"] == [0.2, 0.8, 0.5] and r["params"]["upload"] == "m.csv"
    at.radio(key="vintix_task").set_value("peaks").run()
    at.text_input(key="vintix_peaks").set_value("0.5; 0.1").run()
    at.button[0].click().run()
    assert not at.exception
    assert any("centre:width" in e.value for e in at.error)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "vintix",
        "bandit_task",
        "vintix_upload",
        [("radio", "vintix_task", "upload")],
        bad="bad_latin1.csv",
        odd="odd_peaks.csv",
    ),
]
