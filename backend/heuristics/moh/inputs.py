"""The inputs of MoH: the ``tsplib`` and ``bin_items`` kinds (a user's TSP or online bin-packing instance), their
examples, and the presets the page offers instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``tsplib`` | ``backend.heuristics.moh.problems.read_tsplib`` | TSPLIB ``.tsp`` text (``tsplib95``) | 2 MB, 5-1,000 cities, EUC_2D / CEIL_2D / ATT, finite coordinates | moh page; ``moh solve --instance`` |
| ``bin_items`` | ``backend.heuristics.moh.problems.read_bin_items`` | CSV / text, one item size per line | 1 MB, 5-2,000 items in (0, capacity] | moh page; ``moh solve --items`` |

``PRESETS``: the page's evolution settings (light and standard).
"""

from __future__ import annotations

import numpy as np

from ...io.registry import MB, InputKind, declare

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="tsplib",
        what="a TSPLIB instance",
        decoder="backend.heuristics.moh.problems:read_tsplib",
        extensions=("tsp", "txt"),
        max_bytes=2 * MB,
        limits="TSPLIB text with a NODE_COORD_SECTION (EUC_2D, CEIL_2D or ATT), 5-1,000 cities, finite coordinates; "
               "2 MB",
        family="text",
    ),
    declare(
        __name__,
        name="bin_items",
        what="bin-packing item sizes",
        decoder="backend.heuristics.moh.problems:read_bin_items",
        extensions=("csv", "txt"),
        max_bytes=MB,
        limits="CSV or text, one item size per line (optional header), 5-2,000 items, each in (0, capacity], "
               "capacity 100 unless set; 1 MB",
        family="csv",
    ),
)
PRESETS: dict[str, dict[str, object]] = {
    "light (about 10 s)": {"moh_sizes": "20,50", "moh_budget": 12, "moh_gens": 1, "moh_mpop": 3},
    "standard (a few minutes)": {"moh_sizes": "20,50,100", "moh_budget": 40, "moh_gens": 4, "moh_mpop": 6},
}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def tsplib(seed: int = 0) -> bytes:
    """A 12-city TSPLIB file (EUC_2D coordinates)."""
    xy = _rng(seed).uniform(0, 1000, (12, 2))
    rows = ["NAME : example12", "COMMENT : 12 random cities", "TYPE : TSP", "DIMENSION : 12",
            "EDGE_WEIGHT_TYPE : EUC_2D", "NODE_COORD_SECTION"]
    rows += [f"{i + 1} {x:.1f} {y:.1f}" for i, (x, y) in enumerate(xy)]
    return _lines(rows + ["EOF"])


def tsplib_odd() -> dict[str, bytes]:
    base = tsplib(1).decode().splitlines()
    return {"crlf.tsp": _lines(base, crlf=True), "no_eof.tsp": _lines(base[:-1]),
            "ceil_2d.tsp": _lines([ln.replace("EUC_2D", "CEIL_2D") for ln in base]),
            "scientific.tsp": _lines(base[:6] + [f"{i + 1} {float(ln.split()[1]):.3e} {float(ln.split()[2]):.3e}"
                                                 for i, ln in enumerate(base[6:-1])] + ["EOF"])}


def bin_items(seed: int = 0) -> bytes:
    """30 Weibull item sizes for online bin packing (capacity 100), with a header."""
    sizes = np.clip(np.round(45 * _rng(seed).weibull(3.0, 30)), 1, 100).astype(int)
    return _lines(["size"] + [str(s) for s in sizes])


def bin_items_odd() -> dict[str, bytes]:
    base = bin_items(1).decode().splitlines()
    return {"crlf.csv": _lines(base, crlf=True), "no_header.csv": _lines(base[1:]),
            "fractional.csv": _lines(["size"] + [f"{int(s) / 3:.4f}" for s in base[1:]]),
            "full_bins.csv": _lines(["size", "100", "100", "50", "50", "1"])}
