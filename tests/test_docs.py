"""Documentation that documents: no process narration in the repository, one asset manifest that matches assets/, and
benchmark results documents written by the benchmark scripts.

The narration check reads every tracked text file (.py, .md, .json, .toml, .txt, .yml, .yaml) and the metadata of the
shipped safetensors headers, and lists each hit as ``file:line: text``. It looks for words about how the repository
was made (numbered sessions or rounds, "the lead", helpers' reports, earlier versions, issues, tickets and who asked)
and machine-local paths; not
for ordinary words such as Streamlit's ``st.session_state``, a browser session or pytest's ``tmp_path``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
BENCH = ROOT / "benchmarks"

TEXT_SUFFIXES = {".py", ".md", ".json", ".toml", ".txt", ".yml", ".yaml"}
# This file names the patterns it looks for, so it is the one file not scanned.
SKIP = {"tests/test_docs.py"}

NARRATION = [
    (r"\bsessions?[- ]\d", "numbered session"),
    (r"\bs\d+ (?:run|file|weights|model)\b", "numbered session"),
    (r"\bround \d+ of\b", "numbered round"),
    (r"\bthe lead\b(?!-)(?! times?\b)", "the lead"),  # not the forecast lead time
    (r"\b(?:helper|worker)s?(?:'s?)? (?:report|brief)", "helpers' reports"),
    (r"\b(?:earlier|previous|old) version\b", "earlier version"),
    (r"\bin the first version\b", "earlier version"),
    (r"\bprevious_shipped", "earlier version"),
    (r"(?<![\w.~-])/(?:tmp|work|root)/", "machine path"),
    (r"\bissues?\s*#?\d+", "an issue by number"),
    (r"\b(?:the|this|that|an?|its|each)\s+(?:[\w-]+\s+)?issue(?:'s|s)?\b(?!\s+times?\b)", "the issue"),
    (r"\bissue(?:'s)? (?:claims?|asks|says|bound|setting)\b", "the issue"),
    (r"\btickets?\s*#?\d+|\bthe ticket\b", "a ticket"),
]
PATTERN = re.compile("|".join(f"(?:{p})" for p, _ in NARRATION), re.IGNORECASE)


def tracked_text_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted(f for f in out.split("\0") if f and Path(f).suffix in TEXT_SUFFIXES and f not in SKIP
                  and (ROOT / f).is_file())


def safetensors_metadata(path: Path) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors header, read without loading tensors."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n)).get("__metadata__") or {}


def narration_hits(name: str, text: str) -> list[str]:
    return [f"{name}:{i}: {line.strip()[:160]}" for i, line in enumerate(text.splitlines(), 1) if PATTERN.search(line)]


def test_patterns_catch_narration_and_spare_ordinary_words():
    for bad in ["shipped in session 3", "Session-5 weights", "sessions 5-7 measured", "round 2 of training",
                "tell the lead in your report", "other helpers report", "the previous version", "in the first version",
                "previous_shipped_quality", "python x.py --out /tmp/s5/a", "see /work/shared/DESIGN.md",
                "cd /root/x", "the s8 run", "the issue's claims", "Claims (issue 5):", "the iLLaVA issue uses",
                "of the reasoning-decoders issue", "Issue claim: at n=64", "see ticket 12", "this issue asks"]:
        assert PATTERN.search(bad), bad
    for ok in ["st.session_state['x']", "a user's browser session", "def f(tmp_path):", "one session per user",
               "rounds 1-5 of self-re-watermarking", "https://example.org/work/x", "leading spaces", "~/tmp/x",
               "a pytest-xdist worker", "each round trip", "mislead the model", "share the lead-time axis",
               "the lead time of a forecast", "the forecast's issue time", "at issue times 5 steps apart",
               "NOUNS = ('keys', 'tickets')"]:
        assert not PATTERN.search(ok), ok


def tracked_texts():
    """``(path, text)`` of every tracked UTF-8 text file."""
    for f in tracked_text_files():
        try:
            yield f, (ROOT / f).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def test_no_process_narration_in_tracked_files():
    hits = []
    for f, text in tracked_texts():
        hits += narration_hits(f, text)
    for p in sorted(ASSETS.glob("*.safetensors")):
        meta = safetensors_metadata(p)
        hits += narration_hits(f"assets/{p.name} (metadata)", "\n".join(f"{k}: {v}" for k, v in meta.items()))
    assert not hits, f"{len(hits)} lines of process narration or machine paths:\n" + "\n".join(hits)


# Documents that were merged into assets/manifest.json and benchmarks/results/<id>.md.
REMOVED_DOCS = re.compile(r"\b(?:MANIFEST|RESULTS)_(?:\w+|<id>)\.md\b")


def test_no_references_to_removed_documents():
    hits = []
    for f, text in tracked_texts():
        hits += [f"{f}:{i}: {line.strip()[:160]}" for i, line in enumerate(text.splitlines(), 1)
                 if REMOVED_DOCS.search(line)]
    assert not hits, ("references to assets/MANIFEST_<id>.md or benchmarks/RESULTS_<id>.md (now assets/manifest.json "
                      "and benchmarks/results/<id>.md):\n" + "\n".join(hits))


# ------------------------------------------------------------------------------------------------------ manifest
def test_manifest_check_passes():
    from backend import manifest

    bad = manifest.problems(manifest.load(), md=manifest.MANIFEST_MD)
    assert not bad, "python -m backend.manifest --check fails:\n" + "\n".join(bad)


def test_manifest_commands_are_project_commands():
    from backend import manifest

    for row in manifest.load():
        assert row["command"].startswith(("python ", "copied from ")), row["file"]
        q = row["quality_command"]
        assert q.startswith("python "), row["file"]
        for ref in re.findall(r"\btests/\S+\.py(?:::\w+)?", q):
            path, _, node = ref.partition("::")
            assert (ROOT / path).is_file(), f"{row['file']}: {path} does not exist"
            if node:
                assert re.search(rf"def {node}\b", (ROOT / path).read_text()), f"{row['file']}: no {ref}"


def _weights_rows():
    from backend import manifest

    params = []
    for row in manifest.load():
        p = ASSETS / row["file"]
        if p.suffix != ".safetensors" or not p.is_file():
            continue
        params.append(pytest.param(row, id=row["file"]))
    return params


@pytest.mark.parametrize("row", _weights_rows())
def test_weights_metadata_command_is_the_manifest_command(row):
    from safetensors import safe_open

    from backend.weights import WeightsMeta

    # The same parsing as backend.weights.read_meta, without its sha256 check (test_manifest_check_passes has it).
    with safe_open(str(ASSETS / row["file"]), framework="np") as f:
        meta = WeightsMeta.from_header(f.metadata())
    assert meta.command == row["command"]


# ---------------------------------------------------------------------------------------------------- benchmarks
def bench_module(name: str):
    """benchmarks/<name>.py as a module (the folder is not a package; the scripts import it as ``common``)."""
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def benchmark_scripts() -> list[Path]:
    return sorted(p for p in BENCH.glob("*.py") if p.stem not in {"common", "collect"})


def test_every_benchmark_writes_its_results_document():
    for p in benchmark_scripts():
        assert f'record(main, "{p.stem}")' in p.read_text(), f"{p.name} does not end with record(main, {p.stem!r})"


def test_record_writes_tables_command_and_machine(tmp_path, monkeypatch, capsys):
    common = bench_module("common")
    monkeypatch.setattr(sys, "argv", [str(BENCH / "dada.py"), "--iters", "5"])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert common.record(lambda: print("| a | b |\n|---|---|\n| 1 | 2 |") or 0, "dada", folder=tmp_path) == 0
    text = (tmp_path / "dada.md").read_text()
    assert text.startswith("# DADA")
    assert "- Command: `OMP_NUM_THREADS=1 python benchmarks/dada.py --iters 5`" in text
    machine = re.search(r"^- Machine: (.*)$", text, re.M).group(1)
    assert "cores" in machine and "thread" in machine and "load average" in machine
    assert re.search(r"^- Date: \d{4}-\d\d-\d\d", text, re.M)
    assert text.rstrip().endswith("| 1 | 2 |")
    assert common.record(lambda: 3, "softbon", folder=tmp_path) == 3  # a failed run writes nothing
    assert not (tmp_path / "softbon.md").exists()


def test_results_index_is_generated_and_complete():
    collect = bench_module("collect")
    assert (BENCH / "README.md").read_text() == collect.render(), "run python benchmarks/collect.py"
    for p in (BENCH / "results").glob("*.md"):
        text = p.read_text()
        for field in ("Command", "Date", "Machine"):
            assert collect.field(text, field), f"{p.name}: no '- {field}:' line"
