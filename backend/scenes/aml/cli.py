"""``python -m backend aml <action>``: referring segmentation heads trained with AML, random block masking or none.

Actions:
  segment    one image and expression through each masking's head: PatchMax, masked blocks, the mask (and its IoU
             when the image is a preset scene with a ground truth)
  evaluate   every shipped head re-scored on held-out (or val) scenes: mIoU, oIoU, prec@0.5/0.7/0.9, paired gains

Examples::

    python -m backend aml segment --image photo.png --text "the red circle left of the square" --json
    python -m backend aml segment --preset "Held-out 0: relation (to the right of)" --json
    python -m backend aml evaluate --split heldout --n 300 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, int_list


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``aml`` group to ``python -m backend``."""
    acts = add_group(subparsers, "aml", "referring segmentation with alignment-aware masked learning (AML) vs "
                                        "random block masking and no masking")
    s = add_action(acts, "segment", cmd_segment, "segment the object an expression refers to, with every head")
    s.add_argument("--image", type=Path, default=None, help="an image file (PNG, JPEG, WebP); resized to 112 x 112")
    s.add_argument("--text", default=None, help="the referring expression (1-120 characters)")
    s.add_argument("--preset", default=None, help="a preset scene (image, expression and ground truth)")
    s.add_argument("--seed", type=int, default=0, help="which shipped seed's heads (0-4)")
    s.add_argument("--tau", type=float, default=0.4)
    s.add_argument("--rho", type=float, default=0.25)
    e = add_action(acts, "evaluate", cmd_evaluate, "re-score every shipped head; paired gains of AML over seeds")
    e.add_argument("--split", default="heldout", help="heldout (other backdrops, textures, phrasings) or val")
    e.add_argument("--n", type=int, default=300, help="samples (10-1000)")
    e.add_argument("--seeds", type=int_list, default="0,1,2,3,4")
    return acts


def cmd_segment(args: argparse.Namespace) -> Output:
    from ...errors import InputError
    from ...io.registry import read_path
    from ...runtime import provenance
    from .inputs import PRESETS
    from .jobs import SegmentConfig, preset_sample, run_segment

    mask = None
    if args.image is not None:
        image = read_path("image", args.image)
        text = args.text
        if text is None:
            raise InputError("Give the expression with --text, e.g. --text 'the red circle'.")
    else:
        image, text, mask = preset_sample(args.preset or next(iter(PRESETS)))
        text = args.text if args.text is not None else text
    res = run_segment(image, SegmentConfig(text=text, seed=args.seed, tau=args.tau, rho=args.rho), mask=mask)
    out = res.summary()
    params = {k: v for k, v in res.config.items() if k != "seed"}
    out["provenance"] = provenance(args.seed, image=str(args.image) if args.image else args.preset, **params)
    lines = [f"expression: {res.text}"]
    lines += [f"{p['label']:28} area {p['area']:5d} px  masked blocks {int(p['blocks'].sum()):2d}"
              + (f"  IoU {p['iou']:.1f}" if p["iou"] is not None else "") for p in res.panels]
    return Output(out, lines=lines)


def cmd_evaluate(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import EvalConfig, run_evaluate

    res = run_evaluate(EvalConfig(split=args.split, n=args.n, seeds=args.seeds))
    out = res.to_dict()
    out["provenance"] = provenance(None, **res.config)
    lines = [f"{res.labels[m]:28} " + "  ".join(f"{k} {v:.1f}" for k, v in res.means[m].items())
             for m in res.means]
    for b, d in res.paired.items():
        g = d["miou"]
        lines.append(f"AML minus {res.labels[b]}: mIoU {g['gain']:+.2f} [{g['low']:+.2f}, {g['high']:+.2f}] "
                     f"over {g['n']} seeds")
    return Output(out, lines=lines)
