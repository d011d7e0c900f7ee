"""``python -m backend sigmark ...``: generate a GF-PRC-watermarked video, extract blindly, evaluate under attacks.

- ``generate --message HEX --seed S --out FILE`` (FILE .npz / .zip lossless, .mp4 / .webm / .gif for viewing)
- ``extract FILE [--no-sgo] [--bits B] --json``
- ``evaluate --attack drop:2 [--videos N] --json``: SIGMark, SIGMark without SGO and the two non-blind baselines
  (VideoShield-style templates, VideoMark-style nearest stored message) on the same seeds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli_common import add_action, add_group
from backend.errors import InputError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    sub = add_group(subparsers, "sigmark", "SIGMark blind video watermarking (GF-PRC + SGO)")
    g = add_action(sub, "generate", cmd_generate, "generate a (watermarked) video with the tiny video diffusion model")
    g.add_argument("--message", default="a5f00f12", help="hex: 8 digits (32 bits, tiled over all latent frames) "
                   "or 16 / 24 / 48 digits")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True, help="output .npz/.zip (lossless) or .mp4/.webm/.gif (viewing)")
    g.add_argument("--no-watermark", action="store_true", help="plain N(0, I) noise from the same seed")
    e = add_action(sub, "extract", cmd_extract, "blind extraction (no per-video record)")
    e.add_argument("file")
    e.add_argument("--no-sgo", action="store_true", help="ablation: naive re-grouping instead of SGO")
    e.add_argument("--bits", type=int, default=32, help="message length in bits (32, 64, 96 or 192)")
    v = add_action(sub, "evaluate", cmd_evaluate, "bit accuracy per method under an attack chain")
    v.add_argument("--attack", default="none", help="a chain in the grammar of backend.watermark.attacks, e.g. "
                   "drop:2, insert:2x2, jpeg:50, drop:1+noise:5 (noise sigma in 0-255 units)")
    v.add_argument("--videos", type=int, default=4)
    v.add_argument("--seed", type=int, default=0)


def cmd_generate(args: argparse.Namespace) -> dict:
    from backend.io import video as vio
    from backend.runtime import provenance
    from backend.watermark import sigmark as S
    from backend.watermark.sigmark.channel import WEIGHTS, get_channel

    ch = get_channel("tiny")
    cfg = S.SIGMarkConfig()
    lf = ch.latent_shape[1] - 1
    msg = None if args.no_watermark else S.parse_hex(args.message, S.message_options(lf, cfg.bits_per_frame))
    out = Path(args.out)
    ext = out.suffix.lower()
    writers = {".npz": vio.encode_npz, ".zip": lambda v: vio.encode_png_zip(v),
               ".mp4": lambda v: vio.encode_mp4(vio.upscale(v, 8)), ".webm": lambda v: vio.encode_webm(
                   vio.upscale(v, 8)), ".gif": lambda v: vio.encode_gif(vio.upscale(v, 8))}
    if ext not in writers:
        raise InputError(f"Unsupported output {ext!r}; use one of {', '.join(writers)}.")
    gen = S.generate(ch, args.seed, msg, cfg)
    out.write_bytes(writers[ext](gen.video))
    return {"out": str(out), "frames": int(gen.video.shape[0]), "size": list(gen.video.shape[1:3]),
            "watermarked": msg is not None, "message_hex": None if msg is None else S.bits_to_hex(msg),
            "seconds": round(gen.seconds, 3),
            "provenance": provenance(args.seed, [WEIGHTS], message=args.message, no_watermark=args.no_watermark)}


def cmd_extract(args: argparse.Namespace) -> dict:
    from backend.io.registry import read_path
    from backend.runtime import provenance
    from backend.watermark import sigmark as S
    from backend.watermark.sigmark.channel import WEIGHTS, fit_video, get_channel

    path = Path(args.file)
    dec = read_path("video", path)
    ch = get_channel("tiny")
    cfg = S.SIGMarkConfig()
    lf = ch.latent_shape[1] - 1
    if args.bits not in S.message_options(lf, cfg.bits_per_frame):
        raise InputError(f"--bits must be one of {S.message_options(lf, cfg.bits_per_frame)}.")
    video = fit_video(ch, dec)
    ex = S.extract(ch, video, cfg, sgo=not args.no_sgo, message_bits=args.bits)
    return {"file": str(path), "detected": ex.detected, "message_hex": S.bits_to_hex(ex.message),
            "key_index_per_latent_frame": ex.key_idx.tolist(), "detect_passes": ex.passes.tolist(),
            "decode_test_bits_ok": ex.decode_ok.tolist(), "interpolated_frames": ex.interpolated.tolist(),
            "video_fpr": cfg.video_fpr, "seconds": round(ex.seconds, 3),
            "provenance": provenance(None, [WEIGHTS], sgo=not args.no_sgo, bits=args.bits)}


def cmd_evaluate(args: argparse.Namespace) -> dict:
    import numpy as np

    from backend.runtime import provenance
    from backend.watermark import sigmark as S
    from backend.watermark.attacks import parse_chain
    from backend.watermark.sigmark.channel import WEIGHTS, get_channel

    if not 1 <= args.videos <= 64:
        raise InputError("--videos must be between 1 and 64")
    parse_chain(args.attack, "video")  # a bad chain fails before the model loads
    ch = get_channel("tiny")
    rng = np.random.default_rng(args.seed)
    rows = []
    for i in range(args.videos):
        msg = rng.integers(0, 2, 32).astype(np.uint8)
        rows.append(S.evaluate_attack(ch, 10_000 + args.seed * 100 + i, msg,
                                      None if args.attack == "none" else args.attack, attack_seed=i))
    return {"attack": args.attack, "videos": args.videos, "methods": S.aggregate(rows),
            "provenance": provenance(args.seed, [WEIGHTS], attack=args.attack, videos=args.videos)}
