"""AppTest of the MCD page: opens without running anything, imputes a preset with the shipped model (maps, r bars for
one sample and the mean of M, history after two runs), imputes an uploaded NPZ stack and refuses bad uploads; the
page's job (``jobs.run_impute`` with the config the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import io
import json
import pickle

import numpy as np
import pytest

from backend.imputation.mcd import jobs
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_page_opens_without_running_anything() -> None:
    at = open_page("mcd", timeout=60)
    assert not at.exception
    assert not at.session_state["mcd_result"]
    assert not at.get("plotly_chart")


def test_preset_then_upload() -> None:
    at = open_page("mcd", timeout=120)
    at.select_slider(key="mcd_samples").set_value(2)
    at.select_slider(key="mcd_steps").set_value(6)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["mcd_result"]["run"]
    assert r["heldout_pattern"] and r["distance_to_training"] == 1
    assert set(r["mean_r"]) >= {"mcd", "mcd_single", "regressor", "most_correlated", "ridge", "ridge_ms", "unet", "bayes"}
    # the page names the run's winner, computed from the run
    vb = r["versus_best"]
    assert vb["best"] == r["ranking"][0] == max((m for m in r["mean_r"] if m != "bayes"), key=r["mean_r"].get)
    assert any("Best on this run" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 4  # maps, one-sample bars, mean-of-M bars, mean r
    assert len(at.get("download_button")) == 2
    at.checkbox(key="mcd_obs2").check()  # a pattern without shipped U-Nets
    at.button[0].click().run()
    assert not at.exception and not at.error
    r = at.session_state["mcd_result"]["run"]
    assert not r["heldout_pattern"] and "unet" not in r["mean_r"] and "regressor" in r["mean_r"]
    assert len(at.get("plotly_chart")) == 5  # + the history chart after two runs
    from backend.imputation.mcd.tissue import generate

    buf = io.BytesIO()
    np.savez(buf, stack=generate(1, 77).x[0][:, :24, :24])
    at.radio(key="mcd_stack").set_value("Upload an NPZ").run()
    at.file_uploader(key="mcd_upload").set_value(("s.npz", buf.getvalue(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    at.button[0].click().run()
    assert not at.exception and not at.error
    r = at.session_state["mcd_result"]["run"]
    assert "bayes" not in r["mean_r"] and all(-1 <= v <= 1 for v in r["mean_r"].values())
    assert r["params"]["stack"] == "s.npz" and len(r["missing"]) == 6
    bad = io.BytesIO()
    np.savez(bad, stack=np.full((13, 16, 16), 1.0))
    at.file_uploader(key="mcd_upload").set_value(("b.npz", bad.getvalue(), "application/octet-stream")).run()
    assert not at.exception
    assert any("too many" in e.value for e in at.error)


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's default stack and pattern with M = 2 and 6 steps are the settings of ``tests/cli_golden/mcd.json``;
    the job and config the page hands to the runner give the golden's numbers."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "mcd.json").read_text())
    assert golden["argv"] == ["mcd", "impute", "--stack", "tissue-0", "--observed", "0,1,3,5,7", "--samples", "2",
                              "--steps", "6", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("mcd", timeout=60)
    at.select_slider(key="mcd_samples").set_value(2)
    at.select_slider(key="mcd_steps").set_value(6)
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (stack, config))] = calls
    assert fn is jobs.run_impute and stack == "tissue-0"
    assert config == jobs.ImputeConfig("0,1,3,5,7", samples=2, steps=6, seed=0)
    assert pickle.loads(pickle.dumps((fn, stack, config))) == (fn, stack, config)
    res = fn(stack, config)
    got = res.summary(digits=None) | {"stack": stack, "source": res.source, "shape": res.shape,
                                      "samples": config.samples, "steps": config.steps, "seed": config.seed}
    expected = golden["expected"]
    for path in golden["volatile"]:
        got, expected = strip(got, path.split(".")), strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_job_and_config_pickle() -> None:
    """The job, its config and an uploaded stack pickle (the Ray executor sends them to a worker)."""
    from backend.imputation.mcd.inputs import channel_stack
    from backend.imputation.mcd.stack import read_stack

    job = (jobs.run_impute, read_stack(channel_stack()), jobs.ImputeConfig((0, 2), samples=1, steps=1))
    back = pickle.loads(pickle.dumps(job))
    assert back[0] is job[0] and back[2] == job[2] and np.array_equal(back[1], job[1])


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget("mcd", "channel_stack", "mcd_upload", [("radio", "mcd_stack", "Upload an NPZ")],
           bad="bad_npz_nan.npz", odd="odd_side8.npz"),
]
