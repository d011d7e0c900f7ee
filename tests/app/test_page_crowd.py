"""AppTest of the crowd page: a preset run, the shipped sample CSV, an upload, and a bad upload."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from tests.app.conftest import Widget, open_page

ROOT = Path(__file__).resolve().parents[2]


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
