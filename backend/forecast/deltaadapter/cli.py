"""CLI group ``deltaadapter``: ``python -m backend deltaadapter <action> ... [--json]``.

* ``run --data FILE|preset --backbone dlinear --delta 0.1 [--kind add|mul] [--zero-init] [--methods a,b]
  [--backbone-file STATE.safetensors] --json``: test MSE of the frozen backbone, each adapter and each baseline,
  with trainable parameters and training seconds.
* ``calibrate --data FILE|preset --backbone dlinear --method cc --alpha 0.05 --json``: coverage and mean width of
  the chosen calibrator beside every other one, coverage over random exchangeable splits, before / after the shift.
* ``select --data FILE|preset --backbone dlinear --kappa 0.3 --json``: the feature mask at budget kappa.
* ``presets``, ``methods``: the registries.

``--data`` is a preset name (``synthetic``, ``co2``, ``macro``) or a CSV (time column first, then numeric channels,
target first). A CSV without ``--backbone-file`` gets a backbone trained on its early regime (the first
``--shift-fraction`` of the rows) before adaptation; ``--backbone-file`` is a safetensors state of the architecture
named by ``--backbone`` for this input shape (read with safetensors only).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.cli_common import Output, add_action, add_group

from .interface import BACKBONES, CALIBRATORS, METHODS, PRESETS


def _data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default="synthetic", help=f"a preset ({', '.join(PRESETS)}) or a CSV file")
    p.add_argument("--backbone", default="dlinear", help=", ".join(BACKBONES))
    p.add_argument("--backbone-file", type=Path, default=None, help="a safetensors state of --backbone")
    p.add_argument("--lookback", type=int, default=96, help="input length for a CSV (presets fix their own)")
    p.add_argument("--horizon", type=int, default=24, help="horizon for a CSV (presets fix their own)")
    p.add_argument("--shift-fraction", type=float, default=0.5, help="CSV: the early regime's share of the rows")
    p.add_argument("--seed", type=int, default=0)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    acts = add_group(subparsers, "deltaadapter", "delta-Adapter: bounded post-processing of a frozen forecaster")
    r = add_action(acts, "run", cmd_run, "adapters and baselines on the post-shift data: MSE, parameters, time")
    _data_args(r)
    r.add_argument("--delta", type=float, default=0.1)
    r.add_argument("--kind", choices=("add", "mul"), default="add")
    r.add_argument("--zero-init", action="store_true", help="start the adapters at the identity (our option)")
    r.add_argument("--methods", default=None, help=f"comma-separated of: {', '.join(METHODS)} (default all)")
    c = add_action(acts, "calibrate", cmd_calibrate, "QC, CC and the conformal baselines: coverage and width")
    _data_args(c)
    c.add_argument("--method", default="cc", help=", ".join(CALIBRATORS))
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--splits", type=int, default=50, help="random exchangeable splits for CC's coverage")
    s = add_action(acts, "select", cmd_select, "the Gumbel-sigmoid feature mask at a budget")
    _data_args(s)
    s.add_argument("--kappa", type=float, default=0.3)
    o = add_action(acts, "own", cmd_own, "Ada-Y, CC and QC on a table of your own forecasts (no backbone)")
    o.add_argument("--forecasts", default="example", help="a CSV (time, actual, forecast, covariates) or 'example'")
    o.add_argument("--lookback", type=int, default=24, help="window of past actual values and covariates")
    o.add_argument("--delta", type=float, default=0.1, help="Ada-Y's edit bound (standardised units)")
    o.add_argument("--alpha", type=float, default=0.05, help="miscoverage of the intervals")
    o.add_argument("--seed", type=int, default=0)
    add_action(acts, "presets", cmd_presets, "list the series presets")
    add_action(acts, "methods", cmd_methods, "list methods, calibrators and backbones")
    return acts


def _data(args: argparse.Namespace):  # noqa: ANN202 - a preset name or a data.Series
    """``--data`` as a preset name, or the CSV it names decoded as ``multiseries``."""
    from backend.errors import InputError
    from backend.io.registry import read_path

    if args.data in PRESETS:
        return args.data
    if not 0.2 <= args.shift_fraction <= 0.8:
        raise InputError("--shift-fraction must be between 0.2 and 0.8.")
    return read_path("multiseries", args.data, lookback=args.lookback, horizon=args.horizon,
                     shift_fraction=args.shift_fraction)


def _state(args: argparse.Namespace) -> tuple[str, dict] | None:
    """``--backbone-file`` decoded as ``backbone_state`` (its path and tensors), or None."""
    from backend.io.registry import read_path

    if args.backbone_file is None:
        return None
    return str(args.backbone_file), read_path("backbone_state", args.backbone_file)


def cmd_run(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import AdaptConfig, run_adapt

    methods = tuple(args.methods.split(",")) if args.methods else tuple(METHODS)
    config = AdaptConfig(args.backbone, args.delta, args.kind, args.zero_init, methods, args.seed)
    res = run_adapt(_data(args), config, _state(args))
    out = {**res.summary(), "backbone": args.backbone,
           "provenance": provenance(args.seed, res.assets, delta=args.delta, kind=args.kind, **res.source)}
    lines = [f"{res.series['name']}: backbone {args.backbone} ({res.backbone_params:,} parameters), delta {args.delta}",
             f"{'method':<32} {'test MSE':>9} {'gain':>7} {'params':>8} {'train s':>8}"]
    lines += [f"{r['label']:<32} {r['mse']:>9.4f} {100 * (r['improvement'] or 0):>6.1f}% {r['params']:>8,} "
              f"{r['train_s']:>8.2f}" for r in out["rows"]]
    return Output(out, lines=lines)


def cmd_calibrate(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import CalibrateConfig, run_calibrate

    config = CalibrateConfig(args.backbone, args.alpha, args.method, args.splits, args.seed)
    res = run_calibrate(_data(args), config, _state(args))
    out = {**res.summary(), "backbone": args.backbone, "alpha": args.alpha,
           "provenance": provenance(args.seed, res.assets, alpha=args.alpha, method=config.method, **res.source)}
    rs = out["random_splits"]
    lines = [f"{res.series['name']}: backbone {args.backbone}, alpha {args.alpha} (nominal {1 - args.alpha:.0%})",
             f"{'calibrator':<36} {'coverage':>9} {'width':>8}"]
    lines += [f"{CALIBRATORS.label(k):<36} {v['coverage']:>9.3f} {v['width']:>8.3f}" for k, v in out["table"].items()]
    to = out["time_ordered"]["cc"]
    lines.append(f"CC on the later test windows (time order): coverage {to['coverage']:.3f}, 95 % block-bootstrap "
                 f"interval [{to['ci'][0]:.3f}, {to['ci'][1]:.3f}] (blocks of {to['block']} windows)")
    lines.append(f"CC over {rs['n']} random exchangeable splits: mean coverage {rs['mean_coverage_cc']:.3f}")
    return Output(out, lines=lines)


def cmd_select(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import SelectConfig, run_select

    config = SelectConfig(args.backbone, args.kappa, args.seed)
    res = run_select(_data(args), config, _state(args))
    out = {**res.summary(), "provenance": provenance(args.seed, res.assets, kappa=args.kappa, **res.source)}
    r = res.result
    lines = [f"kept {r['kept']:.3f} of the inputs (budget {args.kappa}); MSE with mask {r['mse_mask']:.4f} vs "
             f"{r['mse_frozen']:.4f} without"]
    if r["planted_share"] is not None:
        lines.append(f"share of the retained mass on the planted inputs: {r['planted_share']:.3f}")
    return Output(out, lines=lines)


def cmd_own(args: argparse.Namespace) -> Output:
    from backend.io.registry import read_path
    from backend.runtime import provenance

    from .inputs import EXAMPLE_ROWS, forecast_table
    from .jobs import run_own
    from .own import OwnConfig, read_forecasts

    config = OwnConfig(lookback=args.lookback, delta=args.delta, alpha=args.alpha, seed=args.seed)
    table = (read_forecasts(forecast_table(rows=EXAMPLE_ROWS), name="example") if args.forecasts == "example"
             else read_path("forecast_table", args.forecasts))
    res = run_own(table, config)
    out = {**res.to_json(), "provenance": provenance(args.seed, [], lookback=args.lookback, delta=args.delta,
                                                      alpha=args.alpha)}
    out.pop("example")
    lines = [f"{table.name}: {table.about}; test windows {res.splits['test']}"]
    lines += [f"{k:<10} test MSE {v['mse']:.4f}  MAE {v['mae']:.4f}" for k, v in res.points.items()]
    lines += [f"{k:<10} coverage {v['coverage']:.3f} [{v['interval'][0]:.3f}, {v['interval'][1]:.3f}]  width "
              f"{v['width']:.3f}" for k, v in res.intervals.items()]
    return Output(out, lines=lines)


def cmd_presets(args: argparse.Namespace) -> Output:  # noqa: ARG001
    rows = PRESETS.table()
    return Output({"presets": rows}, lines=[f"{r['name']:<10} {r['label']}" for r in rows])


def cmd_methods(args: argparse.Namespace) -> Output:  # noqa: ARG001
    out = {"methods": METHODS.table(), "calibrators": CALIBRATORS.table(), "backbones": BACKBONES.table()}
    return Output(out, lines=[f"{r['name']:<10} {r['kind']:<9} {r['label']}" for v in out.values() for r in v])
