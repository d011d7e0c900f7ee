"""``python -m backend.train moh``: evolve the shipped MoH programs into ``assets/moh_programs.json`` and measure the
LM meta operator into ``assets/moh_lm.json``.

Search (``--part search``): for TSP construction (20 training seeds) and online bin packing (3), per seed: MoH
(size-weighted meta-optimisation over optimiser programs), its two ablations (single-size utility, no meta level)
with equal task-evaluation budgets on the training sizes 20/50/100, and for TSP the tuned-constant baseline
``d_cur - c * avg_rest`` (line search over c on the same training gaps)
(:func:`backend.heuristics.moh.moh.evolve`); then every heuristic and the references on the evaluation sizes
200/500/1000 (instances of seeds 10,000 and above, never trained on), gaps to LKH-3 (TSP) or the L1 bound (bins).
OR-Tools routing runs up to 500 cities (at 1,000 it reaches its time limit, so its result would depend on the
machine's speed). About 4 minutes of one core.

LM operator (``--part lm``; it runs each seed's MoH search again, so it need not wait for the search part): per TSP
seed, the two best optimiser programs of that seed's MoH run are the parents; SmolLM2-135M-Instruct writes ``--lm-calls`` programs from them and the hand-written edit operator
makes as many from the same parents; every valid new program is scored by the same utility (size-weighted training
gap) on the seed's tasks. The replies, the parsed programs and their gaps are logged. About 5 minutes of one core.

``--executor ray`` runs the training seeds as Ray tasks (``backend.executor.map_cases``, ``$METHOD_LAB_RAY_ADDRESS``;
unset: a Ray instance on this machine); each run is seeded by its training seed alone, so the programs are the same
as the local run's.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

from backend.heuristics.moh.moh import EVAL_SEED, EVAL_SIZES, MoHConfig, evaluate, evolve
from backend.runtime import write_json_atomic

TSP_REFS = ("nearest_neighbour", "greedy_edge", "farthest_insertion", "two_opt")


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m backend.train moh", description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["all", "search", "lm"], default="all")
    ap.add_argument("--seeds", type=int, default=20, help="training seeds 0..seeds-1 of TSP (default 20)")
    ap.add_argument("--bpp-seeds", type=int, default=3, help="training seeds of bin packing (default 3)")
    ap.add_argument("--eval-instances", type=int, default=2, help="instances per evaluation size (default 2)")
    ap.add_argument("--generations", type=int, default=MoHConfig.generations)
    ap.add_argument("--budget", type=int, default=MoHConfig.budget)
    ap.add_argument("--lm-seeds", type=int, default=20, help="TSP seeds of the LM-operator measurement (default 20)")
    ap.add_argument("--lm-calls", type=int, default=2, help="LM calls per seed (default 2)")
    ap.add_argument("--lm-seed-start", type=int, default=0,
                    help="first seed of the LM measurement (seeds start..lm-seeds-1; the seeds already in --lm-out "
                         "with the same configuration are kept, so parts can run apart and be merged)")
    ap.add_argument("--out", default="assets/moh_programs.json")
    ap.add_argument("--lm-out", default="assets/moh_lm.json")
    ap.add_argument("--reuse-references", default=None, metavar="JSON",
                    help="a previous programs file: its LKH-3 lengths and reference gaps on the same evaluation "
                         "instances are reused instead of recomputed (the instances are matched by count and seed)")
    ap.add_argument("--executor", choices=["local", "ray"], default="local",
                    help="ray: one task per training seed (the evaluation stays in this process)")
    return ap.parse_args(argv)


def _evolve_seed(base: MoHConfig, seed: int) -> dict:
    """One training seed: MoH, its two ablations and the tuned constant, from ``seed``."""
    t0 = time.perf_counter()
    res = evolve(replace(base, seed=seed))
    return {"seed": seed, "seconds": time.perf_counter() - t0, "results": res}


def train_runs(base: MoHConfig, seeds: int, executor: str = "local") -> tuple[list[dict], dict[str, str]]:
    """The runs of training seeds 0..seeds-1 (in seed order) and their programs ``{variant_s<seed>: code}``."""
    from backend.executor import map_cases

    runs, programs = [], {}
    for out in map_cases(_evolve_seed, [base] * seeds, executor=executor, seeds=list(range(seeds))):
        s, res = out["seed"], out["results"]
        runs.append({"seed": s, "seconds": out["seconds"], "variants": {k: r.to_json() for k, r in res.items()}})
        programs.update({f"{k}_s{s}": r.heuristic for k, r in res.items()})
        print(f"{base.problem} seed {s}: {out['seconds']:.0f} s; "
              + "; ".join(f"{k} {r.weighted_gap:.2f} {r.readable}" for k, r in res.items()), flush=True)
    return runs, programs


def _cache(path: str | None, problem: str, count: int) -> dict:
    """The reference values and reference gaps of a previous record on the same evaluation instances (its first
    ``count`` instances per size: instance i of a size is generated from seed ``EVAL_SEED * 1000 + i``)."""
    if not path:
        return {}
    with open(path) as fh:
        ev = json.load(fh)["problems"][problem]["evaluation"]
    if ev.get("seed") != EVAL_SEED or ev.get("count", 0) < count or ev["sizes"] != list(EVAL_SIZES):
        return {}
    return {"ref_values": {k: v[:count] for k, v in ev["ref_values"].items()},
            "per_instance": {r: {k: v[:count] for k, v in g.items()} for r, g in ev["per_instance"].items()
                             if "_s" not in r}}


def _problem(problem: str, seeds: int, args: argparse.Namespace, refs: tuple[str, ...]) -> dict:
    import numpy as np

    base = MoHConfig(problem=problem, generations=args.generations, budget=args.budget)
    runs, programs = train_runs(base, seeds, args.executor)
    t0 = time.perf_counter()
    cache = _cache(args.reuse_references, problem, args.eval_instances)
    extra_refs = ("ortools",) if problem == "tsp_construct" else ()
    cached = {r: g for r, g in cache.get("per_instance", {}).items() if r in (*refs, *extra_refs)}
    ev = evaluate(problem, programs, EVAL_SIZES, args.eval_instances, EVAL_SEED,
                  references=tuple(r for r in refs if r not in cached), ref_values=cache.get("ref_values"))
    for r, g in cached.items():
        ev["per_instance"][r] = g
        ev["gaps"][r] = [float(np.mean(g[str(n)])) if str(n) in g else None for n in EVAL_SIZES]
    if problem == "tsp_construct" and "ortools" not in cached:
        small = tuple(n for n in EVAL_SIZES if n <= 500)
        extra = evaluate(problem, {}, small, args.eval_instances, EVAL_SEED, references=("ortools",),
                         ref_values=ev["ref_values"])
        ev["gaps"]["ortools"] = extra["gaps"]["ortools"] + [None] * (len(EVAL_SIZES) - len(small))
        ev["per_instance"]["ortools"] = extra["per_instance"]["ortools"]
    ev.update({"seed": EVAL_SEED, "count": args.eval_instances, "seconds": time.perf_counter() - t0})
    print(f"{problem} evaluation: {ev['seconds']:.0f} s", flush=True)
    return {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in base.__dict__.items()},
            "runs": runs, "evaluation": ev}


def lm_measurement(base: MoHConfig, seeds: int, calls: int, generate=None, source: str = "",  # noqa: ANN001
                   start: int = 0, out_path: str | None = None) -> dict:
    """The LM meta operator against the edit operator from the same parents, per seed (see the module text). Each
    seed's MoH search is run again here (it is deterministic: the same history as the search part's), so the two
    parts can run apart."""
    from backend.heuristics.moh.lm_meta import measure_seed

    if generate is None:
        from backend.models.lm import load_causal_lm

        lm = load_causal_lm(None)
        source = lm.source

        def generate(p: str) -> str:
            return lm.generate(p, max_new_tokens=100)

    out = {"command": "python -m backend.train moh --part lm", "source": source, "calls_per_seed": calls,
           "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in base.__dict__.items()}, "seeds": []}
    for seed in range(start, seeds):
        t0 = time.perf_counter()
        cfg = replace(base, seed=seed)
        history = evolve(cfg, ("moh",))["moh"].history
        got = measure_seed(cfg, history, calls, generate)
        got["seconds"] = time.perf_counter() - t0
        out["seeds"].append(got)
        if out_path:
            _merge_write(out_path, out)
        print(f"lm seed {seed}: {got['lm']['valid_new']} valid new of {calls}; best gap lm "
              f"{got['lm']['best_gap']:.3f} edits {got['edits']['best_gap']:.3f} ({got['seconds']:.0f} s)", flush=True)
    return out


def _merge_write(path: str, out: dict) -> None:
    """Write ``out`` to ``path``, keeping the seeds a file already there holds for the same configuration."""
    from pathlib import Path

    seeds = {s["seed"]: s for s in out["seeds"]}
    if Path(path).is_file():
        old = json.loads(Path(path).read_text())
        if {k: old.get(k) for k in ("config", "calls_per_seed", "source")} == \
                {k: out.get(k) for k in ("config", "calls_per_seed", "source")}:
            seeds = {**{s["seed"]: s for s in old["seeds"]}, **seeds}
    write_json_atomic(path, {**out, "seeds": [seeds[k] for k in sorted(seeds)]})


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    if args.part in ("all", "search"):
        out = {"command": "python -m backend.train moh", "operator": "gp", "meta_operator": "edits", "problems": {}}
        out["problems"]["tsp_construct"] = _problem("tsp_construct", args.seeds, args, TSP_REFS)
        out["problems"]["bpp_online"] = _problem("bpp_online", args.bpp_seeds, args, ("first_fit", "best_fit"))
        write_json_atomic(args.out, out)
        print(f"wrote {args.out}")
    if args.part in ("all", "lm"):
        base = MoHConfig(generations=args.generations, budget=args.budget)
        lm_measurement(base, args.lm_seeds, args.lm_calls, start=args.lm_seed_start, out_path=args.lm_out)
        print(f"wrote {args.lm_out}")
    return 0
