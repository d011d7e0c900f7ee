"""``python -m backend nextmotion <action>``: motion forecasting from one image (K futures of a point-trajectory grid).

Actions:
  sample  K futures of an image (a file, or a simulated preset scene with its truth) from the latent flow model and
          every baseline, with best-of-K MSE, coverage and LRTL per method
  eval    every method on held-out ambiguous scenes with one training seed's models

Examples::

    python -m backend nextmotion sample --image FILE --k 8 --json
    python -m backend nextmotion sample --kind corner --scene-seed 200001 --k 8 --json
    python -m backend nextmotion eval --scenes 40 --model-seed 1 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``nextmotion`` group to ``python -m backend``."""
    acts = add_group(subparsers, "nextmotion", "What happens next: K futures of a point-trajectory grid from one image")
    s = add_action(acts, "sample", cmd_sample, "K futures of one image from the flow model and the baselines")
    s.add_argument("--image", type=Path, default=None, help="an image file (default: a simulated preset scene)")
    s.add_argument("--kind", default="peak", help="preset scene kind: drop, ramp, peak or corner")
    s.add_argument("--scene-seed", type=int, default=200_000)
    s.add_argument("--k", type=int, default=8, help="futures per method (1-32)")
    s.add_argument("--stride", type=int, default=8, help="grid stride in pixels: 8 (14 x 14 points) or 16")
    s.add_argument("--seed", type=int, default=0, help="noise seed (sample j uses seed + j)")
    s.add_argument("--model-seed", type=int, default=0, help="training seed of the shipped models: 0, 1 or 2")
    s.add_argument("--methods", default=None, help="comma-separated method names (default: all)")
    e = add_action(acts, "eval", cmd_eval, "every method on held-out ambiguous scenes")
    e.add_argument("--scenes", type=int, default=40)
    e.add_argument("--k", type=int, default=8)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--model-seed", type=int, default=0)
    e.add_argument("--methods", default=None, help="comma-separated method names (default: all)")
    return acts


def cmd_sample(args: argparse.Namespace) -> Output:
    from dataclasses import asdict

    from ...io.registry import read_path
    from .jobs import SampleConfig, run_sample

    cfg = SampleConfig(scene_seed=args.scene_seed, kind=args.kind, k=args.k, stride=args.stride, seed=args.seed,
                       model_seed=args.model_seed, methods=tuple(args.methods.split(",")) if args.methods else None)
    image = read_path("image", args.image) if args.image else None
    res = run_sample(image, cfg)
    out = {"config": asdict(cfg), **res.summary()}
    lines = [f"{res.source}: K = {cfg.k}"]
    for r in res.rows:
        bok = r.get("best_of_k_mse")
        lines.append(f"  {r['label']:28s} best-of-K MSE {'-' if bok is None else f'{bok:.2f}'}  "
                     f"coverage {r.get('coverage')}  LRTL {r['lrtl']:.3f}")
    lines += res.notes
    return Output(out, lines=lines)


def cmd_eval(args: argparse.Namespace) -> Output:
    from dataclasses import asdict

    import numpy as np

    from .jobs import EvalConfig, run_eval

    cfg = EvalConfig(scenes=args.scenes, k=args.k, seed=args.seed, model_seed=args.model_seed,
                     methods=tuple(args.methods.split(",")) if args.methods else None)
    res = run_eval(cfg)
    rows = [{"method": m, "best_of_k_mse": round(float(np.mean(res.best_of_k[m])), 3),
             "coverage": round(float(np.mean(res.coverage[m])), 3), "lrtl": round(float(np.mean(res.lrtl[m])), 3),
             "frechet": round(res.frechet[m], 3), "seconds": res.seconds[m]} for m in res.best_of_k]
    lines = [f"{r['method']:16s} best-of-{cfg.k} {r['best_of_k_mse']:8.2f}  coverage {r['coverage']:.2f}  "
             f"LRTL {r['lrtl']:7.2f}  FD {r['frechet']:7.2f}" for r in rows]
    return Output({"config": asdict(cfg), "rows": rows,
                   "truth_lrtl_max": float(np.max(res.truth_lrtl))}, lines=lines)
