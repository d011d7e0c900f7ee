"""``python -m backend bait <action>``: unlearnable examples that survive a pretrained prior.

Actions:
  protect   protect an image (or a source's first test images) with EMN, targeted poisoning, BAIT and its ablation
            at an epsilon in /255 units; the realised L-infinity norm of each
  grid      the victim grid of the shipped evaluation log: clean test accuracy per method x {scratch, pretrained}
            with 95% intervals over seeds (optionally re-evaluating the shipped victims)

Examples::

    python -m backend bait protect --image photo.png --eps 8 --json
    python -m backend bait grid --reevaluate --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``bait`` group to ``python -m backend``."""
    acts = add_group(subparsers, "bait", "BAIT unlearnable examples: protect images, the victim accuracy grid")
    p = add_action(acts, "protect", cmd_protect, "protect an image with every method at an epsilon (/255)")
    p.add_argument("--image", type=Path, default=None, help="an image (default: the source's first 8 test images)")
    p.add_argument("--eps", type=int, default=8, help="L-infinity bound in /255 units, 1-32 (default 8)")
    p.add_argument("--source", default="shapes", help="whose shipped protectors: shapes or digits")
    p.add_argument("--methods", default="", help="comma-separated methods (default all)")
    p.add_argument("--label", type=int, default=None, help="the image's class 0-9 (default: predicted)")
    p.add_argument("--out", type=Path, default=None, help="write the BAIT-protected image here (PNG)")
    g = add_action(acts, "grid", cmd_grid, "victim accuracy per method x init from the shipped log")
    g.add_argument("--reevaluate", action="store_true", help="re-evaluate the shipped seed-0 victims")
    g.add_argument("--n-test", type=int, default=500, help="test images for the re-evaluation (1-500)")
    return acts


def cmd_protect(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from .jobs import ProtectConfig, run_protect

    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    config = ProtectConfig(source=args.source, eps=args.eps, methods=methods, label=args.label)
    image = None if args.image is None else read_path("image", args.image)
    res = run_protect(image, config)
    out = res.summary()
    if args.out is not None and res.protected:
        from PIL import Image

        from .experiment import METHODS

        ours = METHODS.names("ours")[0]
        name = ours if ours in res.protected else res.rows[-1]["method"]
        Image.fromarray(res.protected[name][0]).save(args.out)
        out["written"] = {"method": name, "file": args.out.name}
    lines = [f"{r['label']}: L-inf {r['linf']}/255 (bound {res.eps}), mean |delta| {r['mean_abs']}, "
             f"PSNR {r['psnr_db']} dB, {r['seconds']} s" for r in res.rows]
    return Output(out, lines=lines)


def cmd_grid(args: argparse.Namespace) -> Output:
    from .jobs import GridConfig, run_grid

    res = run_grid(GridConfig(reevaluate=args.reevaluate, n_test=args.n_test))
    out = res.summary()
    lines = [f"{c['source']:7s} {c['method']:9s} {c['init']:10s} {c['mean']:.3f} [{c['ci'][0]:.3f}, "
             f"{c['ci'][1]:.3f}]" for c in out["cells"]]
    lines += [f"re-evaluated {r['victim']}: logged {r['logged']} measured {r['measured']}" for r in res.reevaluated]
    return Output(out, lines=lines)
