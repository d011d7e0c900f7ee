"""``python -m backend nowcast <action>``: probabilistic precipitation nowcasts (RainPro-8 miniature) and pysteps rivals.

Actions:
  run       forecast one case: a seeded synthetic case (``--case seed=3``) or an uploaded radar file (``--input``),
            with one or more methods (``--method model --method steps``); scores against the truth when known;
            ``--out FILE.npz|FILE.nc`` writes the forecasts.
  evaluate  score methods over held-out synthetic cases (seeds 20000+) and check the paper's claims.
  methods   list the registry.

Examples:
  python -m backend nowcast run --case seed=3 --method model --leads 32 --out fc.npz --json
  python -m backend nowcast run --input radar.npz --method model --method extrapolation --json
  python -m backend nowcast evaluate --cases 8 --json
"""

from __future__ import annotations

import argparse
import sys

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    sub = add_group(subparsers, "nowcast", "RainPro-8 style probabilistic nowcasts vs pysteps", description=__doc__)

    r = add_action(sub, "run", cmd_run, "forecast one case (synthetic or uploaded)")
    src = r.add_mutually_exclusive_group()
    src.add_argument("--case", default=None, help="synthetic case, e.g. seed=3 (default when no --input)")
    src.add_argument("--input", default=None, help="radar file: NPZ, NetCDF classic or ZIP of PNG frames")
    r.add_argument("--method", action="append", default=None,
                   help="method name (repeatable or comma-separated; default: model). 'all' for every method")
    r.add_argument("--leads", type=int, default=32, help="15-minute leads, 1-32 (default 32 = 8 h)")
    r.add_argument("--seed", type=int, default=0, help="seed of the stochastic methods (STEPS)")
    r.add_argument("--timestep-min", type=float, default=None, help="minutes between uploaded frames, if not in file")
    r.add_argument("--pixel-km", type=float, default=None, help="pixel size of the upload, if not in the file")
    r.add_argument("--png-scale", type=float, default=0.25, help="mm/h per grey level of PNG frames")
    r.add_argument("--no-hold-out", action="store_true",
                   help="forecast from the last 4 uploaded frames (default: first 4 as input, the rest as truth)")
    r.add_argument("--out", default=None, help="write the forecasts to FILE.npz or FILE.nc")

    e = add_action(sub, "evaluate", cmd_evaluate, "score methods over held-out synthetic cases and check the claims")
    e.add_argument("--cases", type=int, default=8, help="number of held-out cases (seeds 20000+)")
    e.add_argument("--start", type=int, default=20000, help="first seed (>= 20000: never used in training)")
    e.add_argument("--method", action="append", default=None, help="methods (default: all)")
    e.add_argument("--leads", type=int, default=32)
    e.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="ray: one task per case on $METHOD_LAB_RAY_ADDRESS (default local: a Ray instance here)")

    add_action(sub, "methods", cmd_methods, "list the nowcasting methods")
    return sub


def _methods(arg: list[str] | None) -> tuple[str, ...] | None:
    """Repeated or comma-separated ``--method`` values; ``all`` is every method; None: the config's default."""
    from .baselines import METHODS

    if not arg:
        return None
    names = [n.strip() for a in arg for n in a.split(",") if n.strip()]
    return tuple(METHODS) if any(n.lower() == "all" for n in names) else tuple(names)


def _case_seed(spec: str | None) -> int:
    from ...errors import InputError

    if spec is None:
        return 3
    key, _, val = spec.partition("=")
    if key.strip() != "seed" or not val.strip().lstrip("-").isdigit():
        raise InputError(f"--case must look like seed=3; got {spec!r}.")
    return int(val)


def _output(result: dict) -> Output:
    lines = ["  ".join(f"{k}={v}" for k, v in row.items()) for row in result.get("table", [])]
    lines += [f"{k}: {'holds' if v.get('holds') else 'does NOT hold'}" for k, v in result.get("claims", {}).items()]
    if result.get("out"):
        lines.append(f"wrote {result['out']}")
    return Output(result, lines=lines)


def cmd_run(args: argparse.Namespace) -> Output:
    from pathlib import Path

    from ...errors import InputError
    from ...io.registry import read_path
    from ...runtime import provenance
    from .io import to_model_grid
    from .jobs import ForecastConfig, run_forecast

    suffix = Path(args.out).suffix.lower() if args.out else ".npz"
    if suffix not in (".npz", ".nc"):
        raise InputError("--out must end in .npz or .nc.")
    methods = _methods(args.method)
    config = ForecastConfig(**({} if methods is None else {"methods": methods}), leads=args.leads, seed=args.seed,
                            hold_out=not args.no_hold_out, export=suffix[1:])
    if args.input:
        path = Path(args.input)
        seq = read_path("radar", path, timestep_min=args.timestep_min, pixel_km=args.pixel_km,
                        png_scale=args.png_scale)
        res = run_forecast(to_model_grid(seq), config, name=path.name)
    else:
        res = run_forecast(_case_seed(args.case), config)
    result = res.summary()
    if args.out:
        Path(args.out).write_bytes(res.forecast_file)
        result["out"] = str(args.out)
    result["provenance"] = provenance(args.seed, res.assets, command="nowcast run", methods=list(config.methods),
                                      leads=args.leads, **res.source)
    return _output(result)


def cmd_evaluate(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .baselines import MODEL_FILE, UNET_FILE
    from .jobs import EvaluateConfig, run_evaluate

    methods = _methods(args.method)
    config = EvaluateConfig(args.cases, args.start, **({} if methods is None else {"methods": methods}),
                            leads=args.leads, executor=args.executor)

    def progress(f: float, msg: str = "") -> None:
        print(f"[{f:5.1%}] {msg}", file=sys.stderr, flush=True)

    res = run_evaluate(config, progress=progress if not args.json else None)
    result = res.summary()
    result["provenance"] = provenance(None, [MODEL_FILE, UNET_FILE], command="nowcast evaluate", cases=args.cases,
                                      start=args.start, methods=list(config.methods), leads=args.leads)
    return _output(result)


def cmd_methods(args: argparse.Namespace) -> Output:  # noqa: ARG001
    from .baselines import METHODS

    rows = [{"name": k, "label": METHODS.label(k), "needs_nwp": m.needs_nwp} for k, m in METHODS.items()]
    return Output({"methods": rows}, lines=[f"{r['name']:14s} {r['label']}" for r in rows])
