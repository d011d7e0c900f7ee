"""CLI group ``swireasoning``: SwiReasoning's latent/explicit switching decoder and its baselines on a causal LM.

- ``run``: one question, one decoder (or ``--decoder all``: every decoder on the same question): the text, the answer
  read from it, tokens, forward passes, why it stopped, and the per-step trace (entropy, reference entropy, latent or
  explicit feed, switches, injected tokens). Example:
  ``python -m backend swireasoning run --model tinyreasoner --question "Compute 12 + 7." --decoder all --json``
- ``eval``: accuracy (exact final answer), mean tokens, answered share, forward passes and seconds per decoder x budget
  on generated problems of a split, with the Pareto flag of each row. Example:
  ``python -m backend swireasoning eval --model smollm2 --split heldout --n 20 --budgets 64,128 --json``
- ``controller``: the controller alone on a scripted entropy trace (no model; instant): modes, switch steps, injected
  positions. Example: ``python -m backend swireasoning controller --entropies 3,4,2,2.5,1,5,6 --window 2 --json``

Models: ``tinyreasoner`` (trained here), ``smollm2`` (embedded), ``qwen2.5-coder`` (optional, ``make models-extra``),
``folder`` with ``--path`` (a local transformers causal-LM folder). Bad input (an empty question or one over 1,000
characters, a budget outside 8..4096, an unknown decoder, model or split, a model that is not installed) exits with
code 2 before any decoding.

Each action builds the config of ``jobs`` and calls its job (``run_decode``, ``run_eval``, ``run_controller``), as
the page does.
"""

from __future__ import annotations

import argparse
from typing import Any

from backend.cli_common import Output, add_action, add_group

MODEL_CHOICES = "tinyreasoner | smollm2 | qwen2.5-coder | folder"


def add_parser(subparsers: Any) -> argparse._SubParsersAction:
    sub = add_group(subparsers, "swireasoning", "SwiReasoning: switch between latent and explicit reasoning on "
                    "entropy trends, vs CoT, soft thinking and budget forcing")
    r = add_action(sub, "run", cmd_run, "decode one question with one decoder or all of them")
    _model(r)
    r.add_argument("--question", required=True, help="the question (at most 1,000 characters)")
    r.add_argument("--decoder", default="swireasoning", help="a decoder name, a comma-separated list, or 'all'")
    r.add_argument("--budget", type=int, default=128, help="max new tokens (8..4096)")
    _settings(r)

    e = add_action(sub, "eval", cmd_eval, "accuracy and tokens per decoder x budget on generated problems")
    _model(e)
    e.add_argument("--split", default="train",
                   help="train (unseen draws of the training distribution, default) | grammar | grammar_paraphrase | "
                        "heldout | heldout_numbers | heldout_templates")
    e.add_argument("--n", type=int, default=20, help="problems (1..500)")
    e.add_argument("--budgets", default="64,128", help="comma-separated token budgets (8..4096 each)")
    e.add_argument("--budget", type=int, default=None, help="one budget (instead of --budgets)")
    e.add_argument("--decoders", default=None,
                   help="comma-separated decoder names, or 'all' (default: every decoder that samples nothing)")
    e.add_argument("--problem-seed", type=int, default=0, help="seed of the problem generator")
    _settings(e)

    c = add_action(sub, "controller", cmd_controller, "the controller alone on a scripted entropy trace (no model)")
    c.add_argument("--entropies", required=True, help="comma-separated entropies, one per step")
    c.add_argument("--window", type=int, default=2, help="W: explicit steps before a switch back to latent")
    c.add_argument("--max-switch", type=int, default=None, help="C_max (default: no cap)")
    c.add_argument("--end-at", type=int, default=None, help="step at which the end-of-thinking marker is sampled")
    return sub


def _model(a: argparse.ArgumentParser) -> None:
    a.add_argument("--model", default="tinyreasoner", help=MODEL_CHOICES)
    a.add_argument("--path", default=None, help="weights file (tinyreasoner) or model folder (folder, smollm2)")


def _settings(a: argparse.ArgumentParser) -> None:
    a.add_argument("--protocol", default="accuracy",
                   help="the released evaluation's settings: accuracy (no switch cap, alpha 0.6, default) or "
                        "efficiency (C_max 2, alpha 0.5)")
    a.add_argument("--max-switch", type=int, default=None,
                   help="C_max, the switch cap (0 = no cap; default: the protocol's)")
    a.add_argument("--alpha", type=float, default=None, help="alpha0 (default: the protocol's)")
    a.add_argument("--window", type=int, default=512, help="W (scaled to budget / 8 when W >= budget)")
    a.add_argument("--seed", type=int, default=0, help="seed of the sampled decoders")


def cmd_run(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import DecodeConfig, run_decode

    cfg = DecodeConfig(model=args.model, path=args.path, decoders=args.decoder, budget=args.budget,
                       protocol=args.protocol, max_switch=args.max_switch, alpha0=args.alpha, window=args.window,
                       seed=args.seed)
    out = run_decode(args.question, cfg)
    q, runs = out["question"], out["runs"]
    out["provenance"] = provenance(args.seed, (), model=args.model, path=args.path, question=q,
                                   decoder=args.decoder, budget=args.budget, protocol=cfg.protocol,
                                   max_switch=args.max_switch, alpha=args.alpha, window=args.window)
    dom = out["domain"]
    lines = [f"{out['model']}, budget {out['budget']}: {q}", f"{dom['label']}: {dom['reason']}"]
    for r in runs:
        lines.append(f"{r['label']:32} answer {r['answer']!s:>8}  tokens {r['tokens']:4d}  latent {r['latent_steps']:4d}"
                     f"  switches {r['switches']}  {r['stopped']:13}  {r['seconds']:.2f} s")
        lines.append("    " + r["text"].replace("\n", " ")[:160])
    return Output(out, lines=lines)


def cmd_eval(args: argparse.Namespace) -> Output:
    from backend.cli_common import int_list
    from backend.errors import InputError
    from backend.runtime import provenance

    from .jobs import EvalConfig, run_eval

    if args.budget is not None:
        budgets = [args.budget]
    else:
        try:
            budgets = list(int_list(args.budgets))
        except argparse.ArgumentTypeError:
            raise InputError("--budgets must be comma-separated integers, e.g. 64,128,256.") from None
    chosen = {} if args.decoders is None else {"decoders": args.decoders}
    cfg = EvalConfig(model=args.model, path=args.path, split=args.split, n=args.n, budgets=tuple(budgets),
                     **chosen, problem_seed=args.problem_seed, protocol=args.protocol, max_switch=args.max_switch,
                     alpha0=args.alpha, window=args.window, seed=args.seed)
    out = run_eval(cfg)
    out["provenance"] = provenance(args.seed, (), model=args.model, path=args.path, split=args.split, n=args.n,
                                   budgets=list(cfg.budgets), decoders=list(cfg.decoders),
                                   problem_seed=args.problem_seed, protocol=cfg.protocol,
                                   max_switch=args.max_switch, alpha=args.alpha, window=args.window)
    lines = [f"{out['model']} on {args.n} problems of split {args.split}"]
    for r in out["rows"]:
        lines.append(f"{r['label']:32} budget {r['budget']:5d}  accuracy {r['accuracy']:6.1%}  tokens "
                     f"{r['mean_tokens']:7.1f}  answered {r['answered']:6.1%}  {r['seconds']:7.1f} s"
                     f"{'  pareto' if r['pareto'] else ''}")
    return Output(out, lines=lines)


def cmd_controller(args: argparse.Namespace) -> Output:
    from backend.cli_common import float_list
    from backend.errors import InputError
    from backend.runtime import provenance

    from .jobs import ControllerConfig, run_controller

    try:
        h = list(float_list(args.entropies))
    except argparse.ArgumentTypeError:
        raise InputError("--entropies must be comma-separated numbers, e.g. 3,4,2,2.5,1.") from None
    cfg = ControllerConfig(tuple(h), window=args.window, max_switch=args.max_switch, end_at=args.end_at)
    out = run_controller(cfg)
    out["provenance"] = provenance(None, (), entropies=h, window=args.window, max_switch=args.max_switch,
                                   end_at=args.end_at)
    return Output(out, lines=[f"modes {out['modes']}", f"switches {out['switch_steps']}",
                              f"injected at {out['injected_steps']}"])
