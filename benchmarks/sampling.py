"""Sampling engine benchmark: generated tokens per second of N samples of one prompt drawn in one batch
(:func:`backend.reasoning.sampling.sample` with ``n=N``, one KV cache of N rows) against the same N samples drawn by
N separate calls (``n=1, first_sample=i``: the same random streams, so the same samples), for N = 1, 8, 32, per
model, in one process.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sampling.py [--models tinyreasoner,smollm2] [--repeats 0]

Settings: temperature 1, top-p 1, the prompt of a held-out task problem; budgets 64 tokens for the tiny reasoner,
32 for SmolLM2. Times are medians over repeated runs (``--repeats``; by default 7 for the tiny reasoner, 1 for
SmolLM2), the N separate calls timed together.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import record  # noqa: E402

BUDGETS = {"tinyreasoner": 64, "smollm2": 32}
NS = (1, 8, 32)
#: runs per timing when ``--repeats`` is not given: short runs are repeated more (their times are noisier)
REPEATS = {"tinyreasoner": 7, "smollm2": 1}


def _load(model_id: str):
    if model_id == "tinyreasoner":
        from backend.models.tinyreasoner import load_tinyreasoner

        return load_tinyreasoner()
    from backend.models.lm import load_causal_lm

    return load_causal_lm()


def _rows(model_id: str, repeats: int) -> list[str]:
    repeats = REPEATS.get(model_id, repeats) if repeats <= 0 else repeats
    from dataclasses import replace

    from backend.reasoning import tasks
    from backend.reasoning.sampling import SamplingConfig, sample

    model = _load(model_id)
    question = tasks.generate(1, "heldout", seed=0)[0].question
    cfg = SamplingConfig(n=1, max_new_tokens=BUDGETS[model_id], temperature=1.0)
    sample(model, [question], cfg, seed=0)  # warm-up
    rows = []
    for n in NS:
        c = replace(cfg, n=n)
        batched_s, res = [], None
        for _ in range(repeats):
            t = time.perf_counter()
            res = sample(model, [question], c, seed=0)
            batched_s.append(time.perf_counter() - t)
        separate_s, alone = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            alone = [sample(model, [question], cfg, seed=0, first_sample=i) for i in range(n)]
            separate_s.append(time.perf_counter() - t)
        separate_s = statistics.median(separate_s)
        same = all(a.tokens(0, 0) == res.tokens(0, i) for i, a in enumerate(alone))
        toks = res.generated_tokens
        b = statistics.median(batched_s)
        rows.append(f"| {model_id} | {n} | {c.max_new_tokens} | {toks} | {toks / b:.0f} | "
                    f"{sum(a.generated_tokens for a in alone) / separate_s:.0f} | {separate_s / b:.2f} | "
                    f"{res.forward_passes} | {'yes' if same else 'no'} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="tinyreasoner,smollm2")
    ap.add_argument("--repeats", type=int, default=0, help="runs per timing (0: 7 for the tiny reasoner, 1 for SmolLM2)")
    args = ap.parse_args()

    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); one held-out problem, temperature 1, "
          "seed 0\n")
    print("| model | N | budget | tokens | batched tokens/s | separate calls tokens/s | speed-up | batched forward "
          "passes | same samples |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in [m.strip() for m in args.models.split(",") if m.strip()]:
        for row in _rows(m, args.repeats):
            print(row)
    print("\nSpeed-up: the N separate calls' time over the batched call's (the same samples, token for token, when "
          "'same samples' is yes). Batched forward passes: the prefill plus one per step of the longest sample.")
    return 0


if __name__ == "__main__":
    raise SystemExit(record(main, "sampling"))
