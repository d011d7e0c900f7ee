"""``python -m backend dualrs <action>``: dual randomized smoothing on 2-D data.

Actions:
  certify   train the per-sigma experts and the variance estimator, CERTIFY the test points with every global sigma
            and with dual RS, print the certified-accuracy table (optionally run the attack check)

Examples::

    python -m backend dualrs certify --data moons --json
    python -m backend dualrs certify --csv points.csv --sigmas 0.25,0.5,1 --n 10000 --attack --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, float_list


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``dualrs`` group to ``python -m backend``."""
    from .data2d import DATASETS

    acts = add_group(subparsers, "dualrs", "dual randomized smoothing: per-input sigma with certified radii")
    c = add_action(acts, "certify", cmd_certify, "certify test points with each global sigma and with dual RS")
    c.add_argument("--data", default="moons", help=f"preset: {' or '.join(DATASETS)} (ignored with --csv)")
    c.add_argument("--csv", type=Path, default=None, help="a 2-D CSV with columns x, y, label")
    c.add_argument("--sigmas", type=float_list, default=(0.12, 0.25, 0.5, 1.0), help="the set Sigma")
    c.add_argument("--sigma-e", type=float, default=None, help="estimator noise level (default max Sigma)")
    c.add_argument("--n0", type=int, default=100, help="CERTIFY selection samples (default 100)")
    c.add_argument("--n", type=int, default=10_000, help="CERTIFY estimation samples (default 10,000, the paper's)")
    c.add_argument("--alpha", type=float, default=0.001, help="failure probability (dual RS: alpha/2 per stage)")
    c.add_argument("--max-test", type=int, default=500, help="test points to certify (default 500)")
    c.add_argument("--finetune-steps", type=int, default=0, help="optional expert fine-tuning round (default 0)")
    c.add_argument("--attack", action="store_true", help="also attack every certified point inside its radius")
    c.add_argument("--seed", type=int, default=0)
    return acts


def cmd_certify(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from ...runtime import provenance
    from .configs import CertifyConfig, TrainConfig
    from .jobs import RunConfig, run_certify

    config = RunConfig(args.data, TrainConfig(sigmas=args.sigmas, sigma_e=args.sigma_e,
                                              finetune_steps=args.finetune_steps),
                       CertifyConfig(n0=args.n0, n=args.n, alpha=args.alpha), max_test=args.max_test,
                       attack=args.attack, seed=args.seed)
    data = None if args.csv is None else read_path("points2d", args.csv, seed=args.seed)
    res = run_certify(data, config)
    out = dict(res.summary)
    out["curves"] = res.curves_every(10)
    if res.attack is not None:
        out["attack"] = res.attack["summary"]
    params = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in ("func", "seed")}
    out["provenance"] = provenance(args.seed, **params)
    keys = ["method", "clean_accuracy", "acc@0.25", "acc@0.5", "acc@1", "acc@2", "average_certified_radius"]
    lines = [" | ".join(keys), *(" | ".join(str(row[k]) for k in keys) for row in out["table"]),
             f"dual >= best single sigma at {out['dual_vs_best_single']}"]
    if "attack" in out:
        lines.append(f"attack: {out['attack']}")
    return Output(out, lines=lines)
