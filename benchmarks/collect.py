"""Rebuild benchmarks/README.md from the per-method result sections (benchmarks/RESULTS_<id>.md), and the method part of
assets/MANIFEST.md from the per-method fragments (assets/MANIFEST_<id>.md), both in catalog order.

    .venv/bin/python benchmarks/collect.py

Each benchmark script prints its table; whoever reruns one pastes the table into its RESULTS file with the machine it
ran on, then runs this script.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from backend import catalog  # noqa: E402

HEADER = """# Benchmarks

Each `benchmarks/<id>.py` runs our implementation and its baselines on the same inputs in one process, repeats, and
prints medians and ratios with the machine labelled. Performance is measured here, never asserted in timed tests.
Run one with `OMP_NUM_THREADS=1 .venv/bin/python benchmarks/<id>.py` (options: `--help`); `make bench` runs the start-up
benchmark. Sections below are the latest recorded runs (`benchmarks/RESULTS_<id>.md`, merged by `benchmarks/collect.py`).
Absolute times were measured on the 2-core development machine, often while other jobs shared it: the sections say so,
and the ratios and exact counts (MACs, samples) are the numbers to compare.
"""


def main() -> int:
    parts = [HEADER]
    order = ["startup"] + [p.id for p in catalog.PAPERS]
    for id_ in order:
        f = HERE / f"RESULTS_{id_}.md"
        if f.is_file():
            parts.append(f.read_text().strip() + "\n")
    (HERE / "README.md").write_text("\n".join(parts))
    print(f"wrote {HERE / 'README.md'} with {len(parts) - 1} sections")
    collect_manifest()
    return 0


MARKER = "<!-- Method sections below were merged from the per-method fragments assets/MANIFEST_<id>.md -->"


def collect_manifest() -> None:
    """Keep assets/MANIFEST.md's shared part (up to MARKER) and append every fragment in catalog order."""
    assets = HERE.parent / "assets"
    manifest = assets / "MANIFEST.md"
    head = manifest.read_text().split(MARKER)[0].rstrip() + "\n\n" + MARKER + "\n"
    parts = [head]
    for paper in catalog.PAPERS:
        f = assets / f"MANIFEST_{paper.id}.md"
        if f.is_file():
            parts.append(f.read_text().strip() + "\n")
    manifest.write_text("\n".join(parts))
    print(f"wrote {manifest} with {len(parts) - 1} method sections")


if __name__ == "__main__":
    sys.exit(main())
