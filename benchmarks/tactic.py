"""Tactic benchmark: one decode-attention step over a 4K and an 8K KV cache with SmolLM2's attention shapes (9 query
heads, 3 KV heads, d = 64): Tactic's step (centroid scores, 2.5 % sampled scores, the a/x + b fit, clusters read in
order until P = 0.9; overheads included) vs exact full attention (torch sdpa) vs Quest's step (page bounds, top pages);
the KV bytes each one reads; and the bytes ratio of every selector on SmolLM2's real captured attention (a 4K-token
Python-docs prompt, layers 9 / 19 / 29, the last 16 positions). All in one process.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/tactic.py [--repeats 20] [--real-tokens 4096]

Reference (abstract): up to 5.14x decode-attention speed-up on GPU (FlashInfer kernels, batched heads); CPU times here
show the cost of the selection itself (all heads batched, tokens read in rounds of 256 in centroid order), the bytes
show what a memory-bound kernel would save.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import median_ms, record  # noqa: E402


def _synthetic(t: int, seed: int = 0):
    from backend.tokens.tactic.evaluation import synthetic_layer

    return synthetic_layer(t, seed=seed)


def _step_row(t: int, cfg, repeats: int) -> str:  # noqa: ANN001
    """One table row: timings and bytes of one decode step over a ``t``-token synthetic cache."""
    import torch

    from backend.tokens.tactic import sparse_attention as sa
    from backend.tokens.tactic.decode import cluster_layout, full_step, tactic_step

    c = _synthetic(t)
    k, v = c["k"], c["v"]
    n0 = t - 1
    q = c["q"][:, t - 1]
    cache = sa.LayerCache(k, n0, v, cfg)
    km_ms, _ = median_ms(lambda: sa.build_index(k, n0, cfg), 1)
    idx = cache.index
    lay = cluster_layout(idx, cfg.sinks)
    full_ms, _ = median_ms(lambda: full_step(q, k, v), repeats, warmup=True)
    tac_ms, _ = median_ms(lambda: tactic_step(q, k, v, n0, idx, lay, cfg), repeats, warmup=True)
    out, loaded = tactic_step(q, k, v, n0, idx, lay, cfg)
    exact = full_step(q, k, v)
    err = float((out - exact).norm() / exact.norm())
    budget = int(loaded.double().mean().round())
    pos = torch.tensor([t - 1])
    quest_ms, _ = median_ms(lambda: sa.select_quest(q[None], pos, cache, budget=budget), repeats, warmup=True)
    tsel = sa.select_tactic(q[None], pos, cache, p=cfg.p)
    qsel = sa.select_quest(q[None], pos, cache, budget=budget)
    full_bytes = t * 2 * k.shape[-1] * cfg.bytes_per_element * k.shape[0]
    return (f"| {t:,} | {full_ms:.2f} | {tac_ms:.2f} | {quest_ms:.2f} | {loaded.double().mean():.0f} | "
            f"{float(tsel.bytes[0]) / full_bytes:.3f} | {float(qsel.bytes[0]) / full_bytes:.3f} | {km_ms:.0f} | "
            f"{err:.3f} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--real-tokens", type=int, default=4096, help="0 skips the real-attention bytes table")
    args = ap.parse_args()

    import torch

    from backend.tokens.tactic import sparse_attention as sa

    cfg = sa.TacticConfig()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); P = {cfg.p}, clusters of "
          f"{cfg.cluster_size}, {cfg.sample_frac:.1%} samples; times are medians of {args.repeats} steps (ms)\n")
    print("| cache (tokens) | full attention ms | Tactic step ms | Quest step ms (budget = Tactic's tokens) | "
          "Tactic tokens / head | Tactic KV bytes / full | Quest KV bytes / full | K-means at prefill ms | "
          "Tactic step output error (relative) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in (4096, 8192):
        print(_step_row(t, cfg, args.repeats))

    if args.real_tokens:
        from backend.models import load
        from backend.tokens.tactic import evaluation as te
        from backend.tokens.tactic.model import capture

        lm = load("smollm2")
        prompt = te.preset_prompt(lm.tokenizer, "pydoc", args.real_tokens, 16 + te.MIN_PREFILL)
        cap = capture(lm, prompt.ids, [9, 19, 29])
        an = te.analyse(cap, 16, cfg.p)
        s = te.summary(an)
        print(f"\nSmolLM2 real attention: {prompt.ids.shape[1]:,} tokens, layers 9 / 19 / 29, 16 queries, P = "
              f"{cfg.p}; fixed budgets = Tactic's mean tokens per layer and query\n")
        print("| selector | KV bytes / full (overheads included) | tokens / head | mean mass | mass >= 0.85 | "
              "relative output error | selection s (analysis version) |")
        print("|---|---|---|---|---|---|---|")
        for r in s["methods"].values():
            print(f"| {r['label']} | {r['bytes_ratio']:.3f} | {r['tokens_per_head']:.1f} | {r['mass_mean']:.3f} | "
                  f"{r['share_mass_ge_threshold']:.1%} | {r['rel_err_mean']:.3f} | {r['seconds']:.2f} |")
        print(f"\nTactic tokens / exact top-P tokens: {s['tactic_vs_oracle_tokens']['ratio_of_means']:.2f} "
              f"(median per case {s['tactic_vs_oracle_tokens']['median_ratio']:.2f}); tokens needed for P: "
              f"{s['need']['min']:.0f} to {s['need']['max']:.0f}, median {s['need']['median']:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(record(main, "tactic"))
