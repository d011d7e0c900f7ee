"""``python -m backend pbfm <action>``: physics-based flow matching against flow matching, weighted residual losses
and residual guidance.

Actions:
  sample    every method (shipped models, seeds 0-2): energy distance to held-out solver fields and mean |residual|
            of n samples, the Pareto front of the methods
  config    ConFIG on random conflicting gradient pairs: equal cosines, against the conflictfree package
  residual  the residual of a field file (NPZ / CSV) and of the solver's own fields
  methods   the methods

Examples::

    python -m backend pbfm sample --case darcy --n 16 --json
    python -m backend pbfm sample --case heat --methods pbfm,fm --seeds 0 --json
    python -m backend pbfm residual --field my_field.npz --case darcy --json
"""

from __future__ import annotations

import argparse

from ..cli_common import Output, add_action, add_group, int_list


def _methods(text: str) -> list[str]:
    from .pbfm import METHODS

    return METHODS.parse_names(text)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``pbfm`` group to ``python -m backend``."""
    acts = add_group(subparsers, "pbfm", "PBFM: flow matching with PDE residuals combined by ConFIG")
    s = add_action(acts, "sample", cmd_sample, "distribution error and residual of every method")
    s.add_argument("--case", default="darcy", help="darcy or heat (default darcy)")
    s.add_argument("--n", type=int, default=256, help="samples per model (default 256)")
    s.add_argument("--steps", type=int, default=50, help="Euler steps (default 50)")
    s.add_argument("--methods", type=_methods, default=None, help="comma-separated (default all)")
    s.add_argument("--seeds", type=int_list, default=(0, 1, 2), help="model seeds (default 0,1,2)")
    c = add_action(acts, "config", cmd_config, "ConFIG's equal-cosine property on random conflicting pairs")
    c.add_argument("--pairs", type=int, default=100)
    c.add_argument("--dim", type=int, default=50)
    c.add_argument("--seed", type=int, default=0)
    r = add_action(acts, "residual", cmd_residual, "the residual of a field file")
    r.add_argument("--field", required=True, help="NPZ (array 'field') or CSV of the case's shape")
    r.add_argument("--case", default=None, help="darcy or heat (default: from the shape)")
    add_action(acts, "methods", cmd_methods, "the methods")
    return acts


def cmd_sample(args: argparse.Namespace) -> Output:
    from .pbfm import METHODS
    from .pbfm_eval import score, summarise

    scores, _ = score(args.case, args.methods or list(METHODS), tuple(args.seeds), n=args.n, steps=args.steps)
    rows = summarise(scores)
    lines = [f"case {args.case}, {args.n} samples, {args.steps} Euler steps, seeds {list(args.seeds)}"]
    lines += [f"{r['label']:<40} energy distance {r['energy_distance']:.4f}  mean |R| {r['mean_residual']:.4g}"
              f"{'  (Pareto)' if r['pareto'] else ''}" for r in rows]
    return Output({"case": args.case, "n": args.n, "steps": args.steps, "methods": rows,
                   "runs": [s.as_dict() for s in scores]}, lines=lines)


def cmd_config(args: argparse.Namespace) -> dict:
    from .pbfm_eval import config_check

    return config_check(args.pairs, args.dim, args.seed)


def cmd_residual(args: argparse.Namespace) -> Output:
    from pathlib import Path

    from ..io.registry import read_path
    from .pdes import CASES, get_case, mean_abs_residual

    field = read_path("pde_field", Path(args.field), case=args.case)
    case = get_case(args.case) if args.case else next(c for c in CASES.values() if c.shape == field.shape)
    own = float(mean_abs_residual(case, case.fields(16, 99)).mean())
    got = float(mean_abs_residual(case, field[None])[0])
    return Output({"case": case.name, "mean_residual": got, "solver_mean_residual": own},
                  lines=[f"{case.name}: mean |R| {got:.4g} (the solver's own fields: {own:.2g})"])


def cmd_methods(args: argparse.Namespace) -> dict:  # noqa: ARG001 - the parsed arguments are unused
    from .pbfm import METHODS

    return {"methods": METHODS.table()}
