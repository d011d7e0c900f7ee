"""MATHMO benchmark: Pareto-UCB + surrogate against random framework, flat search and no surrogate on paired
facility-location instances (final hypervolume, relative drops), plus the cost of each framework's models (solver
effort and wall time per model) and of one search round.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/mathmo.py [--seeds 20] [--rounds 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    import numpy as np

    from backend.search.mathmo import bilevel as MM
    from backend.search.mathmo import facility as F

    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    cfg = MM.MathmoConfig(rounds=args.rounds)
    clock = time.perf_counter()
    res = MM.paired(lambda s: F.generate(10, 30, s), args.seeds, cfg=cfg)
    total = time.perf_counter() - clock
    print(f"Final hypervolume (fraction of the grid front's), m = 10, n = 30, {args.rounds} rounds, l = 3, "
          f"{args.seeds} paired seeds ({total:.1f} s in all, grid evaluations included):\n")
    print("| strategy | mean | s.e. | vs Pareto-UCB | wins over Pareto-UCB |")
    print("|---|---|---|---|---|")
    for s, v in res["summary"].items():
        print(f"| {MM.STRATEGIES.label(s)} | {v['mean']:.4f} | {v['sem']:.4f} | {100 * v['relative_to_first']:+.1f} % | "
              f"{100 * v['wins_over_first']:.0f} % |")
    print("\nPer framework, one instance (m = 10, n = 30): median solver/heuristic work and wall time per model:\n")
    space = MM.Space(F.generate(10, 30, 0), 0)
    space.grid()
    print("| framework | models | median work | median ms per model |")
    print("|---|---|---|---|")
    for f in F.FRAMEWORKS:
        rows = [space.evaluate(i) for i in space.of_framework(f)]
        print(f"| {f} | {len(rows)} | {np.median([r['work'] for r in rows]):.0f} | "
              f"{1e3 * np.median([r['seconds'] for r in rows]):.1f} |")
    clock = time.perf_counter()
    MM.search(space, "pareto-ucb", cfg, seed=0)
    print(f"\nOne Pareto-UCB search of {args.rounds} rounds with cached model results: "
          f"{1e3 * (time.perf_counter() - clock) / args.rounds:.1f} ms per round (surrogate + hypervolume gains).")
    return 0


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "mathmo"))
