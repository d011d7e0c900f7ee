"""OFU-DMNL and the assortment-bandit baselines, and the round-by-round simulation that compares them.

Paper: H. Ann, T. Hwang, M. Oh, "Diversified Multinomial Logit Contextual Bandits" (ICLR 2026); the model is in
:mod:`backend.bandits.dmnl.model`.

| name | what | reference |
|------|------|-----------|
| ``ofu-dmnl`` | OFU-DMNL: augmented features ``[x, g(S)]``, online mirror descent with the Hessian preconditioner, greedy optimistic assortment, random assortments while the lambda direction is uncertain (ours) | Ann, Hwang, Oh 2026 |
| ``ofu-dmnl-full`` | the same learner, optimistic assortment by exhaustive enumeration (N <= 20 at K = 5) | Ann, Hwang, Oh 2026 |
| ``ofu-mnl+`` | the same online mirror descent on plain MNL features ``x`` (no diversity term), top-K optimistic | Lee & Oh, NeurIPS 2024 |
| ``ucb-mnl`` | regularised MLE (Newton, warm start) on plain MNL, UCB utilities ``x theta + alpha ||x||_{V^-1}``, top-K | Oh & Iyengar, AAAI 2021 |
| ``ts-mnl`` | Thompson sampling ``theta ~ N(theta_hat, beta^2 V^-1)`` around the same MLE, top-K | Oh & Iyengar, NeurIPS 2019 |
| ``lsb-greedy`` | a linear submodular bandit: slot by slot, the item maximising ``phi . w + alpha ||phi||_{V^-1}`` with ``phi = [x_i, g(S + i) - g(S)]`` (the diversity gain as a feature, no MNL structure); ridge regression of each slot's purchase on its ``phi`` | Yue & Guestrin, NeurIPS 2011 (LSBGreedy) |
| ``oracle`` | knows ``theta*`` and ``lambda*``: the enumerated optimum (greedy on the true model past the enumeration limit) | reference |
| ``random`` | a uniformly random assortment of K items | reference |

OFU-DMNL, round t (``d' = d + 1``, ``H_1 = Lambda I``, ``w_1 = 0``):

1. While the lambda direction is uncertain, ``alpha_t ||e_{d'}||_{H_t^-1} >= lambda_hat_t / nu`` (the confidence
   half-width of lambda reaches ``lambda_hat / nu``; with ``nu = 1`` the interval still contains 0), play a random
   assortment: greedy optimisation needs ``lambda > 0`` to be monotone submodular. This module reads the paper's
   condition, printed as ``||[0_d, 1]||_{H^-1} >= (nu / lambda_hat) alpha_t`` in the project spec, as this
   comparison of the width with the estimate.
2. Else build S item by item: add the item maximising the optimistic reward
   ``R~(S + i) = sum_j e^{u~_j} / (1 + sum_j e^{u~_j})``, ``u~_j = z_j(S + i) . w_t + alpha_t ||z_j(S + i)||_{H_t^-1}``
   (every item's bonus moves with ``g(S + i)``). ``O(N K)`` evaluations.
3. Observe the choice; online mirror descent on the MNL log-loss
   ``w_{t+1} = w_t - eta H~_t^-1 grad l_t(w_t)``, ``H~_t = H_t + eta G_t(w_t)``, then ``H_{t+1} = H_t + G_t(w_{t+1})``
   (``G`` the log-loss Hessian); ``w`` is kept in the ball ``||w|| <= B`` by rescaling (the paper projects in the
   ``H~`` norm; the two agree whenever the iterate stays inside the ball, which it does at these scales).

Constants (``DMNLConfig``): ``eta = 0.5 log(K + 1) + 2`` as in the paper; ``alpha_t = c sqrt(d' log(1 + t)) log(K + 1)``
with one scale ``c`` shared by every optimistic baseline (the analysis' constants are valid but loose by orders of
magnitude; ``constants="theory"`` uses ``Lambda = 84 sqrt(d' eta)`` and ``c = 1``); ``Lambda = 1`` by default.

Regret. Exact regret is ``R(S*_t) - R(S_t)`` against the enumerated optimum; approximate regret is
``(1 - 1/(e+1)) R(S*_t) - R(S_t)``, the quantity the paper bounds (it can be negative). Past the enumeration limit
``S*_t`` is greedy on the true model, and the result says so.

Shapes: contexts ``[T, N, d]``, assortments ``[T, K]`` int, regret curves ``[T]``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from ...errors import InputError, JobCancelled
from ...registry import Registry
from ...runtime import CancelToken, Progress, report
from . import model as M
from .items import Catalogue, synthetic


@dataclass
class DMNLConfig:
    """Learner constants; the defaults are the paper's where it fixes them (see the module docstring)."""

    alpha_scale: float = 0.15
    reg: float = 1.0  # Lambda
    nu: float = 1.0
    radius: float = 10.0  # B
    constants: str = "practical"  # or "theory"

    def alpha(self, t: int, d_aug: int, k: int) -> float:
        c = 1.0 if self.constants == "theory" else self.alpha_scale
        return c * math.sqrt(d_aug * math.log(1.0 + t)) * math.log(k + 1.0)

    def regulariser(self, d_aug: int, k: int) -> float:
        return 84.0 * math.sqrt(d_aug * eta(k)) if self.constants == "theory" else self.reg


def eta(k: int) -> float:
    return 0.5 * math.log(k + 1.0) + 2.0


# ------------------------------------------------------------------------------------------------ learners
class Agent:
    """``select(t, X) -> S`` (``X`` ``[N, d]`` this round's features) and ``update(X, S, choice)``
    (``choice`` the position in S of the bought item, or -1 for no purchase)."""

    random_rounds = 0

    def select(self, t: int, X: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def update(self, X: np.ndarray, S: np.ndarray, choice: int) -> None:
        return None

    def state(self) -> dict[str, float]:
        return {}


def _mnl_stats(Z: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Choice probabilities ``[m]`` of the items (the outside option has utility 0) and the log-loss Hessian."""
    logits = Z @ w
    top = max(float(logits.max()), 0.0)
    e = np.exp(logits - top)
    p = e / (e.sum() + math.exp(-top))
    mean = p @ Z
    return p, (Z * p[:, None]).T @ Z - np.outer(mean, mean)


class OMDLearner(Agent):
    """Online mirror descent on the MNL log-loss (shared by OFU-DMNL, OFU-DMNL-FULL and OFU-MNL+)."""

    def __init__(self, d: int, k: int, div: M.Diversity, cfg: DMNLConfig, *, diverse: bool, search: str,
                 rng: np.random.Generator):
        self.d, self.k, self.div, self.cfg, self.diverse, self.search, self.rng = d, k, div, cfg, diverse, search, rng
        self.d_aug = d + 1 if diverse else d
        self.w = np.zeros(self.d_aug)
        self.H = cfg.regulariser(self.d_aug, k) * np.eye(self.d_aug)
        self.eta = eta(k)
        self.random_rounds = 0
        self.evaluations = 0
        self.force_search = False  # timing only: skip the random-assortment rule so every round searches
        self._subsets: np.ndarray | None = None
        self._g_all: np.ndarray | None = None

    def _z(self, X: np.ndarray, S: np.ndarray) -> np.ndarray:
        Xs = X[S]
        if not self.diverse:
            return Xs
        return np.column_stack([Xs, np.full(len(S), self.div.value(S))])

    def lambda_uncertain(self, t: int, Hinv: np.ndarray) -> bool:
        width = self.cfg.alpha(t, self.d_aug, self.k) * math.sqrt(Hinv[-1, -1])
        return width >= self.w[-1] / self.cfg.nu

    def select(self, t: int, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        Hinv = np.linalg.inv(self.H)
        alpha = self.cfg.alpha(t, self.d_aug, self.k)
        if not self.diverse:  # plain MNL with unit revenues: the top-K optimistic utilities are optimal
            u = X @ self.w + alpha * np.sqrt(np.einsum("nd,de,ne->n", X, Hinv, X).clip(0))
            self.evaluations += n
            return np.argsort(-u, kind="stable")[: self.k]
        if not self.force_search and self.lambda_uncertain(t, Hinv):
            self.random_rounds += 1
            return np.sort(self.rng.choice(n, self.k, replace=False))
        theta, lam = self.w[:-1], self.w[-1]
        base = X @ theta  # [N]
        A, b, c = Hinv[:-1, :-1], Hinv[:-1, -1], Hinv[-1, -1]
        q = np.einsum("nd,de,ne->n", X, A, X)  # ||x||^2 in the feature block
        lin = X @ b  # the cross term with g

        def util(idx: np.ndarray, g: np.ndarray) -> np.ndarray:
            return base[idx] + lam * g + alpha * np.sqrt(np.clip(q[idx] + 2 * g * lin[idx] + c * g * g, 0, None))

        if self.search == "greedy":
            def value_with(S: np.ndarray, cand: np.ndarray) -> np.ndarray:
                g = self.div.gain_values(S, cand)  # [C]
                idx = np.concatenate([np.broadcast_to(S, (len(cand), len(S))), cand[:, None]], axis=1)
                return M.reward(util(idx, g[:, None]), 0.0, 0.0)

            res = M.greedy(value_with, n, self.k)
            self.evaluations += res.evaluations
            return res.items
        if self._subsets is None:
            self._subsets = M.all_subsets(n, self.k)
            self._g_all = self.div.enumerate_values(self._subsets)
        vals = M.reward(util(self._subsets, self._g_all[:, None]), 0.0, 0.0)
        self.evaluations += len(vals)
        return self._subsets[int(np.argmax(vals))]

    def update(self, X: np.ndarray, S: np.ndarray, choice: int) -> None:
        Z = self._z(X, S)
        p, G = _mnl_stats(Z, self.w)
        y = np.zeros(len(S))
        if choice >= 0:
            y[choice] = 1.0
        grad = (p - y) @ Z
        self.w = self.w - self.eta * np.linalg.solve(self.H + self.eta * G, grad)
        norm = np.linalg.norm(self.w)
        if norm > self.cfg.radius:
            self.w *= self.cfg.radius / norm
        self.H = self.H + _mnl_stats(Z, self.w)[1]

    def state(self) -> dict[str, float]:
        return {"lambda_hat": float(self.w[-1])} if self.diverse else {}


class MLELearner(Agent):
    """Regularised MNL maximum likelihood on plain features, refit by warm-started Newton steps (UCB-MNL, TS-MNL)."""

    def __init__(self, d: int, k: int, cfg: DMNLConfig, *, thompson: bool, rng: np.random.Generator, rounds: int):
        self.d, self.k, self.cfg, self.thompson, self.rng = d, k, cfg, thompson, rng
        self.theta = np.zeros(d)
        self.V = cfg.reg * np.eye(d)
        self.Xs = np.zeros((rounds, k, d))
        self.Y = np.zeros((rounds, k))
        self.n = 0

    def select(self, t: int, X: np.ndarray) -> np.ndarray:
        Vinv = np.linalg.inv(self.V)
        alpha = self.cfg.alpha(t, self.d, self.k)
        if self.thompson:
            L = np.linalg.cholesky(Vinv + 1e-12 * np.eye(self.d))
            u = X @ (self.theta + alpha * (L @ self.rng.standard_normal(self.d)))
        else:
            u = X @ self.theta + alpha * np.sqrt(np.einsum("nd,de,ne->n", X, Vinv, X).clip(0))
        return np.argsort(-u, kind="stable")[: self.k]

    def update(self, X: np.ndarray, S: np.ndarray, choice: int) -> None:
        self.Xs[self.n] = X[S]
        if choice >= 0:
            self.Y[self.n, choice] = 1.0
        self.n += 1
        self.V = self.V + X[S].T @ X[S]
        Xs, Y = self.Xs[: self.n], self.Y[: self.n]
        for _ in range(2 if self.n > 20 else 5):
            logits = Xs @ self.theta  # [n, K]
            e = np.exp(logits - logits.max(axis=1, keepdims=True).clip(0))
            P = e / (e.sum(axis=1, keepdims=True) + np.exp(-logits.max(axis=1, keepdims=True).clip(0)))
            grad = np.einsum("nk,nkd->d", P - Y, Xs) + self.cfg.reg * self.theta
            mean = np.einsum("nk,nkd->nd", P, Xs)
            H = np.einsum("nk,nkd,nke->de", P, Xs, Xs) - mean.T @ mean + self.cfg.reg * np.eye(self.d)
            self.theta = self.theta - np.linalg.solve(H, grad)


class LSBGreedy(Agent):
    """Linear submodular bandit (LSBGreedy): each slot's purchase is modelled linearly in ``phi = [x_i, marginal
    diversity gain]``; greedy slot filling by the upper confidence bound; ridge regression on every shown slot."""

    def __init__(self, d: int, k: int, div: M.Diversity, cfg: DMNLConfig):
        self.d, self.k, self.div, self.cfg = d + 1, k, div, cfg
        self.V = cfg.reg * np.eye(self.d)
        self.b = np.zeros(self.d)
        self.w = np.zeros(self.d)
        self._phi = np.zeros((k, self.d))
        self.evaluations = 0

    def select(self, t: int, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        Vinv = np.linalg.inv(self.V)
        alpha = self.cfg.alpha(t, self.d, self.k)
        S: list[int] = []
        g_s = 0.0
        free = np.ones(n, dtype=bool)
        for slot in range(min(self.k, n)):
            cand = np.flatnonzero(free)
            phi = np.column_stack([X[cand], self.div.gain_values(np.asarray(S, dtype=np.int64), cand) - g_s])
            ucb = phi @ self.w + alpha * np.sqrt(np.einsum("nd,de,ne->n", phi, Vinv, phi).clip(0))
            best = int(np.argmax(ucb))
            self.evaluations += len(cand)
            S.append(int(cand[best]))
            self._phi[slot] = phi[best]
            free[cand[best]] = False
            g_s = self.div.value(S)
        return np.asarray(S, dtype=np.int64)

    def update(self, X: np.ndarray, S: np.ndarray, choice: int) -> None:
        phi = self._phi[: len(S)]
        y = np.zeros(len(S))
        if choice >= 0:
            y[choice] = 1.0
        self.V = self.V + phi.T @ phi
        self.b = self.b + y @ phi
        self.w = np.linalg.solve(self.V, self.b)


class OracleAgent(Agent):
    def __init__(self, cat: Catalogue, lam: float, div: M.Diversity, k: int, subsets: np.ndarray | None,
                 g_all: np.ndarray | None):
        self.theta, self.lam, self.div, self.k, self.subsets, self.g_all = cat.theta, lam, div, k, subsets, g_all

    def select(self, t: int, X: np.ndarray) -> np.ndarray:
        u = X @ self.theta
        if self.subsets is not None:
            return M.exhaustive_true(u, self.lam, self.subsets, self.g_all).items
        return M.greedy_true(u, self.lam, self.div, self.k).items


class RandomAgent(Agent):
    def __init__(self, n: int, k: int, rng: np.random.Generator):
        self.n, self.k, self.rng = n, k, rng

    def select(self, t: int, X: np.ndarray) -> np.ndarray:
        return np.sort(self.rng.choice(self.n, self.k, replace=False))


@dataclass(frozen=True)
class AgentFactory:
    """One entry of :data:`AGENTS`: ``make(env, rng)`` builds the agent for one run; ``enumerates`` marks the agents
    that score every assortment (they need ``C(N, K) <= MAX_ENUMERATION``)."""

    make: Callable[[Env, np.random.Generator], Agent]
    enumerates: bool = False

    def __call__(self, env: Env, rng: np.random.Generator) -> Agent:
        return self.make(env, rng)


def _ofu_dmnl(env: Env, rng: np.random.Generator) -> Agent:
    return OMDLearner(env.d, env.k, env.div, env.cfg, diverse=True, search="greedy", rng=rng)


def _ofu_dmnl_full(env: Env, rng: np.random.Generator) -> Agent:
    return OMDLearner(env.d, env.k, env.div, env.cfg, diverse=True, search="exhaustive", rng=rng)


def _ofu_mnl_plus(env: Env, rng: np.random.Generator) -> Agent:
    return OMDLearner(env.d, env.k, env.div, env.cfg, diverse=False, search="topk", rng=rng)


def _ucb_mnl(env: Env, rng: np.random.Generator) -> Agent:
    return MLELearner(env.d, env.k, env.cfg, thompson=False, rng=rng, rounds=env.rounds)


def _ts_mnl(env: Env, rng: np.random.Generator) -> Agent:
    return MLELearner(env.d, env.k, env.cfg, thompson=True, rng=rng, rounds=env.rounds)


def _lsb_greedy(env: Env, rng: np.random.Generator) -> Agent:  # noqa: ARG001 - deterministic given the data
    return LSBGreedy(env.d, env.k, env.div, env.cfg)


def _oracle(env: Env, rng: np.random.Generator) -> Agent:  # noqa: ARG001 - the oracle draws nothing
    return OracleAgent(env.cat, env.lam, env.div, env.k, env.subsets, env.g_all)


def _random(env: Env, rng: np.random.Generator) -> Agent:
    return RandomAgent(env.cat.n_items, env.k, rng)


AGENTS: Registry[AgentFactory] = Registry("assortment agent")
AGENTS.add("ofu-dmnl", AgentFactory(_ofu_dmnl), label="OFU-DMNL (ours)", kind="ours")
AGENTS.add("ofu-dmnl-full", AgentFactory(_ofu_dmnl_full, enumerates=True), label="OFU-DMNL-FULL (exhaustive)",
           kind="ablation")
AGENTS.add("ofu-mnl+", AgentFactory(_ofu_mnl_plus), label="OFU-MNL+ (no diversity)", kind="baseline")
AGENTS.add("ucb-mnl", AgentFactory(_ucb_mnl), label="UCB-MNL", kind="baseline")
AGENTS.add("ts-mnl", AgentFactory(_ts_mnl), label="TS-MNL (Thompson)", kind="baseline")
AGENTS.add("lsb-greedy", AgentFactory(_lsb_greedy), label="LSBGreedy (linear submodular UCB)", kind="baseline")
AGENTS.add("oracle", AgentFactory(_oracle), label="Oracle (true model)", kind="reference")
AGENTS.add("random", AgentFactory(_random), label="Random assortment", kind="reference", color="#7f7f7f")

# the learners compared by default (the page's and the CLI's default): every agent but the references
DEFAULT_AGENTS: tuple[str, ...] = tuple(a for a in AGENTS if AGENTS.kind(a) != "reference")
# the OFU-DMNL variants timed by ``runtime_vs_n``: ours and its exhaustive ablation
TIMED_AGENTS: tuple[str, ...] = (*AGENTS.names("ours"), *AGENTS.names("ablation"))


def enumerating(names: list[str] | tuple[str, ...]) -> list[str]:
    """The agents among ``names`` that score every assortment."""
    return [a for a in names if AGENTS.get(a).enumerates]


# ------------------------------------------------------------------------------------------------ simulation
@dataclass
class Env:
    """What a factory needs: the catalogue, the true lambda, the diversity function, K, the horizon."""

    cat: Catalogue
    lam: float
    div: M.Diversity
    k: int
    rounds: int
    cfg: DMNLConfig
    subsets: np.ndarray | None
    g_all: np.ndarray | None

    @property
    def d(self) -> int:
        return self.cat.dim


@dataclass
class AgentRun:
    """One agent's run: per-round exact and approximate regret ``[T]``, assortments ``[T, K]``, seconds ``[T]``."""

    name: str
    regret: np.ndarray
    approx_regret: np.ndarray
    reward: np.ndarray
    assortments: np.ndarray
    seconds: np.ndarray
    random_rounds: int
    evaluations: int
    lambda_hat: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        return {"agent": self.name, "label": AGENTS.label(self.name),
                "cumulative_regret": float(self.regret.sum()),
                "cumulative_approx_regret": float(self.approx_regret.sum()),
                "mean_reward": float(self.reward.mean()), "ms_per_round": 1e3 * float(self.seconds.mean()),
                "random_rounds": int(self.random_rounds), "evaluations_per_round": self.evaluations / len(self.regret),
                "final_lambda_hat": self.lambda_hat[-1] if self.lambda_hat else None}


@dataclass
class Simulation:
    runs: dict[str, AgentRun]
    optimum: np.ndarray  # [T] R(S*_t)
    optimum_kind: str  # "enumerated" or "greedy on the true model"
    greedy_ratio: np.ndarray  # [T] greedy-on-true-model value / optimum (1 when not enumerable)
    settings: dict[str, object]

    def to_json(self, cat: Catalogue, points: int = 400) -> dict[str, object]:
        """A small JSON-able summary for pages and downloads: curves thinned to about ``points`` rounds, every
        assortment (``[T][K]`` ints), the learners' lambda estimates."""
        T = len(self.optimum)
        stride = max(1, T // points)
        idx = np.unique(np.r_[np.arange(0, T, stride), T - 1])
        curves = {a: {"regret": np.cumsum(r.regret)[idx].tolist(), "approx": np.cumsum(r.approx_regret)[idx].tolist()}
                  for a, r in self.runs.items()}
        lam_stride = max(1, T // 200)
        lam_t = [t + 1 for t in range(T) if t % lam_stride == 0 or t == T - 1]
        return {"t": (idx + 1).tolist(), "curves": curves, "optimum": self.optimum_kind,
                "agents": [r.summary() for r in self.runs.values()],
                "assortments": {a: r.assortments.tolist() for a, r in self.runs.items()},
                "lambda_hat": {a: r.lambda_hat for a, r in self.runs.items() if r.lambda_hat}, "lambda_t": lam_t,
                "item_categories": cat.categories.tolist(), "category_names": cat.category_names,
                "item_names": list(cat.names),
                "greedy_ratio_min": (float(self.greedy_ratio.min()) if self.optimum_kind == "enumerated" else None),
                "settings": self.settings,
                "growth_exponent": {a: growth_exponent(np.cumsum(r.regret)) for a, r in self.runs.items()
                                    if AGENTS.kind(a) != "reference"}}


MAX_ROUNDS = 20_000
MAX_LAMBDA = 5.0
MAX_SIGMA = 2.0


def check_settings(*, rounds: int, lam: float, sigma: float) -> None:
    """The ranges of a run's settings (InputError saying what to change); :func:`simulate` and the job's config."""
    if not 10 <= rounds <= MAX_ROUNDS:
        raise InputError(f"The horizon T must be 10 to 20,000 rounds (got {rounds}).")
    if not 0.0 <= lam <= MAX_LAMBDA:
        raise InputError(f"lambda* must be in [0, 5] (got {lam}).")
    if not 0.0 <= sigma <= MAX_SIGMA:
        raise InputError(f"The context noise sigma must be in [0, 2] (got {sigma}).")


def simulate(cat: Catalogue, *, k: int = 5, lam: float = 1.0, rounds: int = 2000, diversity: str = "coverage",
             rho: float = 0.5, sigma: float = 0.3, agents: list[str] | tuple[str, ...] = DEFAULT_AGENTS,
             seed: int = 0, cfg: DMNLConfig | None = None, progress: Progress | None = None,
             cancel: CancelToken | None = None) -> Simulation:
    """Run the agents on the same contexts for ``rounds`` rounds (each agent's choices drawn from its own stream)."""
    cfg = cfg or DMNLConfig()
    n = cat.n_items
    if not 1 <= k <= n:
        raise InputError(f"K = {k} must be between 1 and the number of items N = {n}.")
    check_settings(rounds=rounds, lam=lam, sigma=sigma)
    names = [AGENTS.key(a) for a in agents]
    enumerable = M.n_subsets(n, k) <= M.MAX_ENUMERATION
    if enumerating(names) and not enumerable:
        M.all_subsets(n, k)  # raises the InputError with the limit
    div = M.make_diversity(diversity, categories=cat.categories, features=cat.features, k=k, rho=rho)
    subsets = M.all_subsets(n, k) if enumerable else None
    g_all = div.enumerate_values(subsets) if subsets is not None else None
    env = Env(cat, float(lam), div, int(k), int(rounds), cfg, subsets, g_all)
    X = cat.contexts(rounds, sigma, seed)
    U = X @ cat.theta  # [T, N]
    optimum = np.empty(rounds)
    greedy_ratio = np.ones(rounds)
    for t0 in range(0, rounds, 64):
        sl = slice(t0, min(rounds, t0 + 64))
        if subsets is not None:
            optimum[sl] = M.exhaustive_true(U[sl], lam, subsets, g_all).value
        else:
            optimum[sl] = [M.greedy_true(u, lam, div, k).value for u in U[sl]]
    for t in range(0, rounds, max(1, rounds // 50)):
        if subsets is not None:
            greedy_ratio[t] = M.greedy_true(U[t], lam, div, k).value / optimum[t]
    # common random numbers: every agent sees the same uniform draw per round for the user's choice and the same
    # stream for its own randomness, so two agents that offer the same assortments get the same feedback
    agent_objs = {a: AGENTS.get(a)(env, np.random.default_rng([seed, 101])) for a in names}
    uniforms = np.random.default_rng([seed, 202]).random(rounds)
    runs = {a: AgentRun(a, np.zeros(rounds), np.zeros(rounds), np.zeros(rounds), np.zeros((rounds, k), np.int64),
                        np.zeros(rounds), 0, 0) for a in names}
    for t in range(rounds):
        if cancel is not None and cancel.cancelled:
            raise JobCancelled("cancelled")
        for a, agent in agent_objs.items():
            t_start = time.perf_counter()
            S = agent.select(t + 1, X[t])
            g = div.value(S)
            agent.update(X[t], S, M.draw_choice(U[t, S], lam, g, uniforms[t]))
            run = runs[a]
            run.seconds[t] = time.perf_counter() - t_start
            r = float(M.reward(U[t, S], lam, g))
            run.reward[t] = r
            run.regret[t] = optimum[t] - r
            run.approx_regret[t] = M.APPROX * optimum[t] - r
            run.assortments[t] = S
            if (st := agent.state()) and (t % max(1, rounds // 200) == 0 or t == rounds - 1):
                run.lambda_hat.append(st["lambda_hat"])
        if t % 50 == 0:
            report(progress, t / rounds, f"round {t} of {rounds}")
    for a, agent in agent_objs.items():
        runs[a].random_rounds = int(agent.random_rounds)
        runs[a].evaluations = int(getattr(agent, "evaluations", 0))
    settings = {"k": k, "lam": lam, "rounds": rounds, "diversity": div.name, "rho": rho, "sigma": sigma,
                "seed": seed, "config": asdict(cfg), "catalogue": cat.summary()}
    return Simulation(runs, optimum, "enumerated" if subsets is not None else "greedy on the true model",
                      greedy_ratio, settings)


def growth_exponent(cumulative: np.ndarray, start_fraction: float = 0.1) -> float:
    """Slope of log cumulative regret against log t over ``t >= start_fraction T`` (1 = linear, 0.5 = sqrt T)."""
    T = len(cumulative)
    t = np.arange(1, T + 1)
    m = (t >= max(2, int(start_fraction * T))) & (cumulative > 0)
    if m.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(t[m]), np.log(cumulative[m]), 1)[0])


def runtime_vs_n(ns: list[int] | tuple[int, ...], *, k: int = 5, rounds: int = 30, seed: int = 0,
                 agents: tuple[str, ...] = TIMED_AGENTS, full_max_n: int = 20,
                 progress: Progress | None = None) -> list[dict[str, object]]:
    """Milliseconds per round (median of ``rounds`` rounds of selection + update, every round searching: the
    random-assortment rule is switched off for timing) and candidate sets scored per round, on synthetic
    catalogues of each size N."""
    rows = []
    for i, n in enumerate(ns):
        cat = _synthetic_for(n, seed)
        kk = min(k, n)
        div = M.make_diversity("coverage", categories=cat.categories, features=cat.features, k=kk)
        X = cat.contexts(rounds, 0.3, seed)
        U = X @ cat.theta
        uni = np.random.default_rng([seed, 5]).random(rounds)
        env = Env(cat, 1.0, div, kk, rounds, DMNLConfig(), None, None)
        for a in agents:
            factory = AGENTS.get(a)
            if factory.enumerates and n > full_max_n:
                continue
            agent = factory(env, np.random.default_rng(seed))
            agent.force_search = True  # type: ignore[attr-defined]
            secs = []
            for t in range(rounds):
                t0 = time.perf_counter()
                S = agent.select(t + 1, X[t])
                agent.update(X[t], S, M.draw_choice(U[t, S], 1.0, div.value(S), uni[t]))
                secs.append(time.perf_counter() - t0)
            rows.append({"agent": a, "n_items": n, "ms_per_round": 1e3 * float(np.median(secs)),
                         "evaluations_per_round": agent.evaluations / rounds, "assortments": M.n_subsets(n, kk)})
        report(progress, (i + 1) / len(ns), f"N = {n}")
    return rows


def _synthetic_for(n: int, seed: int) -> Catalogue:
    return synthetic(n_items=n, n_categories=max(2, min(10, n // 4)), seed=seed)
