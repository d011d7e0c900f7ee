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
    add_action(acts, "presets", cmd_presets, "list the series presets")
    add_action(acts, "methods", cmd_methods, "list methods, calibrators and backbones")
    return acts


def _load(args: argparse.Namespace):
    """``(series, frozen backbone, source dict, asset paths)``."""
    from backend.errors import InputError
    from backend.io.registry import read_path

    from . import backbones as bb
    from . import data as dt
    from .pipeline import load_preset

    kind = BACKBONES.key(args.backbone)
    if args.data in PRESETS:
        series = load_preset(args.data)
        source = {"preset": args.data}
    else:
        if not 0.2 <= args.shift_fraction <= 0.8:
            raise InputError("--shift-fraction must be between 0.2 and 0.8.")
        series = read_path("multiseries", args.data, lookback=args.lookback, horizon=args.horizon,
                           shift_fraction=args.shift_fraction)
        source = {"input": str(args.data), "lookback": args.lookback, "horizon": args.horizon}
    windows = dt.make_windows(series)
    assets: list[Path] = []
    if args.backbone_file is not None:
        tensors = read_path("backbone_state", args.backbone_file)
        model = bb.load_user(tensors, kind, series.lookback, series.horizon, series.d)
        source["backbone"] = f"{kind} from {args.backbone_file}"
    elif args.data in PRESETS:
        model, meta = bb.load_shipped(args.data, kind)
        assets.append(bb.asset_path(args.data, kind))
        source["backbone"] = meta["file"]
    else:
        x, y = windows.torch("early")
        xv, yv = windows.torch("early_val")
        model, _ = bb.train_backbone(bb.config_for(kind, series.lookback, series.horizon, series.d), x, y, xv, yv,
                                     seed=args.seed)
        source["backbone"] = f"{kind} trained on the early regime of the CSV"
    return series, windows, model, source, assets


def cmd_run(args: argparse.Namespace) -> Output:
    from backend.errors import InputError
    from backend.runtime import provenance

    from .pipeline import adapt

    methods = tuple(METHODS.key(m) for m in args.methods.split(",")) if args.methods else tuple(METHODS)
    if not 0.0 < args.delta <= 1.0:
        raise InputError(f"--delta must be in (0, 1]; got {args.delta}.")
    series, windows, model, source, assets = _load(args)
    res = adapt(series, model, args.delta, args.kind, args.zero_init, methods, args.seed, windows)
    rows = [{k: r[k] for k in ("method", "mse", "mae", "val_mse", "params", "train_s", "improvement")}
            | {"label": METHODS.label(r["method"])} for r in res.table()]
    out = {"series": series.summary(), "backbone": args.backbone, "backbone_params": res.backbone_params,
           "delta": args.delta, "kind": args.kind, "zero_init": args.zero_init, "rows": rows,
           "backbone_unchanged": res.hash_before == res.hash_after, "backbone_sha256": res.hash_after,
           "provenance": provenance(args.seed, assets, delta=args.delta, kind=args.kind, **source)}
    lines = [f"{series.name}: backbone {args.backbone} ({res.backbone_params:,} parameters), delta {args.delta}",
             f"{'method':<32} {'test MSE':>9} {'gain':>7} {'params':>8} {'train s':>8}"]
    lines += [f"{r['label']:<32} {r['mse']:>9.4f} {100 * (r['improvement'] or 0):>6.1f}% {r['params']:>8,} "
              f"{r['train_s']:>8.2f}" for r in rows]
    return Output(out, lines=lines)


def cmd_calibrate(args: argparse.Namespace) -> Output:
    from backend.errors import InputError
    from backend.runtime import provenance

    from .pipeline import calibrate

    method = CALIBRATORS.key(args.method)
    if not 0.0 < args.alpha < 0.5:
        raise InputError(f"--alpha must be in (0, 0.5); got {args.alpha}.")
    if not 1 <= args.splits <= 1000:
        raise InputError("--splits must be between 1 and 1000.")
    series, windows, model, source, assets = _load(args)
    res = calibrate(series, model, args.alpha, args.seed, args.splits, windows)
    table = res["table"]
    if method == "mapie":
        table["mapie"] = _mapie_row(windows, model, args.alpha)
    rs = res["random_splits"]
    out = {"series": series.summary(), "backbone": args.backbone, "alpha": args.alpha, "method": method,
           "chosen": table[method], "table": {k: {"coverage": v["coverage"], "width": v["width"]}
                                              for k, v in table.items()},
           "random_splits": {"mean_coverage_cc": sum(rs["cc"]) / len(rs["cc"]),
                             "mean_coverage_cc_plain": sum(rs["cc_plain"]) / len(rs["cc_plain"]),
                             "mean_coverage_split": sum(rs["split"]) / len(rs["split"]), "n": len(rs["cc"]),
                             "tolerance": rs["tolerance"]},
           "kappa": res["kappa"], "qc_monotone": res["qc_monotone"], "curves": res["curves"],
           "nominal": res["nominal"],
           "provenance": provenance(args.seed, assets, alpha=args.alpha, method=method, **source)}
    lines = [f"{series.name}: backbone {args.backbone}, alpha {args.alpha} (nominal {1 - args.alpha:.0%})",
             f"{'calibrator':<36} {'coverage':>9} {'width':>8}"]
    lines += [f"{CALIBRATORS.label(k):<36} {v['coverage']:>9.3f} {v['width']:>8.3f}" for k, v in table.items()]
    lines.append(f"CC over {len(rs['cc'])} random splits: mean coverage {out['random_splits']['mean_coverage_cc']:.3f}")
    return Output(out, lines=lines)


def _mapie_row(windows, model, alpha: float) -> dict:
    import numpy as np
    import torch

    from .calibration import Interval, mapie_split_conformal

    with torch.no_grad():
        pv = model(torch.from_numpy(windows.x["val"])).numpy()
        pt = model(torch.from_numpy(windows.x["test"])).numpy()
    lo, hi = mapie_split_conformal(pv, windows.y["val"], pt, alpha)
    iv = Interval(lo.astype(np.float64), hi.astype(np.float64))
    return {"coverage": iv.coverage(windows.y["test"]), "width": iv.width()}


def cmd_select(args: argparse.Namespace) -> Output:
    import numpy as np

    from backend.errors import InputError
    from backend.runtime import provenance

    from .pipeline import select

    if not 0.0 < args.kappa < 1.0:
        raise InputError(f"--kappa must be in (0, 1); got {args.kappa}.")
    series, windows, model, source, assets = _load(args)
    res = select(series, model, args.kappa, args.seed, windows)
    out = {k: v for k, v in res.items() if k not in ("mask", "planted")}
    mask = np.asarray(res["mask"])
    out["channel_share"] = [float(v) for v in mask.sum(0) / max(float(mask.sum()), 1e-12)]
    out["provenance"] = provenance(args.seed, assets, kappa=args.kappa, **source)
    lines = [f"kept {res['kept']:.3f} of the inputs (budget {args.kappa}); MSE with mask {res['mse_mask']:.4f} vs "
             f"{res['mse_frozen']:.4f} without"]
    if res["planted_share"] is not None:
        lines.append(f"share of the retained mass on the planted inputs: {res['planted_share']:.3f}")
    return Output(out, lines=lines)


def cmd_presets(args: argparse.Namespace) -> Output:  # noqa: ARG001
    rows = PRESETS.table()
    return Output({"presets": rows}, lines=[f"{r['name']:<10} {r['label']}" for r in rows])


def cmd_methods(args: argparse.Namespace) -> Output:  # noqa: ARG001
    out = {"methods": METHODS.table(), "calibrators": CALIBRATORS.table(), "backbones": BACKBONES.table()}
    return Output(out, lines=[f"{r['name']:<10} {r['kind']:<9} {r['label']}" for v in out.values() for r in v])
