"""One interactive run of the shipped decision-pretrained transformers on one task (the ``vintix`` page and
``python -m backend vintix run``), summarised as small JSON-able dictionaries.

Tasks: a named task of ``inputs.PRESETS`` (``bimodal``: a held-out two-peak continuous task, ``unimodal``: a one-peak
task of the training prior, ``karm``: a held-out K-armed task, ``darkroom``: held-out goals), or a user task
(:class:`tasks.KArmTask`, :class:`tasks.ContTask`, :class:`tasks.CurveTask`) from arm means, peaks or a task file
(``taskfile.py``).

Continuous tasks: a context of ``context`` uniformly random actions and their noisy rewards; every head samples
``n_samples`` actions given the whole context (histogram densities on one grid, mass within +-0.1 of a peak, sampling
time), and the flow head's sample entropy at growing context lengths; with ``online``, the online regret over
``horizon`` rounds of the DPT acting by posterior sampling from each head against GP-UCB, discretised Thompson
sampling and uniform actions (``online.CONT_AGENTS``; mean over ``replicas`` reward draws). K-armed tasks: the
policy's entropy and probability of the best arm at every context length (mean over ``replicas`` random contexts),
and the online regret of the DPT, UCB1, Thompson sampling and Algorithm Distillation over ``horizon`` rounds (mean over
``replicas`` reward draws). Dark room: returns per episode over ``horizon // 12`` episodes of the DPT, Algorithm
Distillation, posterior sampling over the goal and a random walk (``online.DARK_AGENTS``). Past the model's context
(64 tuples) the DPT keeps its last 64 (FIFO): ``beyond_context`` says when a run goes there.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from backend.errors import InputError
from backend.runtime import Progress, report

from . import evaluate as E
from . import tasks as T
from .heads import HEADS
from .inputs import make_task, preset_key

GRID = np.linspace(-1, 1, 81)  # histogram edges (bin 0.025) of the densities
MAX_SAMPLES = 4096
MAX_REPLICAS = 256


def paired_vs_ours(agents: dict, registry, key: str) -> dict:
    """Per agent: the ours agent's ``key`` (per-run final regret or total return) minus the agent's, paired over runs:
    ``[mean, low, high]`` of the 95 % t interval (``backend.stats.paired_ci``)."""
    from backend.stats import paired_ci

    ours = next(a for a in agents if registry.kind(a) == "ours")
    out = {}
    for name, v in agents.items():
        if name != ours:
            ci = paired_ci(agents[ours][key], v[key])
            out[name] = [ci.mean, ci.low, ci.high]
    return {"ours": ours, "diff": out}


def check_samples(n_samples: int) -> int:
    if not 1 <= int(n_samples) <= MAX_SAMPLES:
        raise InputError(f"Samples per head must be 1 to 4,096; got {n_samples}.")
    return int(n_samples)


def check_replicas(replicas: int) -> int:
    if not 1 <= int(replicas) <= MAX_REPLICAS:
        raise InputError(f"Replicas must be 1 to 256; got {replicas}.")
    return int(replicas)


def _density(samples: np.ndarray) -> list[float]:
    counts, _ = np.histogram(np.clip(samples, -1, 1), bins=GRID)
    return (counts / max(1, len(samples)) / np.diff(GRID)).tolist()


def run_cont(task, context: int, n_samples: int, seed: int, progress: Progress | None = None, horizon: int = 64,
             replicas: int = 32, online: bool = True) -> dict:
    models = {h: E.load_model(h) for h in HEADS}
    E.check_context(context, models["flow"])
    rng = np.random.default_rng(seed)
    ctx = torch.from_numpy(T.cont_context(task, context, rng, kind="random"))[None]
    centers = np.atleast_1d(task.centers)
    curve_x = np.linspace(-1, 1, 201)
    out: dict = {
        "family": "cont",
        "context": context,
        "n_samples": n_samples,
        "centers": centers.tolist(),
        "best": task.best,
        "reward_curve": {"a": curve_x.tolist(), "r": task.mean_reward(curve_x).tolist()},
        "context_points": ctx[0].tolist(),
        "grid": GRID.tolist(),
        "heads": {},
    }
    for i, (name, model) in enumerate(models.items()):
        g = torch.Generator().manual_seed(seed + 7)
        t0 = time.perf_counter()
        a = model.sample_actions(ctx, n_samples, generator=g)[0].numpy()
        dt = time.perf_counter() - t0
        near = E.near_peak(a, centers)
        out["heads"][name] = {
            "label": HEADS.label(name),
            "density": _density(a),
            "mass": float(near.any(1).mean()),
            "mass_per_peak": near.mean(0).tolist(),
            "entropy": E.hist_entropy(a),
            "mean_reward": float(task.mean_reward(np.clip(a, -1, 1)).mean()),
            "sample_ms": 1000 * dt,
            "parameters": sum(p.numel() for p in model.parameters()),
        }
        report(progress, (i + 1) / (len(models) + 1), f"{HEADS.label(name)} sampled")
    lengths = sorted({0, 1, 2, 4, 8, 16, 32, context} & set(range(context + 1)))
    g = torch.Generator().manual_seed(seed + 8)
    a = models["flow"].sample_actions(ctx, n_samples, generator=g, all_prefixes=True, lengths=lengths)[0].numpy()
    out["entropy_curve"] = {
        "lengths": lengths,
        "entropy": [E.hist_entropy(x) for x in a],
        "mass": [float(E.near_peak(x, centers).any(1).mean()) for x in a],
        "densities": {str(lv): _density(x) for lv, x in zip(lengths, a, strict=True)},
    }
    if online:
        from .online import CONT_AGENTS, cont_online_regret

        out["regret"] = cont_online_regret([task] * replicas, horizon=horizon, seed=seed, models=models,
                                           progress=progress)
        out["regret"]["paired"] = paired_vs_ours(out["regret"]["agents"], CONT_AGENTS, "final_per_task")
        out["agents"] = {n: CONT_AGENTS.label(n) for n in CONT_AGENTS}
    report(progress, 1.0, "done")
    return out


def run_karm(
    task: T.KArmTask, context: int, horizon: int, replicas: int, seed: int, progress: Progress | None = None
) -> dict:
    model = E.load_model("flow")
    E.check_context(context, model)
    E.check_horizon(horizon)
    ent = E.entropy_curve(model, length=context, seed=seed, tasks=[task] * replicas)
    rng = np.random.default_rng(seed)
    ctx, qry, msk = E.karm_contexts([task], context, rng)
    policy = model.action_probs("karm", ctx, qry, msk)[0, : task.k].tolist()
    reg = E.online_regret(model, [task] * replicas, horizon=horizon, seed=seed, progress=progress)
    reg["paired"] = paired_vs_ours(reg["agents"], E.AGENTS, "final_per_task")
    return {
        "family": "karm",
        "means": task.means.tolist(),
        "best": task.best,
        "context": context,
        "entropy_curve": ent,
        "policy": policy,
        "regret": reg,
        "agents": {n: E.AGENTS.label(n) for n in E.AGENTS},
    }


def run(
    task="bimodal",
    context: int = 64,
    horizon: int = 64,
    n_samples: int = 512,
    replicas: int = 32,
    seed: int = 0,
    progress: Progress | None = None,
    online: bool = True,
) -> dict:
    """Run one task (a name of :data:`backend.icrl.vintix.inputs.PRESETS` or a task object); see the module
    docstring."""
    check_samples(n_samples)
    check_replicas(replicas)
    name = preset_key(task) if isinstance(task, str) else "custom"
    obj = make_task(task, seed) if isinstance(task, str) else task
    t0 = time.perf_counter()
    if isinstance(obj, T.DarkRoomTask):
        from .online import DARK_AGENTS, dark_online_agents

        E.check_context(context, E.load_model("flow"))
        out = {
            "family": "dark",
            **dark_online_agents(goals=list(obj.goals), episodes=max(1, horizon // T.DARK_HORIZON),
                                 replicas=max(1, replicas // 8), seed=seed),
            "labels": {n: DARK_AGENTS.label(n) for n in DARK_AGENTS},
        }
        out["paired"] = paired_vs_ours(out["agents"], DARK_AGENTS, "total_per_run")
        steps = max(1, horizon // T.DARK_HORIZON) * T.DARK_HORIZON
    elif isinstance(obj, T.KArmTask):
        out = run_karm(obj, context, horizon, replicas, seed, progress)
        steps = horizon
    else:
        out = run_cont(obj, context, n_samples, seed, progress, horizon=horizon, replicas=replicas, online=online)
        steps = horizon if online else 0
    cap = E.load_model("flow").cfg.max_context
    return {"task": name, "seed": seed, **out, "training_context": cap, "beyond_context": steps > cap,
            "seconds": time.perf_counter() - t0}
