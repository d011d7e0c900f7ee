"""Claims records: what each paper claims, and what our miniature measured.

One record per method, in two parts under ``claims/``:

* ``claims/<id>.toml``, written by hand: for every claim the paper's statement and number with where in the paper it
  is, our setting (model, data, size), the named deviation from the paper's setting if there is one, and the test
  node id(s) that check it (or, when there is none, the reason it cannot be measured here).
* ``claims/<id>.measured.json``, generated (``make claims`` for the ci-tier claim tests, ``make test-full`` for the
  full-tier ones; the pytest plugin ``tests/claims_plugin.py`` writes it): for every cited test its outcome, the numbers
  it recorded, its tier, the command that reproduces it, the date and the commit.

Verdicts are computed here from the two parts, never typed:

* no cited test -> ``not measurable here`` (with the spec's reason);
* a cited test failed -> ``test fails``;
* a cited test is an expected failure -> ``does not hold on our miniature`` (with the measured numbers);
* every cited test passed but a recorded confidence interval of a paired difference contains zero (a number
  ``<name>_ci = [low, high]``, written by :func:`backend.stats.paired_ci`) -> ``not resolved``: the sample cannot tell
  the two apart, whatever the point estimate says;
* every cited test passed -> ``holds``, or ``holds with caveat`` when the spec names a deviation from the paper's
  setting (the deviation is shown);
* no cited test has a measured outcome yet -> ``not measured yet``.

Pure: tomllib and json only (no torch, no streamlit).
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLAIMS_DIR = ROOT / "claims"

HOLDS = "holds"
CAVEAT = "holds with caveat"
DOES_NOT_HOLD = "does not hold on our miniature"
NOT_MEASURABLE = "not measurable here"
FAILS = "test fails"
PENDING = "not measured yet"
NOT_RESOLVED = "not resolved"
VERDICTS: tuple[str, ...] = (HOLDS, CAVEAT, NOT_RESOLVED, DOES_NOT_HOLD, NOT_MEASURABLE, FAILS, PENDING)
VERDICT_COLORS = {HOLDS: "green", CAVEAT: "blue", NOT_RESOLVED: "violet", DOES_NOT_HOLD: "orange",
                  NOT_MEASURABLE: "gray", FAILS: "red", PENDING: "gray"}
# a recorded number named <name>_ci holding [low, high] is the confidence interval of a paired difference
CI_SUFFIX = "_ci"

# outcomes the plugin records; "xpassed" is a non-strict expected failure that passed this time
PASSED_OUTCOMES = ("passed", "xpassed")
OUTCOMES = ("passed", "xpassed", "xfailed", "failed", "skipped")

# default tolerance of a recorded number when a claim names none for it: |new - recorded| <= max(ATOL, RTOL*|rec|)
RTOL = 0.05
ATOL = 1e-3

_SPEC_KEYS = {"key", "claim", "paper_number", "where", "setting", "deviation", "tests", "reason", "tolerance",
              "headline"}
_REQUIRED = ("key", "claim", "paper_number", "where", "setting")


class ClaimsError(ValueError):
    """A claims record that does not follow the schema (the message names the file and the field)."""


@dataclass(frozen=True)
class Measured:
    """One cited test's measured outcome (from ``<id>.measured.json``)."""

    nodeid: str
    outcome: str
    tier: str = "ci"
    numbers: dict = field(default_factory=dict)
    xfail_reason: str = ""
    command: str = ""
    date: str = ""
    commit: str = ""
    duration_s: float | None = None
    run: bool = True  # False: a deselected full-tier test whose xfail marker was recorded without running it


@dataclass(frozen=True)
class Claim:
    method: str
    key: str
    claim: str
    paper_number: str
    where: str
    setting: str
    deviation: str = ""
    tests: tuple[str, ...] = ()
    reason: str = ""
    tolerance: dict = field(default_factory=dict)
    results: tuple[Measured, ...] = ()
    headline: bool = False  # the paper's headline claim (one per record: the scoreboard's row for the paper)

    @property
    def verdict(self) -> str:
        return verdict(self)

    @property
    def numbers(self) -> dict:
        """Every number the cited tests recorded (a parametrised test's numbers under its parameter id)."""
        out: dict = {}
        for r in self.results:
            name = r.nodeid.split("::")[-1]
            label = name[name.index("[") + 1:-1] if name.endswith("]") else name
            for k, v in r.numbers.items():
                out[k if len(self.results) == 1 else f"{label}: {k}"] = v
        return out

    @property
    def intervals(self) -> dict[str, tuple[float, float]]:
        """The confidence intervals the cited tests recorded (``<name>_ci = [low, high]``), by number name."""
        return {k: (-math.inf if v[0] is None else float(v[0]), math.inf if v[1] is None else float(v[1]))
                for k, v in self.numbers.items() if is_interval(k, v)}

    @property
    def unresolved(self) -> tuple[str, ...]:
        """The recorded intervals that contain zero."""
        return tuple(k for k, (lo, hi) in self.intervals.items() if lo <= 0.0 <= hi)

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.command for r in self.results if r.command))

    @property
    def xfail_reasons(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.xfail_reason for r in self.results if r.outcome == "xfailed" and r.xfail_reason))

    @property
    def expected_failures(self) -> tuple[Measured, ...]:
        """The cited tests that are expected failures, one per reason (parametrised instances share theirs)."""
        seen: dict[str, Measured] = {}
        for r in self.results:
            if r.outcome == "xfailed":
                seen.setdefault(r.xfail_reason, r)
        return tuple(seen.values())

    def tolerance_of(self, name: str, recorded: float) -> float:
        tol = self.tolerance.get(name)
        return float(tol) if tol is not None else max(ATOL, RTOL * abs(float(recorded)))


@dataclass(frozen=True)
class Record:
    method: str
    claims: tuple[Claim, ...]
    measured_date: str = ""
    measured_commit: str = ""

    def counts(self) -> dict[str, int]:
        return count_verdicts(self.claims)

    @property
    def headline(self) -> Claim | None:
        """The claim marked ``headline = true`` (None when none is)."""
        return next((c for c in self.claims if c.headline), None)


def covers(cited: str, nodeid: str) -> bool:
    """A cited node id covers itself and, when it names a parametrised test without its parameters, every instance."""
    return nodeid == cited or (nodeid.startswith(cited + "[") and "[" not in cited)


def is_interval(name: str, value: object) -> bool:
    """A recorded ``<name>_ci`` number holding ``[low, high]`` (``None`` for an infinite end is read as infinite)."""
    return (name.endswith(CI_SUFFIX) and isinstance(value, list | tuple) and len(value) == 2
            and all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in value))


def verdict(c: Claim) -> str:
    if not c.tests:
        return NOT_MEASURABLE
    outcomes = [r.outcome for r in c.results if r.outcome != "skipped"]
    if not outcomes:
        return PENDING
    if "failed" in outcomes:
        return FAILS
    if "xfailed" in outcomes:
        return DOES_NOT_HOLD
    if c.unresolved:
        return NOT_RESOLVED
    return CAVEAT if c.deviation else HOLDS


def count_verdicts(claims) -> dict[str, int]:
    out = dict.fromkeys(VERDICTS, 0)
    for c in claims:
        out[c.verdict] += 1
    return out


def spec_path(method: str, root: Path | None = None) -> Path:
    return (root or CLAIMS_DIR) / f"{method}.toml"


def measured_path(method: str, root: Path | None = None) -> Path:
    return (root or CLAIMS_DIR) / f"{method}.measured.json"


def parse_spec(text: str, method: str, source: str = "") -> list[dict]:
    """The claims of one spec file as plain dicts, validated (``ClaimsError`` names what is wrong)."""
    where = source or f"claims/{method}.toml"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClaimsError(f"{where}: not valid TOML ({exc})") from exc
    if data.get("method") != method:
        raise ClaimsError(f"{where}: 'method' must be {method!r}, got {data.get('method')!r}")
    rows = data.get("claims")
    if not isinstance(rows, list) or not rows:
        raise ClaimsError(f"{where}: needs at least one [[claims]] table")
    keys: set[str] = set()
    for i, row in enumerate(rows):
        label = f"{where} claim {i + 1}"
        unknown = set(row) - _SPEC_KEYS
        if unknown:
            raise ClaimsError(f"{label}: unknown field(s) {sorted(unknown)}; valid: {sorted(_SPEC_KEYS)}")
        for k in _REQUIRED:
            if not isinstance(row.get(k), str) or not row[k].strip():
                raise ClaimsError(f"{label}: '{k}' must be a non-empty string")
        if row["key"] in keys:
            raise ClaimsError(f"{label}: duplicate key {row['key']!r}")
        keys.add(row["key"])
        tests = row.get("tests", [])
        if not isinstance(tests, list) or not all(isinstance(t, str) and "::" in t for t in tests):
            raise ClaimsError(f"{label}: 'tests' must be a list of pytest node ids (path::name)")
        if not tests and not str(row.get("reason", "")).strip():
            raise ClaimsError(f"{label}: a claim with no test needs a 'reason' (why it is not measurable here)")
        if not isinstance(row.get("headline", False), bool):
            raise ClaimsError(f"{label}: 'headline' must be true or false")
        tol = row.get("tolerance", {})
        if not isinstance(tol, dict) or not all(isinstance(v, int | float) and v >= 0 for v in tol.values()):
            raise ClaimsError(f"{label}: 'tolerance' maps recorded numbers to non-negative absolute tolerances")
    headlines = [row["key"] for row in rows if row.get("headline", False)]
    if len(headlines) > 1:
        raise ClaimsError(f"{where}: one claim is the headline; {', '.join(headlines)} all say headline = true")
    return rows


def load_measured(method: str, root: Path | None = None) -> dict:
    """The generated part (``{}`` when it was never written)."""
    path = measured_path(method, root)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ClaimsError(f"{path.name}: not valid JSON ({exc})") from exc
    if data.get("method") != method or not isinstance(data.get("tests"), dict):
        raise ClaimsError(f"{path.name}: needs 'method' = {method!r} and a 'tests' table")
    for nodeid, r in data["tests"].items():
        if r.get("outcome") not in OUTCOMES:
            raise ClaimsError(f"{path.name}: {nodeid}: outcome must be one of {OUTCOMES}")
    return data


def _result(nodeid: str, r: dict) -> Measured:
    return Measured(nodeid=nodeid, outcome=r["outcome"], tier=r.get("tier", "ci"), numbers=dict(r.get("numbers", {})),
                      xfail_reason=r.get("xfail_reason", ""), command=r.get("command", ""), date=r.get("date", ""),
                      commit=r.get("commit", ""), duration_s=r.get("duration_s"), run=bool(r.get("run", True)))


def load(method: str, root: Path | None = None) -> Record:
    """The record of one method: its spec joined with its measured part (``FileNotFoundError`` without a spec)."""
    rows = parse_spec(spec_path(method, root).read_text(), method)
    measured = load_measured(method, root)
    tests = measured.get("tests", {})
    claims = []
    for row in rows:
        cited = tuple(row.get("tests", []))
        results = tuple(_result(n, tests[n]) for n in sorted(tests) if any(covers(c, n) for c in cited))
        claims.append(Claim(method=method, key=row["key"], claim=row["claim"].strip(),
                            paper_number=row["paper_number"].strip(), where=row["where"].strip(),
                            setting=row["setting"].strip(), deviation=row.get("deviation", "").strip(), tests=cited,
                            reason=row.get("reason", "").strip(), tolerance=dict(row.get("tolerance", {})),
                            results=results, headline=bool(row.get("headline", False))))
    return Record(method=method, claims=tuple(claims), measured_date=measured.get("date", ""),
                  measured_commit=measured.get("commit", ""))


def methods(root: Path | None = None) -> list[str]:
    """The ids that have a spec file."""
    return sorted(p.stem for p in (root or CLAIMS_DIR).glob("*.toml"))


def load_all(root: Path | None = None) -> dict[str, Record]:
    return {m: load(m, root) for m in methods(root)}


def cited_tests(root: Path | None = None) -> dict[str, list[tuple[str, str]]]:
    """``{node id: [(method, claim key), ...]}`` over every spec."""
    out: dict[str, list[tuple[str, str]]] = {}
    for m in methods(root):
        for row in parse_spec(spec_path(m, root).read_text(), m):
            for t in row.get("tests", []):
                out.setdefault(t, []).append((m, row["key"]))
    return out


def within_tolerance(new: dict, recorded: dict, tolerance_of) -> list[str]:
    """The numbers of ``new`` that moved beyond their tolerance from ``recorded`` (names and both values); numbers
    missing on either side or not numeric are not compared."""
    bad = []
    for k, v in new.items():
        old = recorded.get(k)
        if isinstance(v, bool) or isinstance(old, bool) or not isinstance(v, int | float) or not isinstance(
                old, int | float):
            continue
        tol = tolerance_of(k, old)
        if abs(float(v) - float(old)) > tol:
            bad.append(f"{k}: {v:.6g} vs recorded {old:.6g} (tolerance {tol:.3g})")
    return bad


def format_number(v) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if isinstance(v, int):
        return str(v)
    return f"{v:.4g}"


def format_numbers(numbers: dict) -> str:
    return ", ".join(f"{k} {format_number(v)}" for k, v in numbers.items())


def rows(records: dict[str, Record]) -> list[dict]:
    """One flat row per claim (the scoreboard's table): method, section, claim, paper, ours, verdict, tests."""
    from backend import catalog

    out = []
    for m, rec in records.items():
        try:
            entry = catalog.get(m)
            section, label = entry.section, getattr(entry, "label", m)
        except (KeyError, ValueError, LookupError):
            section, label = "", m
        for c in rec.claims:
            v = c.verdict
            here = c.reason if v == NOT_MEASURABLE else format_numbers(c.numbers)
            out.append({"method": m, "page": f"/{m}", "label": label, "section": section, "key": c.key,
                        "claim": c.claim, "paper": f"{c.paper_number} ({c.where})", "here": here, "verdict": v,
                        "why not": " | ".join(c.xfail_reasons),
                        "deviation": c.deviation, "setting": c.setting, "tests": " ".join(c.tests),
                        "command": c.commands[0] if c.commands else ""})
    return out


PLANNED = "planned: no page yet"


def paper_rows(records: dict[str, Record]) -> list[dict]:
    """One row per paper of the catalog, in catalog order (the scoreboard's first view): the paper, its headline
    claim with that claim's verdict and our numbers, and the tally of all its claims' verdicts (``counts``). A paper
    without a page or a claims record has the verdict :data:`PLANNED` and an empty tally."""
    from backend import catalog

    out = []
    for p in catalog.PAPERS:
        rec = records.get(p.id)
        head = rec.headline if rec is not None else None
        counts = rec.counts() if rec is not None else dict.fromkeys(VERDICTS, 0)
        verdict_ = head.verdict if head is not None else (PLANNED if rec is None else PENDING)
        here = "" if head is None else (head.reason if verdict_ == NOT_MEASURABLE else format_numbers(head.numbers))
        out.append({"method": p.id, "page": f"/{p.id}", "label": getattr(p, "label", p.id), "title": p.title,
                    "section": p.section, "status": p.status, "headline": head.claim if head else "",
                    "paper": f"{head.paper_number} ({head.where})" if head else "", "here": here,
                    "verdict": verdict_, "counts": counts, "claims": sum(counts.values()),
                    "tally": ", ".join(f"{n} {v}" for v, n in counts.items() if n)})
    return out


def summary(records: dict[str, Record]) -> tuple[int, int, dict[str, int]]:
    """(claims that hold, with or without a caveat; all claims; counts per verdict)."""
    counts = count_verdicts([c for r in records.values() for c in r.claims])
    return counts[HOLDS] + counts[CAVEAT], sum(counts.values()), counts


def prune(method: str, root: Path | None = None) -> list[str]:
    """Drop from ``<id>.measured.json`` the entries of tests its spec no longer cites (a claim removed from the spec,
    a test renamed); returns the dropped node ids. The other entries are kept byte for byte."""
    path = measured_path(method, root)
    data = load_measured(method, root)
    if not data:
        return []
    cited = [t for row in parse_spec(spec_path(method, root).read_text(), method) for t in row.get("tests", [])]
    dropped = [n for n in data["tests"] if not any(covers(c, n) for c in cited)]
    if dropped:
        data["tests"] = {n: e for n, e in data["tests"].items() if n not in dropped}
        path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    return dropped


def main() -> None:
    """``python -m backend.claims [METHOD ...]``: one line per claim (method, verdict, key); with ``--tests`` the
    cited node ids instead (the tests ``make claims`` reruns); with ``--prune`` drop the measured entries of tests no
    claim cites any more."""
    import sys

    args = sys.argv[1:]
    wanted = [a for a in args if not a.startswith("-")] or methods()
    if "--prune" in args:
        for m in wanted:
            for n in prune(m):
                print(f"{m}: dropped {n}")
        return
    if "--tests" in args:
        print("\n".join(sorted(t for t, owners in cited_tests().items() if any(m in wanted for m, _ in owners))))
        return
    for m, rec in load_all().items():
        if m not in wanted:
            continue
        for c in rec.claims:
            print(f"{m:<12} {c.verdict:<32} {c.key}")


if __name__ == "__main__":
    main()
