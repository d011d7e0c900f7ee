"""``python -m backend vintix <action>``: the decision-pretrained transformer with a rectified-flow action head.

Actions:
  run    one task: the heads' action densities given a context (continuous tasks), the entropy curve over context
         lengths, and the online regret: the DPT vs UCB1, Thompson sampling and Algorithm Distillation (K-armed),
         vs GP-UCB and discretised Thompson sampling (continuous), vs AD and goal posterior sampling (dark room)
  eval   the claims' measurements on held-out tasks: entropy vs context length, mass near the peaks of bimodal tasks
         per head, online regret vs Thompson sampling, permutation invariance

Examples::

    python -m backend vintix run --task bimodal --context 64 --json
    python -m backend vintix run --means 0.2,0.5,0.8 --context 32 --horizon 64 --json
    python -m backend vintix run --peaks -0.5:0.08,0.5:0.08 --context 64 --json
    python -m backend vintix run --task-file task.csv --json
    python -m backend vintix eval --tasks 64 --json

Each action builds the config of ``jobs`` and calls its job (``run_task``, ``run_eval``), as the page does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``vintix`` group to ``python -m backend``."""
    acts = add_group(subparsers, "vintix", "DPT with a rectified-flow action head: in-context bandits and dark room")
    r = add_action(acts, "run", cmd_run, "one task: densities per head, entropy vs context, online regret")
    r.add_argument("--task", default="bimodal", help="bimodal, unimodal, karm or darkroom (default bimodal)")
    r.add_argument("--means", default=None, help="arm means of a K-armed task, e.g. 0.2,0.5,0.8")
    r.add_argument("--peaks", default=None, help="centre:width peaks of a continuous task (height 0.8)")
    r.add_argument(
        "--task-file", type=Path, default=None, help="a bandit_task CSV (mean | center,width[,height] | a,r)"
    )
    r.add_argument("--context", type=int, default=64, help="context tuples, 0-64 (default 64)")
    r.add_argument("--horizon", type=int, default=64,
                   help="online rounds, 1-256 (default 64; the model's context holds 64: FIFO past it)")
    r.add_argument("--offline", action="store_true", help="continuous tasks: skip the online bandit run")
    r.add_argument("--samples", type=int, default=512, help="action samples per head (default 512)")
    r.add_argument("--replicas", type=int, default=32, help="reward draws of the online run (default 32)")
    r.add_argument("--seed", type=int, default=0)
    e = add_action(acts, "eval", cmd_eval, "claims' measurements on held-out tasks")
    e.add_argument("--tasks", type=int, default=64, help="held-out tasks per measurement (default 64)")
    e.add_argument("--context", type=int, default=64)
    e.add_argument("--horizon", type=int, default=64)
    e.add_argument("--seed", type=int, default=0)
    return acts


def _task(args: argparse.Namespace):  # noqa: ANN202 - a preset name or a task object
    from ...errors import InputError
    from ...io.registry import read_path
    from . import tasks as T

    given = [x is not None for x in (args.means, args.peaks, args.task_file)]
    if sum(given) > 1:
        raise InputError("Give at most one of --means, --peaks and --task-file.")
    if args.means is not None:
        return T.parse_means(args.means)
    if args.peaks is not None:
        return T.parse_peaks(args.peaks)
    if args.task_file is not None:
        return read_path("bandit_task", args.task_file)
    return args.task


def cmd_run(args: argparse.Namespace) -> Output:
    from .jobs import RunConfig, run_task

    cfg = RunConfig(context=args.context, horizon=args.horizon, n_samples=args.samples, replicas=args.replicas,
                    seed=args.seed, online=not args.offline)
    res = run_task(_task(args), cfg)
    out = res.compact()
    lines = [f"task {out['task']} ({out['family']})"]
    if "heads" in out:
        for h, v in out["heads"].items():
            lines.append(f"{h:9s} mass within 0.1 of a peak {v['mass']:.3f}  entropy {v['entropy']:.3f}")
    if "regret" in out:
        for a, v in out["regret"]["agents"].items():
            lines.append(f"{a:9s} cumulative regret {v['final']:.2f}")
    if out.get("family") == "dark":
        for a, v in out["agents"].items():
            lines.append(f"{a:9s} returns per episode " + ", ".join(f"{x:.2f}" for x in v["returns"]))
    return Output(out, lines=lines)


def cmd_eval(args: argparse.Namespace) -> Output:
    from .jobs import EvalConfig, run_eval

    res = run_eval(EvalConfig(n_tasks=args.tasks, context=args.context, horizon=args.horizon, seed=args.seed)).summary
    lines = [
        f"entropy at context 0 / {args.context}: {res['entropy']['first']:.3f} / {res['entropy']['last']:.3f}",
        "peak mass " + ", ".join(f"{h} {v:.3f}" for h, v in res["peak_mass"].items()),
        f"regret DPT / Thompson {res['regret']['ratio_dpt_thompson']:.3f}, DPT / AD {res['regret']['ratio_dpt_ad']:.3f}",
        "continuous regret " + ", ".join(f"{a} {v:.2f}" for a, v in res["cont_online"]["final"].items()),
        "dark-room return " + ", ".join(f"{a} {v:.2f}" for a, v in res["dark"]["total"].items()),
        f"permutation gap {res['invariance']['max']:.2e}",
    ]
    return Output(res, lines=lines)
