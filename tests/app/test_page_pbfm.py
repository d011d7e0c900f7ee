"""AppTest of the PBFM page: opens instantly, samples and scores two methods of the shipped models, shows the
Pareto plot, checks an uploaded field's residual and refuses bad uploads. The page's job (``jobs.run_sample`` with
the config the page builds) lists the methods of the CLI golden and gives the numbers of the CLI's ``sample``
action at the same settings, and the job and its configs pickle."""

from __future__ import annotations

import argparse
import io
import json
import pickle

import numpy as np
import pytest

from backend.errors import InputError
from backend.physics.pbfm import jobs
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_page_opens_without_running_anything() -> None:
    at = open_page("pbfm", timeout=60)
    assert not at.exception
    assert not at.session_state["pbfm_result"]
    assert not at.get("plotly_chart")


def test_sample_two_methods_and_upload() -> None:
    at = open_page("pbfm", timeout=120)
    at.multiselect(key="pbfm_methods").set_value(["pbfm", "fm"])
    at.select_slider(key="pbfm_n").set_value(64)
    at.select_slider(key="pbfm_steps").set_value(10)
    at.checkbox(key="pbfm_seeds").set_value(False)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["pbfm_result"]["run"]
    assert {row["method"] for row in r["rows"]} == {"pbfm", "fm"} and r["seeds"] == [0]
    assert len(at.get("plotly_chart")) == 3  # Pareto, samples, residual maps
    assert any("Not physical" in w.value for w in at.warning)  # the page says the samples are not physical
    assert len(at.get("download_button")) == 2
    from backend.physics.pbfm.pdes import darcy_fields

    buf = io.BytesIO()
    np.savez(buf, field=darcy_fields(1, 7)[0])
    at.file_uploader(key="pbfm_upload").set_value(("f.npz", buf.getvalue(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    bad = io.BytesIO()
    np.savez(bad, field=np.full((2, 64), np.inf))
    at.file_uploader(key="pbfm_upload").set_value(("inf.npz", bad.getvalue(), "application/octet-stream")).run()
    assert any("NaN or inf" in e.value for e in at.error)
    at.button(key="pbfm_diag_go").click().run()  # why the samples are not physical: the diagnostic models
    assert not at.exception, at.exception
    diag = at.session_state["pbfm_result"]["diag"]["rows"]
    assert [d["method"] for d in diag][:2] == ["fm", "pbfm"] and len(diag) == 5


def test_page_job_equals_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI golden (``pbfm methods``) lists the methods; the page's default config runs every one of them. The
    page's config at the settings above, run through the job, gives what ``pbfm sample`` returns at those settings
    (the sampling times aside)."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "pbfm.json").read_text())
    assert golden["argv"] == ["pbfm", "methods", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("pbfm")
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (config,))] = calls
    assert fn is jobs.run_sample and config == jobs.SampleConfig(n=128)  # the page's default: 128 samples
    assert list(config.methods) == [m["name"] for m in golden["expected"]["methods"]]
    calls.clear()
    at.multiselect(key="pbfm_methods").set_value(["pbfm", "fm"])
    at.select_slider(key="pbfm_n").set_value(64)
    at.select_slider(key="pbfm_steps").set_value(10)
    at.checkbox(key="pbfm_seeds").set_value(False)
    at.button[0].click().run()
    [(fn, (config,))] = calls
    assert config == jobs.SampleConfig("darcy", 64, 10, ("pbfm", "fm"), (0,))
    page = fn(config)
    from backend.physics.pbfm.cli import cmd_sample

    cli = cmd_sample(argparse.Namespace(case="darcy", n=64, steps=10, methods=["pbfm", "fm"], seeds=(0,))).result
    got = {"case": page.case, "n": page.n, "steps": page.steps, "methods": page.rows, "runs": page.runs,
           "references": page.references}
    for path in ("methods.*.sample_seconds", "runs.*.sample_seconds"):
        got, cli = strip(got, path.split(".")), strip(cli, path.split("."))
    assert same(got, cli) is None, same(got, cli)


def test_job_and_configs_pickle() -> None:
    """The jobs and their configs pickle (the Ray executor sends them to a worker)."""
    job = (jobs.run_sample, jobs.SampleConfig("heat", 64, 10, ("pbfm", "guidance-0.2"), (0, 1)),
           jobs.run_gradient_dial, jobs.DialConfig("darcy"), jobs.run_residual, jobs.ResidualConfig("darcy"))
    assert pickle.loads(pickle.dumps(job)) == job
    with pytest.raises(InputError, match="at least one method"):
        jobs.SampleConfig(methods=())
    with pytest.raises(InputError, match="shipped models"):
        jobs.SampleConfig(seeds=(7,))
    with pytest.raises(InputError, match="Darcy only"):
        jobs.SampleConfig("heat", methods=("weighted-300",))
    assert "weighted-300" not in jobs.SampleConfig("heat").methods


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [Widget("pbfm", "pde_field", "pbfm_upload", bad="bad_npz_nan.npz", odd="odd_heat.npz")]
