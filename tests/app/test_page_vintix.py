"""AppTest of the Vintix II / DPT page: opens without running anything, runs the default two-peak task (three heads
side by side, the density narrowing with context, the entropy curve, the online regret against GP-UCB and discretised
Thompson sampling and its ratio vs horizon), a K-armed task online against UCB1, Thompson sampling and Algorithm
Distillation (the second run adds the history chart), the dark room past the training context (a warning), an
uploaded task, and refuses bad uploads and bad text.
The page's job (``jobs.run_task`` with the config the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest

from backend.icrl.vintix import jobs
from backend.icrl.vintix.tasks import KArmTask
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_page_opens_without_running_anything() -> None:
    at = open_page("vintix", timeout=60)
    assert not at.exception
    assert not at.session_state["vintix_result"]
    assert not at.get("plotly_chart")


def test_bimodal_then_karm_with_history() -> None:
    from backend.icrl.vintix.evaluate import AGENTS
    from backend.icrl.vintix.online import CONT_AGENTS, DARK_AGENTS

    at = open_page("vintix", timeout=120)
    at.select_slider(key="vintix_horizon").set_value(32)
    at.select_slider(key="vintix_replicas").set_value(8)
    at.button[0].click().run()  # the form's submit: two equal peaks, 64 context tuples, online for 32 rounds
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert not at.warning
    r = at.session_state["vintix_result"]["run"]
    assert r["family"] == "cont" and set(r["heads"]) == {"flow", "gaussian", "mixture"}
    assert set(r["regret"]["agents"]) == set(CONT_AGENTS)
    assert len(at.get("plotly_chart")) == 5  # heads, density vs context, entropy curve, online regret, ratio
    assert len(at.get("download_button")) == 2
    at.radio(key="vintix_task").set_value("karm").run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["vintix_result"]["run"]
    assert r["family"] == "karm" and set(r["regret"]["agents"]) == set(AGENTS)
    assert len(r["regret"]["agents"]["dpt"]["cum_regret"]) == 32
    assert len(at.get("plotly_chart")) == 4 + 1  # entropy, policy, regret, ratio + the run-history chart (2 runs)
    at.radio(key="vintix_task").set_value("darkroom").run()
    at.select_slider(key="vintix_horizon").set_value(128)
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["vintix_result"]["run"]
    assert r["family"] == "dark" and set(r["agents"]) == set(DARK_AGENTS) and r["beyond_context"]
    assert any("training context" in w.value for w in at.warning)


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


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page, set to the golden's arm means, context and horizon (``tests/cli_golden/vintix.json``), hands the job
    the CLI runs a config equal to the CLI's; the page offers 8 online runs at least, so the captured config runs with
    the golden's 4."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "vintix.json").read_text())
    assert golden["argv"] == ["vintix", "run", "--means", "0.2,0.5,0.8", "--context", "16", "--horizon", "16",
                              "--replicas", "4", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("vintix", timeout=60)
    at.radio(key="vintix_task").set_value("means").run()
    at.text_input(key="vintix_means").set_value("0.2,0.5,0.8")
    at.slider(key="vintix_context").set_value(16)
    at.select_slider(key="vintix_horizon").set_value(16)
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (task, config))] = calls
    assert fn is jobs.run_task and isinstance(task, KArmTask) and task.means.tolist() == [0.2, 0.5, 0.8]
    assert config == jobs.RunConfig(context=16, horizon=16)  # every other setting at the CLI's defaults
    got = fn(task, dataclasses.replace(config, replicas=4)).compact()
    expected = {k: v for k, v in golden["expected"].items() if k not in ("method", "action")}
    for path in golden["volatile"]:
        got, expected = strip(got, path.split(".")), strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_job_and_config_pickle() -> None:
    """The page's job, its config and a task pickle (the Ray executor sends them to a worker)."""
    job = (jobs.run_task, KArmTask(np.array([0.2, 0.8, 0.5])), jobs.RunConfig(context=8, horizon=16, replicas=8))
    fn, task, config = pickle.loads(pickle.dumps(job))
    assert fn is jobs.run_task and config == job[2] and task.means.tolist() == [0.2, 0.8, 0.5]
    assert pickle.loads(pickle.dumps((jobs.run_eval, jobs.EvalConfig(8)))) == (jobs.run_eval, jobs.EvalConfig(8))


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
