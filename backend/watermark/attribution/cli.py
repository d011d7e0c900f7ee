"""CLI group ``attribution``: ``python -m backend attribution <action> ... [--json]``.

Actions:
  users create --count N [--strategy absta|random|nrg] [--seed S] [--depth D] [--db PATH]
  users list [--limit L] [--db PATH]         users show ID [--db PATH]
  embed --user ID IN OUT [--backend tinyhidden|dwtDctSvd|dwtDct] [--psnr DB] [--db PATH]
  attribute FILE [--backend ...] [--fpr F | --tau T] [--top K] [--db PATH] [--json]
  evaluate [--attack SPEC ...] [--users N] [--strategy S] [--images DIR] [--count K] [--backend ...] [--json]
  sweep [--attack A] [--strengths 90,70,50] [--backend ...] [--strategy ...] [--users N] [--executor local|ray] [--json]
  bounds --n 64 --beta 0.99 --tau 0.9 [--alpha-min A] [--alpha-max A] [--users S] [--gamma G] [--json]

Handlers return their result; :mod:`backend.cli_common` prints it (and the ``--json`` flag, the provenance block and
the exit code 2 of an InputError). Heavy imports (torch, the models) happen inside the handlers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli_common import add_action, add_group
from backend.errors import InputError
from backend.watermark.datasets import image_folder, read_image_file


def _prov(args: argparse.Namespace, assets: list = (), **params: object) -> dict:
    from backend.runtime import provenance

    return provenance(getattr(args, "seed", None), assets, **params)


def _backend(args: argparse.Namespace):
    from backend.watermark.registry import get_method

    try:
        return get_method(args.backend, target_psnr=getattr(args, "psnr", None))
    except ValueError as err:
        raise InputError(str(err)) from None


def _weights(be: object) -> list:
    w = getattr(be, "weights", None)
    return [w] if w is not None else []


def _codes_name(strategy: str) -> str:
    from backend.watermark.codes import get_method

    return get_method(strategy).name


# -------------------------------------------------------------------------------------------------- handlers
def cmd_users_create(args: argparse.Namespace) -> dict:
    from backend.runtime import timed
    from backend.watermark.attribution.users import UserRegistry

    reg = UserRegistry(args.db, n_bits=args.bits)
    clock = timed()
    try:
        ids = reg.create_users(args.count, args.strategy, seed=args.seed, depth=args.depth)
    except ValueError as err:
        raise InputError(str(err)) from None
    seconds = clock()
    result = {"db": str(reg.path), "created": len(ids), "first_id": ids[0], "last_id": ids[-1],
              "total_users": reg.count(), "strategy": _codes_name(args.strategy), "n_bits": reg.n_bits,
              "seconds": round(seconds, 3)}
    if args.stats:
        from backend.watermark.codes import pool_stats

        st = pool_stats(reg.pool().codes, reg.n_bits)
        result["max_pairwise_bitwise_accuracy"] = st.max_ba
        result["pairs_sampled"] = st.sampled_pairs
    result["provenance"] = _prov(args, db=str(reg.path), count=args.count, strategy=args.strategy, depth=args.depth)
    return result


def cmd_users_list(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution.users import UserRegistry

    reg = UserRegistry(args.db, create=False)
    users = reg.list(args.limit, args.offset)
    result = {"db": str(reg.path), "total_users": reg.count(), "n_bits": reg.n_bits, "strategies": reg.strategies(),
              "users": [{"id": u.id, "name": u.name, "code_hex": u.hex(reg.n_bits), "strategy": u.strategy}
                        for u in users]}
    return result


def cmd_users_show(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution.users import UserRegistry

    reg = UserRegistry(args.db, create=False)
    u = reg.get(args.id)
    return {"id": u.id, "name": u.name, "code_hex": u.hex(reg.n_bits), "bits": "".join(map(str, u.bits(reg.n_bits))),
            "strategy": u.strategy, "created_unix": u.created}


def cmd_embed(args: argparse.Namespace) -> dict:
    from PIL import Image

    from backend.runtime import timed
    from backend.watermark.attribution.users import UserRegistry
    from backend.watermark.metrics import psnr, ssim

    reg = UserRegistry(args.db, create=False)
    user = reg.get(args.user)
    be = _backend(args)
    if be.n_bits != reg.n_bits:
        raise InputError(f"the database holds {reg.n_bits}-bit codes but {args.backend} embeds {be.n_bits} bits.")
    img = read_image_file(args.input)
    clock = timed()
    wm = be.embed(img, user.bits(reg.n_bits))
    seconds = clock()
    out = Path(args.output)
    if out.suffix.lower() not in (".png", ""):
        raise InputError("write the watermarked image as PNG (lossless); JPEG would already be an attack.")
    out = out.with_suffix(".png")
    out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(wm).save(out)
    result = {"input": args.input, "output": str(out), "user": user.id, "backend": be.label,
              "psnr_db": round(psnr(img, wm), 3), "ssim": round(ssim(img, wm), 5), "seconds": round(seconds, 4),
              "size": [int(img.shape[1]), int(img.shape[0])],
              "provenance": _prov(args, _weights(be), backend=args.backend, user=user.id, psnr=args.psnr)}
    return result


def cmd_attribute(args: argparse.Namespace) -> dict:
    from backend.runtime import timed
    from backend.watermark.attribution import bounds as A
    from backend.watermark.attribution.users import UserRegistry

    reg = UserRegistry(args.db, create=False)
    pool = reg.pool()
    be = _backend(args)
    img = read_image_file(args.file)
    clock = timed()
    bits, ok = be.decode_batch([img])
    decode_s = clock()
    if not ok[0]:
        raise InputError(f"{be.label} cannot decode this image: {img.shape[1]} x {img.shape[0]} px is below its "
                         f"minimum of {be.min_side} px per side.")
    tau = args.tau if args.tau is not None else A.tau_for_fpr(pool.n, len(pool), args.fpr, args.gamma)
    clock = timed()
    m = pool.match(bits[0], tau, k=args.top)
    match_s = clock()
    matches = int(round(m.score[0] * pool.n))
    result = {
        "file": args.file, "backend": be.label, "users": len(pool), "n_bits": pool.n, "tau": tau,
        "tau_bits": A.detection_threshold(pool.n, tau), "target_fpr": None if args.tau is not None else args.fpr,
        "detected": bool(m.detected[0]),
        "p_value": A.detection_p_value(matches, pool.n, len(pool)),
        "attributed_user": int(pool.ids[m.user_index[0]]) if m.detected[0] else None,
        "best_match_user": int(pool.ids[m.user_index[0]]), "best_bitwise_accuracy": float(m.score[0]),
        "top": [{"user": int(pool.ids[i]), "bitwise_accuracy": float(s)}
                for i, s in zip(m.top_index[0], m.top_score[0], strict=True)],
        "decoded_bits": "".join(map(str, bits[0])), "decode_seconds": round(decode_s, 4),
        "match_seconds": round(match_s, 5),
        "provenance": _prov(args, _weights(be), backend=args.backend, tau=tau, db=str(reg.path)),
    }
    return result


def cmd_evaluate(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution import evaluation as E
    from backend.watermark.datasets import heldout_images

    if args.images:
        images = [read_image_file(p) for p in image_folder(args.images, args.count)]
        source = f"{len(images)} images from {args.images}"
    else:
        images = heldout_images(args.count, seed=args.seed)
        source = f"{args.count} held-out images (scikit-image photos never used in training + procedural)"
    pool = None
    if args.db:
        from backend.watermark.attribution.users import UserRegistry

        pool = UserRegistry(args.db, create=False).pool()
    strategy = args.strategy or ("absta" if args.users <= 10_000 else "random")
    cfg = E.EvalConfig(backend=args.backend, attacks=tuple(args.attack or ["none"]), num_users=args.users,
                       strategy=strategy, depth=args.depth, target_fpr=args.fpr, gamma=args.gamma, tau=args.tau,
                       psnr=args.psnr,
                       clean_decodes=args.clean, seed=args.seed)
    try:
        res = E.evaluate(images, cfg, pool=pool)
    except ValueError as err:
        raise InputError(str(err)) from None
    out = res.to_dict()
    if not args.per_image:
        for row in out["rows"]:
            row.pop("per_image_bit_accuracy", None)
    out["images"] = source
    be = _backend(args)
    out["provenance"] = _prov(args, _weights(be), **{k: v for k, v in cfg.__dict__.items() if k != "seed"})
    return out


def cmd_sweep(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution import evaluation as E
    from backend.watermark.datasets import heldout_images

    try:
        strengths = [float(v) for v in args.strengths.split(",") if v.strip()]
    except ValueError:
        raise InputError("--strengths must be comma-separated numbers, e.g. 90,70,50.") from None
    if not strengths:
        raise InputError("--strengths needs at least one value.")
    images = heldout_images(args.count, seed=args.seed)
    clean = E.clean_decode_set(args.clean, seed=args.seed) if args.clean else None
    backends, strategies = args.backend or ["tinyhidden"], args.strategy or ["absta", "random"]
    try:
        rows = E.strength_sweep(images, args.attack, strengths, backends, strategies, num_users=args.users,
                                clean=clean, target_fpr=args.fpr, seed=args.seed, executor=args.executor)
    except ValueError as err:
        raise InputError(str(err)) from None
    return {"attack": args.attack, "strengths": strengths, "rows": rows,
            "provenance": _prov(args, backends=backends, strategies=strategies, users=args.users, count=args.count,
                                clean=args.clean, executor=args.executor)}


def cmd_bounds(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution import bounds as A

    try:
        out = {
            "n": args.n, "beta": args.beta, "tau": args.tau, "alpha_min": args.alpha_min, "alpha_max": args.alpha_max,
            "users": args.users, "gamma": args.gamma,
            "tdr_lower_bound_thm1": A.tdr_lower_bound(args.n, args.beta, args.tau, args.alpha_min)
            if args.tau < args.beta else None,
            "fdr_upper_bound_thm2": A.fdr_upper_bound_random(args.n, args.tau, args.alpha_max),
            "fdr_upper_bound_thm3": A.fdr_upper_bound_independent(args.users, args.n, args.tau, args.gamma),
            "tar_lower_bound_thm4": A.tar_lower_bound(args.n, args.beta, args.tau, args.alpha_max),
            "detection_threshold_bits": A.detection_threshold(args.n, args.tau),
            "attribution_threshold_bits": A.attribution_threshold(args.n, args.tau, args.alpha_max),
        }
    except ValueError as err:
        raise InputError(str(err)) from None
    out["provenance"] = _prov(args)
    return out


# ---------------------------------------------------------------------------------------------------- parser
def _db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None, help="users database (SQLite file; default $METHOD_LAB_ATTRIBUTION_DB "
                                              "or the user cache)")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    sub = add_group(subparsers, "attribution", "watermark embedding and user-level attribution",
                    "One watermark per user, bounds-optimal codes, attribution among many users after "
                    "post-processing (arXiv 2404.04254).")

    users = sub.add_parser("users", help="create / list / show users").add_subparsers(dest="users_action",
                                                                                         metavar="<users action>")
    p = add_action(users, "create", cmd_users_create, "register N new users with fresh watermarks (one transaction)")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--strategy", default="absta", help="absta (the paper's A-BSTA, <= 10,000 users), random, nrg")
    p.add_argument("--seed", type=int, default=None, help="selection seed (default: the first new id)")
    p.add_argument("--depth", type=int, default=4, help="A-BSTA search depth")
    p.add_argument("--bits", type=int, default=64, help="code length of a NEW database")
    p.add_argument("--stats", action="store_true", help="also report the pool's max pairwise bitwise accuracy")
    _db(p)
    p = add_action(users, "list", cmd_users_list, "list users")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0)
    _db(p)
    p = add_action(users, "show", cmd_users_show, "one user's watermark")
    p.add_argument("id", type=int)
    _db(p)

    p = add_action(sub, "embed", cmd_embed, "embed a user's watermark into an image (PNG out)")
    p.add_argument("--user", type=int, required=True)
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--backend", default="tinyhidden", help=_backends_help())
    p.add_argument("--psnr", type=float, default=None, help="PSNR budget of the learned watermark (dB)")
    _db(p)

    p = add_action(sub, "attribute", cmd_attribute, "detect and attribute a suspect image")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--backend", default="tinyhidden", help=_backends_help())
    p.add_argument("--fpr", type=float, default=1e-4, help="target false-detection rate -> tau (Thm 3 bound)")
    p.add_argument("--tau", type=float, default=None, help="detection threshold (overrides --fpr)")
    p.add_argument("--gamma", type=float, default=0.0, help="decoder bias on clean content allowed for in tau (Thm 3)")
    p.add_argument("--top", type=int, default=5)
    _db(p)

    p = add_action(sub, "evaluate", cmd_evaluate, "rates vs post-processing on a folder of images (or the held-out set)")
    p.add_argument("--attack", action="append", help="attack chain in the grammar of backend.watermark.attacks, e.g. "
                   "jpeg:50 or jpeg:50+resize:0.5; repeatable")
    p.add_argument("--users", type=int, default=10_000, help="size of a synthetic user pool")
    p.add_argument("--strategy", default=None, help="absta (default up to 10,000 users) or random / nrg")
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--images", default=None, help="folder of images (default: the built-in held-out set)")
    p.add_argument("--count", type=int, default=40, help="number of images")
    p.add_argument("--backend", default="tinyhidden", help=_backends_help())
    p.add_argument("--psnr", type=float, default=None)
    p.add_argument("--fpr", type=float, default=1e-4)
    p.add_argument("--gamma", type=float, default=0.0)
    p.add_argument("--tau", type=float, default=None)
    p.add_argument("--clean", type=int, default=0, help="extra clean decodes for the false-detection rate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-image", action="store_true", help="include per-image bit accuracies")
    _db(p)

    p = add_action(sub, "sweep", cmd_sweep, "rates vs the strength of one attack, per backend and code strategy "
                   "(locally or on Ray)")
    p.add_argument("--attack", default="jpeg", help="attack name of backend.watermark.attacks, e.g. jpeg, resize")
    p.add_argument("--strengths", default="90,70,50", help="comma-separated strengths of --attack")
    p.add_argument("--backend", action="append", help="repeatable (default: tinyhidden)")
    p.add_argument("--strategy", action="append", help="repeatable code strategy (default: absta and random)")
    p.add_argument("--users", type=int, default=1000, help="size of the synthetic user pool")
    p.add_argument("--count", type=int, default=8, help="held-out images")
    p.add_argument("--clean", type=int, default=0, help="clean decodes for the false-detection rate")
    p.add_argument("--fpr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0, help="images, users and attack seeds of every case")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="ray: one task per (backend, strategy) on $METHOD_LAB_RAY_ADDRESS (unset: a Ray instance here)")

    p = add_action(sub, "bounds", cmd_bounds, "the paper's bounds (Thm 1-4) for given n, beta, tau, alphas, users")
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--beta", type=float, default=0.99)
    p.add_argument("--tau", type=float, default=0.9)
    p.add_argument("--alpha-min", type=float, default=0.2)
    p.add_argument("--alpha-max", type=float, default=0.8)
    p.add_argument("--users", type=int, default=100_000_000)
    p.add_argument("--gamma", type=float, default=0.05)


def _backends_help() -> str:
    from backend.watermark.registry import BACKENDS

    return "watermark backend: " + ", ".join(BACKENDS[k].name for k in BACKENDS)
