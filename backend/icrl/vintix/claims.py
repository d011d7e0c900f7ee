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
PARTS = ("entropy", "peak_mass", "regret", "invariance")


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
        reg = E.online_regret(flow, E.heldout_karm(n_tasks, seed + 3), horizon=horizon, seed=seed + 4)
        out["regret"] = {
            "final": {a: v["final"] for a, v in reg["agents"].items()},
            "sem": {a: v["final_sem"] for a, v in reg["agents"].items()},
            "seconds_per_round": {a: v["seconds_per_round"] for a, v in reg["agents"].items()},
            "ratio_dpt_thompson": reg["ratio_dpt_thompson"],
            "ratio_dpt_ucb": reg["agents"]["dpt"]["final"] / max(1e-12, reg["agents"]["ucb"]["final"]),
        }
        out["seconds"]["regret"] = time.perf_counter() - t0
    if "invariance" in parts:
        out["invariance"] = E.permutation_gap(flow, length=context, seed=seed + 5)
        out["invariance_float32"] = E.permutation_gap(flow, length=context, seed=seed + 5, double=False)
    return out
