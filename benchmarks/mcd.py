"""MCD benchmark: quality and time of MCD (mean of M samples and one sample) against every method of the page (the
masked regressor, the per-target U-Nets, multi-scale and per-pixel ridge, the most correlated channel) and the Bayes
ceiling on the same test panels, on near and far held-out, seen and sparse patterns; MCD's sampling time
and quality vs Heun steps; the training cost of each method (from the shipped files' metadata).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/mcd.py [--n 16] [--samples 4]
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
    from backend.imputation.mcd import evaluate as E
    from backend.imputation.mcd import mcd as M
    from backend.imputation.mcd import tissue as T
    from backend.runtime import setup_torch

    setup_torch(1)
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--samples", type=int, default=8)
    args = ap.parse_args()
    model, std, q = E.load_model("tissue")
    p = T.generate(args.n, T.TEST_SEED)
    z, mean = std.fwd(p.x).astype(np.float32), std.fwd(p.mean).astype(np.float32)
    E.train_cov()
    E.train_msr()
    E.load_unets()
    print(f"{args.n} test panels 32 x 32 x 12 (seed {T.TEST_SEED}), M = {args.samples}, 18 Heun steps "
          f"({M.nfe(18)} evaluations per sample); MCD {M.n_params(model):,} parameters\n")
    names = [m for m in E.METHODS if m != "bayes"]
    print("| pattern | distance to training | " + " | ".join(E.METHODS.label(m) for m in names)
          + " | Bayes ceiling | best | MCD s | regressor s |")
    print("|---|---|" + "---|" * (len(names) + 4))
    pats = [*M.HELDOUT_PATTERNS, *M.FAR_PATTERNS, *E.SEEN_PATTERNS, E.SPARSE_PATTERN]
    for obs in pats:
        res = E.evaluate(z, obs, mean=mean, n_samples=args.samples, steps=18, seed=0)
        mr = {k: res.mean_r(k) for k in res.r}
        cells = " | ".join(f"{mr[m]:.3f}" if m in mr else "-" for m in names)
        print(f"| {','.join(map(str, obs))} | {res.distance} | {cells} | {mr['bayes']:.3f} | "
              f"{E.METHODS.label(res.ranking()[0])} | {res.seconds['mcd_sampling']:.1f} | "
              f"{res.seconds['regressor']:.3f} |", flush=True)
    print("\nSampling time vs Heun steps (held-out pattern 0, same panels):\n")
    print("| steps | evaluations | seconds per panel and sample | mean r (mean of M) |")
    print("|---|---|---|---|")
    mis = [c for c in range(T.C) if c not in M.HELDOUT_PATTERNS[0]]
    for steps in (6, 10, 18, 32):
        t0 = time.perf_counter()
        s = M.impute(model, z, M.HELDOUT_PATTERNS[0], n_samples=args.samples, steps=steps, seed=0)
        sec = time.perf_counter() - t0
        r = np.mean(list(T.per_channel_r(s.mean(0), z, mis).values()))
        print(f"| {steps} | {M.nfe(steps)} | {sec / (args.n * args.samples):.3f} | {r:.3f} |", flush=True)
    print("\nMean of M samples vs M (held-out pattern 0, 18 steps; ridge "
          f"{np.mean(list(T.per_channel_r(E.B.ridge(z, M.HELDOUT_PATTERNS[0], E.train_cov()), z, mis).values())):.3f}):\n")
    print("| M | mean r |")
    print("|---|---|")
    s = M.impute(model, z, M.HELDOUT_PATTERNS[0], n_samples=16, steps=18, seed=0)
    for k in (1, 2, 4, 8, 16):
        print(f"| {k} | {np.mean(list(T.per_channel_r(s[:k].mean(0), z, mis).values())):.3f} |", flush=True)
    print("\nTraining cost (one core, from the shipped files):\n")
    print("| model | what | seconds | parameters |")
    print("|---|---|---|---|")
    print(f"| MCD tissue | one model, every pattern | {q['train_seconds']} | {q['params']:,} |")
    rq = weights.read_meta(E.REGRESSOR_FILE).quality
    print(f"| masked regressor | one model, every pattern | {rq['train_seconds']} | {rq['params']:,} |")
    cq = weights.read_meta(E.CELLS_FILE).quality
    print(f"| MCD cells (H = W = 1) | one model, every pattern | {cq['train_seconds']} | {cq['params']:,} |")
    um = weights.read_meta(E.UNET_FILE)
    secs = um.quality["train_seconds"]
    unets = E.load_unets()
    per = M.n_params(next(iter(next(iter(unets.values())).values())))
    print(f"| U-Net per target | {len(secs)} networks for {len(unets)} patterns | {sum(secs.values()):.0f} "
          f"({np.mean(list(secs.values())):.0f} each) | {per:,} each |")
    print("| multi-scale ridge | closed form per pattern (moments of 300 training panels) | about 1 | - |")
    print("| ridge, most correlated | closed form per pattern | < 0.01 | - |")
    return 0


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "mcd"))
