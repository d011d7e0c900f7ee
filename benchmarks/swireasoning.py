"""SwiReasoning benchmark: decoding speed and cost of every decoder on the same held-out problems, per model, in one
process: tokens per second, forward passes per generated token, the share of latent steps, milliseconds per step, and
the cost of one soft embedding (the [V] x [V, D] product a latent step adds) beside one forward pass of the model.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/swireasoning.py [--n 8] [--models tinyreasoner,smollm2]

Budgets: 64 tokens for the tiny reasoner (512 positions; the reference solutions of the 8 default problems average
85 tokens, so most decodes run to the budget), 128 for the chat models.
Qwen2.5-Coder-1.5B is included when installed (``make models-extra``) and named in ``--models``. Reference (paper):
SwiReasoning is training-free and adds no forward passes: one pass per generated token, like chain of thought.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import median_ms, record  # noqa: E402

BUDGETS = {"tinyreasoner": 64, "smollm2": 128, "qwen2.5-coder": 128}


def _model_rows(model_id: str, n: int) -> list[str]:
    import torch

    from backend.reasoning import tasks
    from backend.reasoning.lm import load_reasoning_lm
    from backend.reasoning.swireasoning.decoder import DECODERS, SwiRConfig, decode

    t0 = time.perf_counter()
    lm = load_reasoning_lm(model_id)
    load_s = time.perf_counter() - t0
    cfg = SwiRConfig(budget=BUDGETS[model_id])
    problems = tasks.generate(n, "heldout", seed=0)
    decode(lm, problems[0].question, "cot_greedy", SwiRConfig(budget=8))  # warm-up
    E = lm.embeddings
    probs = torch.softmax(torch.randn(E.shape[0]), -1)
    with torch.inference_mode():
        soft_ms, _ = median_ms(lambda: probs @ E, 50, warmup=True)
    rows, cot_ms = [], 0.0
    for name in DECODERS:
        toks = passes = latent = 0
        secs = 0.0
        for i, p in enumerate(problems):
            tr = decode(lm, p.question, name, cfg, seed=i)
            toks += tr.tokens
            passes += tr.forward_passes
            latent += sum(d.mode == "latent" for d in tr.steps)
            secs += tr.seconds
        if name == "cot_greedy":
            cot_ms = 1000 * secs / max(1, toks)
        rows.append(f"| {model_id} | {DECODERS.label(name)} | {cfg.budget} | {toks / n:.1f} | {toks / secs:.1f} | "
                    f"{passes / max(1, toks):.3f} | {latent / max(1, toks):.0%} | {1000 * secs / max(1, toks):.1f} |")
    rows.append(f"| {model_id} | one soft embedding ([V] x [V, D], V = {E.shape[0]:,}, D = {E.shape[1]}) | | | | | | "
                f"{soft_ms:.2f} (CoT greedy: {cot_ms:.1f} ms per token; model load {load_s:.1f} s) |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8, help="held-out problems per decoder")
    ap.add_argument("--models", default="tinyreasoner,smollm2")
    args = ap.parse_args()

    import torch

    from backend.models import coder

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if "qwen2.5-coder" in models and not coder.installed():
        print(f"qwen2.5-coder skipped: not installed ({coder.INSTALL_COMMAND}).\n")
        models.remove("qwen2.5-coder")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); {args.n} problems of the heldout split "
          "per decoder; greedy decoders, sampled ones with seed = problem index\n")
    print("| model | decoder | budget | mean tokens | tokens/s | forward passes / token | latent steps | ms / token |")
    print("|---|---|---|---|---|---|---|---|")
    for m in models:
        for row in _model_rows(m, args.n):
            print(row)
    print("\nForward passes per token: the prompt's prefill is one pass and every token fed back one more (the last "
          "token is never fed), so every decoder is at exactly 1; a latent step adds one soft "
          "embedding to its pass, timed in the last row of each model.")
    return 0


if __name__ == "__main__":
    raise SystemExit(record(main, "swireasoning"))
