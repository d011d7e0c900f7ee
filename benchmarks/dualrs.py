"""Dual randomized smoothing benchmark: dual RS vs every global sigma (Cohen et al.'s CERTIFY with the same per-sigma
experts) on the same test points, for the presets. Certified accuracy at fixed radii, average certified radius (ACR),
certification time per point and samples per point; medians over seeds (each seed retrains everything). Optionally the
attack check. All in one process.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/dualrs.py [--seeds 3] [--n 10000] [--test 500] [--attack]

Reference (paper): dual RS should trace the upper envelope of the global-sigma curves at about 1.6x the
inference cost of one RS model (CIFAR-10: +60%; here both stages use n samples, so the cost is about 2x in samples).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RADII = (0.0, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--test", type=int, default=500)
    ap.add_argument("--data", default="moons,circles")
    ap.add_argument("--attack", action="store_true")
    args = ap.parse_args()

    import numpy as np
    import torch

    from backend.robustness.dualrs import attack, data2d
    from backend.robustness.dualrs import dualrs as dr
    from backend.runtime import package_versions

    torch.set_num_threads(1)
    med = statistics.median
    print(
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
        f"torch {package_versions().get('torch')}; n0 = 100, n = {args.n}, alpha = 0.001, {args.test} test points, "
        f"{args.seeds} seeds\n"
    )
    for name in args.data.split(","):
        runs = []
        for seed in range(args.seeds):
            data = data2d.make_dataset(name, seed=seed)
            res = dr.run(
                data,
                dr.TrainConfig(),
                dr.CertifyConfig(n=args.n),
                seed=seed,
                max_test=args.test,
                keep_models=args.attack,
            )
            att = None
            if args.attack:
                att = attack.attack_run(res, seed=seed + 1)
            runs.append((res, att))
        first = runs[0][0]
        methods = list(first.curves)
        print(f"### {name}: {data2d.DATASETS.entry(name).about}\n")
        head = " | ".join(f"acc@{r:g}" for r in RADII)
        print(f"| method | {head} | ACR | certify ms/point | samples/point |")
        print("|---|" + "---|" * (len(RADII) + 3))
        acc = {}
        for meth in methods:
            vals = [med([float(np.interp(r, res.radii, res.curves[meth])) for res, _ in runs]) for r in RADII]
            acc[meth] = vals
            acr = med(
                [
                    row["average_certified_radius"]
                    for res, _ in runs
                    for row in res.summary()["table"]
                    if row["method"] == meth
                ]
            )
            key = "certify dual" if meth == "dual" else f"certify {meth}"
            ms = med([1e3 * res.timings[key] / len(res.y_test) for res, _ in runs])
            samples = first.samples["dual (per point)" if meth == "dual" else "global (per point)"]
            print(f"| {meth} | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {acr:.3f} | {ms:.2f} | {samples} |")
        best = [max(acc[m][i] for m in methods if m != "dual") for i in range(len(RADII))]
        print(
            "| dual / best single | "
            + " | ".join(f"{d / b:.2f}x" if b > 0 else "-" for d, b in zip(acc["dual"], best))
            + " | | | |"
        )
        shares = [res.summary()["dual_vs_best_single"]["share_of_radii_where_dual_ge_best"] for res, _ in runs]
        print(
            f"\nShare of the radius grid where dual >= best single sigma: median {med(shares):.3f} "
            f"(per seed {', '.join(f'{s:.3f}' for s in shares)}); chosen sigma shares on test points (seed 0): "
            f"{first.summary()['chosen_sigma_share_test']} for Sigma = {first.sigmas}."
        )
        print(
            f"Training (seed 0): experts {first.timings['train experts']:.1f} s, estimator "
            f"{first.timings['train estimator']:.1f} s; parameters {first.parameters}."
        )
        if args.attack:
            summ = [a.summary() for _, a in runs]
            print(
                "Attack inside the certified radius: "
                + "; ".join(
                    f"{s['attacked_points']} points, {s['flips']} flips ({s['raw_flips']} raw), min class vote "
                    f"{s['min_class_vote']}, {s['seconds']} s"
                    for s in summ
                )
            )
        print()
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/dualrs.md

    raise SystemExit(record(main, "dualrs"))
