"""``python -m backend catalystbench <action>``: fine-tuning methods on the element benchmark.

Actions:
  eval      per-task test metrics per seed of one or more methods beside the gradient-boosting / regex baselines,
            the paired comparisons (MFT - FT per regression task, MFT - ST on the average) and the costs
  predict   every method's predictions for records (a CSV) and sentences stating a melting point

Examples::

    python -m backend catalystbench eval --method mft --json
    python -m backend catalystbench eval --method mft,ft --reevaluate --elements 6 --seeds 0 --json
    python -m backend catalystbench predict --sentence "Gallium melts at 303 K." --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``catalystbench`` group to ``python -m backend``."""
    acts = add_group(subparsers, "catalystbench", "CatalystBench: routed heads vs text-only and single-task fine-tuning")
    e = add_action(acts, "eval", cmd_eval, "per-task test metrics per method and seed, baselines, comparisons, costs")
    e.add_argument("--method", default=None, help="comma-separated methods (st, mst, ft, mft); default all")
    e.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds (0-4)")
    e.add_argument("--reevaluate", action="store_true", help="recompute from the checkpoints (else the recorded metrics)")
    e.add_argument("--elements", type=int, default=0, help="re-evaluation: first N test elements (0 = all)")
    p = add_action(acts, "predict", cmd_predict, "every method's predictions for records and sentences")
    p.add_argument("--records", type=Path, default=None, help="CSV of element records (see the page for columns)")
    p.add_argument("--sentence", action="append", default=[], help="a sentence stating a melting point (repeatable)")
    p.add_argument("--seed", type=int, default=0)
    return acts


def _seeds(text: str) -> tuple[int, ...]:
    from ...errors import InputError

    try:
        return tuple(int(s) for s in str(text).split(",") if s.strip())
    except ValueError:
        raise InputError(f"--seeds must be comma-separated integers; got {text!r}.") from None


def cmd_eval(args: argparse.Namespace) -> Output:
    from .jobs import METHOD_NAMES, BenchmarkConfig, run_benchmark

    methods = tuple(m for m in str(args.method).split(",") if m.strip()) if args.method else METHOD_NAMES
    cfg = BenchmarkConfig(methods=methods, seeds=_seeds(args.seeds),
                          source="reevaluate" if args.reevaluate else "recorded", elements=args.elements)
    res = run_benchmark(cfg)
    out = res.to_dict()
    out.pop("seconds", None)
    lines = [f"{res.rows} test rows, seeds {list(cfg.seeds)} ({cfg.source})"]
    for m, per in res.scores.items():
        lines.append(f"{res.labels[m]:32} " + " ".join(f"{t} {sum(v) / len(v):.3f}" for t, v in per.items()))
    for c in res.comparisons:
        lines.append(f"{c['ours']} - {c['other']} on {c['task']}: {c['gain']:+.3f} "
                     f"[{c['gain_ci'][0]:+.3f}, {c['gain_ci'][1]:+.3f}]")
    return Output(out, lines=lines)


def cmd_predict(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from .jobs import PredictConfig, run_predict

    recs = read_path("element_records", args.records) if args.records else []
    cfg = PredictConfig(records=tuple(tuple(sorted(r.items())) for r in recs), sentences=tuple(args.sentence),
                        seed=args.seed)
    res = run_predict(cfg)
    out = res.to_dict()
    out.pop("seconds", None)
    lines = [f"{r['label']:32} {r['task']:18} {r['input'][:40]:40} {r['text']}" for r in res.rows]
    return Output(out, lines=lines)
