"""``python -m backend dada <action>``: DADA against tuned baselines on convex problems.

Actions:
  race         DADA, DoG, AdaGrad-norm (learning-rate grid) and GD (learning-rate grid) on one problem: best f - f*
               (relative to f(x0) - f*) per iteration, the distance estimate rbar_k, summary table
  sensitivity  DADA (and DoG) for initial distance guesses rbar in 1e-8 .. 10: final gaps and their spread

Examples::

    python -m backend dada race --problem quadratic --dim 100 --json
    python -m backend dada race --problem l1 --dim 1000 --constraint box --radius 0.5 --json
    python -m backend dada race --problem logistic --csv data.csv --label y --constraint simplex --radius 10 --json
    python -m backend dada sensitivity --problem quadratic --dim 100 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, float_list


def _methods(text: str) -> tuple[str, ...]:
    from .baselines import METHODS

    out = tuple(METHODS.parse_names(text.replace("-", "_")))
    if not out:
        raise argparse.ArgumentTypeError(f"name at least one method of: {', '.join(METHODS)}")
    return out


def _problem_args(q: argparse.ArgumentParser) -> None:
    from .problems import CHAIN_VARIANTS, CONSTRAINTS, DATASETS, PROBLEMS

    q.add_argument("--problem", default="quadratic", help=f"{', '.join(PROBLEMS)} (default quadratic)")
    q.add_argument("--dim", type=int, default=100, help="dimension d (synthetic problems; default 100)")
    q.add_argument("--iters", type=int, default=2000, help="iterations (default 2000)")
    q.add_argument("--constraint", choices=CONSTRAINTS, default="none")
    q.add_argument("--radius", type=float, default=1.0, help="box half-width or simplex sum (default 1)")
    q.add_argument("--kappa", type=float, default=1e4, help="quadratic condition number (default 1e4)")
    q.add_argument("--p", type=float, default=4.0, help="power of the worst-case chain (default 4)")
    q.add_argument("--chain", choices=CHAIN_VARIANTS, default="dada",
                   help="chain variant: the DADA paper's (x0 = 1, x* = 0) or Nesterov's (with -x_1); default dada")
    q.add_argument("--csv", type=Path, default=None, help="CSV for logistic/softmax regression (label = last column)")
    q.add_argument("--label", default=None, help="label column of --csv (default: the last column)")
    q.add_argument("--dataset", default="breast_cancer",
                   help=f"bundled data set when no --csv: {', '.join(DATASETS)}")
    q.add_argument("--lam", type=float, default=1e-3, help="L2 coefficient of logistic/softmax (default 1e-3)")
    q.add_argument("--seed", type=int, default=0)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``dada`` group to ``python -m backend``."""
    from .baselines import LR_GRID_DEFAULT, METHODS, RBAR_GRID_DEFAULT

    acts = add_group(subparsers, "dada", "DADA: parameter-free dual averaging vs tuned baselines")

    r = add_action(acts, "race", cmd_race, "DADA vs DoG, AdaGrad-norm and GD (learning-rate grids) on one problem")
    _problem_args(r)
    r.add_argument("--methods", type=_methods, default=tuple(METHODS),
                   help=f"comma-separated, of: {', '.join(METHODS)} (default all)")
    r.add_argument("--lr-grid", type=float_list, default=LR_GRID_DEFAULT, help="learning rates of GD and AdaGrad-norm")
    r.add_argument("--rbar", type=float, default=None, help="initial distance guess (default 1e-6 (1 + ||x0||))")
    r.add_argument("--full-curves", action="store_true", help="every iteration in the JSON (default: ~500 points)")

    s = add_action(acts, "sensitivity", cmd_sensitivity,
                   "final gap of DADA and DoG for initial guesses rbar in 1e-8..10")
    _problem_args(s)
    s.add_argument("--rbar-grid", type=float_list, default=RBAR_GRID_DEFAULT)
    return acts


def _problem(args: argparse.Namespace):  # noqa: ANN202 - (ProblemConfig, Table | None)
    from ...io.registry import read_path
    from .jobs import ProblemConfig

    config = ProblemConfig(args.problem, args.dim, constraint=args.constraint, radius=args.radius, kappa=args.kappa,
                           p=args.p, chain=args.chain, lam=args.lam, dataset=args.dataset, seed=args.seed)
    table = None if args.csv is None else read_path("table", args.csv, label_column=args.label)
    return config, table


def cmd_race(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import CURVE_POINTS, RaceConfig, run_race

    problem, table = _problem(args)
    config = RaceConfig(args.iters, tuple(args.methods), tuple(args.lr_grid), rbar=args.rbar,
                        curve_points=0 if args.full_curves else CURVE_POINTS)
    res = run_race(problem, config, table).race
    out = {"method": "dada", "action": "race", **res,
           "provenance": provenance(args.seed, problem=args.problem, dim=args.dim, iters=args.iters,
                                    constraint=args.constraint, radius=args.radius, rbar=args.rbar,
                                    lr_grid=list(args.lr_grid), methods=list(args.methods))}
    d = res["problem"]
    lines = [f"{d['name']} d={d['dim']} constraint={d['constraint']} f*={res['f_star']:.6g} "
             f"({d['f_star_method']}); f(x0)-f*={d['f0_minus_fstar']:.4g}",
             f"{'method':<13} {'setting':>16} {'final gap':>10} {'iters to 1e-2':>14} {'worst setting':>14}"]
    for row in res["summary"]:
        tried = f"{row['setting']}={row['best_setting_value']:.3g}" + (f" of {row['settings_tried']}"
                                                                       if row["settings_tried"] > 1 else "")
        hit = row["iters_to_0.01"]
        lines.append(f"{row['method']:<13} {tried:>16} {row['final_gap']:>10.2e} {str(hit):>14} "
                     f"{row['worst_setting_final_gap']:>14.2e}")
    return Output(out, lines=lines, compact=True)


def cmd_sensitivity(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import SensitivityConfig, run_sensitivity

    problem, table = _problem(args)
    res = run_sensitivity(problem, SensitivityConfig(args.iters, tuple(args.rbar_grid)), table)
    out: dict[str, object] = {"method": "dada", "action": "sensitivity", **res.to_json()}
    lines = [f"{m:<5} final gaps " + " ".join(f"{g:.2e}" for g in row["final_gaps"]) +
             f"   max/min {row['max_over_min']:.2f}" for m, row in res.methods.items()]
    out["provenance"] = provenance(args.seed, problem=args.problem, dim=args.dim, iters=args.iters,
                                   constraint=args.constraint, rbar_grid=list(args.rbar_grid))
    return Output(out, lines=lines, compact=True)
