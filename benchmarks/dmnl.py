"""DMNL benchmark: OFU-DMNL (greedy, O(NK)) against OFU-DMNL-FULL (exhaustive) and the MNL baselines in one run.

Part 1: milliseconds per round (selection + update, median over rounds) and candidate sets scored per round vs the
catalogue size N, K = 5; the exhaustive variant up to N = 20. Part 2: cumulative regret after T rounds on the medium
catalogue (N = 20, K = 5), all agents on the same contexts and random numbers, medians over seeds, with the time per
round beside each.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/dmnl.py [--rounds 2000] [--seeds 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    import numpy as np

    from backend.bandits.dmnl import agents as A
    from backend.bandits.dmnl.items import synthetic

    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    print("\nPer-round cost vs N (K = 5, 100 rounds per point):\n")
    rows = A.runtime_vs_n([10, 15, 20, 50, 100], k=5, rounds=100)
    greedy = {r["n_items"]: r for r in rows if r["agent"] == "ofu-dmnl"}
    print("| N | OFU-DMNL ms/round | OFU-DMNL evaluations | FULL ms/round | FULL evaluations | FULL / OFU-DMNL time |")
    print("|---|---|---|---|---|---|")
    for n, g in greedy.items():
        f = next((r for r in rows if r["agent"] == "ofu-dmnl-full" and r["n_items"] == n), None)
        ft = f"{f['ms_per_round']:.3f}" if f else "-"
        fe = f"{f['evaluations_per_round']:.0f}" if f else f"C(N,5) = {g['assortments']:,} (not run)"
        ratio = f"{f['ms_per_round'] / g['ms_per_round']:.1f}x" if f else "-"
        print(f"| {n} | {g['ms_per_round']:.3f} | {g['evaluations_per_round']:.0f} | {ft} | {fe} | {ratio} |")
    print(f"\nCumulative regret after T = {args.rounds} (N = 20, K = 5, lambda* = 1), medians over {args.seeds} "
          "seeds:\n")
    names = [a for a in A.AGENTS if a != "oracle"]
    regret = {a: [] for a in names}
    ms = {a: [] for a in names}
    rnd = {a: [] for a in names}
    for seed in range(args.seeds):
        sim = A.simulate(synthetic(20, 5, 5, seed=seed), k=5, rounds=args.rounds, agents=names, seed=seed)
        for a in names:
            regret[a].append(sim.runs[a].regret.sum())
            ms[a].append(1e3 * float(np.median(sim.runs[a].seconds)))
            rnd[a].append(sim.runs[a].random_rounds)
    base = float(np.median(regret["ofu-dmnl"]))
    print("| agent | regret (median) | IQR | vs OFU-DMNL | ms/round | random rounds |")
    print("|---|---|---|---|---|---|")
    for a in names:
        q75, q25 = np.percentile(regret[a], [75, 25])
        print(f"| {A.AGENTS.label(a)} | {np.median(regret[a]):.2f} | {q75 - q25:.2f} | "
              f"{np.median(regret[a]) / base:.2f}x | {np.median(ms[a]):.3f} | {np.median(rnd[a]):.0f} |")
    return 0


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "dmnl"))
