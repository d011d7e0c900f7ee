"""``python -m backend depo <action>``: DEPO's data selection and GRPO runs on the tiny reasoner.

Actions:
  select  every subset strategy at the same share on a prompt list (the training pool, the example list or a file):
          selected indices, log-det volume and coverage per strategy
  train   one short GRPO run of a strategy (held-out accuracy against rollout tokens, explorability, pruning)
  report  the shipped runs (``python -m backend.train depo``): final accuracies, tokens, the speed-up against
          full-data GRPO at 95 % of its final accuracy

Examples::

    python -m backend depo select --prompts prompts.txt --share 0.2 --json
    python -m backend depo select --source pool --json
    python -m backend depo train --strategy depo --json
    python -m backend depo report --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``depo`` group to ``python -m backend``."""
    acts = add_group(subparsers, "depo", "DEPO: diverse, influential, medium-difficulty data and explorability pruning "
                                         "for GRPO")
    s = add_action(acts, "select", cmd_select, "subset strategies of equal size on a prompt list")
    s.add_argument("--prompts", type=Path, default=None,
                   help="text file (one prompt per line) or CSV with a prompt column (optional difficulty column)")
    s.add_argument("--source", default="pool", help="without --prompts: pool (the training pool) or example")
    s.add_argument("--share", type=float, default=0.2, help="share of the prompts to keep, in (0, 1]")
    s.add_argument("--knn", type=int, default=10, help="neighbours per prompt in the similarity graph")
    s.add_argument("--seed", type=int, default=0)
    t = add_action(acts, "train", cmd_train, "one short GRPO run of a strategy on the tiny reasoner")
    t.add_argument("--strategy", default="depo", help="depo, full, random, pagerank, kcenter or depo_noprune")
    t.add_argument("--steps", type=int, default=4)
    t.add_argument("--pool", type=int, default=40, help="generated problems in the training pool")
    t.add_argument("--heldout", type=int, default=20, help="held-out problems")
    t.add_argument("--batch", type=int, default=4, help="prompts per step")
    t.add_argument("--group", type=int, default=4, help="rollouts per prompt (G)")
    t.add_argument("--eval-every", type=int, default=2)
    t.add_argument("--share", type=float, default=0.2)
    t.add_argument("--seed", type=int, default=0)
    r = add_action(acts, "report", cmd_report, "curves and speed-ups of the shipped GRPO runs")
    r.add_argument("--target", type=float, default=0.95, help="share of full-data GRPO's final accuracy")
    return acts


def cmd_select(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import SelectConfig, run_select

    prompts = None
    source = args.source
    if args.prompts is not None:
        from ...io.registry import read_path

        prompts = read_path("prompt_list", args.prompts)
        source = "upload"
    res = run_select(prompts, SelectConfig(share=args.share, source=source, knn=args.knn, seed=args.seed))
    out = {"n": res.n, "k": res.k, "config": res.config, "notes": res.notes,
           "strategies": {name: {"label": res.labels[name], "indices": v["indices"], "logdet": v["logdet"],
                                 "coverage": v["coverage"], **({"mean_difficulty": v["mean_difficulty"]}
                                                               if "mean_difficulty" in v else {})}
                          for name, v in res.strategies.items()},
           "seconds": res.seconds}
    out["provenance"] = provenance(args.seed, share=args.share, source=source, knn=args.knn)
    lines = [f"{res.n} prompts, keeping k = {res.k}"] + res.notes
    lines += [f"{res.labels[n]:22} log-det {v['logdet']:10.3f}  coverage {v['coverage']:.4f}"
              for n, v in res.strategies.items()]
    return Output(out, lines=lines)


def cmd_train(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import run_train
    from .loop import TrainConfig

    cfg = TrainConfig(strategy=args.strategy, steps=args.steps, pool=args.pool, heldout=args.heldout,
                      batch=args.batch, group=args.group, eval_every=args.eval_every, share=args.share, seed=args.seed)
    res = run_train(cfg)
    log = res.log
    out = {"strategy": cfg.strategy, "label": res.label, "curve": log["curve"], "subset": log["subset"],
           "tokens": log["tokens"], "offline_tokens": log["offline_tokens"], "rollouts": log["rollouts"],
           "pruned_rollouts": log["pruned_rollouts"], "final_accuracy": log["curve"][-1]["accuracy"],
           "seconds": log["seconds"], "config": log["config"]}
    out["provenance"] = provenance(args.seed, strategy=cfg.strategy, steps=cfg.steps, pool=cfg.pool)
    lines = [f"{res.label}: {len(log['subset'])} of {cfg.pool} prompts, {log['tokens']:,} rollout tokens "
             f"({log['offline_tokens']:,} offline), {log['pruned_rollouts']} rollouts pruned"]
    lines += [f"step {r['step']:3d}  tokens {r['tokens']:7d}  held-out accuracy {r['accuracy']:.3f}" for r in log["curve"]]
    return Output(out, lines=lines)


def cmd_report(args: argparse.Namespace) -> Output:
    from .jobs import ReportConfig, run_report

    res = run_report(ReportConfig(share=args.target))
    out = {"start_accuracy": res.start_accuracy, "totals": res.totals, "speedups": res.speedups,
           "mean_curves": res.mean, "model_sha256": res.model_sha256}
    lines = [f"starting policy: held-out accuracy {res.start_accuracy:.3f}"]
    for n, t in res.totals.items():
        sp = res.speedups.get(n)
        if sp is None:
            extra = ""
        elif not sp["measurable"]:
            extra = "  speed-up not measurable (the starting policy already meets the target)"
        else:
            extra = f"  speed-up {sp['speedup']:.2f}x" if sp["speedup"] else "  target not reached"
        lines.append(f"{res.labels[n]:22} seeds {t['seeds']}  final {t['final_accuracy']:.3f}  tokens "
                     f"{t['tokens']:,.0f}{extra}")
    return Output(out, lines=lines)
