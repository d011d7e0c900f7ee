"""Lyra benchmark: the splatting renderer's time per Gaussian count, and feed-forward Gaussians against per-scene
optimisation (time to equal PSNR), in one process.

1. Render time of N random Gaussians (anisotropic, rotated, 0.5-3 px on screen, spread over the view) at 128 x 128
   with :func:`backend.scenes.splat.render_gaussians`: forward, and forward + backward (the gradient of the image sum
   to every parameter), median of ``--repeats``.
2. Time to equal PSNR on ``--scenes`` held-out scenes: the shipped student (seed 0) makes its Gaussians in one
   forward pass (the seconds of that pass, median of 5; rendering excluded on both sides); per-scene optimisation
   (the lab's baseline: Adam on the same number of Gaussians, initialised from the depth warp, fitted to the
   teacher's 8 path views) runs up to ``--steps`` steps, its PSNR on the held-out true views measured every 5 steps
   outside the clock. Per scene: the optimisation seconds until it first reaches the student's PSNR on that scene
   (the stated level), and the ratio to the student's pass; a scene it never reaches gives a lower bound (all its
   optimisation seconds).
3. Training cost of the shipped networks (from their files' metadata).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/lyra.py [--scenes 6 --steps 150]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def render_times(ns: list[int], repeats: int) -> None:
    import torch

    from backend.scenes.splat import render_gaussians

    K = torch.tensor([[110.0, 0, 63.5], [0, 110.0, 63.5], [0, 0, 1]])
    V = torch.eye(4)
    print("| Gaussians | forward ms (128 x 128) | forward + backward ms |")
    print("|---|---|---|")
    for n in ns:
        g = torch.Generator().manual_seed(n)
        means = torch.cat([(torch.rand(n, 2, generator=g) - 0.5) * 2.4, 2.5 + torch.rand(n, 1, generator=g) * 2], 1)
        scales = torch.rand(n, 3, generator=g) * 0.03 + 0.005
        quats = torch.randn(n, 4, generator=g)
        opac = torch.rand(n, generator=g) * 0.8 + 0.1
        cols = torch.rand(n, 3, generator=g)
        fwd, both = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            with torch.no_grad():
                render_gaussians(means, scales, quats, opac, cols, K, V, 128, 128)
            fwd.append(time.perf_counter() - t)
            ps = [x.clone().requires_grad_(True) for x in (means, scales, quats, opac, cols)]
            t = time.perf_counter()
            render_gaussians(*ps, K, V, 128, 128).rgb.sum().backward()
            both.append(time.perf_counter() - t)
        print(f"| {n} | {1000 * statistics.median(fwd):.1f} | {1000 * statistics.median(both):.1f} |")


def time_to_psnr(scenes: int, steps: int) -> None:
    import numpy as np
    import torch

    from backend.scenes.lyra import jobs as J
    from backend.scenes.lyra.distill import student_gaussians
    from backend.scenes.lyra.evaluate import optimise_scene, psnr, time_to_reach
    from backend.scenes.lyra.views import EVAL_DELTAS, EVAL_SEEDS, PATH_DELTAS, make_viewset, render_at, sky_colour

    m = J.shipped_models()
    student = m.students[0]
    ev = make_viewset(EVAL_SEEDS[:scenes], deltas=EVAL_DELTAS)
    path = torch.tensor([d for d in PATH_DELTAS if d != 0.0])
    print(f"\n{scenes} held-out scenes, held-out true views at {list(EVAL_DELTAS)} degrees; per-scene optimisation on "
          f"the teacher's views at {path.tolist()} (+ the first view), up to {steps} Adam steps\n")
    print("| scene | student PSNR | student pass ms | per-scene steps to reach | per-scene seconds to reach | "
          "ratio | per-scene PSNR at the end |")
    print("|---|---|---|---|---|---|---|")
    ratios, bounds, levels = [], [], []
    for b in range(scenes):
        img = ev.first[b:b + 1]
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            with torch.no_grad():
                g = student_gaussians(student, m.teacher, img)
            ts.append(time.perf_counter() - t)
        t_ff = statistics.median(ts)
        with torch.no_grad():
            level = float(psnr(render_at(g, ev.deltas[b:b + 1], sky_colour(img), 32)[0], ev.targets[b]).mean())
            tv = m.teacher(img.expand(len(path), -1, -1, -1), path)
        res = optimise_scene(img[0], tv, path, m.depth, steps=steps, eval_every=5, eval_views=ev.targets[b],
                             eval_deltas=ev.deltas[b])
        t_eq = time_to_reach(res.trace, level)
        reached_step = next((i * 5 for i, (_, p) in enumerate(res.trace) if p >= level), None)
        levels.append(level)
        if t_eq is None:
            bounds.append(res.trace[-1][0] / t_ff)
            cell = f"not reached in {steps} | > {res.trace[-1][0]:.2f} | > {res.trace[-1][0] / t_ff:.0f} x"
        else:
            ratios.append(t_eq / t_ff)
            cell = f"{reached_step} | {t_eq:.2f} | {t_eq / t_ff:.0f} x"
        print(f"| {EVAL_SEEDS[b]} | {level:.2f} | {1000 * t_ff:.1f} | {cell} | {res.trace[-1][1]:.2f} |")
    allr = ratios + bounds
    print(f"\nStated PSNR level: each scene's student PSNR (mean {np.mean(levels):.2f} dB). Reached on "
          f"{len(ratios)} of {scenes} scenes; ratio of per-scene optimisation time to the student's forward pass: "
          f"median {statistics.median(allr):.0f} x, smallest {min(allr):.0f} x (lower bounds where never reached).")


def training_costs() -> None:
    from backend import weights
    from backend.scenes.lyra.jobs import ASSET_FILES, STUDENT_SEEDS, UPPER_SEEDS

    print("\n| network | training seconds (one thread) | held-out PSNR |\n|---|---|---|")
    files = [ASSET_FILES["teacher"]] + [ASSET_FILES["student"].with_name(
        ASSET_FILES["student"].name.replace("{seed}", str(s))) for s in STUDENT_SEEDS] + [
        ASSET_FILES["upper"].with_name(ASSET_FILES["upper"].name.replace("{seed}", str(s))) for s in UPPER_SEEDS]
    for p in files:
        q = weights.read_meta(p).quality
        print(f"| {p.name} | {q.get('seconds')} | {q.get('heldout_psnr')} |")


def main() -> int:
    import torch

    torch.set_num_threads(1)
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=6)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    render_times([250, 500, 1000, 2000, 4000], args.repeats)
    time_to_psnr(args.scenes, args.steps)
    training_costs()
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "lyra"))
