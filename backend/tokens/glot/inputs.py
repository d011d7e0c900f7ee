"""GLOT's inputs: the ``labelled_texts`` kind (the user's labelled texts for training every pooling), its examples, and
the presets of the page.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``labelled_texts`` | ``backend.tokens.glot.stress.parse_labelled_csv`` | CSV ``text,label`` | 2 MB, 10-4,000 rows, 2-20 classes | glot page; ``glot train --csv`` |

``PRESETS``: the stress-test sizes the page offers (the light one first); ``SAMPLE``: the preset of the CSV tab, hard
stress-test texts (generator arguments of :func:`backend.tokens.glot.stress.generate`).
"""

from __future__ import annotations

from typing import Any

from ...io.registry import MB, InputKind, declare

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="labelled_texts",
        what="labelled texts",
        decoder="backend.tokens.glot.stress:parse_labelled_csv",
        extensions=("csv", "txt"),
        max_bytes=2 * MB,
        limits="UTF-8 CSV with header text,label; 10-4,000 rows, 2-20 classes, texts of at most 2,000 characters; 2 MB",
        family="csv",
    ),
)

PRESETS: dict[str, dict[str, Any]] = {
    "Light: 90% distractors only, 64 train / 32 eval texts, 5 epochs": {
        "ratios": (0.9,), "n_train": 64, "n_eval": 32, "epochs": 5},
    "Full: every distractor ratio, 200 train / 100 eval texts, 10 epochs": {
        "ratios": (0.2, 0.5, 0.8, 0.9), "n_train": 200, "n_eval": 100, "epochs": 10},
}
SAMPLE: dict[str, Any] = {"n": 120, "ratio": 0.5, "position": "random", "variant": "hard", "seed": 7}


def labelled_texts(seed: int = 0) -> bytes:
    """A ``text,label`` CSV: 12 short sentences of two classes."""
    from ...io.examples import _lines, _rng

    r = _rng(seed)
    words = ["red", "blue", "cat", "dog", "runs", "sleeps", "today", "now"]
    rows = ["text,label"]
    for i in range(12):
        rows.append(" ".join(r.choice(words, 4)) + ("," + ("pos" if i % 2 else "neg")))
    return _lines(rows)


def labelled_texts_odd() -> dict[str, bytes]:
    """Valid but odd files: CRLF line ends, one row, quoted commas, formula-like cells, the label column first."""
    from ...io.examples import _lines

    base = labelled_texts(1).decode().splitlines()
    quoted = [base[0]] + [f'"{t}, quoted",{lab}' for t, lab in (ln.rsplit(",", 1) for ln in base[1:])]
    formula = [base[0]] + [f"=1+{i} {ln}" if i % 3 == 0 else ln for i, ln in enumerate(base[1:])]
    return {"crlf.csv": _lines(base, crlf=True), "one_row.csv": _lines(base[:2]), "quoted.csv": _lines(quoted),
            "formula_cells.csv": _lines(formula), "label_first.csv": _lines(
                ["label,text"] + [",".join(reversed(ln.rsplit(",", 1))) for ln in base[1:]])}


__all__ = ["KINDS", "PRESETS", "SAMPLE", "labelled_texts", "labelled_texts_odd"]
