"""AppTest of the DEPO page: opens without running anything, runs the selector on the task pool, selects from
an uploaded prompt list, refuses a bad upload with a message, shows the shipped runs. The page's selection job is the
CLI's (``depo select``) with the golden's settings, and the jobs pickle."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import Widget, open_page

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "depo.json"


def test_opens_without_running_anything() -> None:
    at = open_page("depo", timeout=60)
    assert not at.exception
    assert "depo_select" not in at.session_state
    assert not at.get("plotly_chart")


def test_pool_preset_runs() -> None:
    at = open_page("depo", timeout=60)
    at.selectbox(key="depo_preset").set_value(
        "Task pool of the training runs (240 generated problems, pass rates of the starting policy)").run()
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["depo_select"]
    assert r["n"] == 240 and r["k"] == 48
    assert set(r["strategies"]) == {"depo", "dpp", "random", "pagerank", "kcenter"}
    assert len(at.get("plotly_chart")) >= 1
    assert len(at.get("download_button")) == 2


def test_uploaded_prompts_and_bad_upload() -> None:
    from backend.reasoning.depo.inputs import prompt_list

    at = open_page("depo", timeout=60)
    at.selectbox(key="depo_preset").set_value("Your prompt list (upload)").run()
    at.file_uploader(key="depo_upload").set_value(("mine.txt", prompt_list(3), "text/plain")).run()
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    r = at.session_state["depo_select"]
    assert r["n"] == 60 and r["k"] == 12
    at.file_uploader(key="depo_upload").set_value(("bad.txt", b"\xff\xfe\x00bin\x00", "text/plain")).run()
    assert at.error


def test_shipped_runs_show() -> None:
    at = open_page("depo", timeout=60)
    at.radio(key="depo_mode").set_value("GRPO runs").run()
    at.button(key="depo_show").click().run(timeout=60)
    assert not at.exception, at.exception
    rep = at.session_state["depo_report"]
    assert {"full", "depo", "random"} <= set(rep["mean"])
    assert len(at.get("plotly_chart")) >= 3


UPLOADS = [
    Widget("depo", "prompt_list", "depo_upload", [("selectbox", "depo_preset", "Your prompt list (upload)")],
           bad="bad_utf16.txt", odd="odd_crlf.txt"),
]


def test_page_job_is_the_cli_job(monkeypatch) -> None:  # noqa: ANN001
    from backend.__main__ import main
    from backend.reasoning.depo import jobs

    argv = json.loads(GOLDEN.read_text())["argv"]
    at = open_page("depo", timeout=60)
    at.selectbox(key="depo_preset").set_value("Example prompt list (60 questions, five topics)").run()
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    page_cfg = at.session_state["depo_select_config"]
    calls: list = []
    real = jobs.run_select
    monkeypatch.setattr(jobs, "run_select", lambda p, cfg, *a, **kw: calls.append(cfg) or real(p, cfg, *a, **kw))
    assert main(argv) == 0
    [cli_cfg] = calls
    assert cli_cfg == page_cfg
    expected = json.loads(GOLDEN.read_text())["expected"]["strategies"]
    got = at.session_state["depo_select"]["strategies"]
    for name, v in expected.items():
        assert got[name]["indices"] == v["indices"]
        assert abs(got[name]["coverage"] - v["coverage"]) < 1e-6


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.reasoning.depo import jobs
    from backend.reasoning.depo.loop import TrainConfig

    for obj in (jobs.run_select, jobs.run_train, jobs.run_report, jobs.SelectConfig(), TrainConfig(),
                jobs.ReportConfig()):
        assert pickle.loads(pickle.dumps(obj)) == obj
