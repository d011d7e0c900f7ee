"""Online agents on the continuous-action bandits and in the dark room (``tasks.py``), against the DPT acting online.

* :func:`cont_online_regret`: every agent of :data:`CONT_AGENTS` acts for ``horizon`` rounds on the same continuous
  tasks with the same reward-noise table (noise[b, t], one draw per round, shared: paired). The DPT agents act by
  posterior sampling: each round one action sampled from the head given the FIFO context of the agent's own last
  ``max_context`` (action, reward) pairs, clipped to [-1, 1]. Regret of a round: ``max_a r(a) - r(a_t)`` (mean
  rewards).
* :func:`dark_online_agents`: every agent of :data:`DARK_AGENTS` for ``episodes`` episodes in a row on held-out goals
  (``replicas`` runs per goal, paired by goal and run); the return of an episode counts the steps on the goal.

Baselines, tuned on the held-out continuous prior (two equal peaks of height 0.8, widths 0.05-0.09; tuning tasks
drawn with seed ``TUNE_SEED``, never a claim's seed; :func:`tune_baselines` reruns the sweep):

* GP-UCB (Srinivas et al. 2010): a Gaussian process on a grid of 201 actions, RBF kernel of length scale 0.07 (the
  middle of the held-out widths), prior mean ``PRIOR_MEAN`` and signal sd ``PRIOR_SD`` (the mean and spread of the
  held-out tasks' mean reward at a uniform action), the known noise 0.1; action ``argmax mean + sqrt(beta) sd`` with
  ``sqrt(beta) = GP_BETA_SQRT``;
* discretised Thompson sampling: ``TS_GRID`` equally spaced actions as independent Gaussian arms with the prior
  N(PRIOR_MEAN, PRIOR_SD^2) and the known noise;
* uniform random actions (for scale).

The sweep (32 tuning tasks, horizon 64, final regret): GP-UCB sqrt(beta) 0.5 / 1 / 2 / 3 / 4: 3.08 / 2.91 / 3.29 /
9.23 / 12.95; discretised TS with 11 / 21 / 41 / 81 / 201 actions: 10.6 / 11.8 / 14.7 / 20.8 / 28.8.

Dark room: the DPT (its discrete head given its own FIFO history), Algorithm Distillation (``ad.py``, trained on the
same training goals), posterior sampling over the goal (``ad.PSRLDark``: the Bayes-style reference with the uniform
prior over the 25 cells) and a uniformly random walk.

| name | label | kind | what |
|------|-------|------|------|
| ``dpt_flow`` | DPT, flow head (ours) | ours | posterior sampling from the rectified-flow head |
| ``dpt_gaussian`` | DPT, Gaussian head | ablation | the same with the Gaussian head's model |
| ``dpt_mixture`` | DPT, mixture head | ablation | the same with the mixture head's model |
| ``gp_ucb`` | GP-UCB | baseline | RBF GP on 201 actions, mean + sqrt(beta) sd |
| ``ts_grid`` | Discretised Thompson sampling | baseline | independent Gaussian arms on a grid |
| ``uniform`` | Uniform actions | baseline | a uniform action each round |

| name | label | kind | what (dark room) |
|------|-------|------|------|
| ``dpt`` | DPT (ours) | ours | an action sampled from the discrete head given its own history |
| ``ad`` | Algorithm Distillation | baseline | causal transformer distilled from PSRL histories |
| ``psrl`` | Posterior sampling over the goal | reference | goal drawn from the cells not yet ruled out |
| ``random_walk`` | Random walk | baseline | uniform actions |

Shapes: regret curves are lists of length ``horizon`` (mean over tasks), ``final_per_task`` lists of length B.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from backend.registry import Registry

from . import tasks as T

GRID = np.linspace(-1.0, 1.0, 201)
GP_LENGTH = 0.07
GP_BETA_SQRT = 1.0
TS_GRID = 11
PRIOR_MEAN = 0.14
PRIOR_SD = 0.25
TUNE_SEED = 9_000


def best_value(task) -> float:
    """``max_a r(a)`` on a fine grid of [-1, 1]."""
    return float(task.mean_reward(np.linspace(-1, 1, 2001)).max())


# ------------------------------------------------------------------------------------------------ continuous agents
def _gp_posterior(a: np.ndarray, y: np.ndarray, grid: np.ndarray, length: float, mean0: float, sd0: float):
    """GP posterior mean and sd (B, G) on ``grid`` given actions ``a`` and rewards ``y`` (B, t), RBF kernel."""
    b, t = a.shape
    if t == 0:
        return np.full((b, grid.size), mean0), np.full((b, grid.size), sd0)
    k_aa = sd0**2 * np.exp(-((a[:, :, None] - a[:, None, :]) ** 2) / (2 * length**2)) + T.SIGMA_CONT**2 * np.eye(t)
    k_xa = sd0**2 * np.exp(-((grid[None, :, None] - a[:, None, :]) ** 2) / (2 * length**2))  # (B, G, t)
    chol = np.linalg.cholesky(k_aa)
    alpha = np.linalg.solve(k_aa, (y - mean0)[..., None])[..., 0]  # (B, t)
    mean = mean0 + np.einsum("bgt,bt->bg", k_xa, alpha)
    v = np.linalg.solve(chol, np.swapaxes(k_xa, 1, 2))  # (B, t, G)
    var = np.maximum(sd0**2 - (v**2).sum(1), 1e-12)
    return mean, np.sqrt(var)


def _act_gp_ucb(models, state, t, rng, g):  # noqa: ARG001
    mean, sd = _gp_posterior(state["a"][:, :t], state["r"][:, :t], GRID, GP_LENGTH, PRIOR_MEAN, PRIOR_SD)
    score = mean + state.get("beta_sqrt", GP_BETA_SQRT) * sd + 1e-9 * rng.random(mean.shape)
    return GRID[score.argmax(1)]


def _act_ts_grid(models, state, t, rng, g):  # noqa: ARG001
    arms = np.linspace(-1, 1, state.get("ts_grid", TS_GRID))
    if "ts_n" not in state or state["ts_n"].shape[1] != arms.size:
        state["ts_n"] = np.zeros((len(state["a"]), arms.size))
        state["ts_s"] = np.zeros((len(state["a"]), arms.size))
    if t > 0:  # the last round's pull: the action lies on the grid
        idx = np.abs(arms[None, :] - state["a"][:, t - 1, None]).argmin(1)
        state["ts_n"][np.arange(len(idx)), idx] += 1
        state["ts_s"][np.arange(len(idx)), idx] += state["r"][:, t - 1]
    prec = 1 / PRIOR_SD**2 + state["ts_n"] / T.SIGMA_CONT**2
    mean = (PRIOR_MEAN / PRIOR_SD**2 + state["ts_s"] / T.SIGMA_CONT**2) / prec
    draw = mean + rng.standard_normal(mean.shape) / np.sqrt(prec)
    return arms[draw.argmax(1)]


def _act_uniform(models, state, t, rng, g):  # noqa: ARG001
    return rng.uniform(-1, 1, len(state["a"]))


def _dpt_sample(head: str, models, state, t, g) -> np.ndarray:
    """Posterior sampling: one action from the head ``head`` given the FIFO context of the last ``max_context``
    (action, reward) pairs, clipped to [-1, 1]."""
    model = models[head]
    lo = max(0, t - model.cfg.max_context)
    ctx = torch.from_numpy(np.stack([state["a"][:, lo:t], state["r"][:, lo:t]], -1).astype(np.float32))
    return np.clip(model.sample_actions(ctx, 1, generator=g)[:, 0].numpy().astype(float), -1, 1)


def _act_dpt_flow(models, state, t, rng, g):  # noqa: ARG001
    return _dpt_sample("flow", models, state, t, g)


def _act_dpt_gaussian(models, state, t, rng, g):  # noqa: ARG001
    return _dpt_sample("gaussian", models, state, t, g)


def _act_dpt_mixture(models, state, t, rng, g):  # noqa: ARG001
    return _dpt_sample("mixture", models, state, t, g)


@dataclass(frozen=True)
class ContAgent:
    """One entry of :data:`CONT_AGENTS`: ``act(models, state, t, rng, g) -> actions (B,)`` in [-1, 1] (``models``:
    head name -> DPT; ``state``: actions ``a`` and rewards ``r`` (B, horizon) of the rounds so far; the agent's own
    numpy and torch streams). ``head``: the DPT model it needs, if any."""

    act: Callable
    head: str | None = None

    def __call__(self, models, state, t, rng, g) -> np.ndarray:
        return self.act(models, state, t, rng, g)


CONT_AGENTS: Registry[ContAgent] = Registry("continuous bandit agent")
CONT_AGENTS.add("dpt_flow", ContAgent(_act_dpt_flow, "flow"), label="DPT, flow head (ours)", kind="ours",
                about="posterior sampling from the rectified-flow head")
CONT_AGENTS.add("dpt_gaussian", ContAgent(_act_dpt_gaussian, "gaussian"), label="DPT, Gaussian head",
                kind="ablation", about="posterior sampling from the Gaussian head")
CONT_AGENTS.add("dpt_mixture", ContAgent(_act_dpt_mixture, "mixture"), label="DPT, mixture head", kind="ablation",
                about="posterior sampling from the mixture head")
CONT_AGENTS.add("gp_ucb", ContAgent(_act_gp_ucb), label="GP-UCB", kind="baseline",
                about="RBF GP on 201 actions, mean + sqrt(beta) sd")
CONT_AGENTS.add("ts_grid", ContAgent(_act_ts_grid), label="Discretised Thompson sampling", kind="baseline",
                about="independent Gaussian arms on a grid of actions")
CONT_AGENTS.add("uniform", ContAgent(_act_uniform), label="Uniform actions", kind="baseline",
                about="a uniform action each round")


def cont_online_regret(tasks: list, horizon: int = 64, seed: int = 0, agents: list[str] | None = None,
                       models: dict | None = None, progress=None, options: dict | None = None) -> dict:
    """Cumulative regret of every agent on the same continuous tasks and reward noise; per agent the mean curve, the
    final regret per task (paired across agents), its mean and standard error, the mean regret per round over the
    last quarter of the rounds, and the seconds per round."""
    from backend.runtime import report

    from .evaluate import check_horizon, load_model, regret_summary

    horizon = check_horizon(horizon)
    agents = agents or list(CONT_AGENTS)
    b = len(tasks)
    best = np.array([best_value(t) for t in tasks])
    noise = np.random.default_rng(seed).standard_normal((b, horizon)) * T.SIGMA_CONT
    out: dict = {"horizon": horizon, "n_tasks": b, "agents": {}}
    for ai, name in enumerate(agents):
        agent = CONT_AGENTS.get(name)
        need = {agent.head} if agent.head else set()
        mods = {h: (models or {}).get(h) or load_model(h) for h in need}
        rng = np.random.default_rng(seed + 1 + ai)
        g = torch.Generator().manual_seed(seed + 1 + ai)
        state: dict = {"a": np.zeros((b, horizon)), "r": np.zeros((b, horizon)), **(options or {})}
        regret = np.zeros((b, horizon))
        t0 = time.perf_counter()
        for t in range(horizon):
            a = np.clip(np.asarray(agent(mods, state, t, rng, g), dtype=float), -1, 1)
            mean_r = np.array([float(tk.mean_reward(x)) for tk, x in zip(tasks, a, strict=True)])
            state["a"][:, t], state["r"][:, t] = a, mean_r + noise[:, t]
            regret[:, t] = best - mean_r
            report(progress, (ai + (t + 1) / horizon) / len(agents), f"{CONT_AGENTS.label(name)}: round {t + 1}")
        out["agents"][name] = {**regret_summary(regret, time.perf_counter() - t0),
                               "late_regret_per_round": float(regret[:, -max(1, horizon // 4) :].mean())}
    return out


def tune_baselines(n_tasks: int = 32, horizon: int = 64) -> dict:
    """The sweep behind ``GP_BETA_SQRT`` and ``TS_GRID``: final regret on held-out-prior tasks of seed ``TUNE_SEED``."""
    rng = np.random.default_rng(TUNE_SEED)
    tasks = [T.draw_cont(rng, heldout=True) for _ in range(n_tasks)]
    gp, ts = CONT_AGENTS.key("gp_ucb"), CONT_AGENTS.key("ts_grid")
    out: dict = {"beta_sqrt": {}, "grid": {}}
    for beta in (0.5, 1.0, 2.0, 3.0, 4.0):
        out["beta_sqrt"][beta] = cont_online_regret(tasks, horizon, TUNE_SEED, [gp],
                                                    options={"beta_sqrt": beta})["agents"][gp]["final"]
    for grid in (11, 21, 41, 81, 201):
        out["grid"][grid] = cont_online_regret(tasks, horizon, TUNE_SEED, [ts],
                                               options={"ts_grid": grid})["agents"][ts]["final"]
    return out


def prior_moments(n_tasks: int = 2000) -> tuple[float, float]:
    """Mean and sd of the held-out continuous tasks' mean reward at a uniform action (``PRIOR_MEAN``, ``PRIOR_SD``)."""
    rng = np.random.default_rng(TUNE_SEED)
    vals = np.concatenate([T.draw_cont(rng, heldout=True).mean_reward(rng.uniform(-1, 1, 64)) for _ in range(n_tasks)])
    return float(vals.mean()), float(vals.std())


# --------------------------------------------------------------------------------------------------------- dark room
class _DarkDPT:
    def __init__(self, model, g: torch.Generator, b: int):
        self.model, self.g, self.hist = model, g, []
        self.s = None

    def new_episode(self) -> None:
        pass

    def act(self, s: np.ndarray) -> np.ndarray:
        b = len(s)
        ctx = (np.stack(self.hist[-self.model.cfg.max_context :], 1) if self.hist
               else np.zeros((b, 0, T.CONTEXT_FEATURES["dark"]), np.float32))
        q = torch.from_numpy(np.stack([T.dark_query(int(x)) for x in s]))
        p = self.model.action_probs("dark", torch.from_numpy(ctx), q)
        self.s, self.a = s.copy(), torch.multinomial(p, 1, generator=self.g)[:, 0].numpy()
        return self.a

    def observe(self, s2: np.ndarray, r: np.ndarray) -> None:  # noqa: ARG002
        self.hist.append(T.dark_tokens(self.s, self.a, r))


class _DarkAD:
    def __init__(self, model, g: torch.Generator, b: int):
        self.model, self.g = model, g
        self.states, self.actions, self.rewards = [], [], []

    def new_episode(self) -> None:
        pass

    def act(self, s: np.ndarray) -> np.ndarray:
        from .ad import history_tokens

        self.states.append(np.asarray(s, int))
        n = len(self.states)
        lo = max(0, n - self.model.cfg.window)
        obs = np.eye(T.N_DARK * T.N_DARK, dtype=np.float32)[np.stack(self.states[lo:], 1)]
        acts = np.stack(self.actions, 1) if self.actions else np.zeros((len(s), 0), int)
        rews = np.stack(self.rewards, 1) if self.rewards else np.zeros((len(s), 0))
        tok = history_tokens("dark", acts, rews, obs, start=lo)
        p = self.model.action_probs("dark", torch.from_numpy(tok))
        a = torch.multinomial(p, 1, generator=self.g)[:, 0].numpy()
        self.actions.append(a)
        return a

    def observe(self, s2: np.ndarray, r: np.ndarray) -> None:  # noqa: ARG002
        self.rewards.append(np.asarray(r, float))


class _DarkRandom:
    def __init__(self, rng: np.random.Generator, b: int):
        self.rng = rng

    def new_episode(self) -> None:
        pass

    def act(self, s: np.ndarray) -> np.ndarray:
        return self.rng.integers(0, T.DARK_ACTIONS, len(s))

    def observe(self, s2, r) -> None:
        pass


def _dark_dpt(b, rng, g):  # noqa: ARG001
    from .evaluate import load_model

    return _DarkDPT(load_model("flow"), g, b)


def _dark_ad(b, rng, g):  # noqa: ARG001
    from .ad import load_ad

    return _DarkAD(load_ad(), g, b)


def _dark_psrl(b, rng, g):  # noqa: ARG001
    from .ad import PSRLDark

    return PSRLDark(b, rng)


def _dark_random(b, rng, g):  # noqa: ARG001
    return _DarkRandom(rng, b)


DARK_AGENTS: Registry[Callable] = Registry("dark-room agent")
DARK_AGENTS.add("dpt", _dark_dpt, label="DPT (ours)", kind="ours", about="discrete head given its own history")
DARK_AGENTS.add("ad", _dark_ad, label="Algorithm Distillation", kind="baseline",
                about="causal transformer distilled from posterior-sampling histories")
DARK_AGENTS.add("psrl", _dark_psrl, label="Posterior sampling over the goal", kind="reference",
                about="goal drawn from the cells not yet ruled out, optimal path to it")
DARK_AGENTS.add("random_walk", _dark_random, label="Random walk", kind="baseline", about="uniform actions")


def dark_online_agents(goals: list[int] | None = None, episodes: int = 5, replicas: int = 8, seed: int = 0,
                       agents: list[str] | None = None) -> dict:
    """Returns per episode (mean over runs) and the total return per run (paired: run i is the same goal for every
    agent) of every agent of :data:`DARK_AGENTS`, on held-out goals, episodes in a row."""
    from .ad import run_dark_agent

    goals = list(goals or T.DARK_HELDOUT)
    runs = np.repeat(np.asarray(goals, int), replicas)
    steps = episodes * T.DARK_HORIZON
    out: dict = {"goals": goals, "replicas": replicas, "episodes": episodes, "agents": {}}
    for ai, name in enumerate(agents or list(DARK_AGENTS)):
        rng = np.random.default_rng(seed + 1 + ai)
        g = torch.Generator().manual_seed(seed + 1 + ai)
        t0 = time.perf_counter()
        _, _, rewards = run_dark_agent(runs, steps, rng, DARK_AGENTS.get(name)(len(runs), rng, g))
        per_ep = rewards.reshape(len(runs), episodes, T.DARK_HORIZON).sum(2)
        out["agents"][name] = {
            "returns": per_ep.mean(0).tolist(),
            "total_per_run": per_ep.sum(1).tolist(),
            "total": float(per_ep.sum(1).mean()),
            "seconds": time.perf_counter() - t0,
        }
    optimal = []
    s0 = (T.N_DARK * T.N_DARK) // 2
    for goal in goals:
        n, s = 0, s0
        while s != goal:
            s, n = T.dark_step(s, T.dark_optimal(s, goal)), n + 1
        optimal.append(T.DARK_HORIZON - n + 1)
    out["optimal"] = float(np.mean(optimal))
    return out
