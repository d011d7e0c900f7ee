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


def _methods(arg: list[str] | None, default: tuple[str, ...]) -> list[str]:
    from .baselines import METHODS

    if not arg:
        return list(default)
    names = [n.strip().lower() for a in arg for n in a.split(",") if n.strip()]
    if "all" in names:
        return list(METHODS)
    return [METHODS.key(n) for n in names]


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
    from . import io as pio
    from .baselines import MODEL_FILE, UNET_FILE, NowcastInputs
    from .pipeline import run_case, run_nowcast

    methods = _methods(args.method, ("model",))
    if args.out and Path(args.out).suffix.lower() not in (".npz", ".nc"):
        raise InputError("--out must end in .npz or .nc.")
    if args.input:
        path = Path(args.input)
        seq = read_path("radar", path, timestep_min=args.timestep_min, pixel_km=args.pixel_km,
                        png_scale=args.png_scale)
        grid = pio.to_model_grid(seq)
        x, truth = pio.split_sequence(grid.frames, 4, hold_out=not args.no_hold_out)
        inp = NowcastInputs(radar=x, pixel_km=grid.pixel_km, timestep_min=grid.timestep_min)
        notes = grid.notes + ["radar-only path: no satellite or NWP for uploads"]
        run = run_nowcast(inp, methods, args.leads, seed=args.seed, truth=truth, notes=notes)
        source = {"input": path.name}
    else:
        seed = _case_seed(args.case)
        _, run = run_case(seed, methods, args.leads)
        source = {"case_seed": seed}
    result = {
        "source": source, "methods": list(run.forecasts), "skipped": run.skipped, "leads": run.n_leads,
        "timestep_min": run.timestep_min, "pixel_km": run.pixel_km, "notes": run.notes, "table": run.table(),
        "scores": {k: {"crps": v["crps"], "csi_1mmh": v["csi"]["1.0"]} for k, v in run.scores.items()},
    }
    if args.out:
        data = pio.forecast_netcdf(run) if args.out.lower().endswith(".nc") else pio.forecast_npz(run)
        Path(args.out).write_bytes(data)
        result["out"] = str(args.out)
    assets = [p for p, m in ((MODEL_FILE, "model"), (UNET_FILE, "unet")) if m in run.forecasts]
    result["provenance"] = provenance(args.seed, assets, command="nowcast run", methods=methods, leads=args.leads,
                                      **source)
    return _output(result)


def cmd_evaluate(args: argparse.Namespace) -> Output:
    from ...errors import InputError
    from ...runtime import provenance
    from .baselines import MODEL_FILE, UNET_FILE
    from .pipeline import DEFAULT_METHODS, check_claims, evaluate, heldout_seeds

    if not 1 <= args.cases <= 200:
        raise InputError("--cases must be 1-200.")
    if args.start < 20000:
        raise InputError("--start must be >= 20000 (lower seeds are training and validation cases).")
    methods = _methods(args.method, DEFAULT_METHODS)
    seeds = heldout_seeds(args.cases, args.start)

    def progress(f: float, msg: str = "") -> None:
        print(f"[{f:5.1%}] {msg}", file=sys.stderr, flush=True)

    summaries = evaluate(seeds, methods, args.leads, progress=progress if not args.json else None,
                         executor=args.executor)
    result = {"seeds": seeds, "methods": methods, "summaries": summaries, "claims": check_claims(summaries),
              "provenance": provenance(None, [MODEL_FILE, UNET_FILE], command="nowcast evaluate", cases=args.cases,
                                       start=args.start, methods=methods, leads=args.leads)}
    return _output(result)


def cmd_methods(args: argparse.Namespace) -> Output:  # noqa: ARG001
    from .baselines import METHODS, NEEDS_NWP

    rows = [{"name": k, "label": METHODS.label(k), "needs_nwp": k in NEEDS_NWP} for k in METHODS]
    return Output({"methods": rows}, lines=[f"{r['name']:14s} {r['label']}" for r in rows])
