"""AppTest of the Spectral Bellman page: opens without running anything, learns the representation of the low-rank
MDP, runs the agents on DeepSea, a tiny sweep, an uploaded MDP, and refuses a bad MDP file with a message. The page's
job (``jobs.run_explore`` with the configs the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

from backend.rl.spectralbellman import jobs
from backend.rl.spectralbellman.inputs import mdp_json
from backend.rl.spectralbellman.mdps import read_mdp_json
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_page_opens_without_running_anything() -> None:
    at = open_page("spectralbellman", timeout=60)
    assert not at.exception
    assert not at.session_state["spectralbellman_result"]
    assert len(at.get("plotly_chart")) == 1  # the shipped DeepSea runs, read from their log
    assert not at.warning, [w.value for w in at.warning]


def test_representation_agents_and_sweep() -> None:
    at = open_page("spectralbellman", timeout=120)
    at.selectbox(key="spectralbellman_env").set_value("lowrank").run()
    at.select_slider(key="spectralbellman_iters").set_value(100)
    at.button[0].click().run()  # "Learn the representation"
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    rep = at.session_state["spectralbellman_result"]["rep"]
    assert rep["sbm"]["final_max_angle"] < 1e-3 and rep["sbm"]["d"] == 8
    assert len(at.get("plotly_chart")) == 3  # spectra, angles, the shipped DeepSea runs
    assert rep["capture"]["residual"] < 1e-6  # held-out backups of the rank-8 MDP lie in the learned span

    at.selectbox(key="spectralbellman_env").set_value("deepsea").run()
    at.select_slider(key="spectralbellman_n").set_value(6)
    at.select_slider(key="spectralbellman_episodes").set_value(50)
    at.button[1].click().run()  # "Run the agents"
    assert not at.exception, at.exception
    rows = at.session_state["spectralbellman_result"]["agents"]["rows"]
    assert {r["agent"] for r in rows} == {"ts_sbm", "ts_random", "ts_true", "rlsvi", "ucbvi", "rnd", "egreedy"}
    # spectra, angles, returns, visitation, the shipped runs + the run-history chart (two runs recorded)
    assert len(at.get("plotly_chart")) == 6
    # representation JSON, agents CSV, the shipped runs' JSON, run history CSV and JSON
    assert len(at.get("download_button")) == 5

    at.multiselect(key="spectralbellman_sizes").set_value([4])
    at.select_slider(key="spectralbellman_seeds").set_value(2)
    at.select_slider(key="spectralbellman_budget").set_value(100)
    at.button[2].click().run()  # the sweep
    assert not at.exception, at.exception
    sw = at.session_state["spectralbellman_result"]["sweep"]
    assert sw["sizes"] == [4] and sw["agents"]["ts_true"]["sizes"]["4"]["runs"] == 2


def test_upload_runs_and_bad_file_is_refused() -> None:
    at = open_page("spectralbellman", timeout=120)
    at.selectbox(key="spectralbellman_env").set_value("upload").run()
    assert at.button[0].disabled
    bad = json.loads(mdp_json())
    bad["P"][1][0] = [0.5, 0.7, -0.2, 0.0]
    at.file_uploader(key="spectralbellman_upload").set_value(
        ("bad.json", json.dumps(bad).encode(), "application/json")
    ).run()
    assert any("negative" in e.value for e in at.error)
    at.file_uploader(key="spectralbellman_upload").set_value(("chain.json", mdp_json(), "application/json")).run()
    assert not at.error
    at.select_slider(key="spectralbellman_iters").set_value(50)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert at.session_state["spectralbellman_result"]["rep"]["env"]["name"] == "upload"


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page builds the environment of ``tests/cli_golden/spectralbellman.json`` (DeepSea(6)) and the agents'
    config, and hands them to the job the CLI runs. The page offers 50 episodes at least and seven agents by default,
    so the captured config runs with the golden's 40 episodes and agents."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "spectralbellman.json").read_text())
    assert golden["argv"][:8] == ["spectralbellman", "run", "--env", "deepsea", "--size", "6", "--episodes", "40"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("spectralbellman")
    at.selectbox(key="spectralbellman_env").set_value("deepsea").run()
    at.select_slider(key="spectralbellman_n").set_value(6)
    at.select_slider(key="spectralbellman_episodes").set_value(50)
    at.button[1].click().run()  # "Run the agents"
    assert not at.exception, at.exception
    [(fn, (env, config, mdp))] = calls
    assert fn is jobs.run_explore and mdp is None
    assert env == jobs.EnvConfig("deepsea", size=6)
    assert pickle.loads(pickle.dumps((fn, env, config))) == (jobs.run_explore, env, config)
    agents = tuple(golden["argv"][golden["argv"].index("--agents") + 1].split(","))
    res = fn(env, dataclasses.replace(config, episodes=40, agents=agents), mdp)
    got = {"env": res["env"], "agents": res["rows"]}
    expected = {k: v for k, v in golden["expected"].items() if k not in ("method", "action")}
    for path in golden["volatile"]:
        got = strip(got, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_job_and_configs_pickle() -> None:
    """The page's jobs, their configs and an uploaded MDP pickle (the Ray executor sends them to a worker)."""
    mdp = read_mdp_json(mdp_json())
    for job in ((jobs.run_represent, jobs.EnvConfig("lowrank"), jobs.RepresentConfig(iters=50, spectra=True), mdp),
                (jobs.run_explore, jobs.EnvConfig(), jobs.ExploreConfig(("ts_true", "rnd"), episodes=50), mdp),
                (jobs.run_sweep, jobs.SweepConfig((4,), 2, 100))):
        back = pickle.loads(pickle.dumps(job))
        assert back[:3] == job[:3]
    assert pickle.loads(pickle.dumps(mdp)).summary() == mdp.summary()


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "spectralbellman",
        "mdp_json",
        "spectralbellman_upload",
        [("selectbox", "spectralbellman_env", "upload")],
        bad="bad_truncated.json",
        odd="odd_crlf.json",
    ),
]
