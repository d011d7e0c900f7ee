"""AppTest of the pruning page: opens instantly with the shipped presets, runs the smallest real pruning of SmolLM2
(N = 8, 4 held-out windows), takes an upload and refuses bad ones; the page's light job (``jobs.run_encoder`` with the
config the page builds) gives the numbers of ``pruning encoder --json`` for the same settings, and the jobs and
their configs pickle."""

from __future__ import annotations

import pickle

import pytest
from streamlit.testing.v1 import AppTest

from backend.compression.pruning import jobs
from backend.compression.pruning.pruning import PruneConfig
from tests.app.conftest import Widget, open_page
from tests.test_cli import run_json, same, strip


@pytest.fixture(scope="module")
def smollm2():
    """Load (and, the first time, convert) the model once so the page's own load is a cache hit."""
    from backend.models import load

    return load("smollm2")


def _app() -> AppTest:
    at = open_page("pruning", timeout=60)
    assert not at.exception
    return at


def _prune(at: AppTest) -> AppTest:
    """Click the SmolLM2 tab's submit button (the MiniLM tab comes first)."""
    return next(b for b in at.button if b.label == "Prune and evaluate").click()


def test_page_opens_with_presets():
    at = _app()
    assert "Rotation-Constrained" in at.title[0].value
    assert at.get("plotly_chart"), "the shipped sweep and lab presets are drawn without running anything"
    assert not at.error


def test_run_preset_prunes_and_shows_results(smollm2):  # noqa: ARG001
    at = _app()
    at.select_slider(key="pruning_n").set_value(8)  # calibration segments
    at.slider(key="pruning_eval").set_value(4)  # held-out windows
    at.slider(key="pruning_ratio").set_value(0.3)
    _prune(at).run(timeout=600)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    res = at.session_state["pruning_result"]
    assert res["pruned"]["perplexity"] > 0 and res["heads"]["dropped_total"] == 2 * 30
    assert res["channels"]["kept"] == 1536 - 460
    assert [len(d) for d in res["recipe"]["channels_dropped"]] == [460] * 30  # the downloadable recipe is complete
    keys = {c.key for c in at.get("plotly_chart")}
    assert {"pruning_costs", "pruning_layers", "pruning_units"} <= keys
    assert at.dataframe, "metrics table"
    texts = [t.value for t in at.text]
    assert len(texts) >= 2 and all(texts[:2])  # dense and pruned generations side by side


def test_upload_good_and_bad_text():
    at = _app()
    at.radio(key="pruning_src").set_value("Upload your own").run()
    assert not at.exception
    from backend.compression import corpus

    at.file_uploader[0].set_value(("docs.txt", corpus.builtin_text()[:20_000].encode(), "text/plain")).run()
    assert not at.exception and not at.error
    assert any("docs.txt" in c.value for c in at.caption)
    at.file_uploader[0].set_value(("bad.txt", b"\xff\xfe\xfa not utf-8 \xff", "text/plain")).run()
    assert not at.exception
    assert any("UTF-8" in e.value for e in at.error)


def test_too_short_upload_is_refused_before_any_work(smollm2):  # noqa: ARG001
    at = _app()
    at.radio(key="pruning_src").set_value("Upload your own").run()
    at.file_uploader[0].set_value(("short.txt", ("A short note. " * 40).encode(), "text/plain")).run()
    at.select_slider(key="pruning_n").set_value(8)
    _prune(at).run(timeout=300)
    assert not at.exception
    assert any("calibration" in e.value and "tokens" in e.value for e in at.error)
    assert "pruning_result" not in at.session_state


def test_live_lab_capture_and_sliders(smollm2):  # noqa: ARG001
    at = _app()
    at.toggle(key="lab_live").set_value(True).run()
    layer_slider = [s for s in at.slider if s.label == "Layer"][0]
    layer_slider.set_value(0)
    [b for b in at.button if "Capture" in b.label][0].click().run(timeout=300)
    assert not at.exception and not at.error
    keys = {c.key for c in at.get("plotly_chart")}
    assert {"lab_err", "lab_gamma", "lab_hist", "lab_spec"} <= keys
    at.select_slider(key="lab_lam").set_value(1.0).run()  # a slider move recomputes from the cached statistics
    at.radio(key="lab_sub").set_value("attn").run()
    assert not at.exception and not at.error


def test_encoder_tab_runs():
    at = _app()
    at.select_slider(key="pruning_enc_n").set_value(8)
    [b for b in at.button if b.label == "Prune MiniLM"][0].click().run(timeout=300)
    assert not at.exception and not at.error
    assert at.session_state["pruning_enc"]["cosine_mean"] > 0
    assert "enc_layers" in {c.key for c in at.get("plotly_chart")}


def test_non_llama_model_name_is_refused(tmp_path):
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from backend.models.lm import converted_folder

    tok = AutoTokenizer.from_pretrained(str(converted_folder()[0]))
    GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=len(tok), n_positions=256)).save_pretrained(
        str(tmp_path))
    tok.save_pretrained(str(tmp_path))
    at = _app()
    at.text_input(key="pruning_model").set_value(str(tmp_path))
    at.select_slider(key="pruning_n").set_value(8)
    _prune(at).run(timeout=120)
    assert not at.exception
    assert any("not a Llama-family" in e.value for e in at.error)


def test_page_job_equals_cli_encoder(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The light run (MiniLM, ratio 0.3, rotation, 8 calibration paragraphs) hands the runner the job the CLI runs;
    its numbers are those of ``pruning encoder --ratio 0.3 --compensation rotation --n-calib 8 --json``."""
    calls = []
    monkeypatch.setattr("ui.runner.run_job", lambda label, fn, *args, **kw: calls.append((fn, args)))
    at = _app()
    at.select_slider(key="pruning_enc_n").set_value(8)
    [b for b in at.button if b.label == "Prune MiniLM"][0].click().run(timeout=300)
    assert not at.exception, at.exception
    [(fn, (text, config, enc))] = calls
    assert fn is jobs.run_encoder and text is None
    assert config == jobs.EncoderConfig(PruneConfig(ratio=0.3, compensation="rotation", n_calib=8), n_eval=64)
    page = fn(text, config, enc)
    cli = run_json(["pruning", "encoder", "--ratio", "0.3", "--compensation", "rotation", "--n-calib", "8",
                    "--json"], capsys)
    for key in ("prune_s", "provenance"):
        page, cli = strip(page, [key]), strip(cli, [key])
    assert same(page, cli) is None, same(page, cli)


def test_jobs_and_configs_pickle() -> None:
    """The jobs, their configs and the text pickle (the Ray executor sends them to a worker)."""
    for job in [(jobs.run_prune, jobs.Texts(text="some text", name="the upload a.txt"),
                 jobs.RunConfig(PruneConfig(ratio=0.3, n_calib=8), n_eval=4)),
                (jobs.run_encoder, None, jobs.EncoderConfig()), (jobs.run_lab, None, jobs.LabConfig(layer=0)),
                (jobs.run_sweep, None, jobs.SweepConfig(ratios=(0.2,), compensations=("none", "rotation")))]:
        assert pickle.loads(pickle.dumps(job)) == job


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: PruneConfig(ratio=1.2), "prune ratio must be in"),
        (lambda: PruneConfig(compensation="twist"), "Valid names"),
        (lambda: jobs.RunConfig(prompt="x" * 3000), "at most 2,000 characters"),
        (lambda: jobs.LabConfig(n_list=()), "needs positive sizes"),
        (lambda: jobs.SweepConfig(target="gpu"), "Unknown sweep target"),
        (lambda: jobs.SweepConfig(ratios=()), "at least one ratio"),
    ],
)
def test_configs_refuse_bad_settings(make, words: str) -> None:
    from backend.errors import InputError

    with pytest.raises(InputError, match=words):
        make()


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
UPLOADS = [
    Widget(
        "pruning",
        "text_corpus",
        "pruning_upload",
        [("radio", "pruning_src", "Upload your own")],
        bad="bad_utf16.txt",
        odd="odd_crlf.txt",
    ),
]
