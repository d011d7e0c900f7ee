"""The inputs of DMNL: the ``item_table`` kind (a user's CSV catalogue), its examples, and the named synthetic
catalogues the page and the CLI offer instead of an upload (``--items small|medium|large|FILE``).

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``item_table`` | ``backend.bandits.dmnl.items.decode_item_table`` | CSV, numeric features + category | 2 MB, 10-500 items, 1-20 features, 2-50 categories | dmnl page; ``dmnl run --items FILE`` |
| ``choice_log`` | ``backend.bandits.dmnl.items.read_choice_log`` | CSV ``shown,chosen`` (items by name or row number) | 2 MB, 20,000 rounds | dmnl page (fit the preference of an uploaded catalogue); ``dmnl run --choices FILE`` |

``PRESETS``: name -> the settings of :func:`backend.bandits.dmnl.items.synthetic` (``PRESET_LABELS`` names them on the
page). Import-light: no numpy until a preset or an example is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...io.registry import MB, InputKind, declare
from ...registry import choose

if TYPE_CHECKING:
    from .items import Catalogue

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="item_table",
        what="an item table",
        decoder="backend.bandits.dmnl.items:decode_item_table",
        extensions=("csv", "txt"),
        max_bytes=2 * MB,
        limits="CSV with a header row: numeric feature columns and a category column (named 'category', else the "
               "last); 10-500 items, 1-20 features, 2-50 categories; 2 MB",
        family="csv",
    ),
    declare(
        __name__,
        name="choice_log",
        what="a log of choices",
        decoder="backend.bandits.dmnl.items:read_choice_log",
        extensions=("csv", "txt"),
        max_bytes=2 * MB,
        limits="CSV with the columns 'shown' (items by name or 1-based row number, separated by ';' or '|') and "
               "'chosen' (the bought item; empty or 'none' for no purchase); at most 20,000 rounds and 2 MB",
        family="csv",
    ),
)

PRESETS: dict[str, dict[str, int]] = {
    "small": {"n_items": 10, "n_categories": 3},
    "medium": {"n_items": 20, "n_categories": 5},
    "large": {"n_items": 100, "n_categories": 10},
}
PRESET_LABELS: dict[str, str] = {p: f"{p.capitalize()} (N = {s['n_items']}, {s['n_categories']} categories)"
                                 for p, s in PRESETS.items()}


def preset(name: str, seed: int = 0, dim: int = 5) -> Catalogue:
    """A synthetic catalogue by preset name; unknown names list the valid ones."""
    from .items import synthetic

    return synthetic(dim=dim, seed=seed, **PRESETS[choose(name, PRESETS, "catalogue preset")])


# ------------------------------------------------------------------------------------------------ examples
def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def item_table(seed: int = 0) -> bytes:
    """An item table for the DMNL bandit: 12 items, 2 features, 3 categories."""
    import numpy as np

    r = np.random.default_rng(seed)
    rows = ["price,rating,category"]
    for i in range(12):
        rows.append(f"{r.normal(i % 3, 0.4):.3f},{r.normal(0, 1):.3f},{'xyz'[i % 3]}")
    return _lines(rows)


def item_table_odd() -> dict[str, bytes]:
    """Valid-but-odd item tables: CRLF line ends, the category column first, semicolons, a single item."""
    base = item_table(1).decode().splitlines()
    first = [",".join([ln.split(",")[2], *ln.split(",")[:2]]) for ln in base]
    return {"crlf.csv": _lines(base, crlf=True), "category_first.csv": _lines(first),
            "semicolons.csv": _lines([ln.replace(",", ";") for ln in base]), "one_item.csv": _lines(base[:2])}


__all__ = ["KINDS", "PRESETS", "PRESET_LABELS", "item_table", "item_table_odd", "preset"]


def choice_log(seed: int = 0) -> bytes:
    """Twelve logged rounds over the items of :func:`item_table` (row numbers), with and without purchases."""
    import numpy as np

    r = np.random.default_rng(seed)
    rows = ["shown,chosen"]
    for _ in range(12):
        S = sorted(r.choice(12, 3, replace=False) + 1)
        c = int(r.integers(-1, 3))
        rows.append(";".join(map(str, S)) + "," + ("" if c < 0 else str(S[c])))
    return _lines(rows)


def choice_log_odd() -> dict[str, bytes]:
    """Valid-but-odd logs: CRLF line ends, '|' separators and 'none', columns in the other order with extra ones."""
    base = choice_log(1).decode().splitlines()
    swapped = ["chosen,shown,when"] + [f"{ln.split(',')[1]},{ln.split(',')[0]},2024-05-0{i % 9 + 1}"
                                       for i, ln in enumerate(base[1:])]
    pipes = [base[0]] + [ln.replace(";", "|").rstrip(",") + ("," if ln.endswith(",") else "")
                         for ln in base[1:]]
    pipes = [ln + "none" if ln.endswith(",") else ln for ln in pipes]
    return {"crlf.csv": _lines(base, crlf=True), "pipes_none.csv": _lines(pipes), "swapped.csv": _lines(swapped)}
