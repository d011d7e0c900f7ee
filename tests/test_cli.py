"""Every CLI group: ``--help`` works, and one JSON action per group prints strict JSON equal by value to its golden.

The goldens are ``tests/cli_golden/<group>.json``::

    {"argv": ["<group>", "<action>", ..., "--json"],
     "volatile": ["provenance", "timing_s", "rows.*.seconds"],   # key paths whose values change run to run
     "expected": {...},                                            # the output, volatile paths removed
     "bad_argv": [...],                                            # optional: an argv that ends in an InputError
     "file_options": {"<input kind>": [[argv with FILE], ...]}}    # optional: options that read a user file
                                                                   # (tests/test_inputs.py feeds them the corpus)

A path is dot-separated; ``*`` matches every key or list index at that level. Numbers compare with a relative
tolerance of 1e-5: the same computation in float32 differs in its last bits between CPU families (AVX2 and AVX-512
kernels sum in another order), which moves results by 1e-7 to a few 1e-6 after many operations (an optimal-transport
cost), and values near zero that are differences of large sums (an MMD of 2.5e-5) by up to about 1e-9, hence also an
absolute tolerance of 1e-8; NaN is written as null. A value that a last-bit difference can flip (a frame count near a
threshold) is listed as volatile in its golden.
A group without a golden fails the test, so a new group brings its own file. Regenerate one golden (after a change
that is meant to alter the output, said in the commit) with ``METHOD_LAB_UPDATE_GOLDEN=<group> pytest tests/test_cli.py``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend import catalog

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "cli_golden"
GROUPS = sorted(catalog.cli_modules())


def strip(obj: object, path: list[str]) -> object:
    """``obj`` with the value at the dotted ``path`` (``*`` wildcards) removed."""
    if not path:
        return obj
    head, rest = path[0], path[1:]
    if isinstance(obj, dict):
        keys = list(obj) if head == "*" else [head]
        out = dict(obj)
        for k in keys:
            if k in out:
                if rest:
                    out[k] = strip(out[k], rest)
                else:
                    del out[k]
        return out
    if isinstance(obj, list) and (head == "*" or head.isdigit()):
        idx = range(len(obj)) if head == "*" else [int(head)]
        out = list(obj)
        for i in idx:
            if i < len(out) and rest:
                out[i] = strip(out[i], rest)
        if not rest:
            out = [v for i, v in enumerate(out) if i not in set(idx)]
        return out
    return obj


def same(a: object, b: object, where: str = "") -> str | None:
    """None if equal by value, else where they first differ."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if a == b else f"{where}: {a!r} != {b!r}"
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if a == b or math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-8):
            return None
        return f"{where}: {a!r} != {b!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{where}: keys differ: {sorted(set(a) ^ set(b))}"
        for k in a:
            d = same(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, f"{where}.{i}")
            if d:
                return d
        return None
    return None if a == b else f"{where}: {a!r} != {b!r}"


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    from backend.__main__ import main

    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, f"exit {code}: {out[-2000:]}"
    return json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))


def test_top_level_help_lists_every_group() -> None:
    out = subprocess.run([sys.executable, "-m", "backend", "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    for g in GROUPS:
        assert g in out.stdout


@pytest.mark.parametrize("group", GROUPS)
def test_group_help(group: str, capsys: pytest.CaptureFixture[str]) -> None:
    from backend.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main([group, "--help"])
    assert exc.value.code == 0
    assert "<action>" in capsys.readouterr().out


@pytest.mark.parametrize("group", GROUPS)
def test_group_json_action_matches_golden(group: str, capsys: pytest.CaptureFixture[str]) -> None:
    f = GOLDEN / f"{group}.json"
    assert f.is_file(), f"{group} has no golden CLI example at {f.relative_to(ROOT)}"
    spec = json.loads(f.read_text())
    got = run_json(spec["argv"], capsys)
    assert "provenance" in got, "every --json result carries a provenance block"
    for path in spec.get("volatile", []):
        got = strip(got, path.split("."))
    if os.environ.get("METHOD_LAB_UPDATE_GOLDEN") in (group, "all"):
        spec["expected"] = got
        f.write_text(json.dumps(spec, indent=1) + "\n")
    diff = same(got, spec["expected"])
    assert diff is None, f"{group}: output differs from its golden at {diff}"


@pytest.mark.parametrize("group", GROUPS)
def test_input_error_is_exit_2_with_json_error(group: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The one error path: an InputError ends a group's action with exit code 2 and ``{"error": ...}`` under --json
    (each golden may give a ``bad_argv`` that triggers one, e.g. a missing input file)."""
    from backend.__main__ import main

    bad = json.loads((GOLDEN / f"{group}.json").read_text()).get("bad_argv")
    if bad is None:
        pytest.skip(f"{group}: no bad_argv example")
    assert main(bad) == 2
    assert "error" in json.loads(capsys.readouterr().out)
