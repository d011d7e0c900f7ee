"""MATHMO benchmark: Pareto-UCB + surrogate against random search, NSGA-II and its ablations (random framework, flat
search, no surrogate) on the 20 paired facility-location instances of the recorded model spaces (final hypervolume,
paired differences with 95 % intervals), plus the cost of each framework's models (solver effort and wall time per
model, from the log) and of one search round.

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
    for rounds in sorted({args.rounds, 2 * args.rounds}):
        clock = time.perf_counter()
        res = MM.paired(MM.logged_space, args.seeds, cfg=MM.MathmoConfig(rounds=rounds))
        total = time.perf_counter() - clock
        print(f"\nFinal hypervolume (fraction of the space front's), m = 10, n = 30, {len(F.all_models())} models, "
              f"{rounds} rounds, l = 3, {args.seeds} paired instances from the recorded spaces ({total:.1f} s):\n")
        print("| strategy | mean | s.e. | Pareto-UCB minus this | 95 % interval | wins over Pareto-UCB |")
        print("|---|---|---|---|---|---|")
        for s, v in res["summary"].items():
            diff = (f"{v['first_minus']:+.4f} | [{v['first_minus_low']:+.4f}, {v['first_minus_high']:+.4f}]"
                    if s != res["first"] else "- | -")
            print(f"| {MM.STRATEGIES.label(s)} | {v['mean']:.4f} | {v['sem']:.4f} | {diff} | "
                  f"{100 * v['wins_over_first']:.0f} % |")
    print("\nPer framework, instance 0 (m = 10, n = 30): median solver/heuristic work and wall time per model "
          "(wall time of the recording run, designs shared between knob settings solved once):\n")
    space = MM.logged_space(0)
    space.grid()
    print("| framework | models | median work | median ms per model |")
    print("|---|---|---|---|")
    for f in F.FRAMEWORKS:
        rows = [space.evaluate(i) for i in space.of_framework(f)]
        print(f"| {f} | {len(rows)} | {np.median([r['work'] for r in rows]):.0f} | "
              f"{1e3 * np.median([r['seconds'] for r in rows]):.1f} |")
    for s in ("pareto-ucb", "random-search", "nsga2"):
        clock = time.perf_counter()
        MM.search(space, s, cfg, seed=0)
        print(f"\n{MM.STRATEGIES.label(s)}: {1e3 * (time.perf_counter() - clock) / args.rounds:.1f} ms per round "
              "with cached model results (the strategy's own work).")
    return 0


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "mathmo"))
