"""AppTest of the RGM page: opens without running anything, runs the first preset from the shipped candidate cache,
scores a typed question and refuses an empty one. The page's job is the CLI's (``rgm eval``) with the same settings,
and the jobs pickle."""

from __future__ import annotations

from tests.app.conftest import open_page


def test_opens_without_running_anything() -> None:
    at = open_page("rgm", timeout=60)
    assert not at.exception
    assert "rgm_eval" not in at.session_state
    assert not at.get("plotly_chart")


def test_first_preset_runs_from_the_cache() -> None:
    at = open_page("rgm", timeout=60)
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["rgm_eval"]
    assert set(r["locate_auroc"]) >= {"spr_s0", "bce_s0"} and "geometric" in r["bon"]
    assert len(at.get("plotly_chart")) == 3


def test_question_is_scored_and_empty_is_refused() -> None:
    at = open_page("rgm", timeout=60)
    at.radio(key="rgm_mode").set_value("Your question").run()
    at.select_slider(key="rgm_n").set_value(2)
    at.button[0].click().run(timeout=60)
    assert not at.exception, at.exception
    q = at.session_state["rgm_q"]
    assert len(q["traces"]) == 2 and set(q["picks"]) >= {"geometric", "product"}
    at.text_input(key="rgm_question").set_value("  ").run()
    at.button[0].click().run()
    assert any("empty" in e.value for e in at.error)


UPLOADS: list = []


def test_page_job_is_the_cli_job(monkeypatch) -> None:  # noqa: ANN001
    from backend.__main__ import main
    from backend.reasoning.rgm import jobs

    at = open_page("rgm", timeout=60)
    at.select_slider(key="rgm_problems").set_value(10)
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    page_cfg = at.session_state["rgm_eval_config"]
    calls: list = []
    real = jobs.run_eval
    monkeypatch.setattr(jobs, "run_eval", lambda cfg, *a, **kw: calls.append(cfg) or real(cfg, *a, **kw))
    assert main(["rgm", "eval", "--problems", "10", "--json"]) == 0
    [cli_cfg] = calls
    assert cli_cfg == page_cfg


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.reasoning.rgm import jobs

    for obj in (jobs.run_eval, jobs.run_score, jobs.EvalConfig(), jobs.ScoreConfig("Compute 1 + 2.")):
        assert pickle.loads(pickle.dumps(obj)) == obj
