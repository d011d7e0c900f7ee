"""AppTest of the CatalystBench page: opens without running anything, runs the default preset (the recorded test
metrics of the shipped checkpoints beside gradient boosting and the regex), reads an uploaded records file and refuses
a bad one. The page's benchmark job gives the CLI golden's numbers (``catalystbench eval --method mft``), and the jobs
pickle."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import Widget, open_page

GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "catalystbench.json"


def test_opens_without_running_anything() -> None:
    at = open_page("catalystbench", timeout=60)
    assert not at.exception
    assert "catalystbench_result" not in at.session_state
    assert not at.get("plotly_chart")


def test_default_preset_runs() -> None:
    at = open_page("catalystbench", timeout=60)
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["catalystbench_result"]
    assert set(r["scores"]) == {"st", "mst", "ft", "mft", "gb"}
    assert all(len(v) == 5 for per in r["scores"].values() for v in per.values())
    assert len(at.get("plotly_chart")) == 2 and len(at.get("download_button")) == 2


def test_upload_is_read_and_a_bad_one_refused() -> None:
    at = open_page("catalystbench", timeout=60)
    at.file_uploader(key="catalystbench_upload").set_value(("bad.csv", b"name,symbol\nIron,Fe\n", "text/csv")).run()
    assert any("lacks the column" in e.value for e in at.error)
    ok = "name;symbol;atomic_number;period;group;block;atomic_weight\nIron;Fe;26;4;8;d;55,845\n"
    at.file_uploader(key="catalystbench_upload").set_value(("mine.csv", ok.encode(), "text/csv")).run()
    assert not at.error, [e.value for e in at.error]
    assert not at.exception


UPLOADS = [Widget("catalystbench", "element_records", "catalystbench_upload", bad="bad_utf16.csv",
                  odd="odd_semicolon.csv")]


def test_page_job_gives_the_golden_numbers() -> None:
    from backend.data.catalystbench import jobs as J

    golden = json.loads(GOLDEN.read_text())
    assert golden["argv"][:4] == ["catalystbench", "eval", "--method", "mft"]
    res = J.run_benchmark(J.BenchmarkConfig(methods=("mft",)))
    want = golden["expected"]["scores"]
    for m in ("mft", "gb"):
        for t, vals in res.scores[m].items():
            assert [round(v, 6) for v in vals] == [round(v, 6) for v in want[m][t]], (m, t)


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.data.catalystbench import jobs

    for obj in (jobs.run_benchmark, jobs.run_predict, jobs.BenchmarkConfig(), jobs.PredictConfig(sentences=("x",))):
        assert pickle.loads(pickle.dumps(obj)) == obj
