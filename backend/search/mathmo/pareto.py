"""Pareto tools for minimisation: dominance, the non-dominated set, hypervolume, and the Pareto-UCB bandit.

Hypervolume is pymoo's (``pymoo.indicators.hv.HV``, exact for the dimensions used here); :func:`hypervolume_2d` is an
independent exact sweep for two objectives that the tests compare with it. Pareto-UCB follows MATHMO's upper level:
per arm (framework) ``f`` and objective ``j``, ``UCB_fj = mu_fj + c sqrt(var_fj ln N / N_f) + d sqrt(ln N / N_f)`` on
rewards (higher is better); an arm never pulled has an infinite UCB; the arm played is drawn uniformly among the arms
whose UCB vectors no other arm dominates.

Shapes: objective matrices ``[n, k]`` (rows are points), a reference point ``[k]``.
"""

from __future__ import annotations

import math

import numpy as np


def dominates(a: np.ndarray, b: np.ndarray) -> bool:
    """``a`` dominates ``b`` (minimisation): no worse everywhere, better somewhere."""
    return bool(np.all(a <= b) and np.any(a < b))


def nondominated(F: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``F`` ``[n, k]`` that no other row dominates (duplicates all kept)."""
    F = np.asarray(F, dtype=float)
    if len(F) == 0:
        return np.zeros(0, dtype=np.int64)
    keep = np.ones(len(F), dtype=bool)
    for start in range(0, len(F), 256):  # blocks of rows: [b, n, k] comparisons
        block = F[start:start + 256]
        le = np.all(F[None, :, :] <= block[:, None, :], axis=2)  # [b, n]: row j no worse than row i everywhere
        lt = np.any(F[None, :, :] < block[:, None, :], axis=2)
        keep[start:start + 256] = ~np.any(le & lt, axis=1)
    return np.flatnonzero(keep).astype(np.int64)


def hypervolume(F: np.ndarray, ref: np.ndarray) -> float:
    """Volume dominated by the rows of ``F`` and bounded by ``ref`` (pymoo); rows not below ``ref`` add nothing."""
    from pymoo.indicators.hv import HV

    F = np.asarray(F, dtype=float)
    ref = np.asarray(ref, dtype=float)
    if F.size == 0:
        return 0.0
    inside = F[np.all(F < ref, axis=1)]
    if len(inside) == 0:
        return 0.0
    if len(inside) > 64:  # dominated rows add nothing; dropping them first keeps pymoo fast on large sets
        inside = inside[nondominated(inside)]
    return float(HV(ref_point=ref)(inside))


def hypervolume_2d(F: np.ndarray, ref: np.ndarray) -> float:
    """Exact two-objective hypervolume by a sweep over the front sorted by the first objective."""
    F = np.asarray(F, dtype=float)
    F = F[np.all(F < ref, axis=1)]
    if len(F) == 0:
        return 0.0
    F = F[np.lexsort((F[:, 1], F[:, 0]))]
    vol, best_y = 0.0, float(ref[1])
    for x, y in F:
        if y < best_y:
            vol += (ref[0] - x) * (best_y - y)
            best_y = y
    return float(vol)


def hv_gain(front: np.ndarray, cand: np.ndarray, ref: np.ndarray) -> float:
    """Hypervolume added by the point ``cand`` ``[k]`` to ``front`` ``[n, k]``."""
    base = hypervolume(front, ref) if len(front) else 0.0
    return hypervolume(np.vstack([front, cand[None]]) if len(front) else cand[None], ref) - base


class ParetoUCB:
    """The upper-level bandit over ``arms`` with ``k``-dimensional rewards (higher is better)."""

    def __init__(self, arms: list[str], k: int, c: float = 1.0, d: float = 0.5):
        self.arms, self.k, self.c, self.d = list(arms), k, c, d
        self.rewards: dict[str, list[np.ndarray]] = {a: [] for a in self.arms}

    def ucb(self) -> dict[str, np.ndarray]:
        total = sum(len(v) for v in self.rewards.values())
        out = {}
        for a, rs in self.rewards.items():
            if not rs:
                out[a] = np.full(self.k, math.inf)
                continue
            R = np.asarray(rs)
            n_f = len(R)
            log_n = math.log(max(total, 2))
            out[a] = R.mean(0) + self.c * np.sqrt(R.var(0) * log_n / n_f) + self.d * math.sqrt(log_n / n_f)
        return out

    def choose(self, rng: np.random.Generator) -> str:
        u = self.ucb()
        unseen = [a for a in self.arms if not self.rewards[a]]
        if unseen:
            return unseen[int(rng.integers(len(unseen)))]
        vecs = np.asarray([-u[a] for a in self.arms])  # minimisation form for the dominance test
        front = nondominated(vecs)
        return self.arms[int(front[int(rng.integers(len(front)))])]

    def update(self, arm: str, reward: np.ndarray) -> None:
        self.rewards[arm].append(np.asarray(reward, dtype=float))
