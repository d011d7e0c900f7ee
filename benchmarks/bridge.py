"""Bridge benchmark: what the cross-sample attention costs, on the tiny reasoner.

Sampling: ``--problems`` held-out problems x N samples (temperature 1, KV cache) with the shipped Bridge checkpoint
and with the independent arm's (training seed 0), at N = 1, 2, 4, 8, 16: wall time per generated token. GRPO: one
step (N rollouts per problem, then the teacher-forced update) of each arm at N = 4 on ``--problems`` training
problems, with its rollout tokens and wall time; the Bridge blocks' share of the parameters.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bridge.py [--problems 8] [--repeats 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    import copy

    import torch

    from backend.models.tinyreasoner import load_tinyreasoner
    from backend.reasoning.bridge.checkpoints import OPS, eval_problems
    from backend.reasoning.bridge.jobs import MODES
    from backend.reasoning.bridge.rl import grpo_update, sample_width
    from backend.reasoning.tasks import generate

    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    reasoner = load_tinyreasoner()
    trained = [m for m in MODES if MODES.get(m).trained]  # Bridge, then independent sampling
    arms = {MODES.label(m): MODES.get(m)(reasoner, 0) for m in trained}
    ours, ind = (MODES.label(m) for m in trained)
    qs = [p.question for p in eval_problems(args.problems)]
    p = arms[ours]
    print(f"Bridge adds {p.bridge_parameters():,} parameters to {p.base_parameters():,} "
          f"({100 * p.bridge_parameters() / p.base_parameters():.2f} %)\n")
    print(f"Sampling {args.problems} problems x N (best of {args.repeats} runs)\n")
    print("| N | Bridge ms/token | independent ms/token | ratio | Bridge tokens | independent tokens |")
    print("|---|---|---|---|---|---|")
    for n in (1, 2, 4, 8, 16):
        row = {}
        for name, m in arms.items():
            best, toks = float("inf"), 0
            for _ in range(args.repeats):
                t = time.perf_counter()
                s = sample_width(reasoner, m, qs, n, 1.0, 7)
                best = min(best, time.perf_counter() - t)
                toks = s.generated_tokens
            row[name] = (1000 * best / max(1, toks), toks)
        print(f"| {n} | {row[ours][0]:.3f} | {row[ind][0]:.3f} | "
              f"{row[ours][0] / row[ind][0]:.2f} | {row[ours][1]:,} | {row[ind][1]:,} |")
    probs = generate(args.problems, "grammar", seed=999, steps=OPS)
    print(f"\nOne GRPO step: {args.problems} problems x 4 rollouts (best of {args.repeats})\n")
    print("| arm | rollout tokens | sampling s | update s | total s |")
    print("|---|---|---|---|---|")
    for name, m0 in arms.items():
        best = None
        for _ in range(args.repeats):
            m = copy.deepcopy(m0)
            opt = torch.optim.Adam([q for q in m.parameters() if q.requires_grad], lr=1e-4)
            st = grpo_update(reasoner, m, opt, probs, 4, seed=3)
            if best is None or st["sample_s"] + st["update_s"] < best["sample_s"] + best["update_s"]:
                best = st
        print(f"| {name} | {best['tokens']:,} | {best['sample_s']:.2f} | {best['update_s']:.2f} | "
              f"{best['sample_s'] + best['update_s']:.2f} |")
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "bridge"))
