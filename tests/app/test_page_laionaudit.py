"""AppTest of the LAION audit page: opens without running anything, runs the first audit preset, audits an uploaded
CSV, refuses a bad upload, evaluates the shipped encoders of one factor. The page's transfer job gives the CLI
golden's numbers (``laionaudit transfer``), and the jobs pickle."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.conftest import Widget, open_page

UPLOAD = "Upload your own (CSV or Parquet)"
GOLDEN = Path(__file__).resolve().parents[1] / "cli_golden" / "laionaudit.json"


def test_opens_without_running_anything() -> None:
    at = open_page("laionaudit", timeout=60)
    assert not at.exception
    assert "laionaudit_audit" not in at.session_state
    assert not at.get("plotly_chart")


def test_first_preset_audit_runs() -> None:
    at = open_page("laionaudit", timeout=60)
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    r = at.session_state["laionaudit_audit"]
    assert r["costs"]["captions"] == 20_000
    assert "nurse" in r["top_female"] and "mechanic" in r["top_male"]
    assert len(at.get("plotly_chart")) == 3 and len(at.get("download_button")) == 2


def test_uploaded_csv_is_audited_and_a_bad_one_refused() -> None:
    at = open_page("laionaudit", timeout=60)
    at.selectbox(key="laionaudit_preset").set_value(UPLOAD).run()
    at.file_uploader(key="laionaudit_upload").set_value(("bad.csv", "caption\ncaf\u00e9\n".encode("latin-1"),
                                                         "text/csv")).run()
    assert any("UTF-8" in e.value for e in at.error)
    rows = "id;alt_text\n" + "".join(f"{i};a woman with a laptop {i}\n{i + 100};a man with a drill\n" for i in range(20))
    at.file_uploader(key="laionaudit_upload").set_value(("mine.csv", rows.encode(), "text/csv")).run()
    assert not at.error, [e.value for e in at.error]
    at.button[0].click().run(timeout=60)
    assert not at.exception, at.exception
    r = at.session_state["laionaudit_audit"]
    assert r["corpus"]["column"] == "alt_text" and r["groups"]["female"]["captions"] == 20


UPLOADS = [
    Widget("laionaudit", "captions", "laionaudit_upload", [("selectbox", "laionaudit_preset", UPLOAD)],
           bad="bad_utf16.csv", odd="odd_crlf.csv"),
    Widget("laionaudit", "captions", "laionaudit_assoc_upload",
           [("radio", "laionaudit_mode", "MiniLM association"), ("selectbox", "laionaudit_assoc_preset", UPLOAD)],
           bad="bad_latin1.csv", odd="odd_captions.parquet"),
]


def test_page_transfer_job_gives_the_golden_numbers() -> None:
    at = open_page("laionaudit", timeout=60)
    at.radio(key="laionaudit_mode").set_value("Bias transfer (planted corpus)").run()
    at.button[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) == 4
    t = at.session_state["laionaudit_transfer"]
    golden = json.loads(GOLDEN.read_text())
    assert golden["argv"][:2] == ["laionaudit", "transfer"]
    for name, s in t["settings"].items():
        want = golden["expected"]["settings"][name]
        assert [r["r2"] for r in s["seeds"]] == [r["r2"] for r in want["seeds"]]
        assert s["r2_mean"] == want["r2_mean"]


def test_jobs_and_configs_pickle() -> None:
    import pickle

    from backend.data.laionaudit import jobs

    for obj in (jobs.run_audit, jobs.run_transfer, jobs.run_association, jobs.AuditConfig(), jobs.TransferConfig(),
                jobs.AssociationConfig()):
        assert pickle.loads(pickle.dumps(obj)) == obj
