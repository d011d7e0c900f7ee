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
bad input into exit code 2. The method choices come from :data:`backend.tokens.pooling.POOLINGS`; models load only inside the handlers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..cli_common import Output, add_action, add_group
from .pooling import POOLING_NAMES

GROUP = "glot"
POOLING_CHOICES = (*POOLING_NAMES, "all")


def _poolings(values: list[str] | None) -> tuple[str, ...]:
    if not values or "all" in values:
        return POOLING_NAMES
    return tuple(dict.fromkeys(values))


def _configs(args: argparse.Namespace) -> tuple[Any, Any]:
    from .glot_heads import TrainConfig
    from .pool_layers import GlotConfig

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
    from ..runtime import provenance
    from .glot import StressConfig, run_stress

    glot, train = _configs(args)
    cfg = StressConfig(variant=args.variant, ratios=tuple(args.ratio), position=args.position, n_train=args.n_train,
                       n_eval=args.n_eval, poolings=_poolings(args.pooling), seeds=tuple(args.seed),
                       data_seed=args.data_seed, max_tokens=args.max_tokens, bow=not args.no_bow)
    res = run_stress(cfg, glot, train, backbone=args.backbone, example=False)
    out = res.to_dict()
    out["provenance"] = provenance(args.seed[0], backbone=args.backbone, command="glot stress", **cfg.__dict__)
    return Output(out, _table(res.summary()) + [f"backbone states: {res.encode_seconds:.1f} s ({res.backbone})"])


def cmd_train(args: argparse.Namespace) -> Output:
    """Train every pooling on a labelled CSV (text,label)."""
    from ..io.registry import read_path
    from ..runtime import provenance
    from .glot import train_on_texts

    path = Path(args.csv)
    data = read_path("labelled_texts", path)
    glot, train = _configs(args)
    res = train_on_texts(data, _poolings(args.pooling), glot, train, backbone=args.backbone, seed=args.seed,
                         max_tokens=args.max_tokens)
    res["provenance"] = provenance(args.seed, backbone=args.backbone, command="glot train", csv=path.name)
    lines = [f"{r['method']:<14} accuracy {r['accuracy']:.3f}  params {r['params']}" for r in res["rows"]]
    lines.append(f"majority class: {res['majority_baseline']:.3f} on {res['n_eval']} held-out rows")
    return Output(res, lines)


def cmd_lora(args: argparse.Namespace) -> Output:
    """The LoRA fine-tuning reference on the stress test."""
    from dataclasses import asdict

    from ..runtime import provenance
    from . import stress
    from .glot_backbone import load_backbone
    from .glot_lora import lora_reference

    bb = load_backbone(args.backbone)
    tr, ev = stress.splits(args.variant, args.ratio, args.position, args.data_seed, args.n_train, args.n_eval)
    res = lora_reference(bb, tr.texts, tr.labels, None if args.max_steps else ev.texts,
                         None if args.max_steps else ev.labels, rank=args.rank, alpha=args.rank, lr=args.lr,
                         epochs=args.epochs, batch_size=args.batch_size, max_tokens=args.max_tokens,
                         max_steps=args.max_steps, seed=args.seed)
    out = {"lora": asdict(res), "backbone": bb.key,
           "provenance": provenance(args.seed, backbone=args.backbone, command="glot lora", variant=args.variant,
                                    ratio=args.ratio, n_train=args.n_train, n_eval=args.n_eval)}
    acc = "n/a (timing run)" if res.accuracy is None else f"{res.accuracy:.3f}"
    return Output(out, [f"LoRA r={res.rank} on {bb.key}: accuracy {acc}, {res.trainable_params:,} trainable params, "
                        f"{res.seconds_per_step:.2f} s/step, {res.seconds_per_epoch:.1f} s/epoch"
                        f"{' (extrapolated)' if res.extrapolated else ''}"])


def cmd_heads(args: argparse.Namespace) -> Output:
    """Evaluate the shipped heads on a fresh eval split of the stress test at ratio 0.9."""
    from ..runtime import ASSETS, provenance
    from . import stress
    from .glot_backbone import encode, load_backbone
    from .glot_heads import evaluate_heads, load_heads

    path = ASSETS / f"glot_heads_{args.variant}.safetensors"
    models, meta = load_heads(path)
    cfg, data_seeds = meta.config, meta.data_seeds
    bb = load_backbone(cfg["backbone"])
    data = stress.generate(args.n_eval, data_seeds["ratio"], data_seeds["position"], args.variant,
                           data_seeds["data_seed"] + 10_000)
    states = encode(bb, data.texts, cfg["max_tokens"])
    acc = evaluate_heads(models, states, data.labels, cfg["glot_config"]["tau"])
    out = {"variant": args.variant, "n_eval": args.n_eval, "accuracy": acc, "recorded": meta.quality.get("accuracy"),
           "provenance": provenance(None, [path], command="glot heads", variant=args.variant)}
    return Output(out, [f"{k:<8} {v:.3f}" for k, v in acc.items()])


def _common(p: argparse.ArgumentParser, backbone: bool = True) -> None:
    if backbone:
        p.add_argument("--backbone", default="minilm",
                       help="minilm (default, encoder), smollm2 (decoder), or a local folder / cached hub name")
    p.add_argument("--layers", "-K", type=int, default=2, help="GAT layers K (default 2)")
    p.add_argument("--hidden", type=int, default=64, help="GAT hidden size (default 64)")
    p.add_argument("--tau", type=float, default=0.6, help="cosine threshold of the token graph (default 0.6)")
    p.add_argument("--jk", default="cat", choices=["cat", "max", "mean"], help="jumping knowledge (default cat)")
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
