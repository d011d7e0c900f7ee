"""IGGT benchmark: the cost of each stage next to every segmenter's held-out quality, and the renderer's speed.

On one thread: the ray-cast renderer (:mod:`backend.scenes.scene3d`) at 64, 128 and 224 pixels (median of
``--repeats`` renders of a 4-object scene); DINOv2 patch features per 224-pixel view; the network's forward pass for
2-4 views and one training step (4 scenes x 3 views); each segmenter's clustering and matching time per scene; the
shipped networks' T-mIoU / T-SR on ``--scenes`` scenes of each held-out split (3 views, means over the 3 seeds).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/iggt.py [--scenes 6] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _median_s(fn, repeats: int) -> float:  # noqa: ANN001
    """Median wall time of ``fn()`` over ``repeats`` calls, in seconds."""
    from benchmarks.common import median_ms

    return median_ms(fn, repeats)[0] / 1000


def main() -> int:
    import numpy as np
    import torch

    from backend.models import load
    from backend.scenes.iggt import jobs as J
    from backend.scenes.iggt.data import SPLIT_LABELS, dino_features, render_views
    from backend.scenes.iggt.model import IGGTNet, LossConfig, count_parameters, scene_losses
    from backend.scenes.iggt.segment import SEGMENTERS
    from backend.scenes.scene3d import orbit, random_scene, render

    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)

    scene = random_scene(3, n_objects=(4, 4))
    print("Ray-cast renderer (rgb, depth, instance ids; 4 objects), median of", args.repeats, "renders:\n")
    print("| pixels | ms per view |")
    print("|---|---|")
    for size in (64, 128, 224):
        cam = orbit(1, 2.6, 30.0, size, size)[0]
        print(f"| {size} x {size} | {1000 * _median_s(lambda c=cam: render(scene, c), args.repeats):.1f} |")

    enc = load("dinov2")
    imgs, _, _ = render_views("heldout_shape", 0, 4)
    dino_s = _median_s(lambda: dino_features(enc, imgs), max(1, args.repeats // 2)) / 4
    net = J.load_models((0,))[0]
    print(f"\nDINOv2 ViT-S/14 (22,056,576 parameters, frozen): {1000 * dino_s:.0f} ms per 224-pixel view.\n")
    print(f"Network ({count_parameters(net):,} parameters):\n")
    print("| views | forward ms |")
    print("|---|---|")
    for v in (2, 3, 4):
        d = torch.randn(1, v, 16, 16, 384)
        r = torch.rand(1, v, 64, 64, 3)
        with torch.inference_mode():
            print(f"| {v} | {1000 * _median_s(lambda d=d, r=r: net(d, r), args.repeats):.1f} |")
    model = IGGTNet()
    opt = torch.optim.AdamW(model.parameters(), 1e-3)
    d, r = torch.randn(4, 3, 16, 16, 384), torch.rand(4, 3, 64, 64, 3)
    depth, inst = torch.rand(4, 3, 64, 64) + 2, torch.randint(0, 4, (4, 3, 64, 64))
    gen = torch.Generator().manual_seed(0)

    def step() -> None:
        ld, f = model(d, r)
        loss, _ = scene_losses(ld, f, depth, inst, LossConfig(), gen)
        opt.zero_grad()
        loss.backward()
        opt.step()

    print(f"\nOne training step (4 scenes x 3 views): {1000 * _median_s(step, args.repeats):.0f} ms; the shipped "
          "networks take 400 steps each.\n")
    res = J.run_eval(J.EvalConfig(scenes=args.scenes, views=3), encoder=enc)
    print(f"Held-out scenes ({args.scenes} per split, 3 views, means over seeds {list(J.SEEDS)}):\n")
    print("| split | segmenter | kind | T-mIoU | T-SR | clustering + matching s per scene |")
    print("|---|---|---|---|---|---|")
    for split, rows in res.summary.items():
        for m, v in rows.items():
            print(f"| {SPLIT_LABELS[split]} | {SEGMENTERS.label(m)} | {SEGMENTERS.kind(m)} | {v['t_miou']:.3f} | "
                  f"{v['t_sr']:.3f} | {res.seconds[m]:.3f} |")
    for split in res.summary:
        w = [x for s in J.SEEDS for x in res.pairs_within_margin[split][str(s)] if x is not None]
        print(f"\n{SPLIT_LABELS[split]}: same-object cross-view pairs within the margin {100 * np.mean(w):.1f} %.")
    return 0


if __name__ == "__main__":
    from common import record

    raise SystemExit(record(main, "iggt"))
