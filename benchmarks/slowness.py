"""Temporal-slowness benchmark: what each arm of the 2 x 2 ablation costs to train and to use, next to its quality.

Per arm, on one thread: the time of one MoCo-v3 training step (128 pairs: building the pairs, i.e. crops or frames,
the kornia augmentations and, for the temporal arms, the partner frame; then forward, backward and the EMA update),
measured over ``--steps`` steps after two warm-up steps on a ``--clips``-clip stream; the stream's cost (rendering and
spectral-residual saliency per frame); the shipped encoders' inference speed (images per second at 32 px, batches of
256) and parameters; the probe accuracies of the shipped encoders (mean over the 3 seeds, the "Standard" preset).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/slowness.py [--steps 20] [--clips 40]
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

    from backend.scenes.ego import EgoConfig, make_stream
    from backend.scenes.slowness import jobs as J
    from backend.scenes.slowness.gaze import gaze_points, spectral_residual
    from backend.scenes.slowness.inputs import PRESETS
    from backend.scenes.slowness.learn import ARMS, TrainConfig, build_stream, train

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--clips", type=int, default=40)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = EgoConfig()
    t = time.perf_counter()
    clips = make_stream(range(args.clips), cfg)
    render = time.perf_counter() - t
    t = time.perf_counter()
    for c in clips:
        gaze_points(spectral_residual(c.images))
    sal = time.perf_counter() - t
    n = args.clips * cfg.frames
    print(f"Stream: {args.clips} clips x {cfg.frames} frames of {cfg.size} px: rendering {1000 * render / n:.2f} ms "
          f"per frame, spectral-residual saliency and gaze {1000 * sal / n:.2f} ms per frame.\n")
    stream = build_stream(args.clips, cfg)
    res = J.run_probe(J.ProbeConfig(**PRESETS[list(PRESETS)[1]]))
    print("| arm | kind | ms per training step (128 pairs) | training s (shipped, 400 steps) | encoder images/s "
          "| parameters | instance | category | background | fg swap | bg swap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    x = torch.rand(256, 3, 32, 32)
    for arm in ARMS:
        train(TrainConfig(arm=arm, steps=2, clips=args.clips), stream)
        r = train(TrainConfig(arm=arm, steps=args.steps, clips=args.clips), stream)
        enc, _ = J.load_encoder(arm)
        with torch.no_grad():
            enc(x)
            reps = []
            for _ in range(5):
                t = time.perf_counter()
                enc(x)
                reps.append(time.perf_counter() - t)
        ips = 256 / float(np.median(reps))
        m, c = res.means[arm], res.costs[arm]
        print(f"| {ARMS.label(arm)} | {ARMS.kind(arm)} | {1000 * r.seconds / args.steps:.0f} | {c['train_s']:.0f} | "
              f"{ips:,.0f} | {c['parameters']:,} | {m['instance']:.3f} | {m['category']:.3f} | {m['background']:.3f} "
              f"| {m['fg_swap']:.3f} | {m['bg_swap']:.3f} |")
    g = res.paired.get("instance")
    if g:
        print(f"\nInstance probe, central + temporal minus full frame + augmentation: {g['gain']:+.3f} "
              f"[{g['low']:+.3f}, {g['high']:+.3f}] over {g['n']} paired seeds (the paper: +7.97 points).")
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "slowness"))
