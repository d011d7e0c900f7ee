"""CLI group ``crowd``: ``python -m backend crowd <action> ... [--json]``.

* ``simulate --scene bottleneck --method stddn --seconds 20 --seed S [--input FILE --fps F] [--out CSV] --json``:
  generate (or read) a clip, roll one or more methods out under the paper's protocol, print the metrics.
* ``evaluate [--scenes ...] [--methods ...] [--seconds 60] [--seed 300] --json``: the held-out evaluation table.
* ``scenes``: the scene presets (held-out evaluation geometries) and training geometries.
* ``methods``: the registry (name, label, kind, colour).

Without ``--json`` every action prints a short table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli_common import Output, add_action, add_group

from .interface import METHODS

METRIC_COLUMNS = ("MAE", "OT", "MMD", "FDE", "collisions")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    acts = add_group(subparsers, "crowd", "STDDN crowd simulation vs social force, ORCA and learned baselines")

    s = add_action(acts, "simulate", cmd_simulate, "simulate a scene (or your CSV) with one or more methods")
    s.add_argument("--scene", default="bottleneck", help="corridor, bottleneck, crossing, concourse or a full name")
    s.add_argument("--input", type=Path, default=None, help="a frame,id,x,y CSV instead of a generated scene")
    s.add_argument("--fps", type=float, default=12.5, help="frame rate of --input (frames per second)")
    s.add_argument("--method", action="append", default=None,
                   help=f"{', '.join(METHODS)} (repeat; default stddn)")
    s.add_argument("--seconds", type=float, default=20.0)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--stride", type=int, default=1, help="score OT/MMD every STRIDE frames")
    s.add_argument("--out", type=Path, default=None, help="write the rollouts as CSV (method,frame,time_s,id,x,y)")

    e = add_action(acts, "evaluate", cmd_evaluate, "held-out evaluation of every method (long rollouts)")
    e.add_argument("--scenes", nargs="*", default=None)
    e.add_argument("--methods", nargs="*", default=None, help=f"of: {', '.join(METHODS)} (default all)")
    e.add_argument("--seconds", type=float, default=60.0)
    e.add_argument("--seed", type=int, default=300)
    e.add_argument("--stride", type=int, default=2)

    add_action(acts, "scenes", cmd_scenes, "list scene presets")
    add_action(acts, "methods", cmd_methods, "list the simulators (name, label, kind, colour)")
    return acts


def _table_lines(rows: list[dict]) -> list[str]:
    lines = [f"{'method':<20} " + " ".join(f"{k:>10}" for k in METRIC_COLUMNS)]
    for r in rows:
        lines.append(f"{r['label']:<20} " + " ".join(f"{float(r[k]):>10.4g}" for k in METRIC_COLUMNS))
    return lines


def cmd_simulate(args: argparse.Namespace) -> Output:
    from backend.io.export import to_csv as safe_csv
    from backend.io.registry import read_path
    from backend.runtime import provenance

    from .jobs import SimulateConfig, run_simulate
    from .scenes import get_scene

    config = SimulateConfig(**({"methods": tuple(args.method)} if args.method else {}), seconds=args.seconds,
                            seed=args.seed, stride=args.stride)
    if args.input is not None:
        res = run_simulate(read_path("trajectories", args.input, fps=args.fps), config)
        source = {"input": str(args.input), "fps": args.fps}
    else:
        scene = get_scene(args.scene)
        res = run_simulate(scene.name, config)
        source = {"scene": scene.name, "seconds": args.seconds}
    result = {**res.summary(), "provenance": provenance(args.seed, res.assets, methods=list(config.methods),
                                                        stride=args.stride, **source)}
    if args.out is not None:
        safe_csv(res.rollouts_frame(), args.out)
        result["out"] = str(args.out)
    c = result["clip"]
    lines = [f"{c['name']}: {c['agents']} agents, {c['seconds']} s; ground-truth collisions "
             f"{res.gt_collisions:.4g}", *_table_lines(result["metrics"])]
    if args.out is not None:
        lines.append(f"wrote {args.out}")
    return Output(result, lines=lines)


def cmd_evaluate(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import EvaluateConfig, run_evaluate

    config = EvaluateConfig(tuple(args.scenes or ()), args.seconds, args.seed, tuple(args.methods or ()), args.stride)
    res = run_evaluate(config)
    result = {**res.summary(),
              "provenance": provenance(args.seed, res.assets, seconds=args.seconds, scenes=args.scenes,
                                       methods=list(config.methods), stride=args.stride)}
    return Output(result, lines=_table_lines(res.table))


def cmd_scenes(args: argparse.Namespace) -> Output:  # noqa: ARG001
    from .scenes import EVAL_SCENES, PRESETS, TRAIN_SCENES

    result = {"presets": {k: s.name for k, s in PRESETS.items()},
              "evaluation": [s.name for s in EVAL_SCENES], "training": [s.name for s in TRAIN_SCENES]}
    lines = [*(f"{k:<12} {v}" for k, v in result["presets"].items()),
             f"training: {', '.join(result['training'])}"]
    return Output(result, lines=lines)


def cmd_methods(args: argparse.Namespace) -> Output:  # noqa: ARG001
    rows = METHODS.table()
    return Output({"methods": rows}, lines=[f"{r['name']:<18} {r['kind']:<9} {r['label']}" for r in rows])
