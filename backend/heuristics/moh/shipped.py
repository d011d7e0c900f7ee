"""The shipped MoH programs: ``assets/moh_programs.json``, made by ``python -m backend.train moh``.

The file holds, per training seed and variant (MoH, single-size utility, no meta level), the evolved heuristic
(s-expression and readable form), the winning optimiser program, its training gaps and meta-level progress, and the
evaluation at sizes 200-1000 (instances of seeds 10,000 and above, never trained on) with the LKH-3 reference lengths
and the references' gaps, for TSP construction and online bin packing. Loading checks the sha256 recorded in
``assets/manifest.json``.
"""

from __future__ import annotations

import json
from functools import lru_cache

from ...runtime import ASSETS

PATH = ASSETS / "moh_programs.json"
COMMAND = "python -m backend.train moh"
FALLBACK_PROGRAM = "d_cur"


@lru_cache(maxsize=2)
def _load(mtime: float) -> dict:  # noqa: ARG001 - the cache key
    from ...weights import check

    return json.loads(check(PATH, COMMAND).read_text())


def load() -> dict:
    """The shipped record (WeightsError naming the command if it is missing or changed)."""
    from ...weights import check

    return _load(check(PATH, COMMAND, verify=False).stat().st_mtime)


def available() -> bool:
    return PATH.is_file()


def default_program(problem: str = "tsp_construct") -> str:
    """The MoH heuristic of training seed 0 (the nearest-neighbour rule ``d_cur`` if nothing is shipped)."""
    if not available():
        return FALLBACK_PROGRAM if problem == "tsp_construct" else "(sub rest item)"
    rec = load()["problems"].get(problem)
    return rec["runs"][0]["variants"]["moh"]["heuristic"] if rec else FALLBACK_PROGRAM


def summary(problem: str = "tsp_construct", rec: dict | None = None) -> dict:
    """What the page shows of the shipped record: per variant the mean and per-seed gaps at the evaluation sizes,
    the references' gaps, the paired comparison at the largest size, the programs and the progress curves (best
    training utility as a gap, against task evaluations spent)."""
    import numpy as np

    rec = (rec or load())["problems"][problem]
    ev, cfg = rec["evaluation"], rec["config"]
    seeds = [r["seed"] for r in rec["runs"]]
    variants = list(rec["runs"][0]["variants"])
    per_seed = {v: [ev["gaps"][f"{v}_s{s}"] for s in seeds] for v in variants}
    mean = {v: [float(x) for x in np.mean(per_seed[v], axis=0)] for v in variants}
    refs = {k: g for k, g in ev["gaps"].items() if not any(k.startswith(f"{v}_s") for v in variants)}
    last = len(ev["sizes"]) - 1
    paired = [{"seed": s, **{v: per_seed[v][i][last] for v in variants}} for i, s in enumerate(seeds)]
    n_tasks = len(cfg["sizes"])
    curves = {}
    for v in variants:
        xs, ys = [], []
        for r in rec["runs"][:1]:
            for h in r["variants"][v]["history"]:
                if "iteration" in h:
                    xs.append((h["iteration"] + 1) * cfg["meta_population"] * cfg["budget"] * n_tasks)
                    ys.append(-h["best_utility"])
                else:
                    xs.append(h["evaluation"] * n_tasks)
                    ys.append(h["best_weighted_gap"])
        curves[v] = (xs, ys)
    programs = {v: {"seed": r["seed"], "program": r["variants"][v]["heuristic"],
                    "readable": r["variants"][v]["readable"], "optimiser": r["variants"][v]["optimiser"],
                    "train_gaps": r["variants"][v]["train_gaps"], "task_evals": r["variants"][v]["task_evals"]}
                for r in rec["runs"][:1] for v in variants}
    return {"problem": problem, "sizes": ev["sizes"], "reference": ev["reference"], "seeds": seeds,
            "variants": variants, "mean": mean, "per_seed": per_seed, "references": refs, "paired": paired,
            "curves": curves, "programs": programs, "config": cfg, "count": ev["count"],
            "ref_values": ev["ref_values"], "train_seconds": [r["seconds"] for r in rec["runs"]]}
