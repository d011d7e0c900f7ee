"""Read back a table of a benchmark's results document (``benchmarks/results/<id>.md``), for claim tests that cite
a measured ratio instead of timing anything themselves (shared by the claim tests)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def keyed_rows(method: str, after: str) -> dict[int, list[str]]:
    """The rows of the first Markdown table after the text ``after`` in ``benchmarks/results/<method>.md`` whose first
    cell is an integer (thousands separators allowed), keyed by it: ``{first cell: [the other cells, stripped]}``."""
    text = (RESULTS / f"{method}.md").read_text(encoding="utf-8")
    rows: dict[int, list[str]] = {}
    for line in text.split(after, 1)[1].splitlines():
        line = line.strip()
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].replace(",", "").isdigit():
            rows[int(cells[0].replace(",", ""))] = cells[1:]
    return rows
