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
    t = add_action(sub, "table", cmd_table, "the attack table: bit accuracy per method for each attack chain")
    t.add_argument("--attack", action="append", default=None, help="repeatable attack chain (default: none, drop:2, "
                   "insert:2, jpeg:50)")
    t.add_argument("--method", action="append", default=None, help="repeatable: sigmark, sigmark_nosgo, "
                   "sigmark_oracle_cuts, videoshield, videomark (default: the four of evaluate)")
    t.add_argument("--videos", type=int, default=4)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="ray: one task per (attack, video) on $METHOD_LAB_RAY_ADDRESS (unset: a Ray instance here)")


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


def _messages(videos: int, seed: int) -> list:
    """The 32-bit message of each video, drawn as ``evaluate`` draws them."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2, 32).astype(np.uint8) for _ in range(videos)]


def _table_case(case: tuple, seed: int) -> dict:
    """One (attack, video) cell: video seed ``seed``, attack seed = the video's index (as ``evaluate``)."""
    from backend.watermark import sigmark as S
    from backend.watermark.sigmark.channel import get_channel

    attack, index, message, methods = case
    return S.evaluate_attack(get_channel("tiny"), seed, message, None if attack == "none" else attack,
                             methods=methods, attack_seed=index)


def cmd_table(args: argparse.Namespace) -> dict:
    from backend.executor import map_cases
    from backend.runtime import provenance
    from backend.watermark import sigmark as S
    from backend.watermark.attacks import parse_chain
    from backend.watermark.sigmark.channel import WEIGHTS

    if not 1 <= args.videos <= 64:
        raise InputError("--videos must be between 1 and 64")
    attacks = args.attack or ["none", "drop:2", "insert:2", "jpeg:50"]
    for a in attacks:
        if a != "none":
            parse_chain(a, "video")  # a bad chain fails before the model loads
    methods = tuple(S.METHODS.key(m) for m in args.method) if args.method else (
        "sigmark", "sigmark_nosgo", "videoshield", "videomark")
    msgs = _messages(args.videos, args.seed)
    cases = [(a, i, msgs[i], methods) for a in attacks for i in range(args.videos)]
    rows = map_cases(_table_case, cases, executor=args.executor,
                     seeds=[10_000 + args.seed * 100 + case[1] for case in cases])
    table = [{"attack": a, "methods": S.aggregate(rows[k * args.videos:(k + 1) * args.videos])}
             for k, a in enumerate(attacks)]
    return {"videos": args.videos, "rows": table,
            "provenance": provenance(args.seed, [WEIGHTS], attacks=attacks, methods=list(methods), videos=args.videos,
                                     executor=args.executor)}
