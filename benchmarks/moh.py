"""MoH benchmark: the shipped evolved heuristics (MoH, single-size utility, no meta level; mean over training seeds)
against nearest neighbour, greedy edge, farthest insertion, 2-opt, OR-Tools routing and LKH-3 on TSP instances never
trained on, and against first fit / best fit on online bin packing; gaps, milliseconds per instance and ratios; plus
the tuned constant d_cur - c * avg_rest; plus the wall time of the search itself (seconds per meta iteration at the
default configuration, one seed).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/moh.py [--instances 2] [--sizes 200,500,1000] [--ortools-max 500]

Reference (the paper, arXiv 2505.20881): TSP1000 construction gap 15.05 % (MoH) vs 16.06 % (MCTS-AHD); online bin
packing 0.453 % excess bins.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=2)
    ap.add_argument("--sizes", default="200,500,1000")
    ap.add_argument("--ortools-max", type=int, default=500, help="largest size OR-Tools runs at (default 500)")
    ap.add_argument("--meta-generations", type=int, default=1, help="meta iterations timed (default 1)")
    args = ap.parse_args()
    import numpy as np

    from backend.heuristics.moh import references as R
    from backend.heuristics.moh import shipped
    from backend.heuristics.moh.language import GRAMMARS, parse
    from backend.heuristics.moh.moh import EVAL_SEED, VARIANTS, MoHConfig, meta_search
    from backend.heuristics.moh.problems import construct_tour, instances, pack_online

    sizes = tuple(int(s) for s in args.sizes.split(","))
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}; {args.instances} instances per size (seeds {EVAL_SEED}+)\n")
    rec = shipped.load()["problems"]
    tsp = rec["tsp_construct"]
    seeds = [r["seed"] for r in tsp["runs"]]
    tvars = list(tsp["runs"][0]["variants"])
    progs = {v: [parse(r["variants"][v]["heuristic"], GRAMMARS["tsp_construct"]) for r in tsp["runs"]]
             for v in tvars}
    names = [*tvars, *R.TSP_REFERENCES]
    print(f"TSP construction: gap to LKH-3 (%) and ms per instance; evolved rows are means over {len(seeds)} "
          "training seeds\n")
    print("| heuristic | " + " | ".join(f"gap@{n} | ms@{n}" for n in sizes) + " |")
    print("|---|" + "---|---|" * len(sizes))
    table: dict[str, list] = {k: [] for k in names}
    for n in sizes:
        insts = instances("tsp_construct", n, args.instances, EVAL_SEED)
        t0 = time.perf_counter()
        ref = [i.length(R.lkh(i)) for i in insts]
        lkh_ms = 1000 * (time.perf_counter() - t0) / len(insts)
        for k in names:
            if k == "lkh":
                table[k].append((0.0, lkh_ms))
                continue
            if k == "ortools" and n > args.ortools_max:
                table[k].append((None, None))
                continue
            gaps, ms = [], []
            for inst, r in zip(insts, ref):
                fns = [lambda p=p, i=inst: construct_tour(p, i) for p in progs[k]] if k in progs else \
                    [lambda i=inst, name=k: R.TSP_REFERENCES.get(name)(i)]
                for fn in fns:
                    t0 = time.perf_counter()
                    tour = fn()
                    ms.append(1000 * (time.perf_counter() - t0))
                    gaps.append(100 * (inst.length(tour) / r - 1))
            table[k].append((float(np.mean(gaps)), statistics.median(ms)))
    for k in names:
        cells = " | ".join("n/a | n/a" if g is None else f"{g:.2f} | {m:.1f}" for g, m in table[k])
        print(f"| {VARIANTS.label(k) if k in VARIANTS else R.TSP_REFERENCES.label(k)} | {cells} |")
    print("\nRatios at each size (gap of MoH / gap of the other; time of LKH-3 / time of MoH):\n")
    print("| size | MoH / single-size | MoH / no meta | MoH / tuned constant | MoH / farthest insertion | "
          "LKH-3 time / MoH time |")
    print("|---|---|---|---|---|---|")
    for j, n in enumerate(sizes):
        m = table["moh"][j][0]
        print(f"| {n} | {m / table['single_size'][j][0]:.3f} | {m / table['no_meta'][j][0]:.3f} | "
              f"{m / table['tuned_constant'][j][0]:.3f} | {m / table['farthest_insertion'][j][0]:.3f} | "
              f"{table['lkh'][j][1] / table['moh'][j][1]:.1f} |")

    bpp = rec["bpp_online"]
    bvars = list(bpp["runs"][0]["variants"])
    bprogs = {v: [parse(r["variants"][v]["heuristic"], GRAMMARS["bpp_online"]) for r in bpp["runs"]] for v in bvars}
    print(f"\nOnline bin packing: excess bins over the L1 bound (%), ms per instance; evolved rows: means over "
          f"{len(bpp['runs'])} seeds\n")
    print("| heuristic | " + " | ".join(f"excess@{n} | ms@{n}" for n in sizes) + " |")
    print("|---|" + "---|---|" * len(sizes))
    rows: dict[str, list] = {k: [] for k in [*bvars, "first_fit", "best_fit"]}
    for n in sizes:
        insts = instances("bpp_online", n, args.instances, EVAL_SEED)
        for k in rows:
            ex, ms = [], []
            for inst in insts:
                fns = [lambda p=p, i=inst: pack_online(p, i)[0] for p in bprogs[k]] if k in bprogs else \
                    [lambda i=inst, name=k: R.BIN_REFERENCES.get(name)(i)]
                for fn in fns:
                    t0 = time.perf_counter()
                    used = fn()
                    ms.append(1000 * (time.perf_counter() - t0))
                    ex.append(100 * (used / inst.l1 - 1))
            rows[k].append((float(np.mean(ex)), statistics.median(ms)))
    for k, v in rows.items():
        lab = VARIANTS.label(k) if k in VARIANTS else R.BIN_REFERENCES.label(k)
        print(f"| {lab} | " + " | ".join(f"{g:.3f} | {m:.1f}" for g, m in v) + " |")

    print(f"\nSearch cost at the default configuration (seed 0, {args.meta_generations} meta iteration(s)):\n")
    print("| variant | seconds | seconds per meta iteration (incl. the start population) | task evaluations |")
    print("|---|---|---|---|")
    for v in ("moh", "single_size"):
        cfg = MoHConfig(generations=args.meta_generations)
        t0 = time.perf_counter()
        res = meta_search(cfg, v)
        secs = time.perf_counter() - t0
        print(f"| {VARIANTS.label(v)} | {secs:.1f} | {secs / (cfg.generations + 1):.1f} | {res.task_evals} |")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/moh.md

    raise SystemExit(record(main, "moh"))
