"""AppTest of the DADA page: opens instantly, runs the race on the default quadratic, redraws on the learning-rate
slider without recomputing, runs softmax on an uploaded CSV and refuses bad uploads and impossible settings. The
page's job (``jobs.run_race`` with the configs the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest

from backend.optim.dada import jobs
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_page_opens_without_running_anything() -> None:
    at = open_page("dada", timeout=60)
    assert not at.exception
    assert not at.session_state["dada_result"]
    assert not at.get("plotly_chart")


def test_quadratic_race_and_lr_slider() -> None:
    at = open_page("dada", timeout=120)
    at.button[0].click().run()  # the form's submit: default quadratic, d = 100, 2000 iterations, rbar sweep on
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["dada_result"]["race"]
    rows = {row["key"]: row for row in r["summary"]}
    assert rows["dada"]["final_gap"] <= 1e-2 and rows["dada"]["iters_to_0.01"] <= 2000
    finals = r["sensitivity"]["finals"]["dada"]
    assert max(finals) / min(finals) <= 10
    assert len(at.get("plotly_chart")) == 4  # race, lr sensitivity, distance estimate, rbar sensitivity
    before = at.session_state["dada_result"]["race"]["summary"]
    at.select_slider(key="dada_lr").set_value(r["curves"]["gd"]["values"][0]).run()
    assert not at.exception
    assert at.session_state["dada_result"]["race"]["summary"] == before  # redraw only
    assert len(at.get("download_button")) == 3


def test_csv_upload_softmax_and_errors() -> None:
    at = open_page("dada", timeout=120)
    at.selectbox(key="dada_problem").set_value("logistic").run()
    at.radio(key="dada_data").set_value("Upload a CSV").run()
    assert at.button[0].disabled
    at.file_uploader(key="dada_upload").set_value(("one.csv", b"a,b\n" + b"1,x\n2,x\n" * 10, "text/csv")).run()
    assert any("single class" in e.value for e in at.error)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    lab = np.where(X[:, 0] > 0.3, "a", np.where(X[:, 1] > 0, "b", "c"))
    csv = "f1,f2,f3,label\n" + "".join(f"{x:.4f},{y:.4f},{z:.4f},{c}\n" for (x, y, z), c in zip(X, lab))
    at.file_uploader(key="dada_upload").set_value(("blobs.csv", csv.encode(), "text/csv")).run()
    assert not at.error
    at.select_slider(key="dada_iters").set_value(500)
    at.checkbox(key="dada_sweep").set_value(False)
    at.selectbox(key="dada_constraint").set_value("simplex")
    at.number_input(key="dada_radius").set_value(5.0)
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["dada_result"]["race"]
    assert r["problem"]["name"] == "softmax" and r["problem"]["constraint"] == "simplex" and r["problem"]["dim"] == 12
    # an impossible combination is refused with a message, not a crash
    at.selectbox(key="dada_problem").set_value("powerchain").run()
    at.button[0].click().run()
    assert not at.exception
    assert any("unconstrained" in e.value for e in at.error)


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page builds the configs of ``tests/cli_golden/dada.json`` (quadratic, d = 10) and hands them to the job the
    CLI runs. The page offers 250 iterations at least, so the captured race config runs with the golden's 50."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "dada.json").read_text())
    assert golden["argv"] == ["dada", "race", "--problem", "quadratic", "--dim", "10", "--iters", "50", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("dada")
    at.select_slider(key="dada_dim").set_value(10)
    at.checkbox(key="dada_sweep").set_value(False)
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (problem, config, table))] = calls
    assert fn is jobs.run_race and table is None
    assert problem == jobs.ProblemConfig("quadratic", 10)  # every other setting at the CLI's defaults
    assert pickle.loads(pickle.dumps((fn, problem, config))) == (jobs.run_race, problem, config)
    got = fn(problem, dataclasses.replace(config, iters=50), table).race
    expected = {k: v for k, v in golden["expected"].items() if k not in ("method", "action")}
    for path in golden["volatile"]:
        got = strip(got, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_job_and_configs_pickle() -> None:
    """The page's job, its configs and an uploaded table pickle (the Ray executor sends them to a worker)."""
    from backend.optim.dada.problems import load_csv_table

    table = load_csv_table(b"a,b,label\n" + b"".join(f"{i},{i % 3},{'xy'[i % 2]}\n".encode() for i in range(20)))
    job = (jobs.run_race, jobs.ProblemConfig("logistic", constraint="simplex", radius=5.0),
           jobs.RaceConfig(500, rbar_rel=1e-6, sensitivity_grid=jobs.RBAR_GRID_DEFAULT), table)
    back = pickle.loads(pickle.dumps(job))
    assert back[:3] == job[:3] and np.array_equal(back[3].X, table.X)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "dada",
        "table",
        "dada_upload",
        [("selectbox", "dada_problem", "logistic"), ("radio", "dada_data", "Upload a CSV")],
        bad="bad_duplicate_columns.csv",
        odd="odd_crlf.csv",
    ),
]
