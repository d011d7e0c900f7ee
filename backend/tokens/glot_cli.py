"""CLI group ``glot`` (GLOT token-graph pooling, arXiv 2603.03389):

- ``python -m backend glot stress --backbone minilm --ratio 0.9 --variant hard --pooling glot --seed 0 --json``
  trains the chosen poolings on cached backbone states of the stress test and prints their accuracy (plus the
  bag-of-words controls);
- ``python -m backend glot train --csv FILE --json`` trains every pooling on the user's labelled texts (columns
  ``text,label``);
- ``python -m backend glot lora --backbone minilm --ratio 0.9 --variant hard --json`` runs the LoRA fine-tuning reference
  (``--max-steps`` to time a few steps only, e.g. on SmolLM2);
- ``python -m backend glot heads --json`` evaluates the shipped heads (``assets/glot_heads_*.safetensors``).

Handlers return 0 on success and 2 on bad input (the message goes to stderr and, with ``--json``, into the JSON).
torch is imported only inside the handlers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..cli_common import guard

GROUP = "glot"
POOLING_CHOICES = ("mean", "max", "cls", "adapool", "glot", "all")


def _poolings(values: list[str] | None) -> tuple[str, ...]:
    from .pooling import POOLINGS

    if not values or "all" in values:
        return POOLINGS
    return tuple(dict.fromkeys(values))


def _configs(args: argparse.Namespace) -> tuple[Any, Any]:
    from .glot import GlotConfig, TrainConfig

    glot = GlotConfig(num_layers=args.layers, gat_hidden=args.hidden, tau=args.tau, jk=args.jk)
    train = TrainConfig(lr=args.lr, epochs=args.epochs, batch_size=args.batch_size)
    return glot, train


def _emit(args: argparse.Namespace, result: dict[str, Any], text_lines: list[str]) -> None:
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print("\n".join(text_lines))


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [f"{'ratio':>5}  {'method':<14} {'accuracy':>8}  {'params':>8}  {'s/epoch':>8}"]
    for r in rows:
        lines.append(f"{r['ratio']:>5}  {r['method']:<14} {r['accuracy']:>8.3f}  {r['params']:>8}  "
                     f"{r['seconds_per_epoch']:>8.3f}")
    return lines


@guard
def cmd_stress(args: argparse.Namespace) -> int:
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
    _emit(args, out, _table(res.summary()) + [f"backbone states: {res.encode_seconds:.1f} s ({res.backbone})"])
    return 0


@guard
def cmd_train(args: argparse.Namespace) -> int:
    """Train every pooling on a labelled CSV (text,label)."""
    from ..errors import InputError
    from ..runtime import provenance
    from .glot import train_on_texts
    from .stress import parse_labelled_csv

    path = Path(args.csv)
    if not path.is_file():
        raise InputError(f"{path} does not exist or is not a file.")
    data = parse_labelled_csv(path.read_bytes(), name=path.name)
    glot, train = _configs(args)
    res = train_on_texts(data, _poolings(args.pooling), glot, train, backbone=args.backbone, seed=args.seed,
                         max_tokens=args.max_tokens)
    res["provenance"] = provenance(args.seed, backbone=args.backbone, command="glot train", csv=path.name)
    lines = [f"{r['method']:<14} accuracy {r['accuracy']:.3f}  params {r['params']}" for r in res["rows"]]
    lines.append(f"majority class: {res['majority_baseline']:.3f} on {res['n_eval']} held-out rows")
    _emit(args, res, lines)
    return 0


@guard
def cmd_lora(args: argparse.Namespace) -> int:
    """The LoRA fine-tuning reference on the stress test."""
    from dataclasses import asdict

    from ..runtime import provenance
    from . import stress
    from .glot import load_backbone, lora_reference

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
    _emit(args, out, [f"LoRA r={res.rank} on {bb.key}: accuracy {acc}, {res.trainable_params:,} trainable params, "
                      f"{res.seconds_per_step:.2f} s/step, {res.seconds_per_epoch:.1f} s/epoch"
                      f"{' (extrapolated)' if res.extrapolated else ''}"])
    return 0


@guard
def cmd_heads(args: argparse.Namespace) -> int:
    """Evaluate the shipped heads on a fresh eval split of the stress test at ratio 0.9."""
    from ..errors import InputError
    from ..runtime import ASSETS, provenance
    from . import stress
    from .glot import encode, evaluate_heads, load_backbone, load_heads

    path = ASSETS / f"glot_heads_{args.variant}.safetensors"
    if not path.is_file():
        raise InputError(f"{path.name} is missing; run `python -m backend.train glot` to make it.")
    models, meta = load_heads(str(path))
    bb = load_backbone(meta["backbone"])
    data = stress.generate(args.n_eval, meta["ratio"], meta["position"], args.variant, meta["data_seed"] + 10_000)
    states = encode(bb, data.texts, meta["max_tokens"])
    acc = evaluate_heads(models, states, data.labels, meta["glot_config"]["tau"])
    out = {"variant": args.variant, "n_eval": args.n_eval, "accuracy": acc, "recorded": meta.get("accuracy"),
           "provenance": provenance(None, [path], command="glot heads", variant=args.variant)}
    _emit(args, out, [f"{k:<8} {v:.3f}" for k, v in acc.items()])
    return 0


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
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``glot`` group to ``python -m backend``."""
    from .stress import N_EVAL, N_TRAIN, POSITIONS, VARIANTS

    group = subparsers.add_parser(GROUP, help="GLOT token-graph pooling over frozen language models",
                                  description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = group.add_subparsers(dest="action", metavar="<action>")

    p = sub.add_parser("stress", help="the distractor stress test: poolings vs distractor ratio")
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
    p.set_defaults(func=cmd_stress)

    p = sub.add_parser("train", help="train every pooling on your CSV (columns text,label)")
    _common(p)
    p.add_argument("--csv", required=True, help="UTF-8 CSV with a header row text,label (<= 4000 rows, 2 MB)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=128)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("lora", help="LoRA fine-tuning reference (peft) on the stress test")
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
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_lora)

    p = sub.add_parser("heads", help="evaluate the shipped heads on a fresh eval split")
    p.add_argument("--variant", default="hard", choices=VARIANTS)
    p.add_argument("--n-eval", type=int, default=N_EVAL)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_heads)
    return group
