"""``python -m backend rewatermark ...``: self-re-watermarking attack and the Lipschitz-constrained defense (SRW).

- ``run IN --model srw --rounds 3 [--cross tinyhidden] [--pgd-eps 0.03] [--tiles 4] [--seed S] [--out DIR] --json``: embed A in
  the image IN, re-embed B ``rounds`` times with the same encoder, once with another encoder, and overwrite with PGD;
  bit accuracy vs A (recovery) and vs B (attacker success) after each step, PSNR/SSIM. ``--out`` writes the PNGs.
  ``--tiles`` sets how many 32 x 32 frames per side the SRW-family models read an image as (4: the shipped 128 px
  working resolution; 1: the whole image as one frame). Without ``--cross``, or with the model itself, the cross-model
  attacker is the model's default other encoder (TinyHiDDeN; plain for TinyHiDDeN). ``jobs.run_attack``.
- ``evaluate --images DIR [--models plain,srw] [--limit N] [--rounds 5] --json``: mean metrics over the images of a
  folder (or ``--images heldout`` for the project's held-out set). ``jobs.run_evaluate``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli_common import add_action, add_group
from backend.errors import InputError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    sub = add_group(subparsers, "rewatermark", "self-re-watermarking attack and the Lipschitz SRW defense")
    r = add_action(sub, "run", cmd_run, "one image through self / cross-model re-watermarking and PGD overwrite")
    r.add_argument("image", help="PNG/JPEG/WebP image")
    r.add_argument("--model", default="srw", help="plain, sn, reemb, sn_reemb, srw, tinyhidden, dwtDctSvd, dwtDct")
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--cross", default=None, help="attacker encoder for cross-model re-watermarking")
    r.add_argument("--pgd-eps", type=float, default=0.03, help="PGD overwrite budget in [-1,1] units, 0-1 (0: off)")
    r.add_argument("--tiles", type=int, default=None,
                   help="SRW frames per side (1-8; default: the shipped 4, a 128 px working resolution)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", default=None, help="folder for the PNG images")
    e = add_action(sub, "evaluate", cmd_evaluate, "mean metrics over a folder of images")
    e.add_argument("--images", required=True, help="a folder of images, or 'heldout' for the held-out set")
    e.add_argument("--models", default="plain,srw")
    e.add_argument("--limit", type=int, default=20)
    e.add_argument("--rounds", type=int, default=5)
    e.add_argument("--pgd-iters", type=int, default=50)
    e.add_argument("--seed", type=int, default=0)


def _read(path: Path):
    from backend.io import ImageLimits
    from backend.watermark.datasets import read_image_file

    return read_image_file(path, ImageLimits(min_side=32))


def _assets(models) -> list[Path]:
    from backend.watermark.rewatermark import lipschitz as L

    return [L.weights_path(m) for m in models if m in L.VARIANTS]


def cmd_run(args: argparse.Namespace) -> dict:
    from PIL import Image

    from backend.runtime import provenance, setup_torch
    from backend.watermark.rewatermark import lipschitz as L
    from backend.watermark.rewatermark.jobs import AttackConfig, run_attack

    setup_torch()
    tiles = L.TILES if args.tiles is None else args.tiles
    try:
        config = AttackConfig(models=(args.model,), rounds=args.rounds, cross=args.cross, pgd_eps=args.pgd_eps,
                              tiles=tiles, seed=args.seed)
        res = run_attack(_read(Path(args.image)), config)
    except ValueError as err:  # InputError included
        raise InputError(str(err)) from None
    [attack] = res.models.values()
    written = []
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for k, im in attack.images.items():
            f = out / f"{args.model}_{k}.png"
            Image.fromarray(im).save(f)
            written.append(str(f))
    return {**attack.to_json(), "images": written,
            "provenance": provenance(args.seed, _assets([attack.model, config.cross or ""]), model=args.model,
                                     rounds=args.rounds, cross=args.cross, pgd_eps=args.pgd_eps, tiles=tiles,
                                     image=args.image)}


def cmd_evaluate(args: argparse.Namespace) -> dict:
    from backend.runtime import provenance, setup_torch
    from backend.watermark.rewatermark.jobs import EvaluateConfig, run_evaluate

    setup_torch()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    try:
        config = EvaluateConfig(models=tuple(models), rounds=args.rounds, pgd_iters=args.pgd_iters, seed=args.seed)
        if args.images == "heldout":
            from backend.watermark.datasets import heldout_images

            images = heldout_images(args.limit, seed=args.seed, min_side=256, max_side=384)
        else:
            from backend.watermark.datasets import image_folder

            images = [_read(p) for p in image_folder(args.images, args.limit)]
        res = run_evaluate(images, config)
    except ValueError as err:  # InputError included
        raise InputError(str(err)) from None
    return {**res.to_json(),
            "provenance": provenance(args.seed, _assets(config.models), images=args.images, limit=args.limit,
                                     rounds=args.rounds, pgd_iters=args.pgd_iters)}
