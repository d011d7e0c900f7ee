"""The claims records (claims/<id>.toml + claims/<id>.measured.json, backend/claims.py): every available method has
one, it parses, every cited test exists, every method page shows the panel, and verdicts follow mechanically from the
test outcomes."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from backend import catalog
from backend import claims as C

ROOT = Path(__file__).resolve().parent.parent
AVAILABLE = [p.id for p in catalog.available()]


@pytest.mark.parametrize("method", AVAILABLE)
def test_every_available_method_has_a_record_that_parses(method):
    assert C.spec_path(method).is_file(), f"claims/{method}.toml is missing (see CONTRIBUTING.md, 'Claims')"
    rec = C.load(method)
    assert rec.claims
    for c in rec.claims:
        assert c.tests or c.reason, c.key


@pytest.mark.parametrize("method", AVAILABLE)
def test_every_available_method_marks_its_headline_claim(method):
    assert C.load(method).headline is not None, (f"claims/{method}.toml marks no claim 'headline = true' (the claim "
                                                 "the paper leads with: the scoreboard's row for the paper)")


def test_one_row_per_paper_with_its_headline_verdict():
    records = C.load_all()
    rows = C.paper_rows(records)
    assert [r["method"] for r in rows] == [p.id for p in catalog.PAPERS]
    for r in rows:
        rec = records.get(r["method"])
        if rec is None:
            assert r["verdict"] == C.PLANNED and r["claims"] == 0
        else:
            assert r["verdict"] == rec.headline.verdict and r["claims"] == len(rec.claims)
            assert sum(r["counts"].values()) == len(rec.claims)


def _calls_panel(source: str, method: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "claims_panel" and node.args and isinstance(node.args[0], ast.Constant):
                if node.args[0].value == method:
                    return True
    return False


@pytest.mark.parametrize("method", AVAILABLE)
def test_every_method_page_calls_the_claims_panel(method):
    src = (ROOT / "app_pages" / f"{method}.py").read_text()
    assert _calls_panel(src, method), f"app_pages/{method}.py must call ui.claims.claims_panel({method!r})"


def test_no_record_without_a_method():
    ids = {p.id for p in catalog.PAPERS}
    assert set(C.methods()) <= ids
    for path in C.CLAIMS_DIR.glob("*.json"):
        assert path.name.endswith(".measured.json") and path.name.removesuffix(".measured.json") in ids, path.name


def test_every_cited_test_exists():
    """Collect the cited test files (ci and full tier) and check each cited node id names collected tests."""
    cited = C.cited_tests()
    files = sorted({n.split("::")[0] for n in cited})
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    collected = {line.strip() for line in out.stdout.splitlines() if "::" in line}
    assert collected, out.stdout[-2000:] + out.stderr[-2000:]
    missing = [n for n in cited if not any(C.covers(n, c) for c in collected)]
    assert not missing, f"cited tests that do not exist: {missing}"


@pytest.mark.parametrize("method", C.methods())
def test_measured_part_matches_its_spec(method):
    """The generated part parses, and every test it records is one its spec cites."""
    data = C.load_measured(method)
    if not data:
        pytest.skip(f"claims/{method}.measured.json not generated yet (make claims)")
    cited = [t for c in C.load(method).claims for t in c.tests]
    for nodeid, entry in data["tests"].items():
        assert any(C.covers(t, nodeid) for t in cited), nodeid
        assert entry["command"] and entry["date"] and entry["commit"], nodeid


# ------------------------------------------------------------------------------------------------ verdict mechanics
SPEC = """
method = "demo"

[[claims]]
key = "{key}"
claim = "c"
paper_number = "p"
where = "w"
setting = "s"
deviation = "{deviation}"
tests = {tests}
reason = "{reason}"
"""


def _record(tmp_path: Path, outcomes: dict[str, str], deviation: str = "", tests=None, reason: str = "") -> C.Claim:
    tests = list(outcomes) if tests is None else tests
    (tmp_path / "demo.toml").write_text(SPEC.format(key="k", deviation=deviation, tests=json.dumps(tests),
                                                    reason=reason))
    if outcomes:
        (tmp_path / "demo.measured.json").write_text(json.dumps({"method": "demo", "tests": {
            n: {"outcome": o, "numbers": {"x": 1.0}, "xfail_reason": "measured 0.7 < 0.8"}
            for n, o in outcomes.items()}}))
    return C.load("demo", tmp_path).claims[0]


@pytest.mark.parametrize("outcomes,deviation,verdict", [
    ({"t.py::a": "passed"}, "", C.HOLDS),
    ({"t.py::a": "passed", "t.py::b": "xpassed"}, "", C.HOLDS),
    ({"t.py::a": "passed"}, "smaller model", C.CAVEAT),
    ({"t.py::a": "passed", "t.py::b": "xfailed"}, "", C.DOES_NOT_HOLD),
    ({"t.py::a": "xfailed"}, "smaller model", C.DOES_NOT_HOLD),
    ({"t.py::a": "failed", "t.py::b": "xfailed"}, "", C.FAILS),
    ({"t.py::a": "skipped"}, "", C.PENDING),
])
def test_verdict_follows_the_outcomes(tmp_path, outcomes, deviation, verdict):
    c = _record(tmp_path, outcomes, deviation)
    assert c.verdict == verdict
    if verdict == C.DOES_NOT_HOLD:
        assert c.xfail_reasons == ("measured 0.7 < 0.8",) and c.numbers


def test_no_test_is_not_measurable_and_needs_a_reason(tmp_path):
    assert _record(tmp_path, {}, tests=[], reason="needs a GPU").verdict == C.NOT_MEASURABLE
    with pytest.raises(C.ClaimsError, match="reason"):
        _record(tmp_path, {}, tests=[], reason="")


def test_unmeasured_and_parametrised_tests(tmp_path):
    assert _record(tmp_path, {}, tests=["t.py::a"]).verdict == C.PENDING
    (tmp_path / "demo.measured.json").write_text(json.dumps({"method": "demo", "tests": {
        "t.py::a[1]": {"outcome": "passed"}, "t.py::a[2]": {"outcome": "xfailed"},
        "t.py::other": {"outcome": "failed"}}}))
    c = C.load("demo", tmp_path).claims[0]
    assert [r.nodeid for r in c.results] == ["t.py::a[1]", "t.py::a[2]"] and c.verdict == C.DOES_NOT_HOLD


@pytest.mark.parametrize("text,match", [
    ('method = "other"\n[[claims]]\nkey = "k"', "'method' must be"),
    ('method = "demo"', "at least one"),
    ('method = "demo"\n[[claims]]\nkey = "k"\nclaim = "c"', "paper_number"),
    ('method = "demo"\n[[claims]]\nkey = "k"\nclaim = "c"\npaper_number = "p"\nwhere = "w"\nsetting = "s"\n'
     'tests = ["no node id"]', "node ids"),
    ('method = "demo"\n[[claims]]\nkey = "k"\nclaim = "c"\npaper_number = "p"\nwhere = "w"\nsetting = "s"\n'
     'verdict = "holds"\ntests = ["t.py::a"]', "unknown field"),
    ('method = "demo"\n[[claims]]\nkey = "k"\nclaim = "c"\npaper_number = "p"\nwhere = "w"\nsetting = "s"\n'
     'headline = "yes"\ntests = ["t.py::a"]', "'headline' must be true or false"),
    ('method = "demo"\n' + "".join(f'[[claims]]\nkey = "k{i}"\nclaim = "c"\npaper_number = "p"\nwhere = "w"\n'
                                    'setting = "s"\nheadline = true\ntests = ["t.py::a"]\n' for i in range(2)),
     "k0, k1 all say headline = true"),
])
def test_spec_schema_errors_name_the_field(text, match):
    with pytest.raises(C.ClaimsError, match=match):
        C.parse_spec(text, "demo")


def test_tolerance():
    c = C.Claim(method="m", key="k", claim="c", paper_number="p", where="w", setting="s", tolerance={"speed": 0.5})
    assert C.within_tolerance({"speed": 2.4, "acc": 0.93}, {"speed": 2.0, "acc": 0.93}, c.tolerance_of) == []
    bad = C.within_tolerance({"speed": 2.6, "acc": 0.80, "label": "x"}, {"speed": 2.0, "acc": 0.93, "label": "y"},
                             c.tolerance_of)
    assert len(bad) == 2 and bad[0].startswith("speed") and bad[1].startswith("acc")


def test_summary_counts_every_claim():
    records = C.load_all()
    holds, total, counts = C.summary(records)
    assert total == sum(len(r.claims) for r in records.values()) == sum(counts.values())
    assert holds == counts[C.HOLDS] + counts[C.CAVEAT]
    assert len(C.rows(records)) == total


# ------------------------------------------------------------------------------------------------ the claim rules
def _test_function(nodeid: str) -> ast.FunctionDef | None:
    path, *names = nodeid.split("[")[0].split("::")
    tree = ast.parse((ROOT / path).read_text())
    body = tree.body
    for i, name in enumerate(names):
        node = next((n for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == name), None)
        if node is None:
            return None
        if i == len(names) - 1:
            return node if isinstance(node, ast.FunctionDef) else None
        body = node.body
    return None


def test_every_cited_test_records_its_numbers():
    """A claim is a comparison of measured numbers: every test a claim cites takes the ``record_claim`` fixture (and
    so records what it compares; tests/claims_plugin.py). A statement true by construction is an invariant test of
    the method, not a claim."""
    silent = []
    for nodeid in C.cited_tests():
        fn = _test_function(nodeid)
        if fn is None or "record_claim" not in {a.arg for a in fn.args.args + fn.args.kwonlyargs}:
            silent.append(nodeid)
    assert not silent, f"cited tests that record no numbers (take record_claim): {silent}"


@pytest.mark.parametrize("method", C.methods())
def test_recorded_runs_carry_numbers(method):
    """Every cited test that ran and passed or failed as expected left the numbers it compared."""
    for c in C.load(method).claims:
        for r in c.results:
            if r.run and r.outcome in ("passed", "xpassed", "xfailed"):
                assert r.numbers, f"claims/{method}.measured.json: {r.nodeid} ran but recorded no numbers"


def test_not_resolved_is_computed_from_the_recorded_interval(tmp_path):
    def claim(ci):
        (tmp_path / "demo.toml").write_text(SPEC.format(key="k", deviation="", tests='["t.py::a"]', reason=""))
        (tmp_path / "demo.measured.json").write_text(json.dumps({"method": "demo", "tests": {
            "t.py::a": {"outcome": "passed", "numbers": {"gain": 0.02, "gain_ci": ci, "gain_pairs": 8}}}}))
        return C.load("demo", tmp_path).claims[0]

    assert claim([-0.01, 0.05]).verdict == C.NOT_RESOLVED
    assert claim([-0.01, 0.05]).unresolved == ("gain_ci",)
    assert claim([0.005, 0.05]).verdict == C.HOLDS
    assert claim([None, None]).verdict == C.NOT_RESOLVED  # one pair: an infinite interval


def test_paired_ci():
    from backend.stats import paired_ci

    a = [0.80, 0.82, 0.79, 0.85, 0.81]
    ci = paired_ci(a, [x - 0.05 for x in a])
    assert ci.low == ci.high == pytest.approx(0.05) and ci.resolved  # a constant difference is exact
    noisy = paired_ci([0.8, 0.6, 0.9, 0.5], [0.7, 0.7, 0.7, 0.7])
    assert noisy.low < 0 < noisy.high and not noisy.resolved
    assert noisy.numbers("gain")["gain_ci"] == [noisy.low, noisy.high]
    wide, narrow = paired_ci([1, 0, 1, 0], [0, 0, 0, 0], 0.99), paired_ci([1, 0, 1, 0], [0, 0, 0, 0], 0.8)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_block_bootstrap_widens_the_interval_of_a_dependent_series():
    import numpy as np

    from backend.stats import block_bootstrap_mean

    rng = np.random.default_rng(0)
    e = rng.standard_normal(2000)
    x = np.empty_like(e)
    x[0] = e[0]
    for t in range(1, len(e)):  # AR(1) with coefficient 0.95: the effective sample is about 40x smaller
        x[t] = 0.95 * x[t - 1] + e[t]
    iid = block_bootstrap_mean(x, 1)
    blocks = block_bootstrap_mean(x, 100)
    assert iid.low <= x.mean() <= iid.high and blocks.low <= x.mean() <= blocks.high
    assert (blocks.high - blocks.low) > 3 * (iid.high - iid.low)
    with pytest.raises(ValueError):
        block_bootstrap_mean([], 3)
