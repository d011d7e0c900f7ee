"""CLI group ``glot`` (GLOT token-graph pooling, arXiv 2603.03389):

- ``python -m backend glot stress --backbone minilm --ratio 0.9 --variant hard --pooling glot --seed 0 --json``
  trains the chosen poolings on cached backbone states of the stress test and prints their accuracy (plus the
  bag-of-words controls);
- ``python -m backend glot train --csv FILE --json`` trains every pooling on the user's labelled texts (columns
  ``text,label``);
- ``python -m backend glot lora --backbone minilm --ratio 0.9 --variant hard --json`` runs the LoRA fine-tuning reference
  (``--max-steps`` to time a few steps only, e.g. on SmolLM2);
- ``python -m backend glot heads --json`` evaluates the shipped heads (``assets/glot_heads_*.safetensors``).

Handlers return their result (and text lines); :mod:`backend.cli_common` prints it (JSON with ``--json``) and turns
bad input into exit code 2. The method choices come from :data:`backend.tokens.glot.pooling.POOLINGS`; the handlers call :mod:`backend.tokens.glot.jobs`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ...cli_common import Output, add_action, add_group
from .pooling import POOLING_NAMES

GROUP = "glot"
POOLING_CHOICES = (*POOLING_NAMES, "all")


def _poolings(values: list[str] | None) -> tuple[str, ...]:
    if not values or "all" in values:
        return POOLING_NAMES
    return tuple(dict.fromkeys(values))


def _configs(args: argparse.Namespace) -> tuple[Any, Any]:
    from .heads import TrainConfig
    from .layers import GlotConfig

    glot = GlotConfig(num_layers=args.layers, gat_hidden=args.hidden, tau=args.tau, jk=args.jk)
    train = TrainConfig(lr=args.lr, epochs=args.epochs, batch_size=args.batch_size)
    return glot, train


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [f"{'ratio':>5}  {'method':<14} {'accuracy':>8}  {'params':>8}  {'s/epoch':>8}"]
    for r in rows:
        lines.append(f"{r['ratio']:>5}  {r['method']:<14} {r['accuracy']:>8.3f}  {r['params']:>8}  "
                     f"{r['seconds_per_epoch']:>8.3f}")
    return lines


def cmd_stress(args: argparse.Namespace) -> Output:
    """Run the diagnostic stress test on cached states."""
    from ...runtime import provenance
    from .experiments import StressConfig
    from .jobs import StressJob, run_stress

    glot, train = _configs(args)
    cfg = StressConfig(variant=args.variant, ratios=tuple(args.ratio), position=args.position, n_train=args.n_train,
                       n_eval=args.n_eval, poolings=_poolings(args.pooling), seeds=tuple(args.seed),
                       data_seed=args.data_seed, max_tokens=args.max_tokens, bow=not args.no_bow)
    out = run_stress(StressJob(cfg, glot, train, backbone=args.backbone, example=False))
    out["provenance"] = provenance(args.seed[0], backbone=args.backbone, command="glot stress", **cfg.__dict__)
    return Output(out, _table(out["summary"]) + [f"backbone states: {out['encode_seconds']:.1f} s ({out['backbone']})"])


def cmd_train(args: argparse.Namespace) -> Output:
    """Train every pooling on a labelled CSV (text,label)."""
    from ...io.registry import read_path
    from ...runtime import provenance
    from .jobs import TrainJob, run_train

    path = Path(args.csv)
    glot, train = _configs(args)
    cfg = TrainJob(_poolings(args.pooling), glot, train, backbone=args.backbone, seed=args.seed,
                   max_tokens=args.max_tokens)
    res = run_train(read_path("labelled_texts", path), cfg)
    res["provenance"] = provenance(args.seed, backbone=args.backbone, command="glot train", csv=path.name)
    lines = [f"{r['method']:<14} accuracy {r['accuracy']:.3f}  params {r['params']}" for r in res["rows"]]
    lines.append(f"majority class: {res['majority_baseline']:.3f} on {res['n_eval']} held-out rows")
    return Output(res, lines)


def cmd_lora(args: argparse.Namespace) -> Output:
    """The LoRA fine-tuning reference on the stress test."""
    from ...runtime import provenance
    from .jobs import LoraJob, run_lora

    cfg = LoraJob(backbone=args.backbone, variant=args.variant, ratio=args.ratio, position=args.position,
                  n_train=args.n_train, n_eval=args.n_eval, rank=args.rank, lr=args.lr, epochs=args.epochs,
                  batch_size=args.batch_size, max_tokens=args.max_tokens, max_steps=args.max_steps, seed=args.seed,
                  data_seed=args.data_seed)
    out = run_lora(cfg)
    out["provenance"] = provenance(args.seed, backbone=args.backbone, command="glot lora", variant=args.variant,
                                   ratio=args.ratio, n_train=args.n_train, n_eval=args.n_eval)
    res = out["lora"]
    acc = "n/a (timing run)" if res["accuracy"] is None else f"{res['accuracy']:.3f}"
    return Output(out, [f"LoRA r={res['rank']} on {out['backbone']}: accuracy {acc}, {res['trainable_params']:,} "
                        f"trainable params, {res['seconds_per_step']:.2f} s/step, {res['seconds_per_epoch']:.1f} "
                        f"s/epoch{' (extrapolated)' if res['extrapolated'] else ''}"])


def cmd_heads(args: argparse.Namespace) -> Output:
    """Evaluate the shipped heads on a fresh eval split of the stress test at ratio 0.9."""
    from ...runtime import ASSETS, provenance
    from .jobs import HeadsJob, run_heads

    out = run_heads(HeadsJob(variant=args.variant, n_eval=args.n_eval))
    path = ASSETS / out.pop("path")
    out["provenance"] = provenance(None, [path], command="glot heads", variant=args.variant)
    return Output(out, [f"{k:<8} {v:.3f}" for k, v in out["accuracy"].items()])


def _common(p: argparse.ArgumentParser, backbone: bool = True) -> None:
    if backbone:
        p.add_argument("--backbone", default="minilm",
                       help="minilm (default, encoder), smollm2 (decoder), or a local folder / cached hub name")
    p.add_argument("--layers", "-K", type=int, default=2, help="GAT layers K (default 2)")
    p.add_argument("--hidden", type=int, default=64, help="GAT hidden size (default 64)")
    p.add_argument("--tau", type=float, default=0.6, help="cosine threshold of the token graph (default 0.6)")
    p.add_argument("--jk", default="cat", help="jumping knowledge: cat (default), max or mean")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--pooling", action="append", choices=POOLING_CHOICES,
                   help="pooling to train (repeat; default all)")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``glot`` group to ``python -m backend``."""
    from .stress import N_EVAL, N_TRAIN, POSITIONS, VARIANTS

    sub = add_group(subparsers, GROUP, "GLOT token-graph pooling over frozen language models", description=__doc__)

    p = add_action(sub, "stress", cmd_stress, "the distractor stress test: poolings vs distractor ratio")
    _common(p)
    p.add_argument("--ratio", type=float, nargs="+", default=[0.9], help="distractor ratio(s), e.g. 0.2 0.5 0.8 0.9")
    p.add_argument("--variant", default="hard", choices=VARIANTS)
    p.add_argument("--position", default="random", choices=POSITIONS)
    p.add_argument("--n-train", type=int, default=N_TRAIN)
    p.add_argument("--n-eval", type=int, default=N_EVAL)
    p.add_argument("--seed", type=int, nargs="+", default=[0], help="head seed(s)")
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=160)
    p.add_argument("--no-bow", action="store_true", help="skip the bag-of-words controls")

    p = add_action(sub, "train", cmd_train, "train every pooling on your CSV (columns text,label)")
    _common(p)
    p.add_argument("--csv", required=True, help="UTF-8 CSV with a header row text,label (<= 4000 rows, 2 MB)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=128)

    p = add_action(sub, "lora", cmd_lora, "LoRA fine-tuning reference (peft) on the stress test")
    p.add_argument("--backbone", default="minilm")
    p.add_argument("--variant", default="hard", choices=VARIANTS)
    p.add_argument("--ratio", type=float, default=0.9)
    p.add_argument("--position", default="random", choices=POSITIONS)
    p.add_argument("--n-train", type=int, default=N_TRAIN)
    p.add_argument("--n-eval", type=int, default=N_EVAL)
    p.add_argument("--rank", type=int, default=64, help="LoRA rank (alpha = rank); the paper uses 64")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-tokens", type=int, default=160)
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (timing only, no accuracy)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-seed", type=int, default=0)

    p = add_action(sub, "heads", cmd_heads, "evaluate the shipped heads on a fresh eval split")
    p.add_argument("--variant", default="hard", choices=VARIANTS)
    p.add_argument("--n-eval", type=int, default=N_EVAL)
    return sub
