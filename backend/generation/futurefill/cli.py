"""``python -m backend futurefill <action>``: exact fast generation from convolutional sequence models.

Actions:
  bench     decode time and multiply-adds vs length for naive / epoched / continuous / prompted, fitted log-log slopes,
            per-doubling MAC ratios and the max deviation of every method from naive
  generate  continue a series (a file with one number per line, or a preset) with a small spectral model fitted to it;
            every method generates the same values; prints their disagreement, costs and the continuation

Examples::

    python -m backend futurefill bench --max-len 16384 --json
    python -m backend futurefill bench --min-len 1024 --max-len 65536 --methods continuous,epoched --json
    python -m backend futurefill generate --series my_series.txt --new 1024 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def _methods(text: str) -> tuple[str, ...]:
    from .futurefill import METHODS

    out = tuple(METHODS.parse_names(text))
    if not out:
        raise argparse.ArgumentTypeError(f"name at least one method of: {', '.join(METHODS)}")
    return out


def _pow2_lengths(lo: int, hi: int) -> list[int]:
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= 2
    return out


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``futurefill`` group to ``python -m backend``."""
    from .futurefill import FILTER_KINDS, METHODS
    from .inputs import PRESETS

    acts = add_group(subparsers, "futurefill", "FutureFill: exact O(L log^2 L) generation for convolutional models")

    b = add_action(acts, "bench", cmd_bench, "time and multiply-adds vs length, with fitted slopes")
    b.add_argument("--max-len", type=int, default=16384, help="longest total length (default 16384)")
    b.add_argument("--min-len", type=int, default=256, help="shortest length; lengths double (default 256)")
    b.add_argument("--methods", type=_methods, default=tuple(METHODS),
                   help=f"comma-separated, of: {', '.join(METHODS)} (default all)")
    b.add_argument("--filters", type=int, default=8, help="number of filters F (default 8)")
    b.add_argument("--kind", choices=FILTER_KINDS[::-1], default="random", help="filter family (default random)")
    b.add_argument("--prompt", type=int, default=16, help="prompt length (default 16)")
    b.add_argument("--direct-below", type=int, default=0, help="do carry blocks of size <= this directly (default 0)")
    b.add_argument("--repeats", type=int, default=1, help="timing repeats, median reported (default 1)")
    b.add_argument("--naive-max", type=int, default=None, help="skip naive above this length")
    b.add_argument("--seed", type=int, default=0)

    g = add_action(acts, "generate", cmd_generate, "fit a small spectral model to a series and continue it with every "
                   "method")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--series", type=Path, default=None, help="text/CSV file with one number per line")
    src.add_argument("--preset", default="sines", help=f"synthetic series when no file is given, of: "
                     f"{', '.join(PRESETS)} (default sines)")
    g.add_argument("--length", type=int, default=512, help="preset length (default 512)")
    g.add_argument("--new", type=int, default=1024, help="values to generate (default 1024)")
    g.add_argument("--filters", type=int, default=16, help="number of spectral filters (default 16)")
    g.add_argument("--kind", choices=FILTER_KINDS, default="spectral")
    g.add_argument("--epoch", type=int, default=None, help="epoch length K of the epoched method")
    g.add_argument("--seed", type=int, default=0)
    return acts


def cmd_bench(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .futurefill import REFERENCE
    from .jobs import HEADLINE, BenchConfig, run_bench

    config = BenchConfig(tuple(_pow2_lengths(args.min_len, args.max_len)), tuple(args.methods),
                         n_filters=args.filters, kind=args.kind, prompt_len=args.prompt, naive_max=args.naive_max,
                         repeats=args.repeats, direct_below=args.direct_below, seed=args.seed)
    res = run_bench(config)
    speedups = {}
    for L in res.lengths:
        row = {r["method"]: r for r in res.rows if r["length"] == L}
        if REFERENCE in row and HEADLINE in row:
            ref, head = row[REFERENCE], row[HEADLINE]
            speedups[str(L)] = {
                f"time_{REFERENCE}_over_{HEADLINE}": float(ref["seconds"]) / max(float(head["seconds"]), 1e-12),
                f"macs_{REFERENCE}_over_{HEADLINE}": float(ref["macs"]) / float(head["macs"]),
            }
    out = {
        "method": "futurefill",
        "action": "bench",
        "lengths": res.lengths,
        "rows": res.rows,
        "slopes": res.slopes,
        "mac_ratio_per_doubling": res.mac_ratios,
        f"{REFERENCE}_over_{HEADLINE}": speedups,
        f"max_err_vs_{REFERENCE}": max((r["max_err"] for r in res.rows if r["max_err"] is not None), default=None),
        "cost_model": "rfft/irfft of size n = n log2 n MACs; spectrum product 4(n/2+1); cache add 1/entry; direct "
                      "inner product 1/term; filter spectra counted once (setup_macs)",
        "provenance": provenance(args.seed, **{k: v for k, v in res.params.items() if k != "seed"},
                                 lengths=res.lengths, methods=list(config.methods)),
    }
    lines = [f"{'method':<11} {'L':>7} {'seconds':>9} {'MACs':>14} {'cache':>8} {'max err':>9}"]
    for r in res.rows:
        err = "-" if r["max_err"] is None else f"{r['max_err']:.1e}"
        lines.append(f"{r['method']:<11} {r['length']:>7} {r['seconds']:>9.4f} {r['macs']:>14,} "
                     f"{r['cache_floats']:>8} {err:>9}")
    for m, s in res.slopes.items():
        lines.append(f"slope {m:<11} time {s['seconds']:.2f}  MACs {s['macs']:.2f}  MAC ratio per doubling "
                     f"{', '.join(f'{v:.2f}' for v in res.mac_ratios.get(m, []))}")
    return Output(out, lines=lines, compact=True)


def cmd_generate(args: argparse.Namespace) -> Output:
    import numpy as np

    from ...io.registry import read_path
    from ...runtime import provenance
    from .futurefill import REFERENCE, preset_series
    from .jobs import GenerateConfig, run_generate

    if args.series is not None:
        series = read_path("series", args.series)
        source = str(args.series)
    else:
        series = preset_series(args.preset, args.length, args.seed)
        source = f"preset:{args.preset}"
    res = run_generate(series, GenerateConfig(n_new=args.new, n_filters=args.filters, kind=args.kind,
                                              epoch=args.epoch, seed=args.seed))
    out = {
        "method": "futurefill",
        "action": "generate",
        "source": source,
        "prompt_len": res.prompt_len,
        "generated": res.generated,
        "fit": res.fit,
        "methods": res.methods,
        "continuation": res.continuation,
        "provenance": provenance(args.seed, filters=args.filters, kind=args.kind, new=args.new, epoch=args.epoch),
    }
    lines = [f"fit on {source}: one-step RMSE {res.fit['train_rmse']:.4g}, R^2 {res.fit['r2']:.3f}"]
    for m, row in out["methods"].items():
        lines.append(f"{m:<11} {row['seconds']:.3f} s  {row['macs']:>12,} MACs  cache {row['cache_floats']:>7}  "
                     f"max |u - {REFERENCE}| {row['max_abs_err_u']:.1e}")
    lines.append(f"continuation (first 10): {np.round(out['continuation'][:10], 4).tolist()}")
    return Output(out, lines=lines, compact=True)
