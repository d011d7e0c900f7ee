"""Exploration agents on finite MDPs: Thompson sampling over linear Q-features (SBM, random, true), RND, epsilon-greedy.

| name | what | citation |
|------|------|----------|
| ``ts_sbm`` | Thompson sampling with SBM-learned features (ours) | Nabati et al., arXiv 2507.13181 |
| ``ts_sbm_zero`` | the same with the features of never-visited pairs set to zero (no optimism from initial features) | ablation |
| ``ts_sbm_mixed`` | the same with nu centred on the normalised features' fit applied to the raw features | ablation |
| ``ts_sbm_model`` | the same with SBM features learned beforehand from the simulator's backups, reward included | ablation |
| ``ts_random`` | the same agent with Gaussian random features of the same dimension | baseline |
| ``ts_true`` | the same agent with the true zero-IBE features ``phi*`` | reference |
| ``rlsvi`` | the same agent with one-hot features: randomised least-squares value iteration | Osband et al. 2016 |
| ``ucbvi`` | value iteration on the empirical model, bonus ``beta k rmax / sqrt(n(s, a))``, Q_k clipped at ``k rmax`` | Azar et al. 2017 |
| ``rnd`` | greedy LSVI on one-hot features plus a random-network-distillation novelty bonus on Q | Burda et al. 2018 |
| ``egreedy`` | LSVI on one-hot features, epsilon-greedy actions (epsilon = 0.1) | baseline |

Online SBM keeps a feature table over state-action pairs. Two details are settings: ``unvisited`` ("random": a
never-visited pair keeps its random initial row, as an untrained network would give it some feature; "zero": its row
is zero, so it adds no direction of uncertainty) and ``centre`` ("consistent": nu = N(theta_hat, sigma_rep^2 I) with
theta_hat the fit expressed in the learner's raw feature scale; "mixed": the fit on the normalised features used as
the centre for the raw features).

Thompson sampling: ``Sigma = lambda I + sum_i phi_i phi_i^T`` over the transitions seen; once per episode and per
steps-to-go k, ``theta_TS,k ~ N(theta_hat_k, sigma_exp Sigma^{-1})`` with ``theta_hat_k`` the least-squares fit of
the backups ``r + gamma max_a' Q_TS,k-1(s', a')`` of the sampled Q one step shorter (randomised least-squares value
iteration with shared features): the optimism of unvisited pairs propagates back, and fresh noise per k keeps
self-loops from compounding one draw. At step t the agent acts greedily on ``Q_TS,H-t``. Transitions are kept as
counts ``N[s, a, s']`` (tabular environments), so each LSVI pass is a few matrix products.

Shapes: features ``Phi`` (S*A, d); counts (S, A, S); returns (episodes,); visitation (S,).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from ...errors import InputError
from ...registry import Registry, choose
from ...runtime import Progress, report
from .mdps import MDP, optimal_return


@dataclass
class AgentConfig:
    episodes: int = 300
    lam: float = 1.0  # ridge of Sigma
    sigma_exp: float = 0.1  # Thompson-sampling scale sigma_exp
    epsilon: float = 0.1  # epsilon-greedy
    ucb_beta: float = 0.01  # weight of the UCB-VI count bonus (the best of {0.01, 0.1, 1} on the shipped DeepSea log)
    rmax: float = 1.0  # the reward bound UCB-VI's optimism assumes (DeepSea's treasure)
    rnd_beta: float = 0.5  # weight of the RND bonus
    d: int | None = None  # feature dimension of ts_sbm / ts_random (default: the rank of the stacked backups)
    sbm_iters: int = 200  # ts_sbm_model: iterations on the simulator's backups
    sbm_every: int = 5  # ts_sbm: episodes between feature updates
    sbm_steps: int = 10  # ts_sbm: SBM iterations per update
    sigma_rep: float = 1.0
    unvisited: str = "random"  # ts_sbm: features of never-visited pairs, "random" (initial rows) or "zero"
    centre: str = "consistent"  # ts_sbm: nu's centre in the raw feature scale ("consistent") or not ("mixed")
    solve_fraction: float = 0.9  # solved: an episode return >= this x the optimal return
    stop_when_solved: bool = False
    seed: int = 0


@dataclass
class AgentRun:
    agent: str
    returns: list[float]
    episodes_to_solve: int | None  # first solving episode (1-based); None when not within the budget
    visits: np.ndarray  # (S,) state visits over all episodes
    seconds: float
    feature_seconds: float = 0.0
    d: int = 0
    extra: dict = field(default_factory=dict)

    def summary(self, curve: bool = True) -> dict:
        out = {
            "agent": self.agent,
            "episodes_to_solve": self.episodes_to_solve,
            "episodes": len(self.returns),
            "mean_return": float(np.mean(self.returns)) if self.returns else None,
            "seconds": self.seconds,
            "ms_per_episode": 1e3 * self.seconds / max(len(self.returns), 1),
            "feature_seconds": self.feature_seconds,
            "d": self.d,
            **self.extra,
        }
        if curve:
            out["returns"] = [round(float(r), 6) for r in self.returns]
        return out


def feature_scale(phi: np.ndarray) -> float:
    """The root mean squared feature norm over non-zero rows (1 when every row is zero)."""
    live = np.linalg.norm(phi, axis=1) > 0
    scale = float(np.sqrt(np.mean(np.sum(phi[live] ** 2, axis=1)))) if live.any() else 1.0
    return max(scale, 1e-12)


def normalise(phi: np.ndarray) -> np.ndarray:
    """Scale so that the mean squared feature norm over non-zero rows is 1."""
    return phi / feature_scale(phi)


def one_hot(mdp: MDP) -> np.ndarray:
    return np.eye(mdp.n_states * mdp.n_actions)


class LinearLSVI:
    """Sufficient statistics and the (randomised) LSVI solve for one feature matrix."""

    def __init__(self, mdp: MDP, phi: np.ndarray, lam: float):
        self.mdp, self.lam = mdp, lam
        self.S, self.A = mdp.n_states, mdp.n_actions
        self.phi = phi
        self.d = phi.shape[1]
        self.Sigma = lam * np.eye(self.d)
        self.N = np.zeros((self.S, self.A, self.S))
        self.Rsum = np.zeros((self.S, self.A))

    def add(self, s: int, a: int, r: float, s2: int) -> None:
        f = self.phi[s * self.A + a]
        self.Sigma += np.outer(f, f)
        self.N[s, a, s2] += 1
        self.Rsum[s, a] += r

    def set_features(self, phi: np.ndarray) -> None:
        """New features: Sigma is rebuilt from the counts."""
        self.phi = phi
        n = self.N.sum(axis=2).reshape(-1)
        self.Sigma = self.lam * np.eye(self.d) + phi.T @ (n[:, None] * phi)

    def empirical_model(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P_hat, R_hat, visited mask over S*A) from the counts; unvisited rows are zero."""
        n = self.N.sum(axis=2)
        P = self.N / np.maximum(n, 1)[:, :, None]
        return P, self.Rsum / np.maximum(n, 1), (n > 0).reshape(-1)

    def q(self, theta: np.ndarray) -> np.ndarray:
        return (self.phi @ theta).reshape(self.S, self.A)

    def solve_steps(
        self,
        rng: np.random.Generator | None,
        sigma_exp: float,
        q_bonus: np.ndarray | None = None,
        steps: int | None = None,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Randomised LSVI by steps to go: ``Q_k = phi^T theta_k (+ q_bonus)`` for k = 1..steps with
        ``theta_k = Sigma^{-1} sum phi (r + gamma max_a Q_{k-1}(s', a)) + xi_k``, ``xi_k ~ N(0, sigma_exp Sigma^{-1})``
        drawn afresh per k (``rng`` None: no noise, the plain LSVI fit). Returns ``[Q_1, ..., Q_steps]`` (each (S, A))
        and ``theta_steps``. ``q_bonus`` (S, A) is added to Q wherever Q is maximised (an optimism bonus)."""
        L = np.linalg.cholesky(self.Sigma)
        Sinv = cho_solve((L, True), np.eye(self.d))  # Sigma^{-1}, once per solve
        extra = 0.0 if q_bonus is None else q_bonus
        noisy = rng is not None and sigma_exp > 0
        V = np.zeros(self.S)
        theta = np.zeros(self.d)
        out = []
        for _ in range(steps or self.mdp.horizon):
            target = self.Rsum + self.mdp.gamma * np.einsum("sat,t->sa", self.N, V)
            theta = Sinv @ (self.phi.T @ target.reshape(-1))
            if noisy:  # L^{-T} z ~ N(0, Sigma^{-1})
                theta = theta + np.sqrt(sigma_exp) * solve_triangular(L.T, rng.standard_normal(self.d), lower=False)
            Q = self.q(theta) + extra
            out.append(Q)
            V = np.where(self.mdp.terminal, 0.0, Q.max(axis=1))
        return out, theta

    def solve(self, rng: np.random.Generator | None, sigma_exp: float, q_bonus: np.ndarray | None = None) -> np.ndarray:
        """theta of the full horizon (see :meth:`solve_steps`)."""
        return self.solve_steps(rng, sigma_exp, q_bonus)[1]


def ucbvi_steps(model: LinearLSVI, beta: float, rmax: float) -> list[np.ndarray]:
    """UCB-VI (Azar et al. 2017, Hoeffding form) on the empirical model of the counts: for k = 1..H,
    ``Q_k = min(k rmax, R_hat + P_hat V_{k-1} + beta k rmax / sqrt(n))`` and ``Q_k = k rmax`` on never-tried pairs
    (the largest value k steps can hold). Returns ``[Q_1, ..., Q_H]`` (each (S, A))."""
    P, R, _ = model.empirical_model()
    n = model.N.sum(axis=2)
    term = model.mdp.terminal
    V = np.zeros(model.S)
    out = []
    for k in range(1, model.mdp.horizon + 1):
        cap = k * rmax
        Q = R + model.mdp.gamma * np.einsum("sat,t->sa", P, V) + beta * cap / np.sqrt(np.maximum(n, 1))
        Q = np.where(n > 0, np.minimum(Q, cap), cap)
        Q[term] = 0.0
        out.append(Q)
        V = np.where(term, 0.0, Q.max(axis=1))
    return out


def _greedy(q_row: np.ndarray, rng: np.random.Generator) -> int:
    best = np.flatnonzero(q_row >= q_row.max() - 1e-12)
    return int(best[0] if len(best) == 1 else rng.choice(best))


class RND:
    """Random network distillation on state-action observations: a fixed random MLP target, a linear predictor
    trained by normalised SGD on the visited pairs; the bonus is its squared prediction error."""

    def __init__(self, obs: np.ndarray, seed: int, out: int = 16, lr: float = 0.5):
        rng = np.random.default_rng(seed + 7919)
        self.x = obs.reshape(obs.shape[0], -1)
        h = np.tanh(self.x @ rng.standard_normal((self.x.shape[1], 32)))
        self.target = h @ rng.standard_normal((32, out)) / np.sqrt(32)
        self.W = np.zeros((self.x.shape[1], out))
        self.lr = lr

    def bonus(self) -> np.ndarray:
        return np.sum((self.x @ self.W - self.target) ** 2, axis=1)

    def train(self, rows: list[int]) -> None:
        for s in rows:
            x = self.x[s]
            err = x @ self.W - self.target[s]
            self.W -= self.lr * np.outer(x, err) / max(float(x @ x), 1e-12)


def _run(
    mdp: MDP,
    name: str,
    phi: np.ndarray,
    cfg: AgentConfig,
    mode: str,
    progress: Progress | None,
    feature_seconds: float = 0.0,
    refresh: Callable[[LinearLSVI], None] | None = None,
) -> AgentRun:
    rng = np.random.default_rng(cfg.seed)
    model = LinearLSVI(mdp, normalise(phi), cfg.lam)
    opt = optimal_return(mdp)
    rnd = None
    if mode == "novelty":
        if mdp.obs is None:  # tabular: one-hot pairs (the predictor is then a table)
            pairs = np.eye(mdp.n_states * mdp.n_actions)
        else:  # pixels and a one-hot action: the predictor generalises across states
            pairs = np.concatenate(
                [
                    np.repeat(mdp.obs.reshape(mdp.n_states, -1), mdp.n_actions, axis=0),
                    np.tile(np.eye(mdp.n_actions), (mdp.n_states, 1)),
                ],
                axis=1,
            )
        rnd = RND(pairs, cfg.seed)
    visits = np.zeros(mdp.n_states)
    returns: list[float] = []
    solved = None
    t0, online = time.perf_counter(), 0.0
    for ep in range(cfg.episodes):
        if refresh is not None and ep > 0 and ep % cfg.sbm_every == 0:
            t1 = time.perf_counter()
            refresh(model)
            online += time.perf_counter() - t1
        if mode == "ts":
            Qs = model.solve_steps(rng, cfg.sigma_exp)[0]
        elif mode == "count":
            Qs = ucbvi_steps(model, cfg.ucb_beta, cfg.rmax)
        elif mode == "novelty":
            b = rnd.bonus()
            bonus = (cfg.rnd_beta * b / max(float(b.max()), 1e-12)).reshape(mdp.n_states, mdp.n_actions)
            Qs = model.solve_steps(None, 0.0, q_bonus=bonus)[0]
        else:
            Qs = model.solve_steps(None, 0.0)[0]
        s, total, seen = mdp.start, 0.0, []
        for t in range(mdp.horizon):
            Q = Qs[mdp.horizon - 1 - t]  # the Q function with horizon - t steps to go
            visits[s] += 1
            a = (
                int(rng.integers(mdp.n_actions))
                if mode == "epsilon" and rng.random() < cfg.epsilon
                else _greedy(Q[s], rng)
            )
            s2 = int(rng.choice(mdp.n_states, p=mdp.P[s, a]))
            r = float(mdp.R[s, a])
            model.add(s, a, r, s2)
            total += r
            seen.append(s * mdp.n_actions + a)
            s = s2
            if mdp.terminal[s]:
                break
        if rnd is not None:
            rnd.train(seen)
        returns.append(total)
        if solved is None and total >= cfg.solve_fraction * opt:
            solved = ep + 1
            if cfg.stop_when_solved:
                break
        if ep % 20 == 0:
            report(progress, ep / cfg.episodes, f"{name}: episode {ep}/{cfg.episodes}")
    return AgentRun(
        name,
        returns,
        solved,
        visits,
        time.perf_counter() - t0 - online,
        feature_seconds + online,
        model.d,
        {"optimal_return": opt},
    )


def _default_d(mdp: MDP, cfg: AgentConfig) -> int:
    if cfg.d:
        return int(cfg.d)
    from .spectral_bellman import backup_rank

    return backup_rank(mdp)


def run_ts_sbm_model(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    """SBM features learned before exploration from the simulator's backups, reward included (an upper bound: the
    reward, e.g. DeepSea's treasure, enters the features before the agent has seen it)."""
    from .spectral_bellman import SBMConfig, learn_features

    feats = "network" if mdp.obs is not None else "table"
    res = learn_features(
        mdp,
        SBMConfig(
            d=_default_d(mdp, cfg),
            iters=cfg.sbm_iters,
            features=feats,
            seed=cfg.seed,
            record_every=max(cfg.sbm_iters, 1),
        ),
    )
    run = _run(mdp, "ts_sbm_model", res.phi, cfg, "ts", progress, res.seconds)
    run.extra["feature_max_angle"] = res.max_angle[-1]
    return run


def run_ts_sbm(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None, name: str = "ts_sbm") -> AgentRun:
    """Online SBM: every ``sbm_every`` episodes, ``sbm_steps`` iterations on the replay buffer's empirical model
    (visited pairs only), nu = N(theta_hat, sigma_rep^2 I) around the agent's current fit. ``cfg.unvisited``: the
    never-visited pairs keep their initial random rows ("random") or have zero rows ("zero"); ``cfg.centre``: the
    agent's fit on the normalised features is rescaled to the learner's raw features ("consistent") or used as it is
    ("mixed")."""
    from .spectral_bellman import SBMConfig, SBMLearner

    unvisited = choose(cfg.unvisited, ("random", "zero"), "unvisited-feature rule")
    centre = choose(cfg.centre, ("consistent", "mixed"), "centring of nu")
    d = _default_d(mdp, cfg)
    learner = SBMLearner(
        mdp.n_states, mdp.n_actions, SBMConfig(d=d, seed=cfg.seed, sigma_rep=cfg.sigma_rep), None, mdp.terminal
    )

    def shown(phi: np.ndarray, visited: np.ndarray) -> np.ndarray:
        return phi if unvisited == "random" else phi * visited[:, None]

    phi0 = shown(learner.phi(), np.zeros(mdp.n_states * mdp.n_actions, bool))
    state = {"scale": feature_scale(phi0)}  # the agent's features are the learner's divided by this scale

    def refresh(model: LinearLSVI) -> None:
        P, R, mask = model.empirical_model()
        theta_hat = model.solve(None, 0.0)
        if centre == "consistent":  # phi_agent theta = phi_raw (theta / scale)
            theta_hat = theta_hat / state["scale"]
        learner.step(mdp.gamma, P, R, mask, iters=cfg.sbm_steps, theta_hat=theta_hat)
        phi = shown(learner.phi(), mask)
        if np.isfinite(phi).all():
            state["scale"] = feature_scale(phi)
            model.set_features(phi / state["scale"])

    return _run(mdp, name, phi0, cfg, "ts", progress, refresh=refresh)


def run_ts_sbm_zero(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    return run_ts_sbm(mdp, replace(cfg, unvisited="zero"), progress, name="ts_sbm_zero")


def run_ts_sbm_mixed(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    return run_ts_sbm(mdp, replace(cfg, centre="mixed"), progress, name="ts_sbm_mixed")


def run_ts_random(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    rng = np.random.default_rng(cfg.seed + 104729)
    phi = rng.standard_normal((mdp.n_states * mdp.n_actions, _default_d(mdp, cfg)))
    phi[np.repeat(mdp.terminal, mdp.n_actions)] = 0.0
    return _run(mdp, "ts_random", phi, cfg, "ts", progress)


def run_ts_true(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    phi = mdp.phi_true if mdp.phi_true is not None else one_hot(mdp)
    return _run(mdp, "ts_true", phi, cfg, "ts", progress)


def run_rlsvi(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    return _run(mdp, "rlsvi", one_hot(mdp), cfg, "ts", progress)


def run_ucbvi(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    return _run(mdp, "ucbvi", one_hot(mdp), cfg, "count", progress)


def run_rnd(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    return _run(mdp, "rnd", one_hot(mdp), cfg, "novelty", progress)


def run_egreedy(mdp: MDP, cfg: AgentConfig, progress: Progress | None = None) -> AgentRun:
    return _run(mdp, "egreedy", one_hot(mdp), cfg, "epsilon", progress)


AGENTS: Registry[Callable[..., AgentRun]] = Registry("exploration agent")
AGENTS.add("ts_sbm", run_ts_sbm, label="TS + SBM features (ours)", kind="ours")
AGENTS.add("ts_sbm_zero", run_ts_sbm_zero, label="TS + SBM, unvisited pairs zeroed", kind="ablation")
AGENTS.add("ts_sbm_mixed", run_ts_sbm_mixed, label="TS + SBM, nu centred on the normalised fit", kind="ablation")
AGENTS.add(
    "ts_sbm_model", run_ts_sbm_model, label="TS + SBM features from the simulator (reward known)", kind="ablation"
)
AGENTS.add("ts_random", run_ts_random, label="TS + random features", kind="baseline")
AGENTS.add("ts_true", run_ts_true, label="TS + true features", kind="reference")
AGENTS.add("rlsvi", run_rlsvi, label="RLSVI (one-hot features)", kind="baseline")
AGENTS.add("ucbvi", run_ucbvi, label="UCB-VI (count bonus)", kind="baseline")
AGENTS.add("rnd", run_rnd, label="RND bonus", kind="baseline")
AGENTS.add("egreedy", run_egreedy, label="epsilon-greedy", kind="baseline")


def run_agents(
    mdp: MDP, names: list[str] | tuple[str, ...], cfg: AgentConfig, progress: Progress | None = None
) -> dict[str, AgentRun]:
    if not 1 <= cfg.episodes <= 5000:
        raise InputError(f"Episodes {cfg.episodes} out of range; choose 1..5,000.")
    out = {}
    for i, n in enumerate(names):
        fn = AGENTS.get(n)
        out[n] = fn(mdp, cfg, None)
        report(progress, (i + 1) / len(names), f"{AGENTS.label(n)} done")
    return out


def solve_sweep(
    sizes: list[int] | tuple[int, ...],
    seeds: int,
    names: list[str] | tuple[str, ...],
    episodes: int,
    env: str = "deepsea",
    progress: Progress | None = None,
    **kw: object,
) -> dict:
    """Episodes to solve DeepSea(N) / chain(N) per agent, size and seed (censored at ``episodes``): medians, IQR."""
    from .mdps import make_env

    rows: dict[str, dict[int, list[int | None]]] = {n: {} for n in names}
    times: dict[str, list[float]] = {n: [] for n in names}
    total, k = len(sizes) * seeds * len(names), 0
    for N in sizes:
        for seed in range(seeds):
            mdp = make_env(env, size=int(N), seed=seed)
            for n in names:
                cfg = AgentConfig(episodes=episodes, seed=seed, stop_when_solved=True, **kw)
                run = AGENTS.get(n)(mdp, cfg, None)
                rows[n].setdefault(int(N), []).append(run.episodes_to_solve)
                times[n].append(run.seconds / max(len(run.returns), 1))
                k += 1
                report(progress, k / total, f"{env}({N}) seed {seed}: {n}")
    summary: dict[str, dict] = {}
    for n in names:
        per = {}
        for N, vals in rows[n].items():
            x = np.array([episodes + 1 if v is None else v for v in vals], dtype=float)
            per[str(N)] = {
                "median": float(np.median(x)),
                "q25": float(np.percentile(x, 25)),
                "q75": float(np.percentile(x, 75)),
                "solved": int(sum(v is not None for v in vals)),
                "runs": len(vals),
                "values": vals,
            }
        summary[n] = {"sizes": per, "ms_per_episode": 1e3 * float(np.mean(times[n]))}
    return {
        "env": env,
        "sizes": [int(s) for s in sizes],
        "seeds": seeds,
        "budget": episodes,
        "censored_value": episodes + 1,
        "agents": summary,
    }
