"""Best-of-N selectors of T1 and its baselines, as exact curves over a candidate set.

Each problem has N candidates with the tool's verdicts ``f`` [P, N] in {0, 1}, reward-model scores ``r`` [P, N] in
(0, 1), final answers and their correctness. A selector picks one candidate from a uniform random subset of size n
of the N; its curve is the expected accuracy at each n, averaged over problems:

| name | label | kind | what |
|------|-------|------|------|
| ``tool_rm`` | T1: tool veto x RM (ours) | ours | argmax f r: the RM's best among the candidates the tool passes (all vetoed: the RM's best) |
| ``tool`` | Tool only | ablation | a uniform choice among the candidates the tool passes |
| ``rm`` | RM only | baseline | argmax r |
| ``majority`` | Majority vote | baseline | the most frequent answer (ties: uniform) |
| ``weighted_majority`` | RM-weighted majority vote | baseline | the answer with the largest sum of r |
| ``oracle`` | Oracle | reference | a right candidate whenever the subset holds one |

BoN-type selectors (``tool_rm``, ``tool``, ``rm``, ``oracle``) are exact over all subsets
(:func:`backend.reasoning.candidates.bon_at`, hypergeometric counts). Votes depend on the whole subset, so
``majority`` and ``weighted_majority`` average ``draws`` uniform subsets per n (seeded; exact at n = N).

``tool_rm``'s score is f + r, so any passing candidate outranks any vetoed one, and the paper's argmax f r holds
whenever one passes. Invariant (by construction): when the tool vetoes no right candidate of a problem,
``tool_rm`` >= ``rm`` on that problem at every n.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...registry import Registry


@dataclass(frozen=True)
class CandidateScores:
    """One candidate set's arrays, all [P, N]: ``passed`` (tool verdicts), ``rm`` (scores in (0, 1)), ``answers``
    (floats, NaN when a candidate has none) and ``correct``."""

    passed: np.ndarray
    rm: np.ndarray
    answers: np.ndarray
    correct: np.ndarray

    def __post_init__(self) -> None:
        shapes = {a.shape for a in (self.passed, self.rm, self.answers, self.correct)}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise InputError(f"Candidate arrays must all be [problems, N]; got {sorted(shapes)}.")
        if not ((self.rm > 0) & (self.rm < 1)).all():
            raise InputError("Reward-model scores must lie strictly between 0 and 1.")


def _bon(scores: np.ndarray, c: CandidateScores, ns: list[int]) -> np.ndarray:
    from ..candidates import bon_at

    return bon_at(scores, c.correct.astype(float), ns)


def tool_rm(c: CandidateScores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(c.passed.astype(float) + c.rm, c, ns)


def tool_only(c: CandidateScores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(c.passed.astype(float), c, ns)


def rm_only(c: CandidateScores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(c.rm, c, ns)


def oracle(c: CandidateScores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(c.correct.astype(float), c, ns)


def _votes(c: CandidateScores, ns: list[int], draws: int, seed: int, weighted: bool) -> np.ndarray:
    from ..candidates import vote_at

    return vote_at(c.answers, c.correct, c.rm if weighted else None, ns, draws=draws, seed=seed)


def majority(c: CandidateScores, ns: list[int], draws: int = 400, seed: int = 0) -> np.ndarray:
    return _votes(c, ns, draws, seed, weighted=False)


def weighted_majority(c: CandidateScores, ns: list[int], draws: int = 400, seed: int = 0) -> np.ndarray:
    return _votes(c, ns, draws, seed, weighted=True)


def _first(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


def _pick_vote(answers: np.ndarray, weights: np.ndarray) -> int | None:
    keep = ~np.isnan(answers)
    if not keep.any():
        return None
    totals: dict[float, float] = {}
    for a, w in zip(answers[keep], weights[keep], strict=True):
        totals[float(a)] = totals.get(float(a), 0.0) + float(w)
    best = max(totals.values())
    return next(i for i, a in enumerate(answers) if not np.isnan(a) and np.isclose(totals[float(a)], best))


@dataclass(frozen=True)
class Selector:
    """A selector: ``curve(c, ns, draws, seed)`` -> [len(ns)] accuracy (calling the selector is its curve), and
    ``pick(passed, rm, answers, correct)`` -> the index it selects from one candidate set of [N] arrays (None when it
    selects nothing). ``exact``: its curve is exact over all subsets."""

    curve: Callable[..., np.ndarray]
    pick: Callable[..., int | None]
    exact: bool = True

    def __call__(self, c: CandidateScores, ns: list[int], draws: int = 400, seed: int = 0) -> np.ndarray:
        return self.curve(c, ns, draws=draws, seed=seed)


SELECTORS: Registry[Selector] = Registry("selector")
SELECTORS.add("tool_rm", Selector(tool_rm, lambda f, r, a, y: int(np.argmax(f.astype(float) + r))),
              label="T1: tool veto x RM (ours)", kind="ours")
SELECTORS.add("tool", Selector(tool_only, lambda f, r, a, y: _first(f)), label="Tool only", kind="ablation")
SELECTORS.add("rm", Selector(rm_only, lambda f, r, a, y: int(np.argmax(r))), label="RM only", kind="baseline")
SELECTORS.add("majority", Selector(majority, lambda f, r, a, y: _pick_vote(a, np.ones_like(r)), exact=False),
              label="Majority vote", kind="baseline")
SELECTORS.add("weighted_majority", Selector(weighted_majority, lambda f, r, a, y: _pick_vote(a, r), exact=False),
              label="RM-weighted majority vote", kind="baseline")
SELECTORS.add("oracle", Selector(oracle, lambda f, r, a, y: _first(y)), label="Oracle", kind="reference")


def curves(c: CandidateScores, ns: list[int] | None = None, selectors: tuple[str, ...] | None = None,
           draws: int = 400, seed: int = 0) -> dict[str, np.ndarray]:
    """``{selector: accuracy at each n}`` (default: every selector, n = 1..N)."""
    N = c.rm.shape[1]
    ns = list(range(1, N + 1)) if ns is None else list(ns)
    names = selectors or tuple(SELECTORS)
    return {SELECTORS.key(s): SELECTORS.get(s)(c, ns, draws=draws, seed=seed) for s in names}


def per_problem(c: CandidateScores, selector: str, n: int) -> np.ndarray:
    """[P] expected accuracy of a BoN-type selector on each problem at subset size n."""
    fn = SELECTORS.get(selector)
    if not fn.exact:
        raise InputError("per_problem is exact for the BoN-type selectors only.")
    return np.array([float(fn(CandidateScores(c.passed[p:p + 1], c.rm[p:p + 1], c.answers[p:p + 1],
                                               c.correct[p:p + 1]), [n])[0]) for p in range(c.rm.shape[0])])


__all__ = ["SELECTORS", "CandidateScores", "Selector", "curves", "per_problem"]
