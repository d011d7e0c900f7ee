"""The baselines outside the LM: gradient boosting per task on the record's numeric features (scikit-learn), and a
regular-expression extractor for the melting-point sentences."""

from __future__ import annotations

import re

import numpy as np

from .bench import Bench

# A number with a kelvin unit after a melting phrase ("melting point of/is", "melts at"), or before "K" within the
# clause that names melting.
_MELT = re.compile(r"melt(?:s|ing point)?\s*(?:of|is|at)?\s*(\d+(?:\.\d+)?)\s*(?:K\b|kelvin)", re.IGNORECASE)


def regex_extract(sentence: str) -> str | None:
    """The melting point stated in ``sentence`` (as text), or None when no melting phrase is found."""
    m = _MELT.search(sentence)
    return m.group(1) if m else None


def gradient_boosting(bench: Bench, seed: int, test_rows: list[int] | None = None) -> list[dict]:
    """Per-row predictions of a gradient-boosting model per task (regression and classification tasks) and of the
    regex extractor (extraction task), on the test rows (or ``test_rows``)."""
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    rows = test_rows if test_rows is not None else [i for i, r in enumerate(bench.rows) if r.split == "test"]
    out: dict[int, dict] = {}
    for t in bench.tasks:
        mine = [i for i in rows if bench.rows[i].task == t.name]
        if not mine:
            continue
        if t.kind == "extraction":
            for i in mine:
                r = bench.rows[i]
                got = regex_extract(r.prompt)
                out[i] = {"pred": got, "correct": got is not None and got == r.answer.strip(), "parsed": got is not None}
            continue
        train = bench.select(t.name, "train")
        X = np.array([bench.features[r.element] for r in train])
        Xt = np.array([bench.features[bench.rows[i].element] for i in mine])
        if t.kind == "regression":
            m = GradientBoostingRegressor(n_estimators=100, max_depth=3, learning_rate=0.1, subsample=0.8,
                                          random_state=seed).fit(X, [r.target for r in train])
            for i, p in zip(mine, m.predict(Xt), strict=True):
                out[i] = {"pred": float(p), "correct": None, "parsed": True}
        else:
            m = GradientBoostingClassifier(n_estimators=40, max_depth=2, learning_rate=0.15, subsample=0.8,
                                           random_state=seed).fit(X, [r.label for r in train])
            for i, p in zip(mine, m.predict(Xt), strict=True):
                out[i] = {"pred": t.classes[int(p)], "correct": int(p) == bench.rows[i].label, "parsed": True}
    return [{"row": i, "task": bench.rows[i].task, **out[i]} for i in rows]
