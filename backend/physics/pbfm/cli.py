"""``python -m backend pbfm <action>``: physics-based flow matching against flow matching, weighted residual losses
and residual guidance.

Actions:
  sample    every method (shipped models, seeds 0-2): energy distance to held-out solver fields (standardised
            channels, and per channel) and mean |residual| of n samples with its noise-equivalent std, the Pareto
            front of the methods
  diagnostics  Darcy: FM and PBFM beside wider, longer-trained and per-node-normalised models (why the samples are
            not physical)
  config    ConFIG on random conflicting gradient pairs: equal cosines, against the conflictfree package
  residual  the residual of a field file (NPZ / CSV) and of the solver's own fields
  methods   the methods

Examples::

    python -m backend pbfm sample --case darcy --n 16 --json
    python -m backend pbfm sample --case heat --methods pbfm,fm --seeds 0 --json
    python -m backend pbfm residual --field my_field.npz --case darcy --json
    python -m backend pbfm diagnostics --n 128 --json
"""

from __future__ import annotations

import argparse

from ...cli_common import Output, add_action, add_group, int_list


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
    d = add_action(acts, "diagnostics", cmd_diagnostics, "why the samples are not physical (Darcy, seed 0)")
    d.add_argument("--n", type=int, default=256, help="samples per model (default 256)")
    add_action(acts, "methods", cmd_methods, "the methods")
    return acts


def cmd_sample(args: argparse.Namespace) -> Output:
    from .jobs import SampleConfig, run_sample

    chosen = {} if args.methods is None else {"methods": tuple(args.methods)}
    config = SampleConfig(args.case, args.n, args.steps, seeds=tuple(args.seeds), **chosen)
    res = run_sample(config)
    lines = [f"case {res.case}, {res.n} samples, {res.steps} Euler steps, seeds {res.seeds}"]
    lines += [f"{r['label']:<44} energy distance {r['energy_distance']:.4f} (standardised)  mean |R| "
              f"{r['mean_residual']:.4g} = noise {100 * r['noise_rel']:.0f} % of std(u)"
              f"{'  (Pareto)' if r['pareto'] else ''}" for r in res.rows]
    lines += [f"reference: {x['label']:<34} energy distance {x['energy_distance']:.4f}  mean |R| "
              f"{x['mean_residual']:.4g}" for x in res.references]
    return Output({"case": res.case, "n": res.n, "steps": res.steps, "methods": res.rows, "runs": res.runs,
                   "references": res.references}, lines=lines)


def cmd_diagnostics(args: argparse.Namespace) -> Output:
    from .jobs import DiagnosticsConfig, run_diagnostics

    res = run_diagnostics(DiagnosticsConfig(args.n))
    return Output({"n": res.n, "models": res.rows}, lines=[
        f"{r['label']:<32} energy distance {r['energy_distance']:.4f}  mean |R| {r['mean_residual']:.4g}  noise "
        f"{100 * r['noise_rel']:.0f} % of std(u)  u error {100 * r['solution_error']:.0f} %" for r in res.rows])


def cmd_config(args: argparse.Namespace) -> dict:
    from dataclasses import asdict

    from .jobs import ConfigCheckConfig, run_config_check

    return asdict(run_config_check(ConfigCheckConfig(args.pairs, args.dim, args.seed)))


def cmd_residual(args: argparse.Namespace) -> Output:
    from pathlib import Path

    from ...io.registry import read_path
    from .jobs import ResidualConfig, run_residual

    config = ResidualConfig(args.case)
    res = run_residual(read_path("pde_field", Path(args.field), case=config.case), config)
    return Output({"case": res.case, "mean_residual": res.mean_residual,
                   "solver_mean_residual": res.solver_mean_residual},
                  lines=[f"{res.case}: mean |R| {res.mean_residual:.4g} (the solver's own fields: "
                         f"{res.solver_mean_residual:.2g})"])


def cmd_methods(args: argparse.Namespace) -> dict:  # noqa: ARG001 - the parsed arguments are unused
    from .pbfm import METHODS

    return {"methods": METHODS.table()}
