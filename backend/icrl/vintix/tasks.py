"""Procedural task priors, demonstrators and context tokens for the decision-pretrained transformer (``dpt.py``).

Three task families, each drawn from a training prior and from a different held-out prior:

* ``karm``: K-armed Gaussian bandits, rewards ``N(mu_k, SIGMA_KARM^2)``. Training: K uniform in {2..10}, means
  ``U[0, 1]``. Held-out: K uniform in {3..10}, means ``clip(N(0.5, 0.2^2), 0, 1)`` (arms closer together, a
  different shape of prior). The target is the best arm (discrete head).
* ``cont``: continuous-action 1-D bandits on ``a in [-1, 1]``, ``r(a) = sum_i h_i exp(-(a - c_i)^2 / (2 w_i^2))`` plus
  ``N(0, SIGMA_CONT^2)``, one or two peaks. Training: widths ``U[0.10, 0.25]``, heights ``U[0.4, 1]``, centres
  ``U[-0.8, 0.8]`` (two peaks at least 0.4 apart). Held-out (``bimodal``): two peaks of EQUAL height 0.8, narrower
  (widths ``U[0.05, 0.09]``), centres ``U[-0.9, 0.9]`` at least 0.6 apart; there the optimal action is either peak.
  The target is the argmax of ``r`` (continuous head).
* ``dark``: a 5x5 dark room: the agent sees its cell, actions (stay, up, down, left, right), reward 1 on the goal cell
  (unknown to the agent), episodes of ``DARK_HORIZON`` steps from the centre. Training goals: 20 cells; held-out goals:
  the other 5 (``DARK_HELDOUT``). The target is the optimal action at the query cell (ties broken by the fixed order
  vertical first, then horizontal); discrete head over 5 actions.

Contexts (Vintix II's data recipe): a demonstrator whose action noise increases gradually over the collection (noise
level rising linearly from ``eps_lo`` to 1 across the ``L`` tuples), every tuple relabelled with the optimal action
(the label is the task's optimal action), then the tuples are shuffled (the model is order-free anyway). A third of
the contexts come from DPT's random policies instead (a Dirichlet-drawn action distribution for ``karm``, uniform
actions for ``cont``, a uniformly random walk for ``dark``). The next observation is dropped from the tuples.

Token layout (float32): ``karm`` context ``[one_hot(a, 10), r]`` (11), query ``[arm mask (10)]``; ``cont`` context
``[a, r]`` (2), query ``[1]``; ``dark`` context ``[one_hot(s, 25), one_hot(a, 5), r]`` (31), query ``one_hot(s, 25)``.
A batch is ``Batch(family, context (B, L, F), query (B, Q), target (B,) long or float, mask (B, A) for discrete)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import InputError
from backend.registry import choose

K_MAX = 10
SIGMA_KARM = 0.3
SIGMA_CONT = 0.1
N_DARK = 5  # grid side
DARK_ACTIONS = 5
DARK_HORIZON = 12
DARK_HELDOUT = (3, 9, 13, 19, 21)  # goal cells never used in training (index = 5 * row + col)
FAMILIES = ("karm", "cont", "dark")
CONTEXT_FEATURES = {"karm": K_MAX + 1, "cont": 2, "dark": N_DARK * N_DARK + DARK_ACTIONS + 1}
QUERY_FEATURES = {"karm": K_MAX, "cont": 1, "dark": N_DARK * N_DARK}
N_ACTIONS = {"karm": K_MAX, "dark": DARK_ACTIONS}  # discrete families
PEAK_RADIUS = 0.1  # "mass within +-0.1 of a peak"


@dataclass
class Batch:
    family: str
    context: torch.Tensor  # (B, L, F)
    query: torch.Tensor  # (B, Q)
    target: torch.Tensor  # (B,) long (discrete) or float (cont)
    mask: torch.Tensor | None = None  # (B, A) bool, valid discrete actions


@dataclass(frozen=True)
class DarkRoomTask:
    """The dark room on its held-out goals: episodes in a row from the centre cell, the goal unknown to the agent."""

    goals: tuple[int, ...] = DARK_HELDOUT


# ---------------------------------------------------------------------------------------------------------- k-armed
@dataclass
class KArmTask:
    means: np.ndarray  # (K,)

    @property
    def k(self) -> int:
        return len(self.means)

    @property
    def best(self) -> int:
        return int(np.argmax(self.means))

    def pull(self, arm: int, rng: np.random.Generator) -> float:
        return float(self.means[arm] + SIGMA_KARM * rng.standard_normal())


def validate_means(means) -> np.ndarray:
    m = np.asarray(means, dtype=float).ravel()
    if not 2 <= m.size <= K_MAX:
        raise InputError(f"A K-armed task needs 2 to {K_MAX} arm means; got {m.size}. Give between 2 and {K_MAX}.")
    if not np.all(np.isfinite(m)):
        raise InputError("Arm means must be finite numbers; remove empty or non-numeric entries.")
    if m.min() < -0.5 or m.max() > 1.5:
        raise InputError(
            "Arm means must lie in [-0.5, 1.5] (the model was pretrained on means in [0, 1]); rescale them."
        )
    return m


def draw_karm(rng: np.random.Generator, heldout: bool = False) -> KArmTask:
    if heldout:
        k = int(rng.integers(3, K_MAX + 1))
        return KArmTask(np.clip(rng.normal(0.5, 0.2, k), 0.0, 1.0))
    k = int(rng.integers(2, K_MAX + 1))
    return KArmTask(rng.uniform(0.0, 1.0, k))


def karm_context(task: KArmTask, length: int, rng: np.random.Generator, kind: str | None = None) -> np.ndarray:
    """(L, 11) tuples ``[one_hot(a), r]``: a noisy demonstrator (epsilon-greedy on the best arm, epsilon rising from
    ``eps_lo`` to 1) or a Dirichlet random policy (DPT)."""
    kind = kind or ("random" if rng.random() < 1 / 3 else "demo")
    if kind == "random":
        p = rng.dirichlet(np.ones(task.k))
        arms = rng.choice(task.k, size=length, p=p)
    else:
        eps = np.linspace(rng.uniform(0.0, 1.0), 1.0, length)
        explore = rng.random(length) < eps
        arms = np.where(explore, rng.integers(0, task.k, length), task.best)
    rng.shuffle(arms)
    rewards = task.means[arms] + SIGMA_KARM * rng.standard_normal(length)
    return karm_tokens(arms, rewards)


def karm_tokens(arms, rewards) -> np.ndarray:
    arms = np.asarray(arms, dtype=int)
    out = np.zeros((len(arms), K_MAX + 1), np.float32)
    out[np.arange(len(arms)), arms] = 1.0
    out[:, K_MAX] = rewards
    return out


def karm_query(k: int) -> np.ndarray:
    q = np.zeros(K_MAX, np.float32)
    q[:k] = 1.0
    return q


# ------------------------------------------------------------------------------------------------------- continuous
@dataclass
class ContTask:
    centers: np.ndarray  # (P,)
    widths: np.ndarray  # (P,)
    heights: np.ndarray  # (P,)

    def mean_reward(self, a) -> np.ndarray:
        a = np.asarray(a, dtype=float)[..., None]
        return (self.heights * np.exp(-((a - self.centers) ** 2) / (2 * self.widths**2))).sum(-1)

    @property
    def best(self) -> float:
        grid = np.linspace(-1, 1, 2001)
        return float(grid[np.argmax(self.mean_reward(grid))])

    def optimum(self, rng: np.random.Generator) -> float:
        """The optimal action; with peaks of equal height, one of them at random."""
        top = np.flatnonzero(np.isclose(self.heights, self.heights.max()))
        if len(top) > 1:
            return float(self.centers[rng.choice(top)])
        return self.best


def parse_means(text: str) -> KArmTask:
    """``"0.2, 0.5, 0.8"`` (commas or semicolons) -> a validated K-armed task."""
    try:
        vals = [float(x) for x in str(text).replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise InputError("Arm means: use numbers separated by commas, e.g. 0.2, 0.5, 0.8.") from None
    return KArmTask(validate_means(vals))


def parse_peaks(text: str) -> ContTask:
    """``"-0.5:0.07, 0.45:0.07"`` (centre:width pairs) -> a validated continuous task (height 0.8)."""
    msg = "Peaks: write centre:width pairs separated by commas, e.g. -0.5:0.07, 0.45:0.07."
    try:
        pairs = [tuple(float(x) for x in p.split(":")) for p in str(text).replace(";", ",").split(",") if p.strip()]
    except ValueError:
        raise InputError(msg) from None
    if not pairs or any(len(p) != 2 for p in pairs):
        raise InputError(msg)
    return validate_peaks([p[0] for p in pairs], [p[1] for p in pairs])


def validate_peaks(centers, widths, heights=None) -> ContTask:
    c = np.asarray(centers, dtype=float).ravel()
    w = np.asarray(widths, dtype=float).ravel()
    h = np.ones_like(c) * 0.8 if heights is None else np.asarray(heights, dtype=float).ravel()
    if not 1 <= c.size <= 3 or c.size != w.size or c.size != h.size:
        raise InputError("Give one to three peaks, each with a centre, a width (and a height).")
    if not (np.all(np.isfinite(c)) and np.all(np.isfinite(w)) and np.all(np.isfinite(h))):
        raise InputError("Peak centres, widths and heights must be finite numbers.")
    if np.any(np.abs(c) > 1):
        raise InputError("Peak centres must lie in the action range [-1, 1].")
    if np.any(w < 0.02) or np.any(w > 0.5):
        raise InputError("Peak widths must lie in [0.02, 0.5].")
    if np.any(h <= 0) or np.any(h > 2):
        raise InputError("Peak heights must lie in (0, 2].")
    return ContTask(c, w, h)


def draw_cont(rng: np.random.Generator, heldout: bool = False, peaks: int | None = None) -> ContTask:
    if heldout:
        while True:
            c = rng.uniform(-0.9, 0.9, 2)
            if abs(c[0] - c[1]) >= 0.6:
                break
        return ContTask(c, rng.uniform(0.05, 0.09, 2), np.full(2, 0.8))
    p = peaks or int(rng.integers(1, 3))
    while True:
        c = rng.uniform(-0.8, 0.8, p)
        if p == 1 or abs(c[0] - c[1]) >= 0.4:
            break
    return ContTask(c, rng.uniform(0.10, 0.25, p), rng.uniform(0.4, 1.0, p))


def cont_context(
    task: ContTask, length: int, rng: np.random.Generator, kind: str | None = None, target: float | None = None
) -> np.ndarray:
    """(L, 2) tuples ``[a, r]``: the demonstrator ``a* + eps * N(0, 1)`` with eps rising to 1 (clipped to
    [-1, 1]), or uniform actions."""
    kind = kind or ("random" if rng.random() < 1 / 3 else "demo")
    if kind == "random":
        a = rng.uniform(-1, 1, length)
    else:
        star = task.best if target is None else target
        eps = np.linspace(rng.uniform(0.0, 0.5), 1.0, length)
        a = np.clip(star + eps * rng.standard_normal(length), -1, 1)
    rng.shuffle(a)
    r = task.mean_reward(a) + SIGMA_CONT * rng.standard_normal(length)
    return np.stack([a, r], -1).astype(np.float32)


# -------------------------------------------------------------------------------------------------------- dark room
_MOVES = {0: (0, 0), 1: (-1, 0), 2: (1, 0), 3: (0, -1), 4: (0, 1)}  # stay, up, down, left, right (row, col)


def dark_step(s: int, a: int) -> int:
    r, c = divmod(s, N_DARK)
    dr, dc = _MOVES[int(a)]
    return int(np.clip(r + dr, 0, N_DARK - 1) * N_DARK + np.clip(c + dc, 0, N_DARK - 1))


def dark_optimal(s: int, goal: int) -> int:
    r, c = divmod(s, N_DARK)
    gr, gc = divmod(goal, N_DARK)
    if gr != r:
        return 1 if gr < r else 2
    if gc != c:
        return 3 if gc < c else 4
    return 0


def dark_goals(heldout: bool) -> list[int]:
    return list(DARK_HELDOUT) if heldout else [g for g in range(N_DARK * N_DARK) if g not in DARK_HELDOUT]


def dark_context(goal: int, length: int, rng: np.random.Generator, kind: str | None = None) -> np.ndarray:
    """(L, 31) tuples ``[one_hot(s), one_hot(a), r]`` from episodes of the noisy demonstrator (epsilon rising to 1
    over the collection) or a random walk; episodes start in the centre cell."""
    kind = kind or ("random" if rng.random() < 1 / 3 else "demo")
    eps = np.ones(length) if kind == "random" else np.linspace(rng.uniform(0.0, 1.0), 1.0, length)
    s0 = (N_DARK * N_DARK) // 2
    states, actions, rewards = [], [], []
    s = s0
    for i in range(length):
        if i % DARK_HORIZON == 0:
            s = s0
        a = int(rng.integers(0, DARK_ACTIONS)) if rng.random() < eps[i] else dark_optimal(s, goal)
        s2 = dark_step(s, a)
        states.append(s)
        actions.append(a)
        rewards.append(1.0 if s2 == goal else 0.0)
        s = s2
    return dark_tokens(states, actions, rewards, rng=rng)


def dark_tokens(states, actions, rewards, rng: np.random.Generator | None = None) -> np.ndarray:
    n = len(states)
    out = np.zeros((n, CONTEXT_FEATURES["dark"]), np.float32)
    out[np.arange(n), np.asarray(states, int)] = 1.0
    out[np.arange(n), N_DARK * N_DARK + np.asarray(actions, int)] = 1.0
    out[:, -1] = rewards
    if rng is not None:
        rng.shuffle(out)
    return out


def dark_query(s: int) -> np.ndarray:
    q = np.zeros(N_DARK * N_DARK, np.float32)
    q[s] = 1.0
    return q


# ----------------------------------------------------------------------------------------------------------- batches
def make_batch(family: str, batch: int, length: int, rng: np.random.Generator, heldout: bool = False) -> Batch:
    """A batch of ``batch`` tasks of one family, each with a context of ``length`` tuples and its optimal action."""
    family = choose(family, FAMILIES, "task family")
    ctx, qry, tgt, msk = [], [], [], []
    for _ in range(batch):
        if family == "karm":
            t = draw_karm(rng, heldout)
            ctx.append(karm_context(t, length, rng))
            qry.append(karm_query(t.k))
            tgt.append(t.best)
            msk.append(qry[-1] > 0)
        elif family == "cont":
            t = draw_cont(rng, heldout)
            star = t.optimum(rng)
            ctx.append(cont_context(t, length, rng, target=star))
            qry.append(np.ones(1, np.float32))
            tgt.append(star)
        else:  # dark
            goal = int(rng.choice(dark_goals(heldout)))
            s = int(rng.integers(0, N_DARK * N_DARK))
            ctx.append(dark_context(goal, length, rng))
            qry.append(dark_query(s))
            tgt.append(dark_optimal(s, goal))
            msk.append(np.ones(DARK_ACTIONS, bool))
    target = torch.tensor(np.asarray(tgt), dtype=torch.float32 if family == "cont" else torch.long)
    mask = torch.from_numpy(np.stack(msk)) if msk else None
    return Batch(family, torch.from_numpy(np.stack(ctx)), torch.from_numpy(np.stack(qry)), target, mask)


@dataclass
class CurveTask:
    """A continuous bandit given by its mean-reward curve on a grid (an uploaded ``a,r`` table), linear in between."""

    grid: np.ndarray  # (G,) increasing in [-1, 1]
    values: np.ndarray  # (G,)

    def mean_reward(self, a) -> np.ndarray:
        return np.interp(np.asarray(a, dtype=float), self.grid, self.values)

    @property
    def best(self) -> float:
        return float(self.grid[np.argmax(self.values)])

    @property
    def centers(self) -> np.ndarray:
        """Local maxima within 90 % of the best value (the peaks the mass metric counts)."""
        v = self.values
        top = v.max() - 0.1 * (v.max() - v.min())
        idx = [
            i
            for i in range(len(v))
            if v[i] >= top and (i == 0 or v[i] >= v[i - 1]) and (i == len(v) - 1 or v[i] > v[i + 1])
        ]
        return self.grid[idx]

    def optimum(self, rng: np.random.Generator) -> float:  # noqa: ARG002
        return self.best
