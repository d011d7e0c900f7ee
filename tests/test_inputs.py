"""Every input entry point survives bad files.

* The registry (``backend.io.registry``): every kind documented in its docstring table, decodable examples.
* The corpus (``tests/data/bad/``, written by ``make_corpus.py``): every ``bad_*`` file of a kind is refused by its
  decoder with an ``InputError``, every ``odd_*`` file is decoded or refused with one, each within a time bound; and
  every bad file given to the CLI options that read that kind ends with exit code 2 and ``{"error": ...}`` on stdout,
  writing nothing.
* The bypass scan: pages and CLI modules read user files only through ``ui.inputs`` (with a registered kind) or
  ``backend.io.registry.read_path``; files the project ships (paths built from module constants) are exempt.
* CSV exports escape formula cells and keep numbers numeric.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import time
from pathlib import Path

import pandas as pd
import pytest

from backend.errors import InputError
from backend.io import registry

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "bad"
SECONDS_PER_FILE = 10.0  # generous for a loaded ci core; the slowest corpus file decodes in well under 1 s


def corpus_files(kind: str, prefix: str = "") -> list[Path]:
    return sorted(p for p in (CORPUS / kind).iterdir() if p.name.startswith(prefix))


def decode_file(kind: str, path: Path, tmp_path: Path) -> object:
    """Decode one corpus file as ``kind`` the way the entry point does (a folder kind: the file is its config.json)."""
    if registry.get(kind).source == "folder":
        folder = tmp_path / path.stem
        folder.mkdir()
        (folder / "config.json").write_bytes(path.read_bytes())
        return registry.read_path(kind, folder)
    return registry.decode(kind, path.read_bytes(), name=path.name)


CASES = [(k, p) for k in registry.KINDS for p in corpus_files(k)]


# ---------------------------------------------------------------------------------------------------- registry
def test_every_kind_is_in_the_docstring_table_and_has_a_corpus() -> None:
    """A shared kind is a row of backend/io/registry.py's table; a method's own kind a row of its inputs module's."""
    import importlib

    from backend import catalog

    doc = (registry.__doc__ or "") + "".join(importlib.import_module(f"{p.package}.inputs").__doc__ or ""
                                             for p in catalog.packaged())
    for kind, k in registry.KINDS.items():
        assert f"| ``{kind}`` | ``{k.decoder.replace(':', '.')}`` |" in doc, f"{kind} missing from the table"
        assert callable(k.load()), kind
        assert len(corpus_files(kind, "bad_")) >= 8, f"{kind}: too few bad files; run tests/data/bad/make_corpus.py"
        assert corpus_files(kind, "odd_"), kind
    with pytest.raises(InputError, match="registered"):
        registry.get("no-such-kind")


def test_corpus_is_what_the_script_writes_and_small() -> None:
    from tests.data.bad import make_corpus

    want = make_corpus.corpus()
    have = {k: {p.name: p.read_bytes() for p in (CORPUS / k).iterdir()} for k in want}
    assert set(want) == set(registry.KINDS)
    for kind in want:
        assert set(have[kind]) == set(want[kind]), f"{kind}: run tests/data/bad/make_corpus.py"
        assert all(have[kind][n] == d for n, d in want[kind].items()), f"{kind}: run tests/data/bad/make_corpus.py"
    # small per kind: every new input kind adds its own corpus, so the budget is per kind (about 30 files of a few KB)
    sizes = {k: sum(len(d) for d in files.values()) for k, files in want.items()}
    assert max(sizes.values()) < 100 * 1024, sizes
    assert sum(sizes.values()) < 32 * 1024 * len(sizes), sizes


@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_oversized_input_is_refused_before_decoding(kind: str, tmp_path: Path) -> None:
    k = registry.get(kind)
    if k.source == "folder":
        (tmp_path / "config.json").write_bytes(b" " * (k.max_bytes + 1))
        with pytest.raises(InputError, match="MB"):
            registry.read_path(kind, tmp_path)
        return
    with pytest.raises(InputError, match="limit"):
        registry.decode(kind, b"a" * (k.max_bytes + 1), name="big")
    big = tmp_path / f"big.{k.extensions[0]}"
    with big.open("wb") as fh:  # sparse: stat says it is large, nothing is read
        fh.truncate(k.max_bytes + 1)
    with pytest.raises(InputError, match="limit"):
        registry.read_path(kind, big)
    with pytest.raises(InputError, match="No such file"):
        registry.read_path(kind, tmp_path / "missing.bin")
    with pytest.raises(InputError, match="not a file"):
        registry.read_path(kind, tmp_path)


# ------------------------------------------------------------------------------------------------------ corpus
@pytest.mark.parametrize("kind,path", CASES, ids=[f"{k}/{p.name}" for k, p in CASES])
def test_corpus_file(kind: str, path: Path, tmp_path: Path) -> None:
    start = time.perf_counter()
    try:
        decode_file(kind, path, tmp_path)
        refused = None
    except InputError as err:
        refused = str(err)
    took = time.perf_counter() - start
    assert took < SECONDS_PER_FILE, f"{kind}/{path.name} took {took:.1f} s"
    if path.name.startswith("bad_"):
        assert refused is not None, f"{kind}/{path.name} was accepted"
    if refused is not None:
        assert 10 < len(refused) < 600 and "Traceback" not in refused and "internal error" not in refused.lower()


def test_valid_examples_decode() -> None:
    for kind, k in registry.KINDS.items():
        if k.source == "bytes":
            assert registry.decode(kind, registry.example(kind), name=f"example.{k.extensions[0]}") is not None


# --------------------------------------------------------------------------------------------------------- CLI
# Every CLI option that reads a user file, as argv with FILE where the path goes: each group lists its own under
# "file_options" in tests/cli_golden/<group>.json ({kind: [argv, ...]}).
def _cli_options() -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for f in sorted((Path(__file__).parent / "cli_golden").glob("*.json")):
        for kind, argvs in json.loads(f.read_text()).get("file_options", {}).items():
            out.setdefault(kind, []).extend(argvs)
    return out


CLI_OPTIONS = _cli_options()
CLI_CASES = [(k, i, p) for k, argvs in CLI_OPTIONS.items() for i in range(len(argvs)) for p in corpus_files(k, "bad_")]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    from backend.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("kind,option,path", CLI_CASES, ids=[f"{k}-{i}/{p.name}" for k, i, p in CLI_CASES])
def test_cli_refuses_bad_file(kind: str, option: int, path: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / path.name
    if registry.get(kind).source == "folder":
        target.mkdir()
        (target / "config.json").write_bytes(path.read_bytes())
    else:
        target.write_bytes(path.read_bytes())
    cands = tmp_path / "candidates.txt"
    cands.write_bytes(registry.example("candidates"))
    argv = [str(target) if a == "FILE" else str(cands) if a == "CANDIDATES" else a for a in CLI_OPTIONS[kind][option]]
    before = sorted(tmp_path.rglob("*"))
    code, out, err = run_cli([*argv, "--json"])
    assert code == 2, (argv, out[-500:], err[-500:])
    assert set(json.loads(out)) == {"error"}
    assert "Traceback" not in err
    assert sorted(tmp_path.rglob("*")) == before, "the command wrote files"


def test_every_cli_kind_is_covered() -> None:
    assert set(CLI_OPTIONS) == set(registry.KINDS)


# ------------------------------------------------------------------------------------------------ bypass scan
READERS = {"open", "read_bytes", "read_text", "load", "read_csv", "read_table", "read_json", "read_excel",
           "loadtxt", "genfromtxt", "fromfile", "safe_open", "netcdf_file", "ZipFile", "VideoCapture", "imread"}
UPLOADERS = {"file_uploader", "upload_bytes"}
KIND_HELPERS = {"upload", "decoded", "file_input"}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _shipped(node: ast.AST, shipped_vars: set[str]) -> bool:
    """A path the project ships: built from a module constant (``ASSETS / "x.json"``, ``EVAL``) or a variable
    assigned from one."""
    return any(n.isupper() or n in shipped_vars for n in _names(node))


def bypasses(path: Path) -> list[str]:
    """File reads and uploads of one page or CLI module that do not go through the input registry."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    shipped_vars: set[str] = set()
    for node in ast.walk(tree):  # two passes so that chains of assignments resolve
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if any(n.isupper() for n in _names(node.value)):
                shipped_vars.add(node.targets[0].id)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if _names(node.value) & shipped_vars:
                shipped_vars.add(node.targets[0].id)
    helpers = {a.asname or a.name: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and n.module == "ui.inputs" for a in n.names if a.name in KIND_HELPERS}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        if name in UPLOADERS:
            found.append(f"{where} {name}(): use ui.inputs.upload / file_input with a registered kind")
        elif isinstance(f, ast.Name) and f.id in helpers:
            arg = node.args[0] if node.args else None
            if not (isinstance(arg, ast.Constant) and arg.value in registry.KINDS):
                found.append(f"{where} {f.id}(): the first argument must be a registered kind")
        elif name in READERS:
            if name == "load" and not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                       and f.value.id in ("np", "numpy", "torch", "pickle", "json")):
                continue  # method loaders such as backend.models.load(id, source): not file reads
            receiver = f.value if isinstance(f, ast.Attribute) and name in ("read_bytes", "read_text") else (
                node.args[0] if node.args else None)
            if receiver is not None and _shipped(receiver, shipped_vars):
                continue
            found.append(f"{where} {name}(): read user files with backend.io.registry.read_path(kind, path)")
    return found


def scanned_files() -> list[Path]:
    from backend import catalog

    mods = {*catalog.cli_modules().values(), "backend.models.cli"}
    return sorted(ROOT.glob("app_pages/*.py")) + sorted(ROOT / (m.replace(".", "/") + ".py") for m in mods)


@pytest.mark.parametrize("rel", [str(p.relative_to(ROOT)) for p in scanned_files()])
def test_no_input_bypasses_the_registry(rel: str) -> None:
    assert bypasses(ROOT / rel) == []


def test_the_scan_catches_bypasses(tmp_path: Path) -> None:
    bad = ROOT / "tests" / "_scan_probe.py"
    bad.write_text("import numpy as np\nimport pandas as pd\nimport streamlit as st\n"
                   "from ui.inputs import upload as up\n"
                   "ASSETS = 1\nOK = ASSETS / 'x.json'\nrec = ASSETS / 'y.json'\nrec.read_text()\nOK.read_bytes()\n"
                   "def f(args):\n    st.file_uploader('x')\n    open(args.x)\n    args.p.read_bytes()\n"
                   "    np.load(args.x)\n    pd.read_csv(args.x)\n    up('nope', 'l', 'k')\n    up('image', 'l', 'k')\n")
    try:
        hits = bypasses(bad)
    finally:
        bad.unlink()
    assert [h.split()[1] for h in hits] == ["file_uploader():", "open():", "read_bytes():", "load():", "read_csv():",
                                            "up():"], hits


# ------------------------------------------------------------------------------------------------- CSV export
def test_csv_export_escapes_formulas_and_keeps_numbers() -> None:
    from backend.io.export import escape_cell, to_csv

    df = pd.DataFrame({"method": ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "plain", "-1.5", "\t=x"],
                       "score": [-1.0, 2.5, -0.25, 0.0, 1e-3, -7.0, 3.0], "count": [-3, 0, 1, 2, 3, 4, 5]})
    df["=name"] = "x"
    text = to_csv(df)
    back = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert list(back.columns) == ["method", "score", "count", "'=name"]
    assert list(back["method"]) == ["'=1+1", "'+cmd|' /C calc'!A0", "'-2+3", "'@SUM(A1)", "plain", "-1.5", "'\t=x"]
    assert back["score"].tolist() == df["score"].tolist() and back["count"].tolist() == df["count"].tolist()
    assert "\n-1.0," in text.replace("'", "") or ",-1.0," in text
    assert escape_cell(-5) == -5 and escape_cell("-5") == "-5" and escape_cell("-inf") == "'-inf"
    assert df["method"][0] == "=1+1"  # the caller's frame is not changed


# CSV text the app builds for its own use, never offered for download
CSV_NOT_EXPORTS = {"app_pages/glot.py": "the preset table, encoded to feed the page's own CSV parser"}


def test_every_csv_writer_escapes() -> None:
    """The app writes CSV only through backend.io.export (ui.layout.csv_download, CLI --out files)."""
    offenders = []
    for path in [*ROOT.glob("app_pages/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("backend/**/*.py")]:
        rel = str(path.relative_to(ROOT))
        if rel == "backend/io/export.py" or rel in CSV_NOT_EXPORTS or "train" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "to_csv", "writer", "DictWriter"):
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []
