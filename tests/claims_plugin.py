"""Pytest plugin of the claims records (``backend/claims.py``), loaded by ``tests/conftest.py``.

* ``record_claim(name=value, ...)``: the fixture a claim test calls with the numbers it measured. In a normal run the
  numbers are compared with the ones recorded in ``claims/<id>.measured.json`` for the same test (tolerance from the
  claim's spec, else ``backend.claims.RTOL`` / ``ATOL``): a claim test whose numbers moved fails at teardown.
* Every test a spec cites has its outcome (passed, xfailed, ...), numbers, tier and reproducing command collected. At
  the end of the session they are written to ``test-artifacts/claims/<id>.measured.json`` (the ci tier never writes
  tracked files) and, with ``--claims-write`` (``make claims``, ``make test-full``), to ``claims/<id>.measured.json``,
  merged with the entries of the tests this session did not run. A deselected cited test with an xfail marker (a
  full-tier expected failure under ``-m "not full"``) is recorded as that expected failure, with ``run: false``.
"""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
from pathlib import Path

import pytest

from backend import claims as C

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "claims"


def pytest_addoption(parser):
    parser.addoption("--claims-write", action="store_true", default=False,
                     help="write the measured part of the claims records (claims/<id>.measured.json)")


def _plain(v):
    """A JSON-able copy of a measured number (numpy / torch scalars to float, sequences to lists)."""
    if isinstance(v, bool | int | str) or v is None:
        return v
    if isinstance(v, float):
        return float(v)
    if hasattr(v, "item") and getattr(v, "ndim", 0) == 0:
        return _plain(v.item())
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if hasattr(v, "tolist"):
        return v.tolist()
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return float(v)


class ClaimsCollector:
    def __init__(self, config):
        self.config = config
        try:
            self.cited = C.cited_tests()
        except (C.ClaimsError, OSError):  # a broken spec is reported by tests/test_claims.py, not here
            self.cited = {}
        self.results: dict[str, dict] = {}

    def claim_of(self, nodeid: str) -> tuple[str, str] | None:
        for cited, owners in self.cited.items():
            if C.covers(cited, nodeid):
                return owners[0]
        return None

    # ---------------------------------------------------------------------------------------------------- hooks
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        if self.claim_of(item.nodeid) is not None:
            item.user_properties.append(("claim_tier", "full" if item.get_closest_marker("full") else "ci"))

    def pytest_deselected(self, items):
        """A cited test this session deselects (the full tier under ``-m "not full"``) but that carries an xfail
        marker is a recorded expected failure: its reason is kept (``run: false``) unless a run of it is recorded."""
        for item in items:
            mark = item.get_closest_marker("xfail")
            if mark is None or self.claim_of(item.nodeid) is None or item.nodeid in self.results:
                continue
            self.results[item.nodeid] = {"outcome": "xfailed", "run": False,
                                         "tier": "full" if item.get_closest_marker("full") else "ci",
                                         "xfail_reason": str(mark.kwargs.get("reason", ""))}

    def pytest_runtest_logreport(self, report):
        if self.claim_of(report.nodeid) is None:
            return
        props = dict(report.user_properties)
        entry = self.results.setdefault(report.nodeid, {"outcome": "skipped", "tier": props.get("claim_tier", "ci")})
        entry["run"] = True
        if "claim_numbers" in props:
            entry["numbers"] = dict(props["claim_numbers"])
        wasxfail = getattr(report, "wasxfail", None)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if wasxfail is not None and report.skipped:
                entry["outcome"] = "xfailed"
                entry["xfail_reason"] = str(wasxfail).removeprefix("reason: ")
            elif wasxfail is not None and report.passed:
                entry["outcome"] = "xpassed"
            elif report.failed:
                entry["outcome"] = "failed"
            elif report.skipped:
                entry["outcome"] = "skipped"
            else:
                entry["outcome"] = "passed"
            if report.when == "call":
                entry["duration_s"] = round(float(report.duration), 2)
        elif report.when == "teardown" and report.failed:
            entry["outcome"] = "failed"

    def pytest_sessionfinish(self, session):
        if getattr(self.config, "workerinput", None) is not None or not self.results:
            return  # an xdist worker: the controller writes
        date = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
        commit = _commit()
        per_method: dict[str, dict[str, dict]] = {}
        for nodeid, entry in self.results.items():
            owner = self.claim_of(nodeid)
            if owner is None:
                continue
            quoted = nodeid if "[" not in nodeid else f"'{nodeid}'"
            entry = {**entry, "command": f"OMP_NUM_THREADS=1 .venv/bin/python -m pytest {quoted} -p no:cacheprovider",
                     "date": date, "commit": commit}
            per_method.setdefault(owner[0], {})[nodeid] = entry
        write = self.config.getoption("--claims-write")
        for method, entries in per_method.items():
            try:
                old = C.load_measured(method).get("tests", {})
            except C.ClaimsError:
                old = {}
            merged = {n: e for n, e in old.items() if self.claim_of(n) is not None}
            for n, e in entries.items():  # a marker read without running never replaces a recorded run
                if not (e.get("run") is False and merged.get(n, {}).get("run", False) is not False):
                    merged[n] = e
            data = {"method": method, "date": date, "commit": commit,
                    "note": "generated by tests/claims_plugin.py (make claims, make test-full); do not edit",
                    "tests": dict(sorted(merged.items()))}
            text = json.dumps(data, indent=1, sort_keys=False) + "\n"
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / f"{method}.measured.json").write_text(text)
            if write:
                C.measured_path(method).write_text(text)


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def pytest_configure(config):
    config.pluginmanager.register(ClaimsCollector(config), "method_lab_claims")


@pytest.fixture
def record_claim(request):
    """``record_claim(accuracy=0.93, ...)``: the numbers this claim test measured (see the module docstring)."""
    numbers: dict = {}
    request.node.user_properties.append(("claim_numbers", numbers))

    def record(**values) -> None:
        numbers.update({k: _plain(v) for k, v in values.items()})

    yield record
    if not numbers or request.config.getoption("--claims-write"):
        return
    collector = request.config.pluginmanager.get_plugin("method_lab_claims")
    owner = collector.claim_of(request.node.nodeid) if collector else None
    if owner is None:
        return
    method, key = owner
    try:
        rec = C.load(method)
    except (C.ClaimsError, OSError):
        return
    claim = next((c for c in rec.claims if c.key == key), None)
    before = next((r for r in claim.results if r.nodeid == request.node.nodeid), None) if claim else None
    if before is None or not before.numbers:
        return
    moved = C.within_tolerance(numbers, before.numbers, claim.tolerance_of)
    if moved:
        pytest.fail(f"{method} claim {key!r}: measured numbers moved from claims/{method}.measured.json: "
                    + "; ".join(moved) + " (rerun `make claims` if the change is intended)", pytrace=False)
