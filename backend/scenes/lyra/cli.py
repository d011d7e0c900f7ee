"""``python -m backend lyra <action>``: Lyra's feed-forward 3-D Gaussians from one view, distilled from a teacher.

Actions:
  render   one first view (an image file, or a held-out procedural scene) and a camera path: PSNR / SSIM per view of
           every method (against the true renders, or against the teacher's views for an image file) and the costs
  eval     PSNR / SSIM per held-out scene of every shipped student seed, the upper bound, the depth warp and the teacher

Examples::

    python -m backend lyra render --image photo.png --path orbit --json
    python -m backend lyra render --scene 3 --path orbit --views 8 --methods lyra,warp --json
    python -m backend lyra eval --scenes 12 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``lyra`` group to ``python -m backend``."""
    acts = add_group(subparsers, "lyra", "Lyra: one view -> 3-D Gaussians in one pass, distilled from a view generator")
    r = add_action(acts, "render", cmd_render, "every method's views along a camera path from one first view")
    r.add_argument("--image", type=Path, default=None, help="the first view (PNG/JPEG/WebP; cropped square, 32x32)")
    r.add_argument("--scene", type=int, default=0, help="held-out procedural scene index (without --image)")
    r.add_argument("--path", default="orbit", help="orbit (-35..35 degrees), left (-40..0) or right (0..40)")
    r.add_argument("--views", type=int, default=8, help="views along the path")
    r.add_argument("--seed", type=int, default=0, help="the student seed (0, 1 or 2)")
    r.add_argument("--methods", default="fast", help="comma-separated methods, all, or fast (all but per-scene "
                   "optimisation)")
    r.add_argument("--steps", type=int, default=30, help="per-scene optimisation steps")
    e = add_action(acts, "eval", cmd_eval, "PSNR / SSIM of every shipped arm on held-out scenes")
    e.add_argument("--scenes", type=int, default=12)
    e.add_argument("--start", type=int, default=0)
    return acts


def cmd_render(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import RenderConfig, run_render

    image = None
    if args.image is not None:
        from ...io.registry import read_path

        image = read_path("image", args.image)
    cfg = RenderConfig(scene=args.scene, path=args.path, views=args.views, seed=args.seed, methods=args.methods,
                       steps=args.steps)
    res = run_render(cfg, image=image)
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, image=str(args.image) if args.image else None, scene=args.scene,
                                   path=args.path, views=args.views, methods=args.methods)
    lines = [f"{res.source}; {len(res.deltas)} views at {res.deltas} degrees; metrics against {res.reference}"]
    lines += [f"{res.labels[k]:48} PSNR {res.mean_psnr[k]:6.2f}  SSIM {res.mean_ssim[k]:.3f}  "
              f"build {res.costs[k]['build_s'] * 1000:8.1f} ms  render {res.costs[k]['render_s_per_view'] * 1000:6.1f} "
              f"ms/view" for k in res.mean_psnr]
    return Output(out, lines=lines)


def cmd_eval(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import EvalConfig, run_eval

    res = run_eval(EvalConfig(scenes=args.scenes, start=args.start))
    out = res.to_dict()
    out["provenance"] = provenance(0, scenes=args.scenes, start=args.start)
    lines = [f"{len(next(iter(res.psnr.values())))} held-out scenes at offsets {res.deltas}"]
    lines += [f"{k:16} PSNR {res.mean_psnr[k]:6.2f}  SSIM {res.mean_ssim[k]:.3f}" for k in res.mean_psnr]
    return Output(out, lines=lines)
