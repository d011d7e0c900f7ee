"""Finite MDPs for the Spectral Bellman page: the environments, the MDP JSON reader, Bellman backups and spectra.

Environments (every one a tabular :class:`MDP` with dense arrays, so backups are exact):

* ``lowrank``: a random rank-d linear MDP, ``P(s'|s,a) = phi*(s,a)^T mu(s')`` with ``phi*`` rows on the simplex
  (Dirichlet) and ``mu`` d distributions over states; reward ``r = phi* w`` lies in the span (zero inherent Bellman
  error for ``phi*``). Defaults |S| = 50, |A| = 4, d = 8.
* ``fullrank``: the same sizes with every ``P(.|s,a)`` an independent Dirichlet draw (no low-rank structure).
* ``deepsea``: DeepSea(N) on the reachable triangle of an N x N grid: one row down per step, the action meaning
  (left/right) flipped at random per cell, a cost 0.01/N per move right and +1 for moving right at the bottom-right
  cell; then an absorbing terminal state. Horizon N; optimal return 0.99.
* ``chain``: N states in a row, start at the left end, +1 per step at the right end, 0.01 for staying at the left end.
* ``gridworld``: a small pixel gridworld (walls, goal); each state's observation is a 1 x H x W image, the input of the
  neural feature network.

Arrays: ``P`` (S, A, S) float64 row-stochastic, ``R`` (S, A), ``terminal`` (S,) bool (value 0, self-loop),
``start`` a state index, ``horizon`` the episode length. Q tables are (S, A); stacked backups are (S*A, n).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import choose

MAX_STATES = 200
MAX_ACTIONS = 10
MAX_JSON_BYTES = 2 * 2**20
JSON_LIMITS = (
    f"JSON object with states (2-{MAX_STATES}), actions (1-{MAX_ACTIONS}), P[s][a][s'] (rows sum to 1, "
    "no negatives), R[s][a], gamma in [0, 1]; optional start, horizon (1-500), terminal; at most 2 MB"
)


@dataclass
class MDP:
    """A finite MDP with dense arrays (shapes in the module docstring)."""

    name: str
    P: np.ndarray
    R: np.ndarray
    gamma: float
    start: int = 0
    horizon: int = 20
    terminal: np.ndarray | None = None
    phi_true: np.ndarray | None = None  # (S*A, d): features with zero inherent Bellman error, when known
    obs: np.ndarray | None = None  # (S, C, H, W) pixel observations (gridworld)
    coords: np.ndarray | None = None  # (S, 2) grid (row, col) of each state for heatmaps; -1 for none
    grid_shape: tuple[int, int] | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.terminal is None:
            self.terminal = np.zeros(self.n_states, dtype=bool)

    @property
    def n_states(self) -> int:
        return int(self.P.shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.P.shape[1])

    def summary(self) -> dict:
        return {
            "name": self.name,
            "states": self.n_states,
            "actions": self.n_actions,
            "gamma": self.gamma,
            "horizon": self.horizon,
            "true_feature_dim": None if self.phi_true is None else int(self.phi_true.shape[1]),
            **self.meta,
        }


# ------------------------------------------------------------------------------------------------ backups
def backup(mdp: MDP, Q: np.ndarray) -> np.ndarray:
    """The optimality backup ``TQ = R + gamma P max_a Q`` for a batch of Q tables: (S, A, n) -> (S, A, n)."""
    V = Q.max(axis=1)  # (S, n)
    V = np.where(mdp.terminal[:, None], 0.0, V)
    out = mdp.R[:, :, None] + mdp.gamma * np.einsum("sat,tn->san", mdp.P, V)
    out[mdp.terminal] = 0.0
    return out


def stacked_backups(mdp: MDP, n: int = 256, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """Backups of ``n`` random Q tables (i.i.d. N(0, scale^2) entries) stacked as columns: (S*A, n)."""
    rng = np.random.default_rng(seed)
    Q = scale * rng.standard_normal((mdp.n_states, mdp.n_actions, n))
    return backup(mdp, Q).reshape(mdp.n_states * mdp.n_actions, n)


def spectrum(mdp: MDP, n: int = 256, seed: int = 0) -> np.ndarray:
    """Singular values of the stacked backups, largest first."""
    return np.linalg.svd(stacked_backups(mdp, n, seed), compute_uv=False)


def optimal_return(mdp: MDP) -> float:
    """The optimal expected H-step return from the start state (finite-horizon dynamic programming)."""
    V = np.zeros(mdp.n_states)
    for _ in range(mdp.horizon):
        Q = mdp.R + np.einsum("sat,t->sa", mdp.P, np.where(mdp.terminal, 0.0, V))
        Q[mdp.terminal] = 0.0
        V = Q.max(axis=1)
    return float(V[mdp.start])


def deterministic_features(mdp: MDP) -> np.ndarray | None:
    """For a deterministic MDP, ``[e_next(s,a) over non-terminal states, r(s,a)]``: zero inherent Bellman error."""
    if not np.all(np.isclose(mdp.P.max(axis=2), 1.0)):
        return None
    nxt = mdp.P.argmax(axis=2).reshape(-1)
    keep = np.flatnonzero(~mdp.terminal)
    col = {s: i for i, s in enumerate(keep)}
    phi = np.zeros((mdp.n_states * mdp.n_actions, len(keep) + 1))
    for i, s in enumerate(nxt):
        if s in col:
            phi[i, col[s]] = 1.0
    phi[:, -1] = mdp.R.reshape(-1)
    phi[np.repeat(mdp.terminal, mdp.n_actions)] = 0.0
    return phi


# ------------------------------------------------------------------------------------------------ environments
def low_rank_mdp(
    n_states: int = 50, n_actions: int = 4, rank: int = 8, gamma: float = 0.9, seed: int = 0, horizon: int = 20
) -> MDP:
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(rank, 0.3), size=n_states * n_actions)  # (SA, d)
    mu = rng.dirichlet(np.full(n_states, 0.3), size=rank)  # (d, S)
    w = rng.uniform(0, 1, rank)
    P = (phi @ mu).reshape(n_states, n_actions, n_states)
    R = (phi @ w).reshape(n_states, n_actions)
    return MDP("lowrank", P, R, gamma, 0, horizon, phi_true=phi, meta={"rank": rank})


def full_rank_mdp(n_states: int = 50, n_actions: int = 4, gamma: float = 0.9, seed: int = 0, horizon: int = 20) -> MDP:
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(n_states, 0.3), size=(n_states, n_actions))
    R = rng.uniform(0, 1, (n_states, n_actions))
    return MDP("fullrank", P, R, gamma, 0, horizon)


def deepsea(size: int = 10, seed: int = 0) -> MDP:
    """DeepSea(N) on the reachable triangle (row r holds columns 0..r) plus one terminal state."""
    if not 2 <= size <= 40:
        raise InputError(f"DeepSea size {size} is out of range; choose N in 2..40.")
    N = size
    cells = [(r, c) for r in range(N) for c in range(r + 1)]
    index = {rc: i for i, rc in enumerate(cells)}
    S = len(cells) + 1
    term = S - 1
    rng = np.random.default_rng(seed)
    flip = rng.integers(0, 2, size=len(cells))  # action 1 means right unless flipped
    P = np.zeros((S, 2, S))
    R = np.zeros((S, 2))
    for i, (r, c) in enumerate(cells):
        for a in range(2):
            right = (a == 1) != bool(flip[i])
            if right:
                R[i, a] -= 0.01 / N
                if r == N - 1 and c == N - 1:
                    R[i, a] += 1.0
            if r == N - 1:
                P[i, a, term] = 1.0
            else:
                P[i, a, index[(r + 1, min(c + 1, r + 1) if right else max(c - 1, 0))]] = 1.0
    P[term, :, term] = 1.0
    terminal = np.zeros(S, dtype=bool)
    terminal[term] = True
    coords = np.array([*cells, (-1, -1)])
    mdp = MDP("deepsea", P, R, 1.0, 0, N, terminal, coords=coords, grid_shape=(N, N), meta={"size": N})
    mdp.phi_true = deterministic_features(mdp)
    return mdp


def chain(size: int = 10, seed: int = 0) -> MDP:  # noqa: ARG001 - every environment takes a seed
    """A deterministic chain: actions left/right, +1 per step at the right end, 0.01 for staying at the left end."""
    if not 3 <= size <= 100:
        raise InputError(f"Chain length {size} is out of range; choose 3..100 states.")
    N = size
    P = np.zeros((N, 2, N))
    R = np.zeros((N, 2))
    for s in range(N):
        P[s, 0, max(s - 1, 0)] = 1.0
        P[s, 1, min(s + 1, N - 1)] = 1.0
    R[0, 0] = 0.01
    R[N - 1, :] = 1.0
    coords = np.array([(0, s) for s in range(N)])
    mdp = MDP("chain", P, R, 1.0, 0, 2 * N, coords=coords, grid_shape=(1, N), meta={"size": N})
    mdp.phi_true = deterministic_features(mdp)
    return mdp


GRID_5 = ("....#", ".#...", ".#.#.", "...#.", "#...G")


def gridworld(layout: tuple[str, ...] = GRID_5, seed: int = 0) -> MDP:  # noqa: ARG001
    """A pixel gridworld: '.' free, '#' wall, 'G' goal (+1, then terminal); actions up, right, down, left."""
    H, W = len(layout), len(layout[0])
    free = [(r, c) for r in range(H) for c in range(W) if layout[r][c] != "#"]
    index = {rc: i for i, rc in enumerate(free)}
    S = len(free) + 1
    term = S - 1
    P = np.zeros((S, 4, S))
    R = np.zeros((S, 4))
    moves = ((-1, 0), (0, 1), (1, 0), (0, -1))
    for i, (r, c) in enumerate(free):
        for a, (dr, dc) in enumerate(moves):
            if layout[r][c] == "G":
                P[i, a, term] = 1.0
                R[i, a] = 1.0
                continue
            nr, nc = r + dr, c + dc
            ok = 0 <= nr < H and 0 <= nc < W and layout[nr][nc] != "#"
            P[i, a, index[(nr, nc)] if ok else i] = 1.0
    P[term, :, term] = 1.0
    terminal = np.zeros(S, dtype=bool)
    terminal[term] = True
    obs = np.zeros((S, 1, H, W))
    walls = np.array([[0.5 if ch == "#" else 0.0 for ch in row] for row in layout])
    for i, (r, c) in enumerate(free):
        obs[i, 0] = walls
        obs[i, 0, r, c] = 1.0
    obs[term, 0] = walls
    coords = np.array([*free, (-1, -1)])
    mdp = MDP(
        "gridworld",
        P,
        R,
        0.95,
        0,
        3 * (H + W),
        terminal,
        obs=obs,
        coords=coords,
        grid_shape=(H, W),
        meta={"layout": list(layout)},
    )
    mdp.phi_true = deterministic_features(mdp)
    return mdp


ENVS = {"lowrank": low_rank_mdp, "fullrank": full_rank_mdp, "deepsea": deepsea, "chain": chain, "gridworld": gridworld}


def make_env(name: str, size: int = 10, seed: int = 0, rank: int = 8) -> MDP:
    """An environment by name; ``size`` is N of DeepSea / chain, ``rank`` the d of the low-rank MDP."""
    if name == "lowrank":
        if not 1 <= rank <= 50:
            raise InputError(f"Rank {rank} is out of range; choose d in 1..50.")
        return low_rank_mdp(rank=rank, seed=seed)
    if name in ("deepsea", "chain"):
        return ENVS[name](size, seed)
    return ENVS[choose(name, ENVS, "environment")](seed=seed)


# ------------------------------------------------------------------------------------------------ JSON upload
def _array(obj: dict, key: str, shape: tuple[int, ...]) -> np.ndarray:
    try:
        arr = np.asarray(obj[key], dtype=float)
    except (ValueError, TypeError):
        raise InputError(f"'{key}' must be nested lists of numbers with shape {shape}.") from None
    if arr.shape != shape:
        raise InputError(
            f"'{key}' has shape {arr.shape}; it must be {shape} (states x actions"
            f"{' x states' if len(shape) == 3 else ''})."
        )
    if not np.all(np.isfinite(arr)):
        raise InputError(f"'{key}' holds NaN or infinite values; use finite numbers.")
    return arr


def read_mdp_json(data: bytes, name: str = "the upload") -> MDP:
    """Decode an MDP from JSON (``JSON_LIMITS``); raises InputError naming what to change."""
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text; save the MDP as UTF-8 JSON.") from None
    except (json.JSONDecodeError, RecursionError) as err:
        raise InputError(f"{name} is not valid JSON ({str(err)[:80]}); expected {JSON_LIMITS}.") from None
    if not isinstance(obj, dict):
        raise InputError(f"{name} must hold a JSON object with keys states, actions, P, R, gamma.")
    missing = [k for k in ("P", "R", "gamma") if k not in obj]
    if missing:
        raise InputError(f"{name} lacks {', '.join(missing)}; expected {JSON_LIMITS}.")

    def count(key: str, default: int, hi: int) -> int:
        v = obj.get(key, default)
        n = len(v) if isinstance(v, list) else v
        if isinstance(n, bool) or not isinstance(n, int) or not (1 <= n <= hi):
            raise InputError(f"'{key}' must be a count (or a list of names) between 1 and {hi}; got {str(v)[:40]}.")
        return n

    P0 = obj["P"]
    if not isinstance(P0, list) or not P0 or not isinstance(P0[0], list):
        raise InputError("'P' must be a list per state of a list per action of next-state probabilities.")
    S = count("states", len(P0), MAX_STATES)
    if S < 2:
        raise InputError("An MDP needs at least 2 states.")
    A = count("actions", len(P0[0]), MAX_ACTIONS)
    P = _array(obj, "P", (S, A, S))
    R = _array(obj, "R", (S, A))
    if (P < 0).any():
        s, a, t = map(int, np.argwhere(P < 0)[0])
        raise InputError(f"P[{s}][{a}][{t}] = {P[s, a, t]:g} is negative; probabilities must be >= 0.")
    sums = P.sum(axis=2)
    bad = np.argwhere(np.abs(sums - 1) > 1e-6)
    if len(bad):
        s, a = map(int, bad[0])
        raise InputError(
            f"P[{s}][{a}] sums to {sums[s, a]:.6g}, not 1 ({len(bad)} such rows); each row of next-state "
            "probabilities must sum to 1."
        )
    g = obj["gamma"]
    if isinstance(g, bool) or not isinstance(g, (int, float)) or not (0 <= g <= 1):
        raise InputError(f"gamma must be a number in [0, 1]; got {str(g)[:20]}.")
    start, horizon = obj.get("start", 0), obj.get("horizon", 20)
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < S:
        raise InputError(f"start must be a state index in 0..{S - 1}.")
    if isinstance(horizon, bool) or not isinstance(horizon, int) or not 1 <= horizon <= 500:
        raise InputError("horizon must be an integer in 1..500.")
    terminal = np.zeros(S, dtype=bool)
    term = obj.get("terminal", [])
    if not isinstance(term, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) and 0 <= t < S for t in term
    ):
        raise InputError(f"terminal must be a list of state indices in 0..{S - 1}.")
    terminal[term] = True
    if terminal[start]:
        raise InputError("The start state is terminal; choose another start.")
    mdp = MDP("upload", P / sums[:, :, None], R, float(g), start, horizon, terminal, meta={"file": name})
    mdp.phi_true = deterministic_features(mdp)
    return mdp


def example_json(seed: int = 0) -> bytes:
    """A small valid MDP file: a 4-state chain with a noisy right move."""
    rng = np.random.default_rng(seed)
    S = 4
    P = np.zeros((S, 2, S))
    for s in range(S):
        P[s, 0, max(s - 1, 0)] = 1.0
        p = 0.8 + 0.1 * rng.random()
        P[s, 1, min(s + 1, S - 1)] += p
        P[s, 1, s] += 1 - p
    R = np.zeros((S, 2))
    R[S - 1] = 1.0
    return json.dumps(
        {
            "states": S,
            "actions": ["left", "right"],
            "P": P.round(6).tolist(),
            "R": R.tolist(),
            "gamma": 0.9,
            "start": 0,
            "horizon": 8,
        }
    ).encode()
