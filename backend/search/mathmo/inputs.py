"""The inputs of MATHMO: the ``facility_csv`` kind (a user's facility-location instance), its examples, and the
presets the page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``facility_csv`` | ``backend.search.mathmo.facility.read_facility_csv`` | CSV ``kind,x,y,amount,fixed_cost`` | 2 MB, 2-40 facilities, 2-200 customers | mathmo page; ``mathmo search/grid --instance`` |

``PRESETS``: the generated instance (``facility.generate(m, n, seed)``) and its default size.
"""

from __future__ import annotations

import numpy as np

from ...io.registry import MB, InputKind, declare

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="facility_csv",
        what="a facility-location instance",
        decoder="backend.search.mathmo.facility:read_facility_csv",
        extensions=("csv", "txt"),
        max_bytes=2 * MB,
        limits="CSV kind,x,y,amount,fixed_cost: 2-40 facility rows (amount = capacity) and 2-200 customer rows "
               "(amount = demand), positive amounts, capacity >= demand; 2 MB",
        family="csv",
    ),
)
PRESETS: dict[str, dict[str, int]] = {"generated": {"facilities": 10, "customers": 30}}


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def facility_csv(seed: int = 0) -> bytes:
    """A facility-location instance: 4 facilities, 8 customers."""
    r = _rng(seed)
    rows = ["kind,x,y,amount,fixed_cost"]
    rows += [f"facility,{r.uniform():.3f},{r.uniform():.3f},{40 + 10 * i},{20 + 5 * i}" for i in range(4)]
    rows += [f"customer,{r.uniform():.3f},{r.uniform():.3f},{int(r.integers(5, 15))}," for _ in range(8)]
    return _lines(rows)


def facility_csv_odd() -> dict[str, bytes]:
    base = facility_csv(1).decode().splitlines()
    upper = [base[0].upper()] + base[1:]
    no_fixed = [",".join(ln.split(",")[:4]) for ln in base]
    return {"crlf.csv": _lines(base, crlf=True), "upper_header.csv": _lines(upper), "no_fixed_cost.csv":
            _lines(no_fixed), "customers_first.csv": _lines([base[0], *base[5:], *base[1:5]])}

