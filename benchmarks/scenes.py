"""Scene package benchmark: frames per second of the shared procedural scenes (``backend.scenes``) at 64 to 224
pixels, for still scenes (the default config, and a light one: plain background, no clutter or light change), clip
frames (objects, camera and light moving), the iLLaVA scenes that render through the package, and the watermark
pages' PIL generator (``backend.watermark.datasets.procedural_image``, images without labels) as a reference; then
the kornia augmentations (``backend.scenes.augment``) in images per second on batches of 32. One process, medians of
repeats, one torch thread.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/scenes.py [--repeats 3] [--frames 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = (64, 96, 128, 224)


def fps(make, n: int, repeats: int) -> float:
    """Median frames per second of ``make(i)`` over ``n`` frames, ``repeats`` times (one untimed warm-up call)."""
    make(0)
    rates = []
    for r in range(repeats):
        t = time.perf_counter()
        for i in range(n):
            make(1000 * r + i)
        rates.append(n / (time.perf_counter() - t))
    return statistics.median(rates)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--frames", type=int, default=40, help="frames per timed repeat")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from backend.scenes import Motion, SceneConfig, make_clip, make_scene
    from backend.tokens.illava import scenes as illava
    from backend.watermark.datasets import procedural_image

    n, reps = args.frames, args.repeats
    clip_len = 16
    rows = []
    for size in SIZES:
        default, light = SceneConfig(size=size), SceneConfig(size=size, backgrounds=("plain",), clutter=(0, 0),
                                                             lighting=False)
        motion = Motion(frames=clip_len)
        clip_fps = fps(lambda s, c=default, m=motion: make_clip(s, c, m), max(2, n // clip_len), reps) * clip_len
        rows.append((size,
                     fps(lambda s, c=default: make_scene(s, c), n, reps),
                     fps(lambda s, c=light: make_scene(s, c), n, reps),
                     clip_fps,
                     fps(lambda s, z=size: illava.make_scene(illava.HELDOUT_SEED0 + s, size=z), n, reps),
                     fps(lambda s, z=size: procedural_image(s, z), n, reps)))
    print("Frames per second (one thread; each frame with its instance ids and depth, except the reference).\n")
    print("| px | scene (default config) | scene (light config) | clip frame (16-frame clips) | iLLaVA scene "
          "| reference: watermark procedural_image |")
    print("|---|---|---|---|---|---|")
    for size, *r in rows:
        print(f"| {size} | " + " | ".join(f"{v:.0f}" for v in r) + " |")

    print("\nAugmentations (kornia, default AugmentConfig: random resized crop, flips, colour jitter, blur; label maps "
          "by nearest neighbour), images per second on batches of 32; `to_tensors` = frames to torch tensors.\n")
    print("| px | augment_batch (image + instances + depth) | augment_batch (image only) | to_tensors |")
    print("|---|---|---|---|")
    for size in SIZES:
        print(f"| {size} | " + " | ".join(f"{v:.0f}" for v in augment_rates(size, reps)) + " |")
    return 0


def augment_rates(size: int, repeats: int, batch: int = 32) -> tuple[float, float, float]:
    """Images per second of ``augment_batch`` with and without label maps, and of ``to_tensors``, at ``size``."""
    from backend.scenes import AugmentConfig, SceneConfig, augment_batch, make_scenes, to_tensors

    frames = make_scenes(range(batch), SceneConfig(size=size))
    x, ids, depth = to_tensors(frames)
    cfg = AugmentConfig()
    calls = (lambda s: augment_batch(x, ids, depth, cfg, seed=s), lambda s: augment_batch(x, config=cfg, seed=s),
             lambda s: to_tensors(frames))
    out = []
    for fn in calls:
        fn(0)
        rates = []
        for r in range(repeats):
            t = time.perf_counter()
            fn(r + 1)
            rates.append(batch / (time.perf_counter() - t))
        out.append(statistics.median(rates))
    return out[0], out[1], out[2]


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/scenes.md

    raise SystemExit(record(main, "scenes"))
