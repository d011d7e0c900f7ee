"""AppTest of the Soft Best-of-N page: opens instantly, runs the hackable preset, redraws the per-N plots without
recomputing, switches presets, scores pasted and uploaded candidate answers with MiniLM and refuses a bad upload. The
page's job (``jobs.run_random`` with the config the page builds) gives the numbers of the CLI golden, and pickles."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle

import pytest

from backend.alignment.softbon import jobs
from backend.alignment.softbon.softbon import InstanceConfig, SweepConfig
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_opens_without_running_anything() -> None:
    at = open_page("softbon", timeout=60)
    assert not at.exception
    assert not at.session_state["softbon_result"]
    assert not at.get("plotly_chart")


def test_hackable_preset_sweep_and_redraw() -> None:
    at = open_page("softbon", timeout=60)
    at.button[0].click().run()  # form submit: 3% hackable preset, calibrated selection
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["softbon_result"]["random"]
    i32 = r["ns"].index(32)
    assert 0 < r["best_beta_per_n"][i32] < math.inf and r["best_true_per_n"][i32] > r["bon_true_per_n"][i32]
    assert len(at.get("plotly_chart")) == 4  # heatmap, KL vs bound, reward vs beta, regret terms
    assert len(at.get("download_button")) == 2
    before = r["expected_true_reward"]
    at.select_slider(key="softbon_n").set_value(8).run()
    assert not at.exception
    assert at.session_state["softbon_result"]["random"]["expected_true_reward"] == before  # redraw only
    at.selectbox(key="softbon_preset").set_value("Clean proxy (proxy = true reward)").run()
    assert at.slider(key="softbon_hack").value == 0.0
    at.button[0].click().run()
    r = at.session_state["softbon_result"]["random"]
    assert all(b == "inf" for b in r["best_beta_per_n"][1:])  # clean proxy: hard BoN is best


def test_text_mode_paste_upload_and_bad_upload() -> None:
    at = open_page("softbon", timeout=120)
    at.radio(key="softbon_mode").set_value("Your candidate answers (text)").run()
    at.text_input(key="softbon_scores").set_value("1, 1, 0, 0.8, 0.3, 0.2")
    at.button[0].click().run()  # the default example with MiniLM
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    t = at.session_state["softbon_result"]["text"]
    assert len(t["labels"]) == 6 and len(at.get("plotly_chart")) == 1
    best = max(range(6), key=lambda i: t["proxy"][i])
    assert "Paris" in t["labels"][best] and "Lyon" not in t["labels"][best]
    upload = b"Berlin is the capital of Germany.\n\nThe capital of Germany is Bonn.\n\nGermany's capital: Berlin.\n"
    at.file_uploader(key="softbon_upload").set_value(("answers.txt", upload, "text/plain")).run()
    at.text_input(key="softbon_ref").set_value("Berlin is the capital of Germany.")
    at.text_input(key="softbon_scores").set_value("")
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert len(at.session_state["softbon_result"]["text"]["labels"]) == 3
    at.file_uploader(key="softbon_upload").set_value(("bad.txt", b"\x00\x01binary\xff", "text/plain")).run()
    assert any("binary" in e.value for e in at.error)


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page builds the instance of ``tests/cli_golden/softbon.json`` (K = 50, 3 % hackable, the raw proxy) and
    hands it to the job the CLI runs. The page sweeps its fixed grid, so the captured config runs with the golden's."""
    golden = json.loads((ROOT / "tests" / "cli_golden" / "softbon.json").read_text())
    assert golden["argv"] == ["softbon", "sweep", "--k", "50", "--ns", "1,2,4", "--betas", "0,1,4", "--json"]
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("softbon")
    at.select_slider(key="softbon_k").set_value(50)
    at.radio(key="softbon_reward").set_value("proxy")
    at.button[0].click().run()
    assert not at.exception, at.exception
    [(fn, (config,))] = calls
    assert fn is jobs.run_random
    assert config.instance == InstanceConfig(k=50, hack_frac=0.03) and config.seed == 0  # the CLI's defaults
    assert pickle.loads(pickle.dumps((fn, config))) == (jobs.run_random, config)
    res = fn(dataclasses.replace(config, sweep=SweepConfig(ns=(1, 2, 4), betas=(0.0, 1.0, 4.0),
                                                           reward=config.sweep.reward)))
    got = {"instance": res.instance, **res.sweep, "regret_terms_at_max_n": res.regret_at_max_n()}
    expected = {k: v for k, v in golden["expected"].items() if k != "method"}
    for path in golden["volatile"]:
        expected = strip(expected, path.split("."))
    assert same(got, expected) is None, same(got, expected)


def test_jobs_and_configs_pickle() -> None:
    """Both jobs and their configs pickle (the Ray executor sends them to a worker)."""
    random = (jobs.run_random, jobs.RandomConfig(InstanceConfig(k=100, noise=0.3), SweepConfig(reward="calibrated"), 7))
    text = (jobs.run_text, ["Paris.", "Lyon."], jobs.TextConfig("Paris", SweepConfig(ns=(4,), betas=jobs.TEXT_BETAS),
                                                                true_scores=(1.0, 0.0)))
    assert pickle.loads(pickle.dumps(random)) == random
    assert pickle.loads(pickle.dumps(text)) == text


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "softbon",
        "candidates",
        "softbon_upload",
        [("radio", "softbon_mode", "Your candidate answers (text)")],
        bad="bad_one_answer.txt",
        odd="odd_crlf.txt",
    ),
]
