"""AppTest of the T1 page: opens without running anything, runs the first preset from the shipped candidate cache,
verifies pasted candidates (the arithmetic slip vetoed), refuses a bad question and a bad upload. The page's job is
the CLI's (``t1 bon``) with the same settings, and the jobs pickle."""

from __future__ import annotations

from tests.app.conftest import Widget, open_page


def test_opens_without_running_anything() -> None:
    at = open_page("t1", timeout=60)
    assert not at.exception
    assert "t1_bon" not in at.session_state
    assert not at.get("plotly_chart")


def test_first_preset_runs_from_the_cache() -> None:
    at = open_page("t1", timeout=60)
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["t1_bon"]
    assert r["ns"][-1] == 16 and set(r["curves"]) >= {"tool_rm", "rm", "majority", "oracle"}
    assert r["curves"]["oracle"][-1] >= r["curves"]["tool_rm"][-1]
    assert len(at.get("plotly_chart")) == 2
    assert len(at.get("download_button")) == 2


def test_pasted_candidates_vetoes_the_arithmetic_slip() -> None:
    at = open_page("t1", timeout=60)
    at.radio(key="t1_mode").set_value("Your candidate solutions").run()
    at.button[0].click().run(timeout=60)
    assert not at.exception, at.exception
    q = at.session_state["t1_q"]
    assert [c["passed"] for c in q["candidates"]] == [True, False, True]
    assert q["picks"]["tool_rm"] != 1 and q["picks"]["oracle"] == 0


def test_bad_question_and_bad_upload_show_messages() -> None:
    at = open_page("t1", timeout=60)
    at.radio(key="t1_mode").set_value("Your question").run()
    at.text_input(key="t1_question").set_value("   ").run()
    at.button[0].click().run()
    assert any("empty" in e.value for e in at.error)
    at.radio(key="t1_mode").set_value("Your candidate solutions").run()
    at.file_uploader(key="t1_upload").set_value(("bad.txt", b"\xff\xfe\x00bin\x00", "text/plain")).run()
    assert at.error


UPLOADS = [
    Widget("t1", "text_corpus", "t1_upload", [("radio", "t1_mode", "Your candidate solutions")],
           bad="bad_utf16.txt", odd="odd_crlf.txt"),
]


def test_page_job_is_the_cli_job(monkeypatch) -> None:  # noqa: ANN001
    from backend.__main__ import main
    from backend.reasoning.t1 import jobs

    at = open_page("t1", timeout=60)
    at.select_slider(key="t1_problems").set_value(10)
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    page_cfg = at.session_state["t1_bon_config"]
    calls: list = []
    real = jobs.run_bon
    monkeypatch.setattr(jobs, "run_bon", lambda cfg, *a, **kw: calls.append(cfg) or real(cfg, *a, **kw))
    assert main(["t1", "bon", "--problems", "10", "--json"]) == 0
    [cli_cfg] = calls
    assert cli_cfg == page_cfg


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.reasoning.t1 import jobs

    for obj in (jobs.run_bon, jobs.run_question, jobs.BonConfig(), jobs.QuestionConfig("Compute 1 + 2.")):
        assert pickle.loads(pickle.dumps(obj)) == obj
