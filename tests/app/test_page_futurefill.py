"""AppTest of the FutureFill page: opens instantly, runs every method on a preset, redraws the animation from stored
numbers, accepts an uploaded series and refuses bad uploads. The page's job (``jobs.run_page`` with the config the
page builds, which runs ``jobs.run_generate`` like the CLI) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from backend.generation.futurefill import jobs
from backend.generation.futurefill.futurefill import preset_series
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def _small(at: AppTest) -> AppTest:
    at.select_slider(key="futurefill_new").set_value(512)
    at.slider(key="futurefill_filters").set_value(4)
    at.select_slider(key="futurefill_maxlen").set_value(2048)
    at.select_slider(key="futurefill_anim").set_value(16)
    return at


def test_page_opens_without_running_anything() -> None:
    at = open_page("futurefill", timeout=60)
    assert not at.exception
    assert not at.session_state["futurefill_result"]
    assert not at.get("plotly_chart")


def test_preset_run_draws_agreement_animation_and_costs() -> None:
    at = open_page("futurefill", timeout=120)
    _small(at)
    at.button[0].click().run()  # the form's submit button
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["futurefill_result"]["run"]
    assert {row["method"] for row in r["metrics"]} == {"naive", "epoched", "continuous", "prompted"}
    assert max(row["max |u - naive|"] for row in r["metrics"]) <= 1e-10
    assert all(2.2 <= v <= 2.5 for v in r["bench"]["mac_ratios"]["continuous"])
    assert len(at.get("plotly_chart")) == 4  # series, animation, call timeline, log-log costs
    assert at.dataframe and at.success
    at.radio(key="futurefill_anim_method").set_value("epoched").run()  # redraw from stored events
    assert not at.exception
    assert len(at.get("download_button")) == 3


def test_upload_series_and_bad_uploads() -> None:
    at = open_page("futurefill", timeout=120)
    at.radio(key="futurefill_source").set_value("Upload a series").run()
    assert at.button[0].disabled  # nothing to run yet
    at.file_uploader(key="futurefill_upload").set_value(("bad.txt", b"1\n2\nthree\n" * 10, "text/plain")).run()
    assert any("not numbers" in e.value for e in at.error)
    at.file_uploader(key="futurefill_upload").set_value(("flat.csv", b"x\n" + b"3\n" * 50, "text/csv")).run()
    assert any("constant" in e.value for e in at.error)
    data = "\n".join(f"{v:.5f}" for v in __import__("numpy").sin(__import__("numpy").arange(300) / 7.0)).encode()
    at.file_uploader(key="futurefill_upload").set_value(("sine.txt", data, "text/plain")).run()
    assert not at.error
    _small(at)
    at.button[0].click().run()
    assert not at.exception, at.exception
    r = at.session_state["futurefill_result"]["run"]
    assert r["prompt_len"] == 300 and r["params"]["series"] == "sine.txt"
    assert r["fit"]["r2"] > 0.9


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page builds the model of ``tests/cli_golden/futurefill.json`` (the sines preset of 128 values, 8 spectral
    filters, seed 0) and hands it to ``jobs.run_page``. The page generates at least 256 values, so the captured config
    runs with the golden's 128; the page's job and the CLI's ``run_generate`` give the golden's numbers."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "futurefill.json").read_text())
    assert golden["argv"] == ["futurefill", "generate", "--length", "128", "--new", "128", "--filters", "8", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("futurefill", timeout=60)
    at.select_slider(key="futurefill_plen").set_value(128)
    at.slider(key="futurefill_filters").set_value(8)
    at.select_slider(key="futurefill_new").set_value(256)
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (series, config))] = calls
    assert fn is jobs.run_page
    assert config.generate == jobs.GenerateConfig(n_new=256, n_filters=8)  # the CLI's kind, epoch and seed
    assert np.array_equal(series, preset_series("sines", 128, 0))
    assert pickle.loads(pickle.dumps((fn, config))) == (jobs.run_page, config)
    expected = {k: v for k, v in golden["expected"].items() if k not in ("method", "action", "source")}
    for path in golden["volatile"]:
        expected = strip(expected, path.split("."))
    gen = dataclasses.replace(config.generate, n_new=128)
    res = jobs.run_generate(series, gen)
    got = {"prompt_len": res.prompt_len, "generated": res.generated, "fit": res.fit, "methods": res.methods,
           "continuation": res.continuation}
    got = strip(got, ["methods", "*", "seconds"])
    assert same(got, expected) is None, same(got, expected)
    page = fn(series, dataclasses.replace(config, generate=gen, max_len=512, anim_len=8))
    rows = {r["method"]: r for r in page["metrics"]}
    for m, want in expected["methods"].items():
        assert (rows[m]["MACs"], rows[m]["setup MACs"], rows[m]["FFT calls"], rows[m]["epoch K"]) == (
            want["macs"], want["setup_macs"], want["fft_calls"], want["epoch"])
    assert same(page["u"]["naive"][128:], expected["continuation"]) is None


def test_jobs_and_configs_pickle() -> None:
    """The three jobs and their configs pickle (the Ray executor sends them to a worker)."""
    gen = jobs.GenerateConfig(n_new=64, n_filters=4, kind="random", epoch=8, seed=3)
    for item in ((jobs.run_generate, np.arange(20.0), gen), (jobs.run_bench, jobs.BenchConfig((64, 128), ("naive",))),
                 (jobs.run_page, np.arange(20.0), jobs.PageConfig(gen, max_len=1024, anim_len=16))):
        back = pickle.loads(pickle.dumps(item))
        assert back[0] is item[0] and back[-1] == item[-1]


def test_configs_refuse_bad_settings() -> None:
    """The configs refuse what the page's widgets and the CLI's flags could not express, in the same words."""
    from backend.errors import InputError

    with pytest.raises(InputError, match="Valid names: spectral, random"):
        jobs.GenerateConfig(kind="hyena")
    with pytest.raises(InputError, match="filters"):
        jobs.GenerateConfig(n_filters=0)
    with pytest.raises(InputError, match="Valid names: naive, epoched, continuous, prompted"):
        jobs.BenchConfig(methods=("fast",))


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "futurefill",
        "series",
        "futurefill_upload",
        [("radio", "futurefill_source", "Upload a series")],
        bad="bad_latin1.txt",
        odd="odd_crlf.txt",
    ),
]
