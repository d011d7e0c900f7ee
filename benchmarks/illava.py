"""Benchmark of iLLaVA token merging (arXiv 2412.06263) against ToMe, FastV and random dropping, in one process.

Same inputs for every method: held-out procedural scenes at 224 px through the tiny VLM (DINOv2 ViT-S/14 -> trained
projector -> SmolLM2-135M). For each image-token budget (share of the 256 tokens kept) and method, with the method's
default placement (``plan_for_budget``):

- prefill time of one request (pixels -> answer logits, batch 1), median and minimum over ``--repeats`` rounds run
  round-robin over all configurations so that load changes hit all of them alike (the minimum is the least
  disturbed run: on a shared machine it is the steadier estimate of the cost; both ratios are printed);
- images per second (one request at a time: 1 / prefill time);
- multiply-adds per request (analytic, per layer);
- optionally (``--accuracy N``) accuracy on the questions of N held-out scenes.

The unreduced model on transformers' own fused-attention forward is the 1.0 of every ratio. Our explicit loop without
reduction is listed too, to show that the loop itself costs nothing.

Usage: ``OMP_NUM_THREADS=1 python benchmarks/illava.py [--repeats 7] [--keeps 0.67 0.33 0.22] [--accuracy 40]``.
Prints a markdown table with the machine labelled.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--keeps", type=float, nargs="+", default=[2 / 3, 1 / 3, 2 / 9])
    ap.add_argument("--methods", nargs="+", default=None,
                    help="reduction methods (default: every method of kind ours or baseline, in registry order)")
    ap.add_argument("--accuracy", type=int, default=0, help="also measure accuracy on N held-out scenes")
    ap.add_argument("--images", type=int, default=3, help="distinct held-out images cycled through the timings")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)

    import torch

    from backend.tokens.illava import scenes
    from backend.tokens.illava.evaluation import SWEEP_METHODS, evaluate
    from backend.tokens.illava.plan import ReductionPlan, plan_for_budget
    from backend.tokens.illava.tiny_vlm import TinyVLM

    torch.set_num_threads(args.threads)
    vlm = TinyVLM.load()
    configs: list[tuple[str, float, ReductionPlan | None]] = [("unreduced (transformers SDPA)", 1.0, None),
                                                              ("unreduced (our loop)", 1.0, ReductionPlan())]
    for keep in args.keeps:
        for m in args.methods or SWEEP_METHODS:
            configs.append((m, keep, plan_for_budget(m, keep, vlm.n_patches)))
    data = [scenes.make_scene(scenes.HELDOUT_SEED0 + i) for i in range(args.images)]
    inputs = [(vlm.pixels([s.pil()]), s.questions[0].text) for s in data]

    def once(plan: ReductionPlan | None, k: int) -> float:
        px, q = inputs[k % len(inputs)]
        t = time.perf_counter()
        if plan is None:
            vlm.reference_prefill(px, q)
        else:
            vlm.prefill(px, q, vlm.seeded(plan, px))
        return time.perf_counter() - t

    for _, _, plan in configs:  # warm-up
        once(plan, 0)
    times: list[list[float]] = [[] for _ in configs]
    for rep in range(args.repeats):
        for i, (_, _, plan) in enumerate(configs):
            times[i].append(once(plan, rep))
    med = [statistics.median(t) for t in times]
    low = [min(t) for t in times]
    base, base_low = med[0], low[0]

    acc: dict[int, float] = {}
    if args.accuracy:
        ev = scenes.scenes(args.accuracy, "heldout")
        for i, (_, _, plan) in enumerate(configs):
            if i == 0:
                continue
            acc[i] = evaluate(vlm, ev, plan).accuracy
        acc[0] = acc[1]

    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"torch {torch.__version__} with {torch.get_num_threads()} thread(s); median and minimum of "
          f"{args.repeats} rounds (round-robin), load average {os.getloadavg()[0]:.1f} at the end, {len(inputs)} held-out images cycled, batch 1, 224 px, 256 image tokens\n")
    head = "| method | share kept | image tokens into LLM | LLM image tokens (mean/layer) | GMACs | prefill median (s) " \
           "| speed-up (medians) | prefill min (s) | speed-up (minima) | images/s |"
    if acc:
        head += " accuracy |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for i, (name, keep, plan) in enumerate(configs):
        p = plan or ReductionPlan()
        px, q = inputs[0]
        _, vit, llm = vlm.prefill(px, q, vlm.seeded(p, px))
        costs = vlm.costs(vit.tokens_per_layer, llm.image_tokens_per_layer, int(vlm.question_embeds([q])[1][0]))
        row = (f"| {name} | {keep:.2f} | {vit.tokens_per_layer[-1] - vlm.adapter.prefix} | "
               f"{sum(llm.image_tokens_per_layer) / len(llm.image_tokens_per_layer):.0f} | {costs.total / 1e9:.1f} | "
               f"{med[i]:.3f} | {base / med[i]:.2f} | {low[i]:.3f} | {base_low / low[i]:.2f} | {1 / med[i]:.2f} |")
        if acc:
            row += f" {acc[i]:.3f} |"
        print(row)
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/illava.md

    raise SystemExit(record(main, "illava"))
