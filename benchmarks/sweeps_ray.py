"""Sweep fan-out on 2 CPUs: each batch sweep that takes ``--executor`` run locally (one process, cases in turn) and as
Ray tasks on a local Ray instance of 2 CPUs (``backend.executor``), with the numbers checked equal (timings left out)
and the wall-time ratio. Each sweep runs once on each executor first (imports, model loads in the Ray workers); the
timed runs follow.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sweeps_ray.py [--cpus 2]

The nowcast evaluation has its own script (``benchmarks/nowcast_ray.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TIMING = ("seconds", "prune_s", "embed_ms", "decode_ms")


def numbers(obj: object) -> str:
    def strip(o: object) -> object:
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k not in TIMING}
        if isinstance(o, list | tuple):
            return [strip(v) for v in o]
        if hasattr(o, "tolist"):
            return o.tolist()
        if hasattr(o, "__dataclass_fields__"):
            from dataclasses import asdict

            return strip(asdict(o))
        return o

    return json.dumps(strip(obj), sort_keys=True, default=str)


def sweeps() -> dict[str, tuple[str, Callable[[str], object]]]:
    """name -> (what, run(executor))."""
    from backend.compression.pruning.jobs import SweepCase, prune_sweep
    from backend.heuristics.moh.moh import MoHConfig
    from backend.train.moh import train_runs
    from backend.watermark.attribution.evaluation import strength_sweep
    from backend.watermark.datasets import heldout_images
    from backend.watermark.sigmark.jobs import TableConfig, run_table

    prune_cases = [SweepCase("encoder", r, c, n_calib=16, n_eval=16) for r in (0.2, 0.4)
                   for c in ("none", "ls", "rotation")]
    images = heldout_images(6, seed=0)
    return {
        "pruning sweep": ("MiniLM encoder, ratios 0.2 / 0.4 x none / ls / rotation (6 cases)",
                          lambda ex: prune_sweep(prune_cases, seed=0, executor=ex)),
        "sigmark table": ("drop:2 and insert:2 x 2 videos, SIGMark without SGO (4 cases)",
                          lambda ex: run_table(TableConfig(attacks=("drop:2", "insert:2"), methods=("sigmark_nosgo",),
                                                           videos=2, seed=0, executor=ex)).rows),
        "attribution sweep": ("jpeg 90 / 70 / 50, tinyhidden and dwtDctSvd x random codes, 6 images, 1,000 users "
                              "(2 cases)",
                              lambda ex: strength_sweep(images, "jpeg", [90.0, 70.0, 50.0], ["tinyhidden", "dwtDctSvd"],
                                                        ["random"], num_users=1000, executor=ex)),
        "moh training seeds": ("bin packing, 4 seeds, 2 generations, budget 8 (4 cases)",
                               lambda ex: train_runs(MoHConfig(problem="bpp_online", generations=2, budget=8), 4,
                                                     executor=ex)),
    }


def main() -> int:
    import contextlib
    import io

    import ray

    from backend.executor import RayExecutor

    ap = argparse.ArgumentParser()
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args()
    t = time.perf_counter()
    RayExecutor("local", workers=1, num_cpus=args.cpus)
    start_s = time.perf_counter() - t
    rows, ok = [], True
    for name, (what, run) in sweeps().items():
        times, out = {}, {}
        with contextlib.redirect_stdout(io.StringIO()):  # the MoH runs print a line per seed
            for ex in ("local", "ray"):
                run(ex)  # warm-up
            for ex in ("local", "ray"):
                t = time.perf_counter()
                out[ex] = numbers(run(ex))
                times[ex] = time.perf_counter() - t
        same = out["local"] == out["ray"]
        ok &= same
        rows.append((name, what, times["local"], times["ray"], same))
    ray.shutdown()
    print(f"Sweeps locally (one process) and as Ray tasks on a local Ray instance of {args.cpus} CPUs; wall seconds of "
          "the second run of each (the first loads the models).\n")
    print("| sweep | cases | local s | Ray s | speed-up local / Ray | numbers equal |")
    print("|---|---|---|---|---|---|")
    for name, what, lo, ra, same in rows:
        print(f"| {name} | {what} | {lo:.2f} | {ra:.2f} | {lo / ra:.2f}x | {same} |")
    print(f"\nRay start-up (not in the wall times): {start_s:.1f} s.")
    return 0 if ok else 1


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "sweeps_ray"))
