"""Traces with a known first wrong step, and how well step scores locate it.

- :func:`first_wrong_step` ``(steps, gold)``: the index of the first step of a trace that departs from the grammar's
  gold solution (a different expression or value at the same position, or a step the gold solution lacks; a trace
  that stops early departs at its last step); None when every step matches and the trace is as long as the gold
  one. The task generator's solutions are the unique
  left-to-right order of the grammar, so a departure is an error (arithmetic or logic) of the trace.
- :func:`step_labels` ``(n_steps, first_wrong)``: 1 for the steps before the first wrong one, 0 from it on.
- :func:`auroc` ``(scores, labels)``: the probability that a random good step scores above a random bad one (ties
  count one half); pooled over the steps of every trace with a first wrong step.
"""

from __future__ import annotations

import re

import numpy as np

_STEP = re.compile(r"(\d+) ([-+*/]) (\d+) = (\d+)")


def parse_steps(text: str) -> list[str]:
    """The ``a op b = c`` steps of a tiny-reasoner trace, normalised (single spaces, numbers without the leading
    zeros of the reasoner's padded format), in order."""
    return [f"{int(m[1])} {m[2]} {int(m[3])} = {int(m[4])}" for m in _STEP.finditer(text)]


def first_wrong_step(steps: list[str], gold: tuple[str, ...] | list[str]) -> int | None:
    """See the module docstring."""
    for i, s in enumerate(steps):
        if i >= len(gold) or s != gold[i]:
            return i
    return None if len(steps) == len(gold) else len(steps) - 1 if steps else 0


def step_labels(n_steps: int, first_wrong: int | None) -> np.ndarray:
    """[n_steps] 1 before the first wrong step, 0 from it on (all 1 when there is none)."""
    lab = np.ones(n_steps)
    if first_wrong is not None:
        lab[first_wrong:] = 0
    return lab


def auroc(scores, labels) -> float:
    """P(score of a random label-1 item > score of a random label-0 item), ties one half; NaN without both."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels) > 0.5
    pos, neg = s[y], s[~y]
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    allv = np.concatenate([pos, neg])[order]
    ranks = np.empty(allv.size)
    i = 0
    while i < allv.size:  # average ranks of ties
        j = i
        while j + 1 < allv.size and allv[j + 1] == allv[i]:
            j += 1
        ranks[i : j + 1] = (i + j) / 2 + 1
        i = j + 1
    r = np.empty(allv.size)
    r[order] = ranks
    return float((r[: pos.size].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))
