"""Spectral Bellman benchmark: the cost of learning the representation and of each exploration agent, in one run.

Part 1: SBM learning time (table features, exact backups) on the rank-8 MDP, the full-rank MDP and DeepSea(N), per
iteration and to the 1e-3 rad span, and the network features on the pixel gridworld, with the held-out capture ratio
(residual of 512 held-out backups outside the learned span over the best d-dimensional subspace's). Part 2: per agent on DeepSea(N), the same
episodes for every agent (no early stop): milliseconds per episode (acting + LSVI solve), the SBM feature-update
time, episodes to solve, with ratios to TS with the true features.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/spectralbellman.py [--episodes 200] [--sizes 10,20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from backend.rl.spectralbellman import mdps
    from backend.rl.spectralbellman.agents import AGENTS, AgentConfig
    from backend.rl.spectralbellman.spectral_bellman import SBMConfig, backup_rank, capture, learn_features
    from benchmarks.common import machine

    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--sizes", default="10,20")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(machine())  # noqa: T201
    print("\nSBM representation learning (200 iterations, 64 theta per iteration):\n")
    print(
        "| environment | pairs | d | features | seconds | ms / iteration | iterations to 1e-3 rad | final angle (rad) "
        "| held-out capture ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    cases = [("rank-8 MDP", mdps.low_rank_mdp(), "table"), ("full-rank MDP", mdps.full_rank_mdp(), "table")]
    cases += [(f"DeepSea({n})", mdps.deepsea(n), "table") for n in sizes]
    cases += [("gridworld (pixels)", mdps.gridworld(), "network")]
    for name, m, feats in cases:
        d = 8 if name.startswith(("gridworld", "full-rank")) else backup_rank(m)
        r = learn_features(m, SBMConfig(d=d, iters=200, features=feats, record_every=5))
        hit = next((i for i, a in zip(r.angles_iter, r.max_angle) if a < 1e-3), None)
        print(
            f"| {name} | {m.n_states * m.n_actions} | {d} | {feats} | {r.seconds:.2f} | {1e3 * r.seconds / 200:.2f} | "
            f"{hit if hit is not None else '-'} | {r.max_angle[-1]:.1e} | {capture(m, r.phi)['ratio']:.3f} |"
        )
    for n in sizes:
        m = mdps.deepsea(n)
        print(f"\nAgents on DeepSea({n}), {args.episodes} episodes each (seed 0, no early stop):\n")
        print("| agent | d | ms / episode | feature seconds | total seconds | episodes to solve | time vs TS-true |")
        print("|---|---|---|---|---|---|---|")
        runs = {a: AGENTS.get(a)(m, AgentConfig(episodes=args.episodes, seed=0), None) for a in AGENTS}
        base = runs["ts_true"].seconds + runs["ts_true"].feature_seconds
        for a, r in runs.items():
            total = r.seconds + r.feature_seconds
            print(
                f"| {AGENTS.label(a)} | {r.d} | {1e3 * r.seconds / len(r.returns):.2f} | "
                f"{r.feature_seconds:.2f} | {total:.2f} | {r.episodes_to_solve or '-'} | {total / base:.1f}x |"
            )
    return 0


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "spectralbellman"))
