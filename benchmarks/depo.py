"""DEPO benchmark: what the offline selection costs as the prompt list grows, and what online pruning saves per GRPO
step.

1. Selection time against pool size (1,000 to 10,000 prompts, 384-dimensional unit vectors drawn with a fixed seed,
   the shape of MiniLM embeddings; share 0.2): the kNN graph with PageRank, then each subset strategy (DEPO's greedy
   weighted-DPP log-det, random, top-PageRank, k-center), plus MiniLM's embedding time for 1,000 real prompts of the
   task generator.
2. GRPO on the tiny reasoner: rollout tokens and wall time per step for DEPO with and without explorability pruning
   (the same offline subset, the same seed; ``--steps`` steps over a ``--pool``-prompt pool, held-out evaluation
   excluded from the step time).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/depo.py [--steps 12 --pool 80]
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

    from backend.reasoning.depo import jobs as J
    from backend.reasoning.depo.loop import TrainConfig, train
    from backend.reasoning.depo.select import SUBSETS, context, subset_size
    from backend.reasoning.tasks import generate

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--pool", type=int, default=80)
    args = ap.parse_args()

    print("| prompts | k | graph + PageRank s | " + " | ".join(f"{SUBSETS.label(n)} s" for n in SUBSETS) + " |")
    print("|---" * (3 + len(SUBSETS)) + "|")
    for n in (1000, 2500, 5000, 10000):
        x = np.random.default_rng(n).normal(size=(n, 384))
        t = time.perf_counter()
        ctx = context(x)
        g = time.perf_counter() - t
        k = subset_size(n, 0.2)
        cells = []
        for name in SUBSETS:
            t = time.perf_counter()
            SUBSETS[name](ctx, k, 0)
            cells.append(f"{time.perf_counter() - t:.2f}")
        print(f"| {n:,} | {k:,} | {g:.2f} | " + " | ".join(cells) + " |", flush=True)
    qs = [p.question for p in generate(1000, "grammar", seed=3)]
    J.embed(qs[:8])
    t = time.perf_counter()
    J.embed(qs)
    print(f"\nMiniLM embeddings of 1,000 generated prompts: {time.perf_counter() - t:.2f} s\n")

    from backend.models.tinyreasoner import load_tinyreasoner

    base = load_tinyreasoner()
    print("| strategy | steps | rollouts | rollouts pruned | training rollout tokens | tokens per step | s per step |")
    print("|---|---|---|---|---|---|---|")
    for name in ("depo", "depo_noprune"):
        import copy

        cfg = TrainConfig(strategy=name, steps=args.steps, pool=args.pool, heldout=10, eval_every=args.steps)
        pool, held = J.pool_problems(cfg)
        ctx = context(J.embed([p.question for p in pool]))
        log = train(copy.deepcopy(base), pool, ctx, cfg, held)
        train_tok = log.tokens - log.offline_tokens
        step_s = log.seconds / args.steps
        print(f"| {name} | {args.steps} | {log.rollouts} | {log.pruned_rollouts} | {train_tok:,} | "
              f"{train_tok / args.steps:,.0f} | {step_s:.2f} |", flush=True)
    print("\n(seconds per step include the run's share of the offline pass-rate rollouts and two held-out "
          "evaluations of 10 problems)")
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "depo"))
