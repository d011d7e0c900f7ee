"""AML benchmark: the training-time overhead of each masking next to its quality, and the inference cost.

On one thread, with the cached training features: the time of one training step (32 samples: for AML and the random
control the no-gradient first pass, PatchMax and the block choice, then the masked forward and backward; for no
masking the forward and backward alone), the median over ``--repeats`` interleaved rounds of ``--steps`` steps, and
its ratio to the unmasked step (the paper: +17.2 % training time); the inference time of one image and expression
(DINOv2 + MiniLM features, then the head) and the head's parameters; the shipped heads' held-out scores (means over
5 seeds, 300 scenes).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/aml.py [--steps 20] [--repeats 5]
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
    import torch

    from backend.scenes.aml import jobs as J
    from backend.scenes.aml.features import build
    from backend.scenes.aml.learn import TrainConfig, train
    from backend.scenes.aml.masking import MASKINGS

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    data = build(0, J.TRAIN_SIZE, "train")
    times: dict[str, list[float]] = {m: [] for m in MASKINGS}
    for m in MASKINGS:
        train(TrainConfig(masking=m, steps=2), data)
    for _ in range(args.repeats):
        for m in MASKINGS:
            r = train(TrainConfig(masking=m, steps=args.steps), data)
            times[m].append(r.seconds / args.steps)
    plain = next(m for m in MASKINGS if not getattr(MASKINGS[m], "needs_patchmax", True))
    res = J.run_evaluate(J.EvalConfig(split="heldout", n=J.EVAL_SIZE))
    print(f"Training step of 32 samples, median of {args.repeats} interleaved rounds of {args.steps} steps:\n")
    print("| masking | kind | ms per step | overhead vs no masking | shipped training s (400 steps, mean of 5) "
          "| held-out mIoU | oIoU | prec@0.5 | prec@0.7 | prec@0.9 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    base = float(np.median(times[plain]))
    for m in MASKINGS:
        t = float(np.median(times[m]))
        s = res.means[m]
        print(f"| {MASKINGS.label(m)} | {MASKINGS.kind(m)} | {1000 * t:.1f} | {100 * (t / base - 1):+.1f} % | "
              f"{res.seconds[m]:.1f} | {s['miou']:.2f} | {s['oiou']:.2f} | {s['prec@0.5']:.1f} | "
              f"{s['prec@0.7']:.1f} | {s['prec@0.9']:.1f} |")
    img, text, gt = J.preset_sample(_first_preset())
    from backend.models.text import load_text_encoder
    from backend.models.vision import load_vision_encoder

    enc = (load_vision_encoder(), load_text_encoder())
    cfg = J.SegmentConfig(text=text, maskings=(plain,))
    J.run_segment(img, cfg, gt, encoders=enc)
    reps = []
    for _ in range(5):
        t0 = time.perf_counter()
        J.run_segment(img, cfg, gt, encoders=enc)
        reps.append(time.perf_counter() - t0)
    print(f"\nInference (one image and expression, one head, encoders loaded): {1000 * float(np.median(reps)):.0f} ms "
          f"median of 5, the same forward pass for every head (no masking at inference); {res.params:,} trained "
          "parameters per head.")
    return 0


def _first_preset() -> str:
    from backend.scenes.aml.inputs import PRESETS

    return next(iter(PRESETS))


if __name__ == "__main__":
    from common import record

    raise SystemExit(record(main, "aml"))
