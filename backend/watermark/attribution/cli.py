"""CLI group ``attribution``: ``python -m backend attribution <action> ... [--json]``.

Actions:
  users create --count N [--strategy absta|random|nrg] [--seed S] [--depth D] [--db PATH]
  users list [--limit L] [--db PATH]         users show ID [--db PATH]
  embed --user ID IN OUT [--backend tinyhidden|dwtDctSvd|dwtDct] [--psnr DB] [--db PATH]
  attribute FILE [--backend ...] [--fpr F | --tau T] [--top K] [--db PATH] [--json]
  evaluate [--attack SPEC ...] [--users N] [--strategy S] [--images DIR] [--count K] [--backend ...] [--json]
  sweep [--attack A] [--strengths 90,70,50] [--backend ...] [--strategy ...] [--users N] [--executor local|ray] [--json]
  bounds --n 64 --beta 0.99 --tau 0.9 [--alpha-min A] [--alpha-max A] [--users S] [--gamma G] [--json]

Handlers build the config of a job of :mod:`.jobs`, run it and return its result; :mod:`backend.cli_common` prints
it (and the ``--json`` flag, the provenance block and the exit code 2 of an InputError). Heavy imports (torch, the
models) happen inside the handlers.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from backend.cli_common import add_action, add_group
from backend.errors import InputError
from backend.watermark.datasets import image_folder, read_image_file


def _prov(args: argparse.Namespace, assets: list = (), **params: object) -> dict:
    from backend.runtime import provenance

    return provenance(getattr(args, "seed", None), assets, **params)


def _weights(path: str | None) -> list:
    return [path] if path is not None else []


def _checked(make):
    """``make()``, a ValueError of the bounds or the code selection reported as an InputError."""
    try:
        return make()
    except ValueError as err:  # InputError included
        raise InputError(str(err)) from None


# -------------------------------------------------------------------------------------------------- handlers
def cmd_users_create(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution.jobs import CreateUsersConfig, run_create_users

    config = _checked(lambda: CreateUsersConfig(args.count, args.strategy, seed=args.seed, depth=args.depth,
                                                n_bits=args.bits, stats=args.stats))
    res = _checked(lambda: run_create_users(args.db, config))
    return {**res.to_json(), "provenance": _prov(args, db=res.db, count=args.count, strategy=args.strategy,
                                                 depth=args.depth)}


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

    from backend.watermark.attribution.jobs import EmbedConfig, run_embed
    from backend.watermark.attribution.users import UserRegistry

    reg = UserRegistry(args.db, create=False)
    user = reg.get(args.user)
    config = _checked(lambda: EmbedConfig(args.backend, args.psnr))
    img = read_image_file(args.input)
    res = _checked(lambda: run_embed(img, user.bits(reg.n_bits), config))
    out = Path(args.output)
    if out.suffix.lower() not in (".png", ""):
        raise InputError("write the watermarked image as PNG (lossless); JPEG would already be an attack.")
    out = out.with_suffix(".png")
    out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(res.watermarked).save(out)
    return {"input": args.input, "output": str(out), "user": user.id, "backend": res.backend_label,
            "psnr_db": res.psnr_db, "ssim": res.ssim, "seconds": res.seconds,
            "size": [int(img.shape[1]), int(img.shape[0])],
            "provenance": _prov(args, _weights(res.weights), backend=args.backend, user=user.id, psnr=args.psnr)}


def cmd_attribute(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution.jobs import AttributeConfig, run_attribute
    from backend.watermark.attribution.users import UserRegistry

    reg = UserRegistry(args.db, create=False)
    pool = reg.pool()
    config = _checked(lambda: AttributeConfig(args.backend, target_fpr=args.fpr, tau=args.tau, gamma=args.gamma,
                                              top=args.top))
    img = read_image_file(args.file)
    res = _checked(lambda: run_attribute(img, pool, config))
    return {
        "file": args.file, "backend": res.backend_label, "users": res.users, "n_bits": res.n_bits, "tau": res.tau,
        "tau_bits": res.tau_bits, "target_fpr": res.target_fpr, "detected": res.detected, "p_value": res.p_value,
        "attributed_user": res.attributed_user, "best_match_user": res.best_match_user,
        "best_bitwise_accuracy": res.best_bitwise_accuracy, "top": res.top, "decoded_bits": res.decoded_bits,
        "decode_seconds": res.decode_seconds, "match_seconds": res.match_seconds,
        "provenance": _prov(args, _weights(res.weights), backend=args.backend, tau=res.tau, db=str(reg.path)),
    }


def cmd_evaluate(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution.jobs import EvaluateConfig, run_evaluate
    from backend.watermark.registry import get_method

    config = _checked(lambda: EvaluateConfig(
        backend=args.backend, attacks=tuple(args.attack or ["none"]), users=args.users, strategy=args.strategy,
        depth=args.depth, target_fpr=args.fpr, gamma=args.gamma, tau=args.tau, psnr=args.psnr, clean=args.clean,
        count=args.count, seed=args.seed))
    images = None
    if args.images:
        images = [read_image_file(p) for p in image_folder(args.images, args.count)]
        source = f"{len(images)} images from {args.images}"
    else:
        source = f"{args.count} held-out images (scikit-image photos never used in training + procedural)"
    pool = None
    if args.db:
        from backend.watermark.attribution.users import UserRegistry

        pool = UserRegistry(args.db, create=False).pool()
    res = _checked(lambda: run_evaluate(images, config, pool=pool))
    out = res.to_dict()
    if not args.per_image:
        for row in out["rows"]:
            row.pop("per_image_bit_accuracy", None)
    out["images"] = source
    weights = getattr(get_method(args.backend, target_psnr=args.psnr), "weights", None)
    out["provenance"] = _prov(args, _weights(weights), **{k: v for k, v in out["config"].items() if k != "seed"})
    return out


def cmd_sweep(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution.jobs import LIVE_STRATEGIES, SweepConfig, run_sweep

    try:
        strengths = tuple(float(v) for v in args.strengths.split(",") if v.strip())
    except ValueError:
        raise InputError("--strengths must be comma-separated numbers, e.g. 90,70,50.") from None
    config = _checked(lambda: SweepConfig(
        attack=args.attack, strengths=strengths, backends=tuple(args.backend or ["tinyhidden"]),
        strategies=tuple(args.strategy) if args.strategy else LIVE_STRATEGIES, users=args.users, count=args.count,
        clean=args.clean, target_fpr=args.fpr, seed=args.seed, executor=args.executor))
    res = _checked(lambda: run_sweep(config))
    return {"attack": args.attack, "strengths": res.strengths, "rows": res.rows,
            "provenance": _prov(args, backends=list(config.backends), strategies=list(config.strategies),
                                users=args.users, count=args.count, clean=args.clean, executor=args.executor)}


def cmd_bounds(args: argparse.Namespace) -> dict:
    from backend.watermark.attribution.jobs import BoundsConfig, run_bounds

    config = _checked(lambda: BoundsConfig(n=args.n, beta=args.beta, tau=args.tau, alpha_min=args.alpha_min,
                                           alpha_max=args.alpha_max, users=args.users, gamma=args.gamma))
    res = run_bounds(config)
    return {"n": args.n, "beta": args.beta, "tau": args.tau, "alpha_min": args.alpha_min,
            "alpha_max": args.alpha_max, "users": args.users, "gamma": args.gamma, **asdict(res),
            "provenance": _prov(args)}


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
