"""``python -m backend sigmark ...``: generate a GF-PRC-watermarked video, extract blindly, evaluate under attacks.

- ``generate --message HEX --seed S --out FILE`` (FILE .npz / .zip lossless, .mp4 / .webm / .gif for viewing)
- ``extract FILE [--no-sgo] [--bits B] --json``
- ``evaluate --attack drop:2 [--videos N] --json``: SIGMark, SIGMark without SGO and the two non-blind baselines
  (VideoShield-style templates, VideoMark-style nearest stored message) on the same seeds.
- ``table --attack A --attack B ... [--videos N] [--executor local|ray] --json``: the attack table, one ``evaluate``
  row per attack (the same videos, messages and attack seeds), one case per (attack, video); ``ray`` runs the cases as
  Ray tasks with the same numbers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli_common import add_action, add_group
from backend.errors import InputError
from backend.watermark.sigmark.inputs import DEFAULT_MESSAGE, TABLE_ATTACKS
from backend.watermark.sigmark.messages import message_options


def _bits() -> str:
    return ", ".join(map(str, message_options()))


def _hex_lengths() -> str:
    return " / ".join(str(b // 4) for b in message_options())


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    sub = add_group(subparsers, "sigmark", "SIGMark blind video watermarking (GF-PRC + SGO)")
    g = add_action(sub, "generate", cmd_generate, "generate a (watermarked) video with the tiny video diffusion model")
    g.add_argument("--message", default=DEFAULT_MESSAGE, help=f"hex: {_hex_lengths()} digits ({_bits()} bits; the "
                   "shortest is tiled over all latent frames)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True, help="output .npz/.zip (lossless) or .mp4/.webm/.gif (viewing)")
    g.add_argument("--no-watermark", action="store_true", help="plain N(0, I) noise from the same seed")
    e = add_action(sub, "extract", cmd_extract, "blind extraction (no per-video record)")
    e.add_argument("file")
    e.add_argument("--no-sgo", action="store_true", help="ablation: naive re-grouping instead of SGO")
    e.add_argument("--bits", type=int, default=32, help=f"message length in bits ({_bits()})")
    v = add_action(sub, "evaluate", cmd_evaluate, "bit accuracy per method under an attack chain")
    v.add_argument("--attack", default="none", help="a chain in the grammar of backend.watermark.attacks, e.g. "
                   "drop:2, insert:2x2, jpeg:50, drop:1+noise:5 (noise sigma in 0-255 units)")
    v.add_argument("--videos", type=int, default=4)
    v.add_argument("--seed", type=int, default=0)
    t = add_action(sub, "table", cmd_table, "the attack table: bit accuracy per method for each attack chain")
    t.add_argument("--attack", action="append", default=None, help="repeatable attack chain (default: "
                   f"{', '.join(TABLE_ATTACKS)})")
    t.add_argument("--method", action="append", default=None, help="repeatable: a name of the methods table "
                   "(sigmark, its ablation and diagnostic, the baselines; default: the four of evaluate)")
    t.add_argument("--videos", type=int, default=4)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="ray: one task per (attack, video) on $METHOD_LAB_RAY_ADDRESS (unset: a Ray instance here)")


def cmd_generate(args: argparse.Namespace) -> dict:
    from backend.io import video as vio
    from backend.runtime import provenance
    from backend.watermark.sigmark.channel import WEIGHTS
    from backend.watermark.sigmark.jobs import GenerateConfig, run_generate

    config = GenerateConfig(message=args.message, seed=args.seed, watermark=not args.no_watermark)
    out = Path(args.out)
    ext = out.suffix.lower()
    writers = {".npz": vio.encode_npz, ".zip": lambda v: vio.encode_png_zip(v),
               ".mp4": lambda v: vio.encode_mp4(vio.upscale(v, 8)), ".webm": lambda v: vio.encode_webm(
                   vio.upscale(v, 8)), ".gif": lambda v: vio.encode_gif(vio.upscale(v, 8))}
    if ext not in writers:
        raise InputError(f"Unsupported output {ext!r}; use one of {', '.join(writers)}.")
    res = run_generate(config)
    out.write_bytes(writers[ext](res.video))
    return {"out": str(out), **res.to_json(),
            "provenance": provenance(args.seed, [WEIGHTS], message=args.message, no_watermark=args.no_watermark)}


def cmd_extract(args: argparse.Namespace) -> dict:
    from backend.io.registry import read_path
    from backend.runtime import provenance
    from backend.watermark.sigmark.channel import WEIGHTS
    from backend.watermark.sigmark.jobs import ExtractConfig, run_extract

    config = ExtractConfig(bits=args.bits, sgo=not args.no_sgo)
    path = Path(args.file)
    res = run_extract(read_path("video", path), config)
    return {"file": str(path), "detected": res.detected, "message_hex": res.message_hex,
            "key_index_per_latent_frame": res.keys, "detect_passes": res.passes,
            "decode_test_bits_ok": res.decode_ok, "interpolated_frames": res.interpolated,
            "video_fpr": res.video_fpr, "seconds": res.seconds,
            "provenance": provenance(None, [WEIGHTS], sgo=not args.no_sgo, bits=args.bits)}


def cmd_evaluate(args: argparse.Namespace) -> dict:
    from backend.runtime import provenance
    from backend.watermark.sigmark.channel import WEIGHTS
    from backend.watermark.sigmark.jobs import EvaluateConfig, run_evaluate

    res = run_evaluate(EvaluateConfig(attack=args.attack, videos=args.videos, seed=args.seed))
    return {**res.to_json(),
            "provenance": provenance(args.seed, [WEIGHTS], attack=args.attack, videos=args.videos)}


def cmd_table(args: argparse.Namespace) -> dict:
    from backend.runtime import provenance
    from backend.watermark.sigmark.channel import WEIGHTS
    from backend.watermark.sigmark.jobs import TableConfig, run_table

    config = TableConfig(**{k: v for k, v in (("attacks", args.attack), ("methods", args.method)) if v},
                         videos=args.videos, seed=args.seed, executor=args.executor)
    res = run_table(config)
    return {**res.to_json(),
            "provenance": provenance(args.seed, [WEIGHTS], attacks=list(config.attacks), methods=list(config.methods),
                                     videos=args.videos, executor=args.executor)}
