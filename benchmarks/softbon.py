"""Soft Best-of-N benchmark: SBoN (best beta per N, chosen on the exact policy) vs hard BoN, plain sampling and the
tilted policy (N = infinity), on the same random discrete instances, for a clean proxy, a noisy proxy and 3% hackable
items. Also the cost of the exact policy (quadrature) vs the Monte Carlo algorithm (40,000 N-tuples). Medians over
instances; times are medians of repeats. All in one process.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/softbon.py [--instances 5] [--repeats 3]

Reference (spec A1): with a clean proxy the true reward rises with beta (hard BoN best); with 3% hackable
items the best beta is interior (spec instance: N = 32, beta = 16 gives 0.833 vs 0.768 for hard BoN).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SETTINGS = {
    "clean proxy": {"noise": 0.0, "hack_frac": 0.0},
    "noisy proxy (0.3)": {"noise": 0.3, "hack_frac": 0.0},
    "3% hackable": {"noise": 0.0, "hack_frac": 0.03},
}
BETAS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--k", type=int, default=200)
    args = ap.parse_args()

    import numpy as np

    from backend.alignment.softbon import softbon as sb
    from backend.runtime import package_versions

    med = statistics.median
    print(
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
        f"numpy {package_versions().get('numpy')}; K = {args.k}, {args.instances} instances per setting\n"
    )
    print(
        "| setting | N | SBoN best beta (median) | SBoN true reward | hard BoN | plain sampling "
        "| tilted policy, same beta (inf: argmax) | SBoN / BoN | SBoN KL | Lemma 4.1 bound |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, knobs in SETTINGS.items():
        for n in (4, 16, 32, 64):
            rows = []
            for seed in range(args.instances):
                inst = sb.make_instance(sb.InstanceConfig(k=args.k, **knobs), seed)
                res = sb.sweep(inst, sb.SweepConfig(ns=(n,), betas=BETAS, reward="calibrated"))
                j = res.betas.index(res.best_beta[0])
                beta = res.best_beta[0]
                tilt = sb.tilted_policy(inst.pi_ref, sb.calibrate(inst.proxy, inst.pi_ref), n, beta) @ inst.true_reward
                rows.append(
                    (
                        beta,
                        res.best_true[0],
                        res.bon_true[0],
                        res.sampling_true,
                        tilt,
                        res.kl[0, j],
                        res.kl_bound[0, j] if math.isfinite(beta) else math.log(n),
                    )
                )
            b, s, h, p, t, kl, kb = (med([r[i] for r in rows]) for i in range(7))
            print(
                f"| {name} | {n} | {b:g} | {s:.3f} | {h:.3f} | {p:.3f} | {t:.3f} | {s / h:.2f}x | {kl:.3f} | {kb:.3f} |"
            )

    print("\nCost of one (N, beta) policy, K = 200 (median of repeats):\n")
    print("| N | beta | exact policy (quadrature) ms | Monte Carlo 40k tuples ms | MC/exact | TV(MC, exact) |")
    print("|---|---|---|---|---|---|")
    inst = sb.make_instance(sb.InstanceConfig(k=args.k, hack_frac=0.03), 0)
    for n, beta in ((8, 4.0), (32, 16.0), (64, 128.0)):
        te, tm = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            exact = sb.sbon_policy(inst.pi_ref, inst.proxy, n, beta)
            te.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            mc = sb.sample_sbon(inst.pi_ref, inst.proxy, n, beta, num_tuples=40_000, seed=1)
            tm.append(time.perf_counter() - t0)
        tv = 0.5 * float(np.abs(mc.estimate - exact).sum())
        print(f"| {n} | {beta:g} | {1e3 * med(te):.1f} | {1e3 * med(tm):.1f} | {med(tm) / med(te):.1f}x | {tv:.4f} |")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/softbon.md

    raise SystemExit(record(main, "softbon"))
