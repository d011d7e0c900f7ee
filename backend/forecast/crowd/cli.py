"""CLI group ``crowd``: ``python -m backend crowd <action> ... [--json]``.

* ``simulate --scene bottleneck --method stddn --seconds 20 --seed S [--input FILE --fps F] [--out CSV] --json``:
  generate (or read) a clip, roll one or more methods out under the paper's protocol, print the metrics.
* ``evaluate [--scenes ...] [--methods ...] [--seconds 60] [--seed 300] --json``: the held-out evaluation table.
* ``scenes``: the scene presets (held-out evaluation geometries) and training geometries.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("crowd", help="STDDN crowd simulation vs social force, ORCA and learned baselines")
    sub = p.add_subparsers(dest="action", metavar="<action>")

    s = sub.add_parser("simulate", help="simulate a scene (or your CSV) with one or more methods")
    s.add_argument("--scene", default="bottleneck", help="corridor, bottleneck, crossing, concourse or a full name")
    s.add_argument("--input", type=Path, default=None, help="a frame,id,x,y CSV instead of a generated scene")
    s.add_argument("--fps", type=float, default=12.5, help="frame rate of --input (frames per second)")
    s.add_argument("--method", action="append", default=None,
                   help="stddn, micro, social_force, orca, constant_velocity (repeat; default stddn)")
    s.add_argument("--seconds", type=float, default=20.0)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--stride", type=int, default=1, help="score OT/MMD every STRIDE frames")
    s.add_argument("--out", type=Path, default=None, help="write the rollouts as CSV (method,frame,time_s,id,x,y)")
    s.add_argument("--json", action="store_true", help="print JSON (always on; kept for symmetry)")
    s.set_defaults(func=cmd_simulate)

    e = sub.add_parser("evaluate", help="held-out evaluation of every method (long rollouts)")
    e.add_argument("--scenes", nargs="*", default=None)
    e.add_argument("--methods", nargs="*", default=None)
    e.add_argument("--seconds", type=float, default=60.0)
    e.add_argument("--seed", type=int, default=300)
    e.add_argument("--stride", type=int, default=2)
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_evaluate)

    c = sub.add_parser("scenes", help="list scene presets")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_scenes)
    return p


def _assets(methods: list[str]) -> list[Path]:
    from .methods import WEIGHTS

    return [WEIGHTS[m] for m in methods if m in WEIGHTS]


def cmd_simulate(args: argparse.Namespace) -> int:
    from backend.errors import InputError
    from backend.runtime import provenance

    from .csvio import read_trajectories, rollouts_to_frame
    from .evaluate import eval_clip, run_clip
    from .methods import METHODS
    from .scenes import get_scene

    methods = [m.strip().lower().replace("-", "_") for m in (args.method or ["stddn"])]
    for m in methods:
        if m not in METHODS:
            raise InputError(f"unknown method {m!r}; valid: {', '.join(METHODS)}")
    if not (1.0 <= args.seconds <= 300.0):
        raise InputError("--seconds must be between 1 and 300")
    if args.input is not None:
        if not args.input.is_file():
            raise InputError(f"{args.input} does not exist")
        clip = read_trajectories(args.input.read_bytes(), fps=args.fps, name=args.input.name)
        source = {"input": str(args.input), "fps": args.fps}
    else:
        try:
            scene = get_scene(args.scene)
        except ValueError as err:
            raise InputError(str(err)) from None
        clip = eval_clip(scene, args.seconds, args.seed)
        source = {"scene": scene.name, "seconds": args.seconds}
    run = run_clip(clip, methods, stride=args.stride)
    result = {"clip": clip.summary(), "metrics": run.table(), "ground_truth_collisions": run.gt_collisions,
              "provenance": provenance(args.seed, _assets(methods), methods=methods, stride=args.stride, **source)}
    if args.out is not None:
        rollouts_to_frame(clip, {m: r.positions for m, r in run.rollouts.items()}).to_csv(args.out, index=False)
        result["out"] = str(args.out)
    print(json.dumps(result, indent=2))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from backend.errors import InputError
    from backend.runtime import provenance

    from .evaluate import evaluate
    from .methods import METHODS

    try:
        res = evaluate(args.scenes, args.seconds, args.seed, args.methods, args.stride)
    except ValueError as err:
        raise InputError(str(err)) from None
    methods = args.methods or list(METHODS)
    print(json.dumps({"table": res.table, "per_scene": res.per_scene,
                      "provenance": provenance(args.seed, _assets(methods), seconds=args.seconds,
                                               scenes=args.scenes, methods=methods, stride=args.stride)}, indent=2))
    return 0


def cmd_scenes(args: argparse.Namespace) -> int:  # noqa: ARG001
    from .scenes import EVAL_SCENES, PRESETS, TRAIN_SCENES

    print(json.dumps({"presets": {k: s.name for k, s in PRESETS.items()},
                      "evaluation": [s.name for s in EVAL_SCENES], "training": [s.name for s in TRAIN_SCENES]},
                     indent=2))
    return 0
