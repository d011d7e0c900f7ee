"""The inputs of dual randomized smoothing: the ``points2d`` kind (a user's labelled 2-D points), its examples, and
the presets the page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``points2d`` | ``backend.robustness.dualrs.data2d.load_csv`` | CSV ``x,y,label`` | 5 MB, 20-20,000 rows, 2-10 classes | dualrs page; ``dualrs certify --csv`` |

``PRESETS``: the synthetic data sets (:data:`backend.robustness.dualrs.data2d.DATASETS`: moons, circles), each a near
part whose classes meet closely plus two far blobs, so that no single global noise level suits every input.
"""

from __future__ import annotations

from ...io.registry import MB, InputKind, declare
from .data2d import DATASETS

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="points2d",
        what="2-D labelled points",
        decoder="backend.robustness.dualrs.data2d:load_csv",
        extensions=("csv", "txt"),
        max_bytes=5 * MB,
        limits="CSV x, y, label (header optional); 20-20,000 rows, 2-10 classes of at least 5 rows; 5 MB",
        family="csv",
    ),
)
PRESETS = DATASETS


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def points2d(seed: int = 0) -> bytes:
    """A 2-D classification CSV ``x,y,label``: 24 points of two classes."""
    import numpy as np

    r = np.random.default_rng(seed)
    rows = ["x,y,label"]
    for i in range(24):
        c = i % 2
        rows.append(f"{r.normal(2 * c, 0.5):.3f},{r.normal(0, 0.5):.3f},{'pq'[c]}")
    return _lines(rows)


def points2d_odd() -> dict[str, bytes]:
    """Valid-but-odd point files: CRLF line ends, no header, one row, formula-like labels, tab separators."""
    base = points2d(1).decode().splitlines()
    return {"crlf.csv": _lines(base, crlf=True), "no_header.csv": _lines(base[1:]), "one_row.csv": _lines(base[:2]),
            "formula_labels.csv": _lines([base[0]] + [ln.rsplit(",", 1)[0] + ",=cmd|' /C calc'!A0" if i % 2 else ln
                                                      for i, ln in enumerate(base[1:])]),
            "tabs.csv": _lines([ln.replace(",", "\t") for ln in base])}
