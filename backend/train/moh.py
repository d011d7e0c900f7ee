"""``python -m backend.train moh``: evolve the shipped MoH programs into ``assets/moh_programs.json``.

For TSP construction and online bin packing, and for each training seed: MoH (size-weighted meta-optimisation) and its
two ablations (single-size utility, no meta level), with equal budgets on the training sizes 20/50/100
(:func:`backend.heuristics.moh.moh.evolve`); then every evolved heuristic and the references on the evaluation sizes
200/500/1000 (instances of seeds 10,000 and above, never trained on), gaps to LKH-3 (TSP) or the L1 bound (bins).
OR-Tools routing is run up to 500 cities (at 1,000 it reaches its time limit, so its result would depend on the
machine's speed). On one shared core this takes about 16 minutes with the defaults.

``--executor ray`` runs the training seeds as Ray tasks (``backend.executor.map_cases``, ``$METHOD_LAB_RAY_ADDRESS``;
unset: a Ray instance on this machine); each run is seeded by its training seed alone, so the programs are the same
as the local run's.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from backend.heuristics.moh.moh import EVAL_SEED, EVAL_SIZES, MoHConfig, evaluate, evolve
from backend.runtime import write_json_atomic

TSP_REFS = ("nearest_neighbour", "greedy_edge", "farthest_insertion", "two_opt")


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m backend.train moh", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8, help="training seeds 0..seeds-1 of TSP (default 8)")
    ap.add_argument("--bpp-seeds", type=int, default=3, help="training seeds of bin packing (default 3)")
    ap.add_argument("--eval-instances", type=int, default=4, help="instances per evaluation size (default 4)")
    ap.add_argument("--generations", type=int, default=MoHConfig.generations)
    ap.add_argument("--budget", type=int, default=MoHConfig.budget)
    ap.add_argument("--out", default="assets/moh_programs.json")
    ap.add_argument("--executor", choices=["local", "ray"], default="local",
                    help="ray: one task per training seed (the evaluation stays in this process)")
    return ap.parse_args(argv)


def _evolve_seed(base: MoHConfig, seed: int) -> dict:
    """One training seed: MoH and its two ablations evolved from ``seed``."""
    t0 = time.perf_counter()
    res = evolve(replace(base, seed=seed))
    return {"seed": seed, "seconds": time.perf_counter() - t0, "results": res}


def train_runs(base: MoHConfig, seeds: int, executor: str = "local") -> tuple[list[dict], dict[str, str]]:
    """The runs of training seeds 0..seeds-1 (in seed order) and their evolved programs ``{variant_s<seed>: code}``."""
    from backend.executor import map_cases

    runs, programs = [], {}
    for out in map_cases(_evolve_seed, [base] * seeds, executor=executor, seeds=list(range(seeds))):
        s, res = out["seed"], out["results"]
        runs.append({"seed": s, "seconds": out["seconds"], "variants": {k: r.to_json() for k, r in res.items()}})
        programs.update({f"{k}_s{s}": r.heuristic for k, r in res.items()})
        print(f"{base.problem} seed {s}: {out['seconds']:.0f} s; "
              + "; ".join(f"{k} {r.readable}" for k, r in res.items()), flush=True)
    return runs, programs


def _problem(problem: str, seeds: int, args: argparse.Namespace, refs: tuple[str, ...]) -> dict:
    base = MoHConfig(problem=problem, generations=args.generations, budget=args.budget)
    runs, programs = train_runs(base, seeds, args.executor)
    t0 = time.perf_counter()
    ev = evaluate(problem, programs, EVAL_SIZES, args.eval_instances, EVAL_SEED, references=refs)
    if problem == "tsp_construct":
        small = tuple(n for n in EVAL_SIZES if n <= 500)
        extra = evaluate(problem, {}, small, args.eval_instances, EVAL_SEED, references=("ortools",),
                         ref_values=ev["ref_values"])
        ev["gaps"]["ortools"] = extra["gaps"]["ortools"] + [None] * (len(EVAL_SIZES) - len(small))
        ev["per_instance"]["ortools"] = extra["per_instance"]["ortools"]
    ev.update({"seed": EVAL_SEED, "count": args.eval_instances, "seconds": time.perf_counter() - t0})
    print(f"{problem} evaluation: {ev['seconds']:.0f} s", flush=True)
    return {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in base.__dict__.items()},
            "runs": runs, "evaluation": ev}


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    out = {"command": "python -m backend.train moh", "operator": "gp", "problems": {}}
    out["problems"]["tsp_construct"] = _problem("tsp_construct", args.seeds, args, TSP_REFS)
    out["problems"]["bpp_online"] = _problem("bpp_online", args.bpp_seeds, args, ("first_fit", "best_fit"))
    write_json_atomic(args.out, out)
    print(f"wrote {args.out}")
    return 0
