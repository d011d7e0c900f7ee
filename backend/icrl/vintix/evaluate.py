"""Evaluation of the shipped decision-pretrained transformers (``dpt.py``) on held-out tasks (``tasks.py``).

* :func:`entropy_curve`: the entropy (nats) of the discrete policy on held-out K-armed tasks at every context length
  ``0..L`` (one forward pass reads all prefixes), with contexts of uniformly random pulls; and
  :func:`cont_entropy_curve`: the differential entropy of the continuous head's samples (a histogram of bin 0.02).
* :func:`peak_mass`: on held-out bimodal tasks (two equal peaks), the fraction of sampled actions within +-0.1 of a
  peak for every head of :data:`heads.HEADS`, and the fraction at the less-visited peak (both modes hit or not).
* :func:`online_regret`: the DPT acting online on held-out K-armed tasks (posterior sampling: an action sampled from
  the policy given the FIFO context of its own last ``max_context`` pulls) against UCB1 and Thompson sampling, both on
  the same tasks and reward draws; :data:`AGENTS` is the registry of the three (each entry picks the arms).
* :func:`dark_online`: the DPT in the dark room on held-out goals, episodes in a row with its own history as context.

Shapes: curves are lists of length ``L + 1`` (entropy) or ``horizon`` (cumulative regret, mean over tasks).

| name | label | kind | citation |
|------|-------|------|----------|
| dpt | DPT, flow model (ours) | ours | Lee et al. 2023; Vintix II |
| ucb | UCB1 | baseline | Auer et al. 2002, bonus sigma sqrt(2 ln t / n) |
| thompson | Thompson sampling | baseline | Gaussian prior N(0.5, 0.2^2) (the held-out prior), known noise sigma; the posterior sampler the DPT approximates |
| ad | Algorithm Distillation | baseline | Laskin et al. 2022: causal transformer distilled from Thompson-sampling histories on the training prior (``ad.py``) |
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from backend.errors import InputError
from backend.registry import Registry
from backend.runtime import ASSETS

from . import tasks as T
from .dpt import DPT, DPTConfig
from .heads import HEADS

WEIGHTS = {h: ASSETS / f"vintix_{h}.safetensors" for h in HEADS}
MADE_BY = "python -m backend.train vintix"
MAX_HORIZON = 256
HORIZON_MARKS = (16, 32, 64, 128, 256)  # rounds at which the online results report the cumulative regret
TS_PRIOR = (0.5, 0.2)  # the held-out prior's mean and sd (its means are clip(N(0.5, 0.2^2), 0, 1))


def regret_summary(regret: np.ndarray, seconds: float) -> dict:
    """An agent's per-round regret ``[tasks, horizon]`` summarised: the mean cumulative curve, the final mean with its
    standard error, the final regret per task (for paired statistics) and the seconds per round."""
    cum = regret.cumsum(1)
    b, horizon = regret.shape
    return {"cum_regret": cum.mean(0).tolist(), "final": float(cum[:, -1].mean()),
            "final_sem": float(cum[:, -1].std(ddof=1) / np.sqrt(b)) if b > 1 else 0.0,
            "final_per_task": cum[:, -1].tolist(), "seconds_per_round": seconds / horizon}


@lru_cache(maxsize=4)
def load_model(head: str = "flow") -> DPT:
    from backend import weights

    path = WEIGHTS[HEADS.get(head) and head.lower()]
    meta = weights.read_meta(weights.check(path, made_by=MADE_BY))
    model = DPT(DPTConfig(**meta.config))
    weights.load_into(model, path, made_by=MADE_BY)
    return model.eval()


def check_context(length: int, model: DPT | None = None) -> int:
    cap = model.cfg.max_context if model is not None else DPTConfig().max_context
    if not 0 <= int(length) <= cap:
        raise InputError(f"Context length {length} is out of range: give 0 to {cap} tuples (the model's context).")
    return int(length)


def check_horizon(horizon: int) -> int:
    if not 1 <= int(horizon) <= MAX_HORIZON:
        raise InputError(f"Horizon {horizon} is out of range: give 1 to {MAX_HORIZON} rounds.")
    return int(horizon)


def _entropy(p: torch.Tensor) -> torch.Tensor:
    return -(p * p.clamp_min(1e-12).log()).sum(-1)


# ------------------------------------------------------------------------------------------------ entropy curves
def karm_contexts(tasks: list[T.KArmTask], length: int, rng: np.random.Generator):
    ctx, qry, msk = [], [], []
    for t in tasks:
        arms = rng.integers(0, t.k, length)
        ctx.append(T.karm_tokens(arms, t.means[arms] + T.SIGMA_KARM * rng.standard_normal(length)))
        qry.append(T.karm_query(t.k))
        msk.append(qry[-1] > 0)
    return torch.from_numpy(np.stack(ctx)), torch.from_numpy(np.stack(qry)), torch.from_numpy(np.stack(msk))


def entropy_curve(
    model: DPT, n_tasks: int = 64, length: int = 64, seed: int = 0, tasks: list[T.KArmTask] | None = None
) -> dict:
    """Mean policy entropy and mean probability of the best arm at context lengths 0..length (held-out tasks)."""
    check_context(length, model)
    rng = np.random.default_rng(seed)
    tasks = tasks or [T.draw_karm(rng, heldout=True) for _ in range(n_tasks)]
    ctx, qry, msk = karm_contexts(tasks, length, rng)
    p = model.action_probs("karm", ctx, qry, msk, all_prefixes=True)  # (B, L+1, K_MAX)
    best = torch.tensor([t.best for t in tasks])
    p_best = p.gather(2, best[:, None, None].expand(-1, p.shape[1], 1))[..., 0]
    ent = _entropy(p)
    return {
        "lengths": list(range(length + 1)),
        "entropy": ent.mean(0).tolist(),
        "p_best": p_best.mean(0).tolist(),
        "uniform_entropy": float(np.mean([np.log(t.k) for t in tasks])),
        "n_tasks": len(tasks),
    }


def hist_entropy(samples: np.ndarray, lo: float = -1.5, hi: float = 1.5, bin_width: float = 0.02) -> float:
    """Differential entropy (nats) of a histogram density of ``samples``."""
    counts, _ = np.histogram(samples, bins=int(round((hi - lo) / bin_width)), range=(lo, hi))
    p = counts[counts > 0] / max(1, counts.sum())
    return float(-(p * np.log(p / bin_width)).sum())


def cont_entropy_curve(
    model: DPT,
    n_tasks: int = 16,
    length: int = 64,
    n_samples: int = 256,
    lengths: list[int] | None = None,
    seed: int = 0,
    task: T.ContTask | None = None,
) -> dict:
    """Mean differential entropy of the continuous head's samples at several context lengths (uniform contexts)."""
    check_context(length, model)
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(seed)
    tlist = [task] * n_tasks if task is not None else [T.draw_cont(rng, heldout=True) for _ in range(n_tasks)]
    ctx = torch.from_numpy(np.stack([T.cont_context(t, length, rng, kind="random") for t in tlist]))
    lengths = lengths or sorted({0, 1, 2, 4, 8, 16, 32, length} & set(range(length + 1)))
    a = model.sample_actions(ctx, n_samples, generator=g, all_prefixes=True, lengths=lengths).numpy()  # (B, n_l, n)
    ent = [float(np.mean([hist_entropy(a[b, i]) for b in range(len(tlist))])) for i in range(len(lengths))]
    return {"lengths": lengths, "entropy": ent}


# ---------------------------------------------------------------------------------------------------- peak mass
def near_peak(samples: np.ndarray, centers: np.ndarray, radius: float = T.PEAK_RADIUS) -> np.ndarray:
    """(n, P) booleans: sample within ``radius`` of each peak centre."""
    return np.abs(np.asarray(samples)[:, None] - np.asarray(centers)[None, :]) <= radius


def peak_mass(
    models: dict[str, DPT],
    n_tasks: int = 64,
    length: int = 64,
    n_samples: int = 256,
    seed: int = 0,
    tasks: list[T.ContTask] | None = None,
) -> dict:
    """Per head: mean mass within +-0.1 of a peak, mean mass at the less-visited peak, and the samples of task 0."""
    check_context(length, next(iter(models.values())))
    rng = np.random.default_rng(seed)
    tasks = tasks or [T.draw_cont(rng, heldout=True) for _ in range(n_tasks)]
    ctx = torch.from_numpy(np.stack([T.cont_context(t, length, rng, kind="random") for t in tasks]))
    out: dict = {
        "n_tasks": len(tasks),
        "context": length,
        "n_samples": n_samples,
        "heads": {},
        "task0": {
            "centers": tasks[0].centers.tolist(),
            "widths": tasks[0].widths.tolist(),
            "heights": tasks[0].heights.tolist(),
            "context": ctx[0].tolist(),
        },
    }
    for name, model in models.items():
        g = torch.Generator().manual_seed(seed + 1)
        t0 = time.perf_counter()
        a = model.sample_actions(ctx, n_samples, generator=g).numpy()  # (B, n)
        dt = time.perf_counter() - t0
        near = [near_peak(a[b], tasks[b].centers) for b in range(len(tasks))]
        mass = [float(nb.any(1).mean()) for nb in near]
        minor = [float(nb.mean(0).min()) for nb in near]
        out["heads"][name] = {
            "mass": float(np.mean(mass)),
            "minor_peak_mass": float(np.mean(minor)),
            "sample_seconds_per_task": dt / len(tasks),
            "samples0": a[0].tolist(),
        }
    return out


# --------------------------------------------------------------------------------------------------- online agents
def _ucb(state, k_mask, t, rng):  # noqa: ARG001
    n, s = state["n"], state["s"]
    mean = np.where(n > 0, s / np.maximum(n, 1), np.inf)
    bonus = T.SIGMA_KARM * np.sqrt(2 * np.log(max(t, 1) + 1) / np.maximum(n, 1))
    score = np.where(n > 0, mean + bonus, np.inf)
    score[~k_mask] = -np.inf
    return np.argmax(score + 1e-9 * rng.random(score.shape), -1)


def _thompson(state, k_mask, t, rng):  # noqa: ARG001
    mu0, s0 = TS_PRIOR
    prec = 1 / s0**2 + state["n"] / T.SIGMA_KARM**2
    mean = (mu0 / s0**2 + state["s"] / T.SIGMA_KARM**2) / prec
    draw = mean + rng.standard_normal(mean.shape) / np.sqrt(prec)
    draw[~k_mask] = -np.inf
    return np.argmax(draw, -1)


def _act_dpt(model: DPT, state: dict, t: int, rng: np.random.Generator, g: torch.Generator) -> np.ndarray:  # noqa: ARG001
    """Posterior sampling: an arm sampled from the policy given the FIFO context of the last ``max_context`` pulls."""
    lo = max(0, t - model.cfg.max_context)
    p = model.action_probs("karm", torch.from_numpy(state["hist"][:, lo:t]), state["qry"], state["tmask"])
    return torch.multinomial(p, 1, generator=g)[:, 0].numpy()


def _act_ucb(model: DPT, state: dict, t: int, rng: np.random.Generator, g: torch.Generator) -> np.ndarray:  # noqa: ARG001
    return _ucb(state, state["k_mask"], t, rng)


def _act_ad(model: DPT, state: dict, t: int, rng: np.random.Generator, g: torch.Generator) -> np.ndarray:  # noqa: ARG001
    """Algorithm Distillation: an arm sampled from the AD model given its own last ``window`` steps."""
    from .ad import history_tokens, load_ad

    ad = load_ad()
    lo = max(0, t + 1 - ad.cfg.window)
    obs = np.repeat(state["k_mask"].astype(np.float32)[:, None, :], t + 1 - lo, 1)
    tok = history_tokens("karm", state["arms"], state["rewards"], obs, start=lo)
    p = ad.action_probs("karm", torch.from_numpy(tok), state["tmask"])
    return torch.multinomial(p, 1, generator=g)[:, 0].numpy()


def _act_thompson(model: DPT, state: dict, t: int, rng: np.random.Generator,
                  g: torch.Generator) -> np.ndarray:  # noqa: ARG001
    return _thompson(state, state["k_mask"], t, rng)


@dataclass(frozen=True)
class OnlineAgent:
    """One entry of :data:`AGENTS`: ``act(model, state, t, rng, g) -> arms (B,)`` picks this round's arm of every task
    (``state``: pull counts ``n`` and reward sums ``s`` (B, K_MAX), the token history ``hist`` (B, horizon, 11), the
    arm mask ``k_mask``, the DPT's query ``qry`` and mask ``tmask``; ``rng`` / ``g`` the agent's own numpy and torch
    streams). ``posterior_sampling`` marks the exact posterior sampler the DPT approximates: the online result's
    ``ratio_<ours>_<it>`` divides the ours agent's regret by its regret."""

    act: Callable[[DPT, dict, int, np.random.Generator, torch.Generator], np.ndarray]
    posterior_sampling: bool = False

    def __call__(self, model: DPT, state: dict, t: int, rng: np.random.Generator, g: torch.Generator) -> np.ndarray:
        return self.act(model, state, t, rng, g)


AGENTS: Registry[OnlineAgent] = Registry("bandit agent")
AGENTS.add("dpt", OnlineAgent(_act_dpt), label="DPT, flow model (ours)", kind="ours",
           about="posterior sampling from the policy")
AGENTS.add("ucb", OnlineAgent(_act_ucb), label="UCB1", kind="baseline", about="mean + sigma sqrt(2 ln t / n)")
AGENTS.add("thompson", OnlineAgent(_act_thompson, posterior_sampling=True), label="Thompson sampling",
           kind="baseline", about="Gaussian prior N(0.5, 0.2^2), the held-out prior")
AGENTS.add("ad", OnlineAgent(_act_ad), label="Algorithm Distillation", kind="baseline",
           about="causal transformer distilled from Thompson-sampling histories on the training prior")


def heldout_karm(n_tasks: int, seed: int) -> list[T.KArmTask]:
    rng = np.random.default_rng(seed)
    return [T.draw_karm(rng, heldout=True) for _ in range(n_tasks)]


def online_regret(
    model: DPT,
    tasks: list[T.KArmTask],
    horizon: int = 64,
    seed: int = 0,
    agents: list[str] | None = None,
    progress=None,
) -> dict:
    """Mean cumulative regret per round of every agent on the same tasks; each agent gets the same reward noise
    table (noise[b, t, arm])."""
    from backend.runtime import report

    horizon = check_horizon(horizon)
    agents = agents or list(AGENTS)
    b = len(tasks)
    means = np.full((b, T.K_MAX), -np.inf)
    for i, t in enumerate(tasks):
        means[i, : t.k] = t.means
    k_mask = np.isfinite(means)
    best = means.max(1)
    noise = np.random.default_rng(seed).standard_normal((b, horizon, T.K_MAX)) * T.SIGMA_KARM
    qry = torch.from_numpy(np.stack([T.karm_query(t.k) for t in tasks]))
    tmask = torch.from_numpy(k_mask)
    out: dict = {"horizon": horizon, "n_tasks": b, "agents": {}}
    for ai, name in enumerate(agents):
        agent = AGENTS.get(name)
        rng = np.random.default_rng(seed + 1 + ai)
        g = torch.Generator().manual_seed(seed + 1 + ai)
        hist = np.zeros((b, horizon, T.K_MAX + 1), np.float32)
        state = {"n": np.zeros((b, T.K_MAX)), "s": np.zeros((b, T.K_MAX)), "hist": hist, "k_mask": k_mask,
                 "qry": qry, "tmask": tmask, "arms": np.zeros((b, horizon), int), "rewards": np.zeros((b, horizon))}
        regret = np.zeros((b, horizon))
        t0 = time.perf_counter()
        for t in range(horizon):
            arm = agent(model, state, t, rng, g)
            r = means[np.arange(b), arm] + noise[np.arange(b), t, arm]
            state["n"][np.arange(b), arm] += 1
            state["s"][np.arange(b), arm] += r
            hist[np.arange(b), t, :] = T.karm_tokens(arm, r)
            state["arms"][:, t], state["rewards"][:, t] = arm, r
            regret[:, t] = best - means[np.arange(b), arm]
            report(progress, (ai + (t + 1) / horizon) / len(agents), f"{AGENTS.label(name)}: round {t + 1}")
        cum = regret.cumsum(1)
        out["agents"][name] = {
            **regret_summary(regret, time.perf_counter() - t0),
            "at_horizons": {str(h): float(cum[:, h - 1].mean()) for h in HORIZON_MARKS if h <= horizon},
        }
    ref = [a for a in out["agents"] if AGENTS.get(a).posterior_sampling]
    for ours in (a for a in out["agents"] if AGENTS.kind(a) == "ours"):
        for other in ref:
            out[f"ratio_{ours}_{other}"] = out["agents"][ours]["final"] / max(1e-12, out["agents"][other]["final"])
    return out


# ------------------------------------------------------------------------------------------------------- dark room
def dark_online(model: DPT, goals: list[int] | None = None, episodes: int = 5, seed: int = 0) -> dict:
    """Return (goal reached = 1 per step on the goal) per episode of the DPT acting with its own FIFO history, on
    held-out goals; the optimal return per episode is given for scale."""
    goals = goals or list(T.DARK_HELDOUT)
    g = torch.Generator().manual_seed(seed)
    b = len(goals)
    s0 = (T.N_DARK * T.N_DARK) // 2
    hist: list[np.ndarray] = []
    returns = np.zeros((b, episodes))
    for ep in range(episodes):
        s = np.full(b, s0)
        for _ in range(T.DARK_HORIZON):
            ctx = (
                np.stack(hist[-model.cfg.max_context :], 1)
                if hist
                else np.zeros((b, 0, T.CONTEXT_FEATURES["dark"]), np.float32)
            )
            q = torch.from_numpy(np.stack([T.dark_query(int(x)) for x in s]))
            p = model.action_probs("dark", torch.from_numpy(ctx), q)
            a = torch.multinomial(p, 1, generator=g)[:, 0].numpy()
            s2 = np.array([T.dark_step(int(x), int(y)) for x, y in zip(s, a, strict=True)])
            r = (s2 == np.array(goals)).astype(float)
            tok = T.dark_tokens(s, a, r)
            hist.append(tok)
            returns[:, ep] += r
            s = s2
    optimal = []
    for goal in goals:
        steps, s = 0, s0
        while s != goal:
            s, steps = T.dark_step(s, T.dark_optimal(s, goal)), steps + 1
        optimal.append(T.DARK_HORIZON - steps + 1)
    return {"goals": goals, "returns": returns.mean(0).tolist(), "optimal": float(np.mean(optimal))}


# ------------------------------------------------------------------------------------------------------ invariance
@torch.no_grad()
def permutation_gap(model: DPT, length: int = 64, n_tasks: int = 8, seed: int = 0, double: bool = True) -> dict:
    """Largest absolute change of the outputs when the context is shuffled, per family: the query's hidden state, the
    discrete probabilities (``karm``, ``dark``) and the flow head's samples from one fixed noise draw (``cont``).
    ``double`` runs a float64 copy of the model (float32 leaves summation-order rounding of about 1e-7 per layer)."""
    import copy

    check_context(length, model)
    net = copy.deepcopy(model).double() if double else model
    dt = torch.float64 if double else torch.float32
    rng = np.random.default_rng(seed)
    perm = torch.from_numpy(rng.permutation(length))
    out = {}
    for fam in T.FAMILIES:
        b = T.make_batch(fam, n_tasks, length, rng, heldout=True)
        ctx, qry = b.context.to(dt), b.query.to(dt)
        h1 = net.hidden(fam, ctx, qry, all_prefixes=False)
        h2 = net.hidden(fam, ctx[:, perm], qry, all_prefixes=False)
        gap = float((h1 - h2).abs().max())
        if fam == "cont":
            x0 = torch.randn(n_tasks, 16, generator=torch.Generator().manual_seed(seed)).to(dt)
            s1, s2 = (_heun_from(net, h, x0) for h in (h1, h2))
            gap = max(gap, float((s1 - s2).abs().max()))
        else:
            p1, p2 = (net.logits(fam, h, b.mask).softmax(-1) for h in (h1, h2))
            gap = max(gap, float((p1 - p2).abs().max()))
        out[fam] = gap
    out["max"] = max(out.values())
    out["dtype"] = "float64" if double else "float32"
    return out


def _heun_from(net: DPT, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The flow head's Heun integration from the given starting noise (for exact comparisons)."""
    head = net.cont_head
    if not hasattr(head, "velocity"):
        return head.sample(h, x.shape[1], generator=torch.Generator().manual_seed(0))
    hh = h[:, None, :].expand(-1, x.shape[1], -1)
    dt = 1.0 / head.steps
    for i in range(head.steps):
        t = torch.full_like(x, i * dt)
        v1 = head.velocity(hh, x, t)
        v2 = head.velocity(hh, x + dt * v1, t + dt)
        x = x + 0.5 * dt * (v1 + v2)
    return x
