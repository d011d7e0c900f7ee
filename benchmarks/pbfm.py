"""PBFM benchmark: sampling time vs Euler steps for PBFM, flow matching and residual guidance (guidance needs a
gradient per step), the distribution error (energy distance on standardised channels) and residual at each step
count, and the training cost per method and diagnostic model (from the shipped models' metadata).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/pbfm.py [--case darcy] [--n 256]
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

    from backend import weights
    from backend.physics.pbfm import evaluation as E
    from backend.physics.pbfm import pbfm as B
    from backend.physics.pbfm.evaluation import asset_path
    from backend.physics.pbfm.pdes import get_case, mean_abs_residual

    ap = argparse.ArgumentParser()
    ap.add_argument("--case", default="darcy")
    ap.add_argument("--n", type=int, default=256)
    args = ap.parse_args()
    c = get_case(args.case)
    held = E.heldout(c.name, 500)
    print(f"Sampling {args.n} {c.name} fields (seed-0 models), median of 3 repeats:\n")
    print("| method | Euler steps | ms per sample | energy distance (standardised channels) | mean abs residual |")
    print("|---|---|---|---|---|")
    for name in ("pbfm", "fm", "guidance-0.2"):
        model, norm = E.load_model(c.name, name, 0)
        for steps in (10, 20, 50, 100):
            times = []
            for _ in range(3):
                clock = time.perf_counter()
                x = B.METHODS.get(name)(model, norm, c, args.n, steps=steps, seed=7)
                times.append(time.perf_counter() - clock)
            print(f"| {B.METHODS.label(name)} | {steps} | {1e3 * float(np.median(times)) / args.n:.3f} | "
                  f"{E.standardised_energy_distance(x, held, c.name):.4f} | {mean_abs_residual(c, x).mean():.4g} |")
    print("\nTraining cost per model (shipped files; one core of a shared, loaded machine when trained, so the "
          "seconds compare only roughly):\n")
    print("| method | seeds | training steps | mean train seconds | parameters |")
    print("|---|---|---|---|---|")
    rows = [(n, B.METHODS.get(n), (0, 1, 2)) for n in B.METHODS]
    rows += [(n, B.DIAGNOSTICS.get(n), (0,)) for n in B.DIAGNOSTICS]
    for name, m, seeds in rows:
        if m.guidance or c.name not in m.cases:
            continue
        secs = []
        for seed in seeds:
            meta = weights.read_meta(asset_path(c.name, m.weights, seed))
            secs.append(float(meta.quality["train_seconds"]))
        model, _ = E.load_model(c.name, name, 0)
        params = sum(p.numel() for p in model.parameters())
        steps = m.config(B.PBFMConfig(case=c.name)).steps
        print(f"| {E.label(name)} | {len(seeds)} | {steps:,} | {np.mean(secs):.0f} | {params:,} |")
    return 0


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "pbfm"))
