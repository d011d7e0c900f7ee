"""RGM benchmark: what the SPRM costs next to generation, per trace, on the tiny reasoner.

For ``--problems`` unseen problems of 1-4 operations (split ``grammar``), N = 16 traces each at temperature 0.8
(sampled afresh): the time to generate them (one batch per chunk of problems, KV cache), the step features (one
forward pass over prompt and trace, the penultimate layer read at every step end) and the head's scores (six heads:
SPR and plain BCE x three seeds). In the paper the head shares the policy's forward pass; here the features cost one
extra pass, which the table separates. Then best-of-8 per aggregation and majority vote on the same traces.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/rgm.py [--problems 20]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:

    from common import verifier_candidates

    from backend.reasoning.rgm import jobs as J
    from backend.reasoning.rgm.data import step_features
    from backend.reasoning.rgm.fit import step_scores

    args, reasoner, probs, sets, cache, gen = verifier_candidates()
    heads = J.load_heads()
    prompts = [s.prompt_ids for s in sets for _ in s.candidates]
    toks = [c.tokens for s in sets for c in s.candidates]
    m = len(toks)
    t = time.perf_counter()
    feats = step_features(reasoner, prompts, toks)
    feat_s = time.perf_counter() - t

    class _T:
        features = feats

    t = time.perf_counter()
    for h in heads.values():
        step_scores(h, _T)
    head_s = (time.perf_counter() - t) / len(heads)
    steps = sum(f.shape[0] for f in feats)
    print(f"{args.problems} problems x N = {args.n} = {m} traces, {sum(len(x) for x in toks):,} generated tokens, "
          f"{steps:,} steps\n")
    print("| stage | ms per trace | share of generation |")
    print("|---|---|---|")
    for name, s in (("generation (sampling, KV cache)", gen), ("step features (one extra forward pass)", feat_s),
                    ("SPRM head (one head, all steps)", head_s)):
        print(f"| {name} | {1000 * s / m:.3f} | {s / gen:.4f} |")
    print()
    res = J.run_eval(J.EvalConfig(split="grammar", problems=args.problems, n=args.n, ops=(1, 4), problem_seed=7),
                     reasoner, heads, cache)
    i = res.ks.index(8)
    print("| selection | best-of-8 |")
    print("|---|---|")
    for k, v in res.bon.items():
        print(f"| {res.labels[k]} | {v[i]:.3f} |")
    print("\nFirst-wrong-step AUROC: " + ", ".join(f"{k} {v:.3f}" for k, v in res.locate_auroc.items()))
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "rgm"))
