"""AppTest of the dual randomized smoothing page: opens instantly, trains and certifies the moons preset with the attack
check, inspects a test point without recomputing, certifies an uploaded CSV and refuses bad uploads. The page's job
(``jobs.run_certify`` with the config the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest

from backend.robustness.dualrs import jobs
from backend.robustness.dualrs.configs import CertifyConfig, TrainConfig
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_opens_without_running_anything() -> None:
    at = open_page("dualrs", timeout=60)
    assert not at.exception
    assert not at.session_state["dualrs_result"]
    assert not at.get("plotly_chart")


def test_moons_preset_certify_attack_and_inspect() -> None:
    at = open_page("dualrs", timeout=300)
    assert at.checkbox(key="dualrs_attack").value is False  # the light default
    at.radio(key="dualrs_size").set_value("Full: 200 test points and the attack check").run()
    assert at.checkbox(key="dualrs_attack").value is True and at.select_slider(key="dualrs_test").value == 200
    at.select_slider(key="dualrs_n").set_value(1000)
    at.select_slider(key="dualrs_test").set_value(100)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["dualrs_result"]["run"]
    assert [row["method"] for row in r["summary"]["table"]][-1] == "dual"
    assert r["attack"]["summary"]["flips"] == 0 and r["attack"]["summary"]["attacked_points"] > 50
    assert len(at.get("plotly_chart")) == 3  # plane, curves, attack margins
    assert len(at.get("download_button")) == 3
    before = r["summary"]
    at.number_input(key="dualrs_point").set_value(7).run()
    assert not at.exception
    assert at.session_state["dualrs_result"]["run"]["summary"] == before  # redraw only
    assert "Test point #7" in " ".join(c.value for c in at.caption)


def test_csv_upload_and_bad_uploads() -> None:
    at = open_page("dualrs", timeout=300)
    at.radio(key="dualrs_source").set_value("Upload a CSV").run()
    assert at.button[0].disabled
    at.file_uploader(key="dualrs_upload").set_value(("few.csv", b"x,y,label\n1,2,a\n3,4,b\n", "text/csv")).run()
    assert any("at least 20" in e.value for e in at.error)
    at.file_uploader(key="dualrs_upload").set_value(("bin.csv", b"\x00\x01\x02\xff" * 10, "text/csv")).run()
    assert any("binary" in e.value for e in at.error)
    rng = np.random.default_rng(0)
    pts = np.concatenate([rng.normal([0, 0], 0.5, (60, 2)), rng.normal([3, 0], 0.5, (60, 2))])
    lab = ["left"] * 60 + ["right"] * 60
    csv = "x,y,label\n" + "".join(f"{a:.4f},{b:.4f},{c}\n" for (a, b), c in zip(pts, lab))
    at.file_uploader(key="dualrs_upload").set_value(("two.csv", csv.encode(), "text/csv")).run()
    assert not at.error
    at.multiselect(key="dualrs_sigmas").set_value([0.25, 1.0])
    at.select_slider(key="dualrs_n").set_value(500)
    at.checkbox(key="dualrs_attack").set_value(False)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["dualrs_result"]["run"]
    assert r["class_names"] == ["left", "right"] and "attack" not in r
    assert r["summary"]["table"][-1]["clean_accuracy"] > 0.8
    assert len(at.get("plotly_chart")) == 2


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page builds the run of ``tests/cli_golden/dualrs.json`` (moons, Sigma = {0.25, 1}, no attack) and hands it
    to the job the CLI runs. The page offers n >= 500 and 50 test points at least, so the captured config runs with
    the golden's n = 300 and 30 test points."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "dualrs.json").read_text())
    assert golden["argv"] == ["dualrs", "certify", "--data", "moons", "--n", "300", "--max-test", "30", "--sigmas",
                              "0.25,1", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("dualrs")
    at.multiselect(key="dualrs_sigmas").set_value([1.0, 0.25])
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (data, config))] = calls
    assert fn is jobs.run_certify and data is None
    assert config.data == "moons" and config.train == TrainConfig(sigmas=(0.25, 1.0)) and not config.attack
    assert config.seed == 0 and config.certify.alpha == 0.001 and config.certify.n0 == 100  # the CLI's defaults
    assert pickle.loads(pickle.dumps((fn, config))) == (jobs.run_certify, config)
    res = fn(data, dataclasses.replace(config, certify=dataclasses.replace(config.certify, n=300), max_test=30))
    got = json.loads(json.dumps({**res.summary, "curves": res.curves_every(10)}))  # as the CLI prints it
    expected = golden["expected"]
    for path in golden["volatile"]:
        got, expected = strip(got, path.split(".")), strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_job_and_config_pickle() -> None:
    """The job, its config and an uploaded data set pickle (the Ray executor sends them to a worker)."""
    from backend.robustness.dualrs.data2d import make_dataset

    config = jobs.RunConfig("circles", TrainConfig(sigmas=(0.12, 0.5)), CertifyConfig(n=500), max_test=50,
                            attack=True, seed=4)
    data = make_dataset("moons", 40, 10)
    back = pickle.loads(pickle.dumps((jobs.run_certify, data, config)))
    assert back[0] is jobs.run_certify and back[2] == config and np.array_equal(back[1].x_train, data.x_train)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "dualrs",
        "points2d",
        "dualrs_upload",
        [("radio", "dualrs_source", "Upload a CSV")],
        bad="bad_inf_cell.csv",
        odd="odd_crlf.csv",
    ),
]
