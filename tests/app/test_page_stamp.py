"""AppTest of the STaMP page: opens without running anything, runs a small real evaluation of SmolLM2 (one window
of 128 tokens, no Hadamard rows) with the figures, the table and the downloads, takes an upload and refuses a bad
one and an unsupported bit setting; the page's job (``jobs.run_evaluate`` with the config the page builds) gives the
numbers of ``stamp eval --json`` for the same settings, and the jobs and their configs pickle."""

from __future__ import annotations

import json
import pickle

import pytest

from backend.compression.stamp import jobs
from backend.compression.stamp.hooks import EvalConfig
from tests.app.conftest import Widget, open_page
from tests.test_cli import run_json, same, strip


def test_opens_without_running_anything() -> None:
    at = open_page("stamp", timeout=60)
    assert not at.exception
    assert not at.session_state["stamp_result"]
    assert not at.get("plotly_chart")
    assert any("Average activation bits" in c.value for c in at.caption)


@pytest.fixture(scope="module")
def ran():
    at = open_page("stamp", timeout=60)
    at.select_slider(key="stamp_seqlen").set_value(128)
    at.select_slider(key="stamp_k").set_value(4)
    at.checkbox(key="stamp_hadamard").set_value(False)
    next(b for b in at.button if b.label == "Quantize and evaluate").click().run(timeout=600)
    return at


def test_small_run_draws_results(ran) -> None:
    at = ran
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["stamp_result"]["last"]
    ppl = {x["method"]: x["ppl"] for x in r["rows"]}
    assert set(ppl) == {"dense", "a4", "a4_tok0", "a4_first_k", "stamp"}
    bits = {x["method"]: x["avg_bits"] for x in r["rows"]}
    assert bits["a4_tok0"] == 4 + 4 / 128 and bits["a4_first_k"] == bits["stamp"]
    gains = jobs.gain_table(r["rows"])  # the comparison table: STaMP against its three controls, one window
    assert [g["control"] for g in gains] == ["A4 per token (RTN)", "A4, token 0 at 8 bits",
                                             "A4, first k raw tokens at 8 bits"]
    assert all(g["windows"] == 1 and not g["resolved"] for g in gains)
    assert any(o.startswith("Built-in: software licences") for o in at.radio(key="stamp_src").options)
    assert r["config"]["seqlen"] == 128 and r["tokens"] == 128
    assert abs(next(x["avg_bits"] for x in r["rows"] if x["method"] == "stamp") - (4 + 4 * 4 / 128)) < 1e-12
    keys = {c.key for c in at.get("plotly_chart")} if hasattr(at.get("plotly_chart")[0], "key") else set()
    assert len(at.get("plotly_chart")) >= 4, keys
    assert len(at.get("download_button")) == 2


def test_upload_and_bad_upload(ran) -> None:
    at = ran
    at.radio(key="stamp_src").set_value("Upload your own").run()
    at.file_uploader(key="stamp_upload").set_value(("bad.txt", b"\x00\x01binary\xff", "text/plain")).run()
    assert any("binary" in e.value for e in at.error)
    at.file_uploader(key="stamp_upload").set_value(("short.txt", b"def f():\n    return 1\n", "text/plain")).run()
    assert not at.exception
    next(b for b in at.button if b.label == "Quantize and evaluate").click().run(timeout=600)
    assert not at.exception
    assert any("tokens" in e.value for e in at.error), [e.value for e in at.error]  # too short for 2 windows


def test_page_job_equals_cli_eval(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The light preset without the Hadamard rows (one window of 128 tokens, k = 4, the sink rule) hands the runner
    the job the CLI runs; its perplexities, bits, SQNR and bound ratios are those of ``stamp eval --seqlen 128
    --windows 1 --hp-tokens 4 --methods dense,a4,a4_first_k,stamp --json`` (the page evaluates in batches of 2)."""
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = open_page("stamp", timeout=60)
    at.select_slider(key="stamp_seqlen").set_value(128)
    at.select_slider(key="stamp_k").set_value(4)
    at.checkbox(key="stamp_hadamard").set_value(False)
    next(b for b in at.button if b.label == "Quantize and evaluate").click().run(timeout=600)
    assert not at.exception, at.exception
    [(fn, (text, config, lm, source))] = calls
    assert fn is jobs.run_evaluate and text is None and source is None
    assert config == jobs.EvaluateConfig(EvalConfig(seqlen=128, n_windows=1, hp_tokens=4, methods=jobs.A4_ROWS,
                                                    batch_size=2))
    page = fn(text, config, lm, source)
    cli = run_json(["stamp", "eval", "--seqlen", "128", "--windows", "1", "--hp-tokens", "4", "--methods",
                    ",".join(jobs.A4_ROWS), "--json"], capsys)
    got = json.loads(json.dumps({"rows": page["rows"], "config": page["config"], "tokens": page["tokens"],
                                 "text": page["source"]}))  # tuples as the CLI's JSON lists
    want = {k: cli[k] for k in ("rows", "config", "tokens", "text")}
    for path in ("rows.*.seconds", "config.batch_size"):
        got, want = strip(got, path.split(".")), strip(want, path.split("."))
    assert same(got, want) is None, same(got, want)


def test_jobs_and_configs_pickle() -> None:
    """The jobs and their configs pickle (the Ray executor sends them to a worker)."""
    for job in [(jobs.run_evaluate, "some text", jobs.EvaluateConfig(EvalConfig(seqlen=128, methods=jobs.A4_ROWS))),
                (jobs.run_synthetic, jobs.SyntheticConfig(seqlen=64, dim=16, hp_tokens=4))]:
        assert pickle.loads(pickle.dumps(job)) == job


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: EvalConfig(low_bits=7), "one of"),
        (lambda: EvalConfig(seqlen=16), "context must be 32-2048"),
        (lambda: EvalConfig(transform="fourier"), "Valid names"),
        (lambda: EvalConfig(methods=("a4", "nope")), "Valid names"),
        (lambda: EvalConfig(hp_tokens=4, sink_tokens=5), "sink tokens"),
        (lambda: jobs.SyntheticConfig(rho=1.0), "rho must be in"),
    ],
)
def test_configs_refuse_bad_settings(make, words: str) -> None:
    from backend.errors import InputError

    with pytest.raises(InputError, match=words):
        make()


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget("stamp", "text_corpus", "stamp_upload", [("radio", "stamp_src", "Upload your own")],
           bad="bad_utf16.txt", odd="odd_crlf.txt"),
]
