"""The inputs of DADA: the ``table`` kind (a user's labelled CSV for logistic / softmax regression), its examples, and
the presets the page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``table`` | ``backend.optim.dada.problems.load_csv_table`` | CSV, numeric features + label | 20 MB, 10-100,000 rows, 2-50 classes | dada page; ``dada race/sensitivity --csv`` |

``PRESETS``: the scikit-learn bundled data sets (:data:`backend.optim.dada.problems.DATASETS`: breast_cancer, wine,
iris), shipped inside the wheel (no download).
"""

from __future__ import annotations

from ...io.registry import MB, InputKind, declare
from .problems import DATASETS

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="table",
        what="a labelled numeric table",
        decoder="backend.optim.dada.problems:load_csv_table",
        extensions=("csv", "txt"),
        max_bytes=20 * MB,
        limits="CSV with a header row, numeric features, the label last; 10-100,000 rows, 2-50 classes, 20 MB",
        family="csv",
    ),
)
PRESETS = DATASETS


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def table(seed: int = 0) -> bytes:
    """A labelled numeric CSV for logistic regression: 2 features, 16 rows, classes a/b."""
    import numpy as np

    r = np.random.default_rng(seed)
    rows = ["f1,f2,label"]
    for i in range(16):
        c = i % 2
        rows.append(f"{r.normal(c, 0.3):.3f},{r.normal(-c, 0.3):.3f},{'ab'[c]}")
    return _lines(rows)


def table_odd() -> dict[str, bytes]:
    """Valid-but-odd tables: CRLF line ends, one data row, semicolons, labels that look like spreadsheet formulas."""
    base = table(1).decode().splitlines()
    formula = [base[0]] + [ln.rsplit(",", 1)[0] + ("," + ("=1+1" if i % 2 else "@SUM(A1)")) for i, ln in
                           enumerate(base[1:])]
    return {"crlf.csv": _lines(base, crlf=True), "one_row.csv": _lines(base[:2]),
            "semicolons.csv": _lines([ln.replace(",", ";") for ln in base]), "formula_labels.csv": _lines(formula)}
