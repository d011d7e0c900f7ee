"""AppTest of the Tactic page: opens without running anything, runs a small capture of the built-in text and draws
the figures, redraws another head without recomputing, runs an uploaded text, and refuses a bad upload. The page's
job (``jobs.run_compare`` with the config the page builds) is the CLI's and gives the numbers of its golden
(``tactic synth``: the synthetic preset), and it pickles."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

from backend.tokens.tactic import inputs, jobs
from backend.tokens.tactic.evaluation import builtin_text
from backend.tokens.tactic.sparse_attention import SELECTORS
from tests.app.conftest import ROOT, Widget, open_page
from tests.test_cli import same, strip


def test_opens_without_running_anything() -> None:
    at = open_page("tactic", timeout=60)
    assert not at.exception
    assert "tactic_result" not in at.session_state
    assert not at.get("plotly_chart")


def test_small_run_draws_figures_and_upload() -> None:
    at = open_page("tactic", timeout=240)
    at.select_slider(key="tactic_tokens").set_value(512)
    at.multiselect(key="tactic_layers").set_value([0, 3])
    at.select_slider(key="tactic_queries").set_value(8)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["tactic_result"]
    assert res["layers"] == [0, 3] and res["queries"] == 8
    assert set(res["methods"]) == set(SELECTORS)  # the baselines and the ablations beside Tactic
    assert len(at.get("plotly_chart")) == 5  # need heatmap, error vs tokens, mass, score curve, positions
    before = res["methods"]["tactic"]["mass_mean"]
    at.selectbox(key="tactic_pick_head").set_value(4).run()
    assert not at.exception
    assert at.session_state["tactic_result"]["methods"]["tactic"]["mass_mean"] == before
    # the user's own text
    at.radio(key="tactic_src").set_value("Upload your own").run()
    text = builtin_text()[200_000:212_000].encode()
    at.file_uploader(key="tactic_upload").set_value(("notes.txt", text, "text/plain")).run()
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "notes.txt" in at.session_state["tactic_result"]["text"]["source"]
    # a text too short for the context
    at.file_uploader(key="tactic_upload").set_value(("short.txt", b"just a few words", "text/plain")).run()
    at.button[0].click().run()
    assert any("tokens" in e.value for e in at.error)


def test_bad_upload_is_refused() -> None:
    at = open_page("tactic", timeout=60)
    at.radio(key="tactic_src").set_value("Upload your own").run()
    at.file_uploader(key="tactic_upload").set_value(("bad.txt", b"\xff\xfe\x00binary\x00", "text/plain")).run()
    assert at.error
    assert "tactic_result" not in at.session_state


def test_page_job_equals_cli_golden(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The page, set to the golden's settings (synthetic preset, 512 tokens, 4 queries, layer 0), hands the CLI's
    config (plus its drawings) to the CLI's job, and stores the golden's numbers."""
    import ui.runner
    from backend.__main__ import main

    golden = json.loads((ROOT / "tests" / "cli_golden" / "tactic.json").read_text())
    assert golden["argv"] == ["tactic", "synth", "--tokens", "512", "--queries", "4", "--json"]
    calls: list = []
    real = ui.runner.run_job
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *a, **kw: calls.append((fn, a, kw)) or real(
        label, fn, *a, **kw))
    at = open_page("tactic", timeout=120)
    at.radio(key="tactic_src").set_value("Preset: " + inputs.PRESETS["synthetic"]).run()
    at.select_slider(key="tactic_tokens").set_value(512)
    at.select_slider(key="tactic_queries").set_value(4)
    at.multiselect(key="tactic_layers").set_value([0])
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    [(fn, (text, page_cfg), kw)] = calls
    assert fn is jobs.run_compare and text is None and kw["lm"] is None

    cli_calls: list = []
    real_job = jobs.run_compare
    monkeypatch.setattr(jobs, "run_compare", lambda text, cfg, **kw: cli_calls.append((text, cfg)) or real_job(
        text, cfg, **kw))
    assert main(golden["argv"]) == 0
    capsys.readouterr()
    [(cli_text, cli_cfg)] = cli_calls
    assert cli_text is None and cli_cfg == dataclasses.replace(page_cfg, figures=False)

    res = at.session_state["tactic_result"]
    got = {k: res[k] for k in golden["expected"]}
    got = strip(got, ["methods", "*", "seconds"])
    assert same(got, golden["expected"]) is None, same(got, golden["expected"])


def test_jobs_and_configs_pickle() -> None:
    """The page's jobs and their configs pickle (the Ray executor sends them to a worker)."""
    job = (jobs.run_compare, jobs.CompareConfig(preset="needle", tokens=512, layers=(3, 0), budget="64",
                                                text_name="the upload notes.txt"))
    assert pickle.loads(pickle.dumps(job)) == job
    assert job[1].layers == (0, 3) and job[1].budget == 64
    ppl = (jobs.run_perplexity, jobs.PerplexityConfig(tokens=1025, last=64, methods=("Tactic", "quest")))
    assert pickle.loads(pickle.dumps(ppl)) == ppl
    assert ppl[1].methods == ("tactic", "quest")


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "tactic",
        "text_corpus",
        "tactic_upload",
        [("radio", "tactic_src", "Upload your own")],
        bad="bad_utf16.txt",
        odd="odd_crlf.txt",
    ),
]
