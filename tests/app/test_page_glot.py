"""AppTest of the GLOT page: opens instantly, runs a tiny stress test, trains on the preset CSV, refuses bad uploads."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import Widget, open_page

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def opened() -> AppTest:
    at = open_page("glot", timeout=120)
    return at


def test_page_opens_without_running_anything(opened: AppTest) -> None:
    assert not opened.exception
    assert "glot_result" in opened.session_state
    assert not opened.session_state["glot_result"]
    # the recorded results (if shipped) are drawn from JSON only
    assert len(opened.get("plotly_chart")) >= 0


def _small(at: AppTest) -> AppTest:
    at.multiselect(key="glot_ratios").set_value([0.9])
    at.multiselect(key="glot_poolings").set_value(["mean", "adapool", "glot"])
    at.number_input(key="glot_ntrain").set_value(16)
    at.number_input(key="glot_neval").set_value(8)
    at.slider(key="glot_epochs").set_value(1)
    return at


def test_stress_run_draws_figures_and_table() -> None:
    at = open_page("glot", timeout=240)
    _small(at)
    at.button[0].click().run()  # the form's submit button is the first button on the page
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    result = at.session_state["glot_result"]["stress"]
    methods = {r["method"] for r in result["summary"]}
    assert {"mean", "adapool", "glot", "bow-unigram"} <= methods
    keys = {c.proto.id for c in at.get("plotly_chart")}
    assert len(at.get("plotly_chart")) >= 4, keys  # bars, token graph, readout weights, heatmap
    assert at.dataframe, "metrics table missing"
    ex = result["example"]
    assert len(ex["tokens"]) == len(ex["needle"]) and any(ex["needle"])
    at.slider(key="glot_tau_view").set_value(0.3).run()  # the graph redraws from stored numbers, no rerun of the job
    assert not at.exception


def test_csv_preset_and_bad_uploads() -> None:
    at = open_page("glot", timeout=240)
    at.slider(key="glot_epochs").set_value(1)
    at.button(key="glot_csv_go").click().run()
    assert not at.exception, at.exception
    rows = at.session_state["glot_result"]["csv"]["rows"]
    assert {r["method"] for r in rows} >= {"mean", "max", "cls", "adapool", "glot", "bow-unigram"}

    at.radio(key="glot_csv_source").set_value("Upload a CSV").run()
    at.file_uploader(key="glot_upload").set_value(("one.csv", b"text,label\n" + b"a text,x\n" * 12, "text/csv")).run()
    assert not at.exception
    assert any("only one class" in e.value for e in at.error)
    assert at.button(key="glot_csv_go").disabled
    at.file_uploader(key="glot_upload").set_value(("bad.csv", b"text,label\n\xff\xfe\xfd,1\n", "text/csv")).run()
    assert any("UTF-8" in e.value for e in at.error)
    at.file_uploader(key="glot_upload").set_value(("cols.csv", b"sentence,y\nhello,1\n", "text/csv")).run()
    assert any("lacks the column" in e.value for e in at.error)
    at.file_uploader(key="glot_upload").set_value(("empty.csv", b"", "text/csv")).run()
    assert not at.exception
    assert any("empty" in e.value for e in at.error), [e.value for e in at.error]
    at.file_uploader(key="glot_upload").set_value(("header.csv", b"text,label\n", "text/csv")).run()
    assert any("0 labelled rows" in e.value for e in at.error), [e.value for e in at.error]
    long_row = b"text,label\n" + b"w" * 2001 + b",1\n" + b"short text,0\n" * 12
    at.file_uploader(key="glot_upload").set_value(("long.csv", long_row, "text/csv")).run()
    assert any("the limit is 2000" in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="glot_csv_go").disabled


def test_recorded_tab_reports_graph_vs_adapool(opened: AppTest) -> None:
    """The recorded results say, per variant, whether the graph helps over AdaPool (whatever the outcome)."""
    import json

    rec = json.loads((ROOT / "assets" / "glot_results.json").read_text())
    assert rec["heads"], "glot_results.json has no recorded heads"
    tables = [t.value for t in opened.dataframe]
    effect = next((t for t in tables if "verdict" in t.columns), None)
    assert effect is not None, [list(t.columns) for t in tables]
    assert set(effect["variant"]) >= {"released", "hard", "relational"}
    assert set(effect["verdict"]) <= {"GLOT ahead", "AdaPool ahead", "tie within noise"}
    if "smollm2" in rec:  # the decoder subset is shown with LoRA's time per step
        assert any("LoRA r=64 on SmolLM2" in c.value and "s per step" in c.value for c in opened.caption)


# The page's upload widgets, for tests/app/test_inputs_pages.py (one bad and one odd corpus file each).
def test_page_job_gives_the_cli_golden() -> None:
    """The page's stress-test job (``jobs.run_stress`` with the page's configs and the example view) gives the
    numbers of the CLI's golden (``glot stress``) for the same settings."""
    import json

    from backend.tokens.glot import jobs
    from backend.tokens.glot.experiments import StressConfig
    from backend.tokens.glot.heads import TrainConfig
    from backend.tokens.glot.layers import GlotConfig
    from tests.test_cli import strip

    golden = json.loads((ROOT / "tests" / "cli_golden" / "glot.json").read_text())
    argv = golden["argv"]
    assert argv[:2] == ["glot", "stress"] and "--ratio" in argv and "--epochs" in argv
    page_cfg = jobs.StressJob(StressConfig(variant=argv[argv.index("--variant") + 1],
                                           ratios=(float(argv[argv.index("--ratio") + 1]),),
                                           n_train=int(argv[argv.index("--n-train") + 1]),
                                           n_eval=int(argv[argv.index("--n-eval") + 1]),
                                           poolings=tuple(argv[i + 1] for i, a in enumerate(argv) if a == "--pooling")),
                              GlotConfig(), TrainConfig(epochs=int(argv[argv.index("--epochs") + 1])))
    got = jobs.run_stress(page_cfg)
    assert got.pop("example") is not None
    got = json.loads(json.dumps(got))
    for path in golden["volatile"]:
        got = strip(got, path.split("."))
    assert got == golden["expected"]


def test_jobs_and_configs_pickle() -> None:
    """The page's jobs and their configs pickle (the Ray executor sends them to a worker)."""
    import pickle

    from backend.tokens.glot import jobs

    for obj in (jobs.run_stress, jobs.run_train, jobs.run_lora, jobs.run_heads, jobs.StressJob(), jobs.TrainJob(),
                jobs.LoraJob(max_steps=2), jobs.HeadsJob()):
        assert pickle.loads(pickle.dumps(obj)) == obj


UPLOADS = [
    Widget(
        "glot",
        "labelled_texts",
        "glot_upload",
        [("radio", "glot_csv_source", "Upload a CSV")],
        bad="bad_unclosed_quote.csv",
        odd="odd_crlf.csv",
    ),
]
