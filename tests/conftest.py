"""Test-session set-up: one torch thread, offline hub, per-worker scratch state, and the ci time-budget report at the
end of a run."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# the claims records: record_claim, outcomes of the cited tests, --claims-write (tests/claims_plugin.py)
pytest_plugins = ["tests.claims_plugin"]

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("METHOD_LAB_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent

# Per-worker scratch state (xdist runs two workers at once): the attribution page's user database lives in a
# temporary folder of this worker, never in the user's cache, so two workers never write one SQLite file.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
_SCRATCH = Path(tempfile.mkdtemp(prefix=f"method-lab-tests-{_WORKER}-"))
os.environ.setdefault("METHOD_LAB_ATTRIBUTION_DB", str(_SCRATCH / "attribution_users.sqlite"))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:  # torch is optional for the import-hygiene tests, but always present in the venv
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass


# ------------------------------------------------------------------------------------------------ time budget
# The ci tier's time budget (CONTRIBUTING.md, "The ci time budget") in core-seconds of test time, summed over the two
# xdist workers: a wall-time budget for work spread over both workers counts twice, the browser suite (one module on
# one worker) once. "live pages" is one item for the twelve pages below (15 minutes of wall time together); every
# other page is a "new page" (at most 60 core-seconds).
LIVE_PAGES = ("attribution", "rewatermark", "sigmark", "glot", "pruning", "illava", "crowd", "nowcast", "futurefill",
              "dada", "softbon", "dualrs", "models", "home")
BUDGET_S = {"live pages": 2 * 900, "new page": 60, "browser": 480, "cross-cutting": 2 * 240}


def _method_of(nodeid: str, ids: list[str]) -> str:
    path = nodeid.split("::")[0]
    if "/e2e/" in path:
        return "browser"
    stem = Path(path).stem
    for prefix in ("test_page_", "test_"):
        if stem.startswith(prefix):
            stem = stem[len(prefix):]
            break
    best = max((i for i in ids if stem == i or stem.startswith(i + "_")), key=len, default=None)
    return best or "cross-cutting"


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001 - pytest hook signature
    """Report (not assert) the test time per method against the ci budget, from the tests' own durations."""
    if getattr(config, "workerinput", None) is not None:  # an xdist worker: the controller reports
        return
    try:
        from backend import catalog
    except Exception:  # pragma: no cover - the report is best-effort
        return
    ids = [p.id for p in catalog.PAPERS] + [t.id for t in getattr(catalog, "TOOLS", [])]
    per: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for rep in reports:
            d = getattr(rep, "duration", None)
            nodeid = getattr(rep, "nodeid", "")
            if d is None or not nodeid:
                continue
            m = _method_of(nodeid, ids)
            per[m] = per.get(m, 0.0) + float(d)
    if not per:
        return
    import time as _time

    start = getattr(config, "_method_lab_start", None)
    wall = _time.time() - start if start else float("nan")
    live = set(LIVE_PAGES)
    tw = terminalreporter
    tw.write_sep("-", "ci time budget (core-seconds of test time, summed over workers; reported, not asserted)")
    tw.write_line(f"{'item':<22} {'seconds':>9}  budget")
    for m, s in sorted(per.items(), key=lambda kv: -kv[1]):
        budget = BUDGET_S.get(m) or ("within 'live pages'" if m in live else f"{BUDGET_S['new page']} (new page)")
        tw.write_line(f"{m:<22} {s:9.1f}  {budget}")
    twelve = sum(s for m, s in per.items() if m in live)
    tw.write_line(f"{'live pages together':<22} {twelve:9.1f}  {BUDGET_S['live pages']}")
    tw.write_line(f"{'all tests':<22} {sum(per.values()):9.1f}  wall {wall:.0f} s")


def pytest_configure(config):
    import time as _time

    config._method_lab_start = _time.time()
