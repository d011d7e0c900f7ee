"""Visual Jigsaw benchmark: training and inference costs of the Plackett-Luce policies next to their quality, and the
tiny VLM's closed-set jigsaw scoring.

On one thread: the time of one GRPO step (16 puzzles x 16 sampled answers: the policy forward, Plackett-Luce sampling,
the reward of every answer, the log-probabilities and the backward pass) per grid and reward, median of ``--repeats``
rounds of ``--steps`` steps (the reward changes only the numbers, not the work); the tile features of one image
(DINOv2 on each tile) and the policy's greedy answer; the shipped policies' held-out solve rates (means over 3 seeds);
and the tiny VLM's closed-set scoring of the 24 permutations (forward only, and forward + backward as in one step
of its post-training) next to the shipped post-training's time and quality.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/jigsaw.py [--steps 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _median_time(fn, repeats: int) -> float:  # noqa: ANN001
    """Median wall time of ``fn()`` over ``repeats`` calls, in seconds."""
    from benchmarks.common import median_ms

    return median_ms(fn, repeats)[0] / 1000


def main() -> int:
    import numpy as np
    import torch

    from backend.scenes.jigsaw import jobs as J
    from backend.scenes.jigsaw.features import puzzle_set
    from backend.scenes.jigsaw.policy import TrainConfig, train
    from backend.scenes.jigsaw.reward import REWARDS

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"GRPO step of 16 puzzles x 16 answers, median of {args.repeats} rounds of {args.steps} steps:\n")
    print("| grid | reward | kind | ms per step | shipped training s (600 steps + curves, mean of 3) | held-out scenes "
          "solve | tiles right | photos solve | tiles right |")
    print("|---|---|---|---|---|---|---|---|---|")
    scenes = J.run_evaluate(J.EvalConfig(source="scenes_val"))
    photos = J.run_evaluate(J.EvalConfig(source="photos"))
    for grid in (2, 3):
        feats = puzzle_set("scenes", J.TRAIN_COUNT, grid)
        for rw in REWARDS:
            cfg = TrainConfig(grid=grid, reward=rw, steps=args.steps, eval_every=10 ** 6)
            t = _median_time(lambda cfg=cfg, feats=feats: train(cfg, feats, {}), args.repeats)
            s, p = scenes.means[str(grid)][rw], photos.means[str(grid)][rw]
            secs = np.mean([r["train_seconds"] for r in scenes.rows if r["grid"] == grid and r["reward"] == rw])
            print(f"| {grid} x {grid} | {REWARDS.label(rw)} | {REWARDS.kind(rw)} | {1000 * t / args.steps:.1f} | "
                  f"{secs:.1f} | {s['solve']:.3f} | {s['tile_acc']:.3f} | {p['solve']:.3f} | {p['tile_acc']:.3f} |")
    from backend.models.vision import load_vision_encoder

    vision = load_vision_encoder()
    from backend.scenes.jigsaw.inputs import PRESETS

    img = J.preset_image(next(iter(PRESETS)))
    J.run_solve(img, J.SolveConfig(grid=3), vision=vision)
    t = _median_time(lambda: J.run_solve(img, J.SolveConfig(grid=3), vision=vision), 5)
    print(f"\nInference (one 3 x 3 puzzle: DINOv2 on the 9 tiles, then both policies' greedy answers, encoder "
          f"loaded): {1000 * t:.0f} ms median of 5; {scenes.params:,} parameters per policy.")
    from backend.scenes.jigsaw import vlm as V
    from backend.tokens.illava.projector import LoRA

    vlm = V.load_base()
    sc = V.JigsawScorer(vlm)
    tok, _ = V.puzzle_tokens(sc, "scenes_val", 2)
    pz, _ = V.puzzle_image(V.source_image("scenes_val", 0), V.EVAL_SEED)
    enc = _median_time(lambda: sc.tokens([pz]), 3)
    sc.scores_from_tokens(tok[:1])
    fwd = _median_time(lambda: sc.scores_from_tokens(tok[:1]), 3)
    lm = vlm.lm.model
    flags = [p.requires_grad for p in lm.parameters()]
    for p in lm.parameters():
        p.requires_grad_(False)
    lora = LoRA(lm.model.layers, rank=8, alpha=16)
    handles = lora.attach(lm.model.layers)
    for p in vlm.projector.parameters():
        p.requires_grad_(True)

    def fwd_bwd(b: int) -> None:
        sc.scores_from_tokens(tok[:b], grad=True).logsumexp(-1).sum().backward()

    step = {b: _median_time(lambda b=b: fwd_bwd(b), 3) for b in (1, 2)}
    for h in handles:
        h.remove()
    for p, f in zip(lm.parameters(), flags, strict=True):
        p.requires_grad_(f)
    for p in vlm.projector.parameters():
        p.requires_grad_(False)
        p.grad = None
    from backend import weights

    _, meta = weights.load(V.VLM_FILE, made_by=V.VLM_COMMAND)
    q = meta.quality
    print(f"\nTiny VLM, one 2 x 2 puzzle (112 px, {sc.prompt_len} prompt tokens, 64 of them image tokens), median of 3: "
          f"DINOv2 encoder tokens {1000 * enc:.0f} ms (computed once per puzzle and cached in training); the 24 "
          f"answers scored from the tokens (one prompt pass + a 16-token prefix tree) {1000 * fwd:.0f} ms forward; "
          f"forward + backward into the projector and rank-8 q/v LoRA {1000 * step[1]:.0f} ms for 1 puzzle, "
          f"{1000 * step[2]:.0f} ms for 2 (one training step of the shipped run).")
    s = q["jigsaw"]["scenes_val"]["exact"]
    print(f"Shipped post-training: {q['training']['steps']} steps in {q['train_seconds']:.0f} s "
          f"({q['seconds_per_step']:.2f} s per step, held-out curve included); held-out scene solve rate "
          f"{s['before']:.3f} -> {s['after']:.3f}; scene questions {q['qa_accuracy_before']:.3f} -> "
          f"{q['qa_accuracy_after']:.3f}.")
    return 0


if __name__ == "__main__":
    from common import record

    raise SystemExit(record(main, "jigsaw"))
