"""Rebuild benchmarks/README.md, the index of the per-method results documents (benchmarks/results/<id>.md).

    python benchmarks/collect.py

Each benchmark script writes its own results document when it finishes (``common.record``); this script lists them
in catalog order with the date and the command of each.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent))

from backend import catalog  # noqa: E402

HEADER = """# Benchmarks

Each `benchmarks/<id>.py` runs a method and its baselines on the same inputs in one process, repeats, and prints
medians and ratios. When it finishes it writes `benchmarks/results/<id>.md`: the tables, the exact command, the date
and the machine (platform, CPU, cores, torch threads, load average). Performance is measured here, never asserted in
timed tests; absolute times belong to the machine line, so compare ratios and exact counts (MACs, samples) across
machines. `make bench` runs the start-up benchmark; `python benchmarks/collect.py` rebuilds this index.

| id | benchmark | date | command |
|---|---|---|---|
"""


def field(text: str, name: str) -> str:
    """The value of a ``- Name: value`` line of a results document ('' if absent)."""
    m = re.search(rf"^- {name}: (.*)$", text, flags=re.M)
    return m.group(1).strip() if m else ""


def order() -> list[str]:
    """Results ids in catalog order (tools first), then any others alphabetically."""
    known = ["startup"] + [t.id for t in catalog.TOOLS] + [p.id for p in catalog.PAPERS]
    have = {p.stem for p in RESULTS.glob("*.md")}
    return [i for i in dict.fromkeys(known) if i in have] + sorted(have - set(known))


def render() -> str:
    rows = []
    for id_ in order():
        text = (RESULTS / f"{id_}.md").read_text()
        name = text.splitlines()[0].removeprefix("# ").removesuffix(": benchmark results")
        rows.append(f"| `{id_}` | [{name}](results/{id_}.md) | {field(text, 'Date')} | {field(text, 'Command')} |")
    return HEADER + "\n".join(rows) + "\n"


def main() -> int:
    text = render()
    (HERE / "README.md").write_text(text)
    print(f"wrote benchmarks/README.md with {len(order())} results documents")
    return 0


if __name__ == "__main__":
    sys.exit(main())
