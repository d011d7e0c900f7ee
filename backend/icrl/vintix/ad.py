"""Algorithm Distillation (Laskin et al., "In-context Reinforcement Learning with Algorithm Distillation", arXiv
2210.14215): the in-context baseline DPT is compared with, trained on the same task priors as the DPT
(``tasks.py``: K-armed bandits with means U[0, 1], the 20 training goals of the dark room).

AD learns a learning algorithm from its learning histories: a causal transformer reads a window of a source
algorithm's history and predicts the source's next action at every position (cross-entropy). Acting online, it samples
the next action from that prediction given its own last ``window`` steps (a sliding window past it).

Source algorithms (the histories AD distils, ``SOURCE_STEPS`` steps each, windows of ``window`` steps drawn at random
offsets so that the model sees early exploration and late exploitation):

* ``karm``: Thompson sampling with the Gaussian prior N(0.5, 0.3^2) (the mean and about the spread of the training
  prior U[0, 1]) and the known noise ``SIGMA_KARM``;
* ``dark``: posterior sampling over the goal cell (:func:`psrl_dark_actions`): a goal drawn uniformly from the cells
  not yet ruled out (entered without reward), resampled when ruled out; the optimal action towards it; episodes of
  ``DARK_HORIZON`` steps from the centre.

Tokens (position ``i`` of a history): ``[one_hot(a_{i-1}), r_{i-1}, first, obs_i]`` with ``first = 1`` at the history's
first step (no previous action) and ``obs_i`` the arm mask (``karm``, 10) or ``one_hot(s_i)`` (``dark``, 25): features
22 (``karm``) and 32 (``dark``). Learned positional embeddings over the window (AD keeps positions; the DPT has none).

Left out: AD's continuous-action variant (the source would be a continuous bandit algorithm and the head a density);
the page's continuous bandit compares the DPT with GP-UCB and discretised Thompson sampling instead.

Shapes: ``tokens`` (B, T, F) with T <= window -> ``logits`` (B, T, A); ``action_probs`` (B, A) at the last position.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import tasks as T
from .dpt import Block, DPTConfig

AD_FAMILIES = ("karm", "dark")
OBS_FEATURES = {"karm": T.K_MAX, "dark": T.N_DARK * T.N_DARK}
AD_FEATURES = {f: T.N_ACTIONS[f] + 2 + OBS_FEATURES[f] for f in AD_FAMILIES}
SOURCE_STEPS = 256
SOURCE_TS_PRIOR = (0.5, 0.3)


@dataclass
class ADConfig:
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4
    mlp_ratio: int = 4
    window: int = 64

    def to_dict(self) -> dict:
        return asdict(self)


class AD(nn.Module):
    """A causal transformer over history tokens with one action head per family."""

    def __init__(self, cfg: ADConfig | None = None):
        super().__init__()
        self.cfg = cfg = cfg or ADConfig()
        d = cfg.d_model
        self.enc = nn.ModuleDict(
            {f: nn.Sequential(nn.Linear(n, d), nn.GELU(), nn.Linear(d, d)) for f, n in AD_FEATURES.items()}
        )
        self.pos = nn.Parameter(torch.randn(cfg.window, d) * 0.02)
        bcfg = DPTConfig(d_model=d, n_layer=cfg.n_layer, n_head=cfg.n_head, mlp_ratio=cfg.mlp_ratio)
        self.blocks = nn.ModuleList(Block(bcfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.ModuleDict({f: nn.Linear(d, T.N_ACTIONS[f]) for f in AD_FAMILIES})

    def logits(self, family: str, tokens: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """(B, T, A) next-action logits at every position (causal); ``mask`` (B, A) sets invalid actions to -inf."""
        n = tokens.shape[1]
        x = self.enc[family](tokens) + self.pos[:n]
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        for blk in self.blocks:
            x = blk(x, causal)
        z = self.head[family](self.ln_f(x))
        if mask is not None:
            z = z.masked_fill(~mask[:, None, :], float("-inf"))
        return z

    def loss(self, family: str, tokens: torch.Tensor, actions: torch.Tensor, mask: torch.Tensor | None = None):
        z = self.logits(family, tokens, mask)
        return F.cross_entropy(z.reshape(-1, z.shape[-1]), actions.reshape(-1))

    @torch.no_grad()
    def action_probs(self, family: str, tokens: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """(B, A): the policy at the last position of ``tokens`` (its last ``window`` steps)."""
        return self.logits(family, tokens[:, -self.cfg.window :], mask)[:, -1].softmax(-1)


@lru_cache(maxsize=1)
def load_ad():
    """The shipped Algorithm Distillation model (``python -m backend.train vintix --heads ad``)."""
    from backend import weights
    from backend.runtime import ASSETS

    path = ASSETS / "vintix_ad.safetensors"
    made_by = "python -m backend.train vintix --heads ad"
    meta = weights.read_meta(weights.check(path, made_by=made_by))
    model = AD(ADConfig(**meta.config))
    weights.load_into(model, path, made_by=made_by)
    return model.eval()


# ----------------------------------------------------------------------------------------------------------- tokens
def history_tokens(family: str, actions: np.ndarray, rewards: np.ndarray, obs: np.ndarray, start: int = 0) -> np.ndarray:
    """(B, T, F) tokens of steps ``start..start+T-1`` of histories: ``actions``, ``rewards`` (B, >= start + T - 1)
    hold the steps before (position ``i`` reads step ``start + i - 1``), ``obs`` (B, T, O) the observation of each
    step (the arm mask or ``one_hot(s)``)."""
    b, n, _ = obs.shape
    a_n = T.N_ACTIONS[family]
    out = np.zeros((b, n, AD_FEATURES[family]), np.float32)
    for i in range(n):
        step = start + i
        if step == 0:
            out[:, i, a_n + 1] = 1.0
        else:
            out[np.arange(b), i, actions[:, step - 1]] = 1.0
            out[:, i, a_n] = rewards[:, step - 1]
    out[:, :, a_n + 2 :] = obs
    return out


# ------------------------------------------------------------------------------------------------- source algorithms
def thompson_karm(tasks: list[T.KArmTask], steps: int, rng: np.random.Generator,
                  prior: tuple[float, float] = SOURCE_TS_PRIOR) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thompson sampling's learning histories: arms (B, steps), rewards (B, steps), arm masks (B, K_MAX)."""
    b = len(tasks)
    means = np.full((b, T.K_MAX), -np.inf)
    for i, t in enumerate(tasks):
        means[i, : t.k] = t.means
    valid = np.isfinite(means)
    n, s = np.zeros((b, T.K_MAX)), np.zeros((b, T.K_MAX))
    arms, rews = np.zeros((b, steps), int), np.zeros((b, steps))
    mu0, s0 = prior
    for t in range(steps):
        prec = 1 / s0**2 + n / T.SIGMA_KARM**2
        draw = (mu0 / s0**2 + s / T.SIGMA_KARM**2) / prec + rng.standard_normal((b, T.K_MAX)) / np.sqrt(prec)
        draw[~valid] = -np.inf
        a = draw.argmax(1)
        r = means[np.arange(b), a] + T.SIGMA_KARM * rng.standard_normal(b)
        n[np.arange(b), a] += 1
        s[np.arange(b), a] += r
        arms[:, t], rews[:, t] = a, r
    return arms, rews, valid.astype(np.float32)


def psrl_dark_actions(goals: np.ndarray, steps: int, rng: np.random.Generator):
    """Posterior sampling over the goal in the dark room: states, actions, rewards (B, steps) of episodes of
    ``DARK_HORIZON`` steps from the centre, the goal unknown (uniform prior over the 25 cells)."""
    return run_dark_agent(goals, steps, rng, PSRLDark(len(goals), rng))


class PSRLDark:
    """The posterior over the goal: the cells not yet entered without reward (the goal once rewarded); a sampled goal
    is kept until ruled out (then resampled) or the episode ends."""

    def __init__(self, b: int, rng: np.random.Generator):
        self.rng = rng
        self.alive = np.ones((b, T.N_DARK * T.N_DARK), bool)
        self.known = np.full(b, -1)
        self.target = np.full(b, -1)

    def new_episode(self) -> None:
        self.target[:] = -1

    def act(self, s: np.ndarray) -> np.ndarray:
        out = np.zeros(len(s), int)
        for i in range(len(s)):
            if self.known[i] >= 0:
                self.target[i] = self.known[i]
            elif self.target[i] < 0 or not self.alive[i, self.target[i]]:
                self.target[i] = int(self.rng.choice(np.flatnonzero(self.alive[i])))
            out[i] = T.dark_optimal(int(s[i]), int(self.target[i]))
        return out

    def observe(self, s2: np.ndarray, r: np.ndarray) -> None:
        for i in range(len(s2)):
            if r[i] > 0:
                self.known[i] = int(s2[i])
            elif self.alive[i].sum() > 1:
                self.alive[i, int(s2[i])] = False


def run_dark_agent(goals: np.ndarray, steps: int, rng: np.random.Generator, agent) -> tuple:  # noqa: ARG001
    """Roll ``agent`` (``new_episode()``, ``act(s) -> a``, ``observe(s2, r)``) for ``steps`` steps in episodes of
    ``DARK_HORIZON`` from the centre: states, actions, rewards (B, steps)."""
    b = len(goals)
    s0 = (T.N_DARK * T.N_DARK) // 2
    states, actions, rewards = np.zeros((b, steps), int), np.zeros((b, steps), int), np.zeros((b, steps))
    s = np.full(b, s0)
    for t in range(steps):
        if t % T.DARK_HORIZON == 0:
            s = np.full(b, s0)
            agent.new_episode()
        a = agent.act(s)
        s2 = np.array([T.dark_step(int(x), int(y)) for x, y in zip(s, a, strict=True)])
        r = (s2 == goals).astype(float)
        agent.observe(s2, r)
        states[:, t], actions[:, t], rewards[:, t] = s, a, r
        s = s2
    return states, actions, rewards


def dark_pool(n: int, rng: np.random.Generator, steps: int = SOURCE_STEPS) -> tuple[np.ndarray, ...]:
    """``n`` source histories of the dark room on training goals (states, actions, rewards (n, steps)): the PSRL
    rollouts are python loops, so training draws its windows from a pool made once."""
    goals = np.array([int(rng.choice(T.dark_goals(False))) for _ in range(n)])
    return psrl_dark_actions(goals, steps, rng)


def source_batch(family: str, batch: int, rng: np.random.Generator, window: int = 64, steps: int = SOURCE_STEPS,
                 pool: tuple[np.ndarray, ...] | None = None):
    """A training batch of AD: ``batch`` source histories of training-prior tasks (fresh Thompson-sampling runs for
    ``karm``; rows of ``pool`` or fresh PSRL runs for ``dark``), one window of ``window`` steps each at a random offset
    (the first window with probability 1/4): tokens (B, W, F), target actions (B, W), mask (B, A) or None."""
    if family == "karm":
        tasks = [T.draw_karm(rng) for _ in range(batch)]
        arms, rews, valid = thompson_karm(tasks, steps, rng)
        obs_all = np.repeat(valid[:, None, :], steps, 1)
        mask = torch.from_numpy(valid > 0)
    else:
        if pool is None:
            pool = dark_pool(batch, rng, steps)
        rows = rng.integers(0, len(pool[0]), batch)
        states, arms, rews = (x[rows] for x in pool)
        obs_all = np.eye(T.N_DARK * T.N_DARK, dtype=np.float32)[states]
        mask = None
    start = 0 if rng.random() < 0.25 else int(rng.integers(0, arms.shape[1] - window + 1))
    tok = history_tokens(family, arms, rews, obs_all[:, start : start + window], start=start)
    return torch.from_numpy(tok), torch.from_numpy(arms[:, start : start + window]).long(), mask
