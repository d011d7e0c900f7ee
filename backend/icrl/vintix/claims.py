"""The measurements behind the ``vintix`` claims (``claims/vintix.toml``), on held-out tasks of ``tasks.py``:

* entropy: the flow model's mean policy entropy on held-out K-armed tasks at every context length 0..L (random
  contexts), its value at a few lengths, and the flow head's sample entropy on held-out bimodal tasks;
* peak mass: on held-out bimodal tasks (two equal peaks, narrower than any training peak), the mean fraction of
  sampled actions within +-0.1 of a peak, per head (flow, Gaussian, mixture), and the mass at the less-visited peak;
* regret: the DPT's online cumulative regret on held-out K-armed tasks against Thompson sampling and UCB1
  (same tasks, same reward noise), and the ratio DPT / Thompson;
* invariance: the largest output change when the context is shuffled (every family).

``measure`` returns one JSON-able dictionary; the tests, the benchmark and ``vintix eval`` call it.
"""

from __future__ import annotations

import time

from . import evaluate as E
from .heads import HEADS

CHECK_LENGTHS = (0, 4, 16, 64)
PARTS = ("entropy", "peak_mass", "regret", "cont_online", "dark", "invariance")
BOUND = 1.5  # "at most 1.5x the strongest baseline's regret"


def _paired_vs_best(agents: dict, ours: str, key: str = "final_per_task") -> dict:
    """``gain`` = BOUND x the strongest baseline's per-task regret - ours (paired), with its interval."""
    from backend.stats import paired_ci

    from .evaluate import AGENTS
    from .online import CONT_AGENTS

    reg = AGENTS if ours in AGENTS else CONT_AGENTS
    base = [a for a in agents if reg.kind(a) == "baseline"]
    best = min(base, key=lambda a: agents[a]["final"])
    ci = paired_ci([BOUND * x for x in agents[best][key]], agents[ours][key])
    return {"strongest": best, **ci.numbers("gain")}


def measure(
    n_tasks: int = 64,
    context: int = 64,
    horizon: int = 64,
    seed: int = 0,
    n_samples: int = 256,
    parts: tuple[str, ...] = PARTS,
) -> dict:
    flow = E.load_model("flow")
    out: dict = {"n_tasks": n_tasks, "context": context, "horizon": horizon, "seed": seed, "seconds": {}}
    if "entropy" in parts:
        t0 = time.perf_counter()
        ec = E.entropy_curve(flow, n_tasks=n_tasks, length=context, seed=seed)
        cc = E.cont_entropy_curve(flow, n_tasks=min(n_tasks, 32), length=context, seed=seed + 1)
        at = {str(lv): ec["entropy"][lv] for lv in CHECK_LENGTHS if lv <= context}
        out["entropy"] = {
            "first": ec["entropy"][0],
            "last": ec["entropy"][-1],
            "at": at,
            "monotone_at": all(a > b for a, b in zip(list(at.values()), list(at.values())[1:])),
            "p_best_last": ec["p_best"][-1],
            "uniform": ec["uniform_entropy"],
            "curve": ec["entropy"],
            "cont_lengths": cc["lengths"],
            "cont_entropy": cc["entropy"],
        }
        out["seconds"]["entropy"] = time.perf_counter() - t0
    if "peak_mass" in parts:
        t0 = time.perf_counter()
        pm = E.peak_mass(
            {h: E.load_model(h) for h in HEADS}, n_tasks=n_tasks, length=context, n_samples=n_samples, seed=seed + 2
        )
        out["peak_mass"] = {h: v["mass"] for h, v in pm["heads"].items()}
        out["minor_peak_mass"] = {h: v["minor_peak_mass"] for h, v in pm["heads"].items()}
        out["sample_seconds_per_task"] = {h: v["sample_seconds_per_task"] for h, v in pm["heads"].items()}
        out["seconds"]["peak_mass"] = time.perf_counter() - t0
    if "regret" in parts:
        t0 = time.perf_counter()
        from backend.stats import paired_ci

        reg = E.online_regret(flow, E.heldout_karm(n_tasks, seed + 3), horizon=horizon, seed=seed + 4)
        ag = reg["agents"]
        out["regret"] = {
            "final": {a: v["final"] for a, v in ag.items()},
            "sem": {a: v["final_sem"] for a, v in ag.items()},
            "at_horizons": {a: v["at_horizons"] for a, v in ag.items()},
            "seconds_per_round": {a: v["seconds_per_round"] for a, v in ag.items()},
            "ratio_dpt_thompson": reg["ratio_dpt_thompson"],
            "ratio_dpt_ucb": ag["dpt"]["final"] / max(1e-12, ag["ucb"]["final"]),
            "ratio_dpt_ad": ag["dpt"]["final"] / max(1e-12, ag["ad"]["final"]),
            **_paired_vs_best(ag, "dpt"),
            **paired_ci(ag["ad"]["final_per_task"], ag["dpt"]["final_per_task"]).numbers("gain_vs_ad"),
            "per_task": {a: v["final_per_task"] for a, v in ag.items()},
        }
        out["seconds"]["regret"] = time.perf_counter() - t0
    if "cont_online" in parts:
        import numpy as np

        from . import tasks as T
        from .online import cont_online_regret

        t0 = time.perf_counter()
        rng = np.random.default_rng(seed + 6)
        ctasks = [T.draw_cont(rng, heldout=True) for _ in range(n_tasks)]
        co = cont_online_regret(ctasks, horizon=horizon, seed=seed + 7)
        ag = co["agents"]
        out["cont_online"] = {
            "final": {a: v["final"] for a, v in ag.items()},
            "sem": {a: v["final_sem"] for a, v in ag.items()},
            "late_regret_per_round": {a: v["late_regret_per_round"] for a, v in ag.items()},
            "seconds_per_round": {a: v["seconds_per_round"] for a, v in ag.items()},
            **_paired_vs_best(ag, "dpt_flow"),
            "per_task": {a: v["final_per_task"] for a, v in ag.items()},
        }
        out["seconds"]["cont_online"] = time.perf_counter() - t0
    if "dark" in parts:
        from backend.stats import paired_ci

        from .online import dark_online_agents

        t0 = time.perf_counter()
        dk = dark_online_agents(episodes=5, replicas=max(1, n_tasks // 8), seed=seed + 8)
        ag = dk["agents"]
        out["dark"] = {
            "total": {a: v["total"] for a, v in ag.items()},
            "returns": {a: v["returns"] for a, v in ag.items()},
            "optimal_per_episode": dk["optimal"],
            **paired_ci(ag["dpt"]["total_per_run"], ag["ad"]["total_per_run"]).numbers("gain_vs_ad"),
            **paired_ci(ag["dpt"]["total_per_run"], ag["psrl"]["total_per_run"]).numbers("gain_vs_psrl"),
            "per_run": {a: v["total_per_run"] for a, v in ag.items()},
        }
        out["seconds"]["dark"] = time.perf_counter() - t0
    if "invariance" in parts:
        out["invariance"] = E.permutation_gap(flow, length=context, seed=seed + 5)
        out["invariance_float32"] = E.permutation_gap(flow, length=context, seed=seed + 5, double=False)
    return out
