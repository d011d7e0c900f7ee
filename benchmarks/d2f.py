"""D2F benchmark: every decoder on the same generated problems in one process: exact-answer accuracy,
forward passes per token, tokens per second, and the ratios of D2F's tokens/s to the autoregressive baseline's (the
tiny reasoner: same architecture, size and data, KV cache) and to the best vanilla diffusion setting.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/d2f.py [--n 50] [--split heldout]

Reference (paper): D2F-Dream-7B 119.9 tokens/s vs LLaMA3-8B 48.0 (2.5x) on GSM8K, more than 50x over vanilla
Dream / LLaDA (GPU, batch 1). Here a 1.8M-parameter model on one CPU thread: a pass over a few blocks costs about
what one AR step costs, so tokens/s follow forward passes per token.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import record  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--split", default="train", help="train: unseen problems of the training templates and numbers")
    args = ap.parse_args(argv)

    from backend.reasoning.d2f.evaluate import DECODERS, MIN_VANILLA_ACCURACY, load_models
    from backend.reasoning.d2f.jobs import BenchConfig, run_bench

    models = load_models()
    run_bench(BenchConfig(n=2, split=args.split, decoders=("d2f", "ar"), vanilla_steps=(96,)), models)  # warm-up
    out = run_bench(BenchConfig(n=args.n, split=args.split, decoders="all"), models)
    rows, v = [SimpleNamespace(**r) for r in out["rows"]], out["claim"]
    print(f"{args.n} problems of the `{args.split}` split (1-3 operations); parameters "
          + ", ".join(f"{k} {n:,}" for k, n in models.parameters.items()) + "\n")
    print("| decoder | accuracy | forward passes / token | tokens / s | mean tokens | mean passes | seconds |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.label} | {r.accuracy:.3f} | {r.passes_per_token:.3f} | {r.tokens_per_s:.0f} | "
              f"{r.mean_tokens:.1f} | {r.mean_passes:.1f} | {r.seconds:.2f} |")
    by = {r.decoder: r for r in rows}
    print(f"\nAt matched accuracy? {v['matched_note']}.")
    print(f"D2F tokens/s vs AR (same module and KV cache): {v['tokens_per_s_vs_ar']:.2f}x; vs the best vanilla setting "
          f"({DECODERS.label(v['best_vanilla_decoder'])}, {v['best_vanilla_steps']} steps): "
          f"{v['tokens_per_s_vs_best_vanilla']:.1f}x; the cache's speed-up "
          f"(same schedule without it): {by['d2f'].tokens_per_s / by['d2f_nocache'].tokens_per_s:.2f}x")
    print(f"D2F accuracy {v['d2f_accuracy']:.3f} vs best vanilla {v['best_vanilla_accuracy']:.3f} "
          f"(ratio {v['accuracy_ratio'] or 0:.3f}); claim (>= 95 % with fewer passes per token): "
          f"{'holds' if v['holds'] else 'does not hold'}"
          + ("" if v["comparable"] else f" (not comparable: the best vanilla setting solves under "
                                          f"{MIN_VANILLA_ACCURACY:.0%})"))
    return 0


if __name__ == "__main__":
    raise SystemExit(record(main, "d2f"))
