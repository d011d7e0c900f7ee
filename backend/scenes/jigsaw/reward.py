"""The jigsaw task's verifiable reward (Visual Jigsaw, arXiv 2509.25190, section 3): parse an answer, check it, score it.

A puzzle shows ``n`` tiles in a shuffled order, labelled 1..n; the answer lists, for each position of the original
image in raster order, the label of the shown tile that belongs there (``"3, 1, 4, 2"``). The answer format is a list
of whole numbers separated by commas and/or spaces, optionally inside ``\\boxed{...}`` (the official prompt's
format); anything else fails the format.

Rewards (:data:`REWARDS`, both with the format reward of 0.2 added whenever the answer parses):

- ``graded`` (the paper's): 1 for the exact permutation; ``gamma`` x (fraction of positions right) for a valid but
  wrong permutation (``gamma`` = 0.2); 0 for an invalid answer (wrong length, a repeated label, a label outside
  1..n). The official reward code gives the partial credit only to puzzles of more than 4 pieces; here it applies
  to every grid, as the paper's text states it.
- ``binary``: 1 for the exact permutation, else 0 (the paper's ablation that fails to learn 3 x 3).

:func:`score_text` scores a text answer (the tests' cases and the page's "race the model"); :func:`score_perm`
scores permutations given as index arrays (what the policies emit, rendered by :func:`to_text`, parse identically).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...registry import Registry

GAMMA = 0.2
FORMAT_REWARD = 0.2
_BOXED = re.compile(r"^\\boxed\{(.*)\}$", re.DOTALL)
_ANSWER = re.compile(r"^\s*\d+(\s*[,\s]\s*\d+)*\s*$")


@dataclass(frozen=True)
class Score:
    """One answer's reward: ``total`` = ``accuracy`` + ``format``; ``exact``, ``valid`` (a permutation of 1..n),
    ``fraction`` (positions right, 0 when invalid), ``parsed`` (the labels read, or None when the format fails)."""

    total: float
    accuracy: float
    format: float
    exact: bool
    valid: bool
    fraction: float
    parsed: list[int] | None

    def to_dict(self) -> dict:
        return {"total": round(self.total, 6), "accuracy": round(self.accuracy, 6), "format": self.format,
                "exact": self.exact, "valid": self.valid, "fraction": round(self.fraction, 6), "parsed": self.parsed}


def parse_answer(text: str) -> list[int] | None:
    """The labels of an answer (``"3, 1, 4, 2"``, ``"3 1 4 2"`` or ``"\\boxed{3,1,4,2}"``), or None when the text is
    not in the format."""
    t = str(text).strip()
    m = _BOXED.match(t)
    if m:
        t = m.group(1)
    if not _ANSWER.match(t):
        return None
    return [int(v) for v in re.split(r"[,\s]+", t.strip()) if v]


def is_valid(labels: Sequence[int], n: int) -> bool:
    """True when ``labels`` is a permutation of 1..n."""
    return len(labels) == n and sorted(int(v) for v in labels) == list(range(1, n + 1))


def graded(exact: bool, valid: bool, fraction: float, gamma: float = GAMMA) -> float:
    """The graded accuracy reward: 1 exact, ``gamma`` x fraction for a valid wrong permutation, 0 invalid."""
    if exact:
        return 1.0
    return float(gamma) * float(fraction) if valid else 0.0


def binary(exact: bool, valid: bool, fraction: float, gamma: float = GAMMA) -> float:  # noqa: ARG001 - one signature
    """The binary accuracy reward: 1 exact, else 0."""
    return 1.0 if exact else 0.0


REWARDS: Registry[Callable[..., float]] = Registry("jigsaw reward")
REWARDS.add("graded", graded, label="Graded reward (paper)", kind="ours",
            about="1 exact, gamma x fraction right for a valid wrong permutation, 0 invalid")
REWARDS.add("binary", binary, label="Binary reward", kind="baseline", about="1 exact, else 0")


def score_text(text: str, truth: Sequence[int], reward: str = "graded", gamma: float = GAMMA,
               format_reward: float = FORMAT_REWARD) -> Score:
    """Score a text answer against ``truth`` (the 1-based labels in raster order)."""
    fn = REWARDS[REWARDS.key(reward)]
    truth = [int(v) for v in truth]
    parsed = parse_answer(text)
    if parsed is None:
        return Score(0.0, 0.0, 0.0, False, False, 0.0, None)
    valid = is_valid(parsed, len(truth))
    exact = valid and parsed == truth
    frac = float(np.mean([a == b for a, b in zip(parsed, truth, strict=True)])) if valid else 0.0
    acc = fn(exact, valid, frac, gamma)
    return Score(acc + float(format_reward), acc, float(format_reward), exact, valid, frac, parsed)


def to_text(perm: Sequence[int]) -> str:
    """A 0-based permutation (the shown tile for each position) as the answer text (1-based labels)."""
    return ", ".join(str(int(v) + 1) for v in perm)


def score_perm(perms: np.ndarray, truth: np.ndarray, reward: str = "graded", gamma: float = GAMMA,
               format_reward: float = FORMAT_REWARD) -> np.ndarray:
    """Rewards of 0-based permutations ``perms [..., n]`` against ``truth [..., n]`` (broadcast): the same numbers
    as :func:`score_text` on :func:`to_text` of each (``tests/backend/test_jigsaw.py`` checks it), vectorised."""
    fn = REWARDS[REWARDS.key(reward)]
    perms, truth = np.asarray(perms), np.asarray(truth)
    n = perms.shape[-1]
    valid = (np.sort(perms, -1) == np.arange(n)).all(-1)
    right = (perms == truth).mean(-1)
    exact = valid & (right == 1.0)
    acc = np.vectorize(lambda e, v, f: fn(bool(e), bool(v), float(f), gamma))(exact, valid, np.where(valid, right, 0))
    return acc.astype(np.float64) + float(format_reward)


def check_grid(grid: int) -> int:
    """The grid side, 2 or 3 (the trained policies' grids); anything else raises InputError."""
    try:
        g = int(grid)
    except (TypeError, ValueError):
        raise InputError(f"The grid must be 2 or 3 (tiles per side); got {grid!r}.") from None
    if g not in (2, 3):
        raise InputError(f"The grid must be 2 or 3 tiles per side (the trained policies); got {g}.")
    return g
