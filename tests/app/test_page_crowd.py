"""AppTest of the crowd page: a preset run, the shipped sample CSV, an upload, and a bad upload; the page's job
(``jobs.run_simulate`` with the config the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from backend.forecast.crowd import jobs
from backend.forecast.crowd.methods import weights_path
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def _page() -> AppTest:
    at = open_page("crowd", timeout=180)
    assert not at.exception
    return at


def _run(at: AppTest, source: str, methods: list[str], seconds: int = 5) -> AppTest:
    at.selectbox(key="crowd_source").set_value(source)
    at.slider(key="crowd_seconds").set_value(seconds)
    at.multiselect(key="crowd_methods").set_value(methods)
    at.button[0].click().run()
    return at


def test_opens_instantly_and_runs_a_preset() -> None:
    at = _page()
    assert len(at.get("plotly_chart")) == 1  # only the (numpy) T-kernel explorer before the button
    at.slider(key="crowd_T").set_value(4.0).run()
    assert not at.exception
    _run(at, "Bottleneck (gap 1.6 m)", ["stddn", "micro", "constant_velocity"])
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) == 5  # + cost vs quality, error curves, animated rollouts, density ODE view
    df = at.dataframe[0].value
    assert {"STDDN", "Micro only (no ODE)", "Constant velocity"} <= set(df["method"])
    assert (df["MAE (m)"] >= 0).all()
    assert len(at.get("download_button")) == 3


def test_sample_csv_and_upload() -> None:
    at = _page()
    _run(at, "Sample CSV (bottleneck, 2.5 fps)", ["constant_velocity", "social_force"])
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 4  # kernel, cost vs quality, curves, rollouts (no ODE view for CSVs)
    sample = pd.read_csv(ROOT / "assets" / "crowd_sample_bottleneck.csv")
    small = sample[sample["frame"] < 20]
    at = _page()
    at.file_uploader[0].set_value(("mine.csv", small.to_csv(index=False).encode(), "text/csv"))
    at.number_input(key="crowd_fps").set_value(2.5)
    _run(at, "Upload your own CSV", ["constant_velocity"])
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "mine.csv" in at.subheader[0].value


def test_bad_upload_shows_an_error() -> None:
    at = _page()
    at.file_uploader[0].set_value(("bad.csv", b"frame,id,x\n0,1,2\n1,1,3\n", "text/csv"))
    _run(at, "Upload your own CSV", ["constant_velocity"])
    assert not at.exception
    assert any("lacks the column" in e.value for e in at.error)


@pytest.mark.skipif(not weights_path("stddn").is_file(), reason="shipped crowd weights missing")
def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page set to the golden's scene and methods (``tests/cli_golden/crowd.json``) hands the runner the job the
    CLI runs; its config differs from the CLI's only where the page fixes a setting (5 s at least, OT and MMD every 2nd
    frame), so the captured config runs with the golden's 3 s and stride 1."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "crowd.json").read_text())
    assert golden["argv"] == ["crowd", "simulate", "--scene", "bottleneck", "--method", "stddn", "--method",
                              "social_force", "--seconds", "3", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = _run(_page(), "Bottleneck (gap 1.6 m)", ["stddn", "social_force"])
    assert not at.exception, at.exception
    [(fn, (source, config))] = calls
    assert fn is jobs.run_simulate and source == "bottleneck"
    assert config == jobs.SimulateConfig(("stddn", "social_force"), seconds=5, stride=2)  # seed 0, as the CLI's
    got = fn(source, dataclasses.replace(config, seconds=3.0, stride=1)).summary()
    expected = golden["expected"]
    for path in golden["volatile"]:
        got, expected = strip(got, path.split(".")), strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_job_and_config_pickle() -> None:
    """The job, its config and an uploaded clip pickle (the Ray executor sends them to a worker)."""
    from backend.forecast.crowd.csvio import read_trajectories
    from backend.forecast.crowd.inputs import trajectories

    clip = read_trajectories(trajectories(), fps=2.5, name="t.csv")
    job = (jobs.run_simulate, clip, jobs.SimulateConfig(("constant_velocity",), stride=2))
    fn, back, config = pickle.loads(pickle.dumps(job))
    assert fn is jobs.run_simulate and config == job[2] and back.name == clip.name
    assert np.array_equal(back.positions, clip.positions, equal_nan=True)
    evaluate = (jobs.run_evaluate, jobs.EvaluateConfig(("bottleneck",), seconds=5))
    assert pickle.loads(pickle.dumps(evaluate)) == evaluate


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "crowd",
        "trajectories",
        "crowd_upload",
        [
            ("selectbox", "crowd_source", "Upload your own CSV"),
            ("multiselect", "crowd_methods", ["constant_velocity"]),
            ("slider", "crowd_seconds", 5),
        ],
        submit="FormSubmitter:crowd_form-Simulate",
        form=True,
        bad="bad_missing_columns.csv",
        odd="odd_crlf.csv",
    ),
]
