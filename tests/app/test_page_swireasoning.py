"""AppTest of the SwiReasoning page: opens without running anything, decodes a preset held-out problem with every
decoder on the tiny reasoner (cards, table, entropy trace), the user's own question, a small evaluation (Pareto and
budget figures), and shows st.error for an empty question and a bad upload."""

from __future__ import annotations

from tests.app.conftest import Widget, open_page


def test_opens_without_running_anything() -> None:
    at = open_page("swireasoning", timeout=30)
    assert not at.exception
    assert "swireasoning_result" not in at.session_state
    assert not at.get("plotly_chart")
    assert at.selectbox(key="swireasoning_model").value == "tinyreasoner"


def test_preset_own_question_and_evaluation() -> None:
    at = open_page("swireasoning", timeout=120)
    at.select_slider(key="swireasoning_budget").set_value(48)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["swireasoning_result"]
    assert [r["decoder"] for r in res["runs"]] == ["swireasoning", "swireasoning_sample", "cot_greedy", "cot_sample",
                                                   "soft_thinking", "budget_forced"]
    assert res["known"] is not None and all(1 <= r["tokens"] <= 48 for r in res["runs"])
    assert len(at.get("plotly_chart")) == 1
    # the user's own question
    at.radio(key="swireasoning_src").set_value("Your own question").run()
    at.text_area(key="swireasoning_q").set_value("Compute 12 + 7 * 2.").run()
    at.multiselect(key="swireasoning_decoders").set_value(["swireasoning", "cot_greedy"])
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    res = at.session_state["swireasoning_result"]
    assert res["question"] == "Compute 12 + 7 * 2." and res["known"] is None and len(res["runs"]) == 2
    # a small evaluation
    at.select_slider(key="swireasoning_eval_n").set_value(4)
    at.multiselect(key="swireasoning_eval_budgets").set_value([32])
    at.multiselect(key="swireasoning_eval_decoders").set_value(["swireasoning", "cot_greedy"])
    at.button[1].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ev = at.session_state["swireasoning_eval"]
    assert ev["n"] == 4 and {r["decoder"] for r in ev["rows"]} == {"swireasoning", "cot_greedy"}
    assert len(at.get("plotly_chart")) == 4  # trace, Pareto, accuracy vs budget, the history of the two runs


def test_empty_question_and_bad_upload_show_errors() -> None:
    at = open_page("swireasoning", timeout=30)
    at.radio(key="swireasoning_src").set_value("Your own question").run()
    at.text_area(key="swireasoning_q").set_value("   ").run()
    at.button[0].click().run()
    assert any("question" in e.value for e in at.error)
    assert "swireasoning_result" not in at.session_state
    at.text_area(key="swireasoning_q").set_value("x" * 1200).run()
    at.button[0].click().run()
    assert any("1,000" in e.value for e in at.error)
    at.radio(key="swireasoning_src").set_value("Upload questions").run()
    at.file_uploader(key="swireasoning_upload").set_value(("bad.txt", b"\xff\xfe\x00bin\x00", "text/plain")).run()
    assert at.error
    assert "swireasoning_result" not in at.session_state


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "swireasoning",
        "text_corpus",
        "swireasoning_upload",
        [("radio", "swireasoning_src", "Upload questions")],
        bad="bad_utf16.txt",
        odd="odd_crlf.txt",
    ),
]


def test_page_job_is_the_cli_job(monkeypatch) -> None:  # noqa: ANN001
    """The page hands ``jobs.run_decode`` the config the CLI builds from the same settings, and the CLI's golden
    (``swireasoning controller``) is ``jobs.run_controller``'s result."""
    import json
    from pathlib import Path

    from backend.__main__ import main
    from backend.reasoning.swireasoning import jobs

    golden = json.loads((Path(__file__).resolve().parents[1] / "cli_golden" / "swireasoning.json").read_text())
    h = tuple(float(x) for x in golden["argv"][3].split(","))
    got = jobs.run_controller(jobs.ControllerConfig(h, window=1, max_switch=2))
    assert {k: got[k] for k in golden["expected"] if k != "provenance"} == {
        k: v for k, v in golden["expected"].items() if k != "provenance"}

    at = open_page("swireasoning", timeout=120)
    at.select_slider(key="swireasoning_budget").set_value(16)
    at.multiselect(key="swireasoning_decoders").set_value(["swireasoning", "cot_greedy"])
    at.button[0].click().run()
    assert not at.exception, at.exception
    page_cfg = at.session_state["swireasoning_decode_config"]
    question = at.session_state["swireasoning_result"]["question"]
    calls: list = []
    real = jobs.run_decode
    monkeypatch.setattr(jobs, "run_decode", lambda q, cfg, *a, **kw: calls.append((q, cfg)) or real(q, cfg, *a, **kw))
    assert main(["swireasoning", "run", "--question", question, "--decoder", "swireasoning,cot_greedy",
                 "--budget", "16", "--json"]) == 0
    [(q, cli_cfg)] = calls
    assert q == question and cli_cfg == page_cfg


def test_jobs_and_configs_pickle() -> None:
    """The page's jobs and their configs pickle (the Ray executor sends them to a worker)."""
    import pickle

    from backend.reasoning.swireasoning import jobs

    for obj in (jobs.run_decode, jobs.run_eval, jobs.run_controller, jobs.DecodeConfig(budget=16),
                jobs.EvalConfig(n=2, budgets=(16,)), jobs.ControllerConfig((1.0, 2.0))):
        assert pickle.loads(pickle.dumps(obj)) == obj
