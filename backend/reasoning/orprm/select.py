"""Best-of-N selectors over N candidate formulations per problem, as exact curves.

Each problem has N candidates with the PRM's scores ``prm`` [P, N] (the weakest step's score), the gates' verdict
``passed`` [P, N] (gates 1 and 2: the candidate executes, its solution satisfies the stated constraints and
reproduces its recorded optimum), ``answers`` [P, N] (recorded optima, NaN where none) and ``correct`` [P, N] (the
answer equals the problem's optimum). A selector picks one candidate from a uniform random subset of n of the N:

| name | label | kind | what |
|------|-------|------|------|
| ``prm`` | OR-PRM best-of-N (ours) | ours | the candidate whose weakest step scores highest |
| ``gates`` | Gates 1-2, then uniform | ablation | a uniform choice among the candidates the execution and constraint gates pass |
| ``majority`` | Majority vote | baseline | the most frequent recorded optimum (ties: uniform) |
| ``random`` | Random | baseline | a uniform choice (pass@1) |
| ``oracle`` | Oracle | reference | a right candidate whenever the subset holds one |

The BoN-type selectors are exact over all subsets (:func:`backend.reasoning.candidates.bon_at`; ties split
uniformly); the vote averages ``draws`` seeded subsets per n (exact at n = N).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...registry import Registry


@dataclass(frozen=True)
class Scores:
    """The [P, N] arrays one candidate pool is selected from."""

    prm: np.ndarray
    passed: np.ndarray
    answers: np.ndarray
    correct: np.ndarray

    def __post_init__(self) -> None:
        shapes = {a.shape for a in (self.prm, self.passed, self.answers, self.correct)}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise InputError(f"Candidate arrays must all be [problems, N]; got {sorted(shapes)}.")


def _bon(s: np.ndarray, c: Scores, ns: list[int]) -> np.ndarray:
    from ..candidates import bon_at

    return bon_at(s, c.correct.astype(float), ns)


def prm_bon(c: Scores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(c.prm, c, ns)


def gates_uniform(c: Scores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(c.passed.astype(float), c, ns)


def majority(c: Scores, ns: list[int], draws: int = 200, seed: int = 0) -> np.ndarray:
    from ..candidates import vote_at

    return vote_at(c.answers, c.correct, None, ns, draws=draws, seed=seed)


def uniform(c: Scores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(np.zeros_like(c.prm), c, ns)


def oracle(c: Scores, ns: list[int], draws: int = 0, seed: int = 0) -> np.ndarray:
    return _bon(c.correct.astype(float), c, ns)


SELECTORS: Registry[Callable[..., np.ndarray]] = Registry("selector")
SELECTORS.add("prm", prm_bon, label="OR-PRM best-of-N (ours)", kind="ours")
SELECTORS.add("gates", gates_uniform, label="Gates 1-2, then uniform", kind="ablation")
SELECTORS.add("majority", majority, label="Majority vote", kind="baseline")
SELECTORS.add("random", uniform, label="Random (pass@1)", kind="baseline")
SELECTORS.add("oracle", oracle, label="Oracle", kind="reference", color="#7f7f7f")


def curves(c: Scores, ns: list[int], draws: int = 200, seed: int = 0) -> dict[str, np.ndarray]:
    """``{selector: [accuracy at each n]}``."""
    return {k: SELECTORS.get(k)(c, ns, draws=draws, seed=seed) for k in SELECTORS}


def per_problem(c: Scores, name: str, n: int, draws: int = 200, seed: int = 0) -> np.ndarray:
    """[P] each problem's accuracy of selector ``name`` at ``n`` (exact at n = N for every selector)."""
    fn = SELECTORS.get(name)
    rows = [Scores(c.prm[i : i + 1], c.passed[i : i + 1], c.answers[i : i + 1], c.correct[i : i + 1])
            for i in range(c.prm.shape[0])]
    return np.array([float(fn(r, [n], draws=draws, seed=seed)[0]) for r in rows])
