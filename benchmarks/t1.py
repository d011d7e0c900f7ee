"""T1 benchmark: what verification costs next to generation, per candidate, on the tiny reasoner.

For ``--problems`` unseen problems of 1-4 operations (split ``grammar``), N = 16 samples each at temperature 0.8
(sampled afresh, not from the cache): the time to generate them (one batch per problem, KV cache), the tool's check
of each (write the check program, run it in the sandbox), and the reward model's forward pass (the reasoner's
penultimate layer at the candidate's last token, batched). Ratios: (tool + RM) / RM, the paper's measure of the tool's
overhead over a verifier pass (about 1.14 there, where the tool is an LLM-written program run by an interpreter),
and each against generation. Then the best-of-N accuracy at N = 16 of every selector on the same candidates.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/t1.py [--problems 20]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:

    from common import verifier_candidates

    from backend.reasoning.t1 import jobs as J
    from backend.reasoning.t1.rm import features
    from backend.reasoning.t1.tool import verify

    args, reasoner, probs, sets, cache, gen = verifier_candidates()
    rm = J.load_rm()
    cands = [(s.prompt_ids, c) for s in sets for c in s.candidates]
    tokens = sum(len(c.tokens) for _, c in cands)
    t = time.perf_counter()
    for _, c in cands:
        verify(c.text)
    tool = time.perf_counter() - t
    t = time.perf_counter()
    rm.score(features(reasoner, [p for p, _ in cands], [c.tokens for _, c in cands]))
    rmt = time.perf_counter() - t
    m = len(cands)
    print(f"{args.problems} problems x N = {args.n} = {m} candidates, {tokens:,} generated tokens "
          f"({tokens / m:.0f} per candidate)\n")
    print("| stage | ms per candidate | share of generation |")
    print("|---|---|---|")
    for name, s in (("generation (sampling, KV cache)", gen), ("tool check (sandboxed program)", tool),
                    ("reward model (forward pass + head)", rmt)):
        print(f"| {name} | {1000 * s / m:.3f} | {s / gen:.4f} |")
    print(f"\nTool x RM over RM alone: {(tool + rmt) / rmt:.3f} x (the paper: about 1.14 x a verifier pass)\n")
    cfg = J.BonConfig(split="grammar", problems=args.problems, n=args.n, problem_seed=7, draws=200)
    res = J.run_bon(cfg, reasoner, rm, cache)
    print("| selector | BoN@1 | BoN@4 | BoN@16 |")
    print("|---|---|---|---|")
    for k, v in res.curves.items():
        print(f"| {res.labels[k]} | {v[0]:.3f} | {v[3]:.3f} | {v[-1]:.3f} |")
    print(f"\npass@1 {res.pass_at_1:.3f}; false-veto rate {res.false_veto_rate:.3f}; "
          f"wrong samples with an arithmetic error {res.wrong_kinds['arithmetic']:.3f}, logic only "
          f"{res.wrong_kinds['logic']:.3f}; RM AUROC {res.rm_auroc:.3f}")
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "t1"))
