"""Sweep fan-out: the nowcast evaluation over held-out cases run locally (one process, cases in turn) and as Ray tasks
on a local Ray instance of 2 CPUs (``backend.executor``), with the scores checked equal and the wall-time ratio.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/nowcast_ray.py [--cases 8] [--leads 8] [--methods ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _scores(summaries: dict) -> str:
    return json.dumps({m: {k: v for k, v in s.items() if not k.startswith("seconds")} for m, s in summaries.items()},
                      sort_keys=True)


def main() -> int:
    import ray

    from backend.executor import RayExecutor
    from backend.forecast.nowcast.pipeline import evaluate, heldout_seeds

    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=8)
    ap.add_argument("--leads", type=int, default=8)
    ap.add_argument("--methods", nargs="+", default=["extrapolation", "steps", "model"])
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args()
    seeds = heldout_seeds(args.cases)

    t = time.perf_counter()
    RayExecutor("local", workers=1, num_cpus=args.cpus)
    start_s = time.perf_counter() - t
    evaluate(seeds[:1], args.methods, args.leads, executor="ray")  # warm the workers (imports, model load)
    t = time.perf_counter()
    on_ray = evaluate(seeds, args.methods, args.leads, executor="ray")
    ray_s = time.perf_counter() - t
    ray.shutdown()
    evaluate(seeds[:1], args.methods, args.leads)  # the same warm-up locally
    t = time.perf_counter()
    local = evaluate(seeds, args.methods, args.leads)
    local_s = time.perf_counter() - t
    same = _scores(local) == _scores(on_ray)
    print(f"Nowcast evaluation: {args.cases} cases x {len(args.methods)} methods ({', '.join(args.methods)}), "
          f"{args.leads} leads; Ray: a local instance of {args.cpus} CPUs, one task per case.\n")
    print("| executor | wall s | ratio local / executor |")
    print("|---|---|---|")
    print(f"| local (one process) | {local_s:.2f} | 1.00x |")
    print(f"| Ray, {args.cpus} CPUs | {ray_s:.2f} | {local_s / ray_s:.2f}x |")
    print(f"\nRay start-up (not in the wall time): {start_s:.1f} s. Scores identical: {same}.")
    return 0 if same else 1


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "nowcast_ray"))
