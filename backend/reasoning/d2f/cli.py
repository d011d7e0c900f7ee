"""CLI group ``d2f``: D2F's pipelined block decoding with an exact KV cache against vanilla diffusion decoding, a
cache-free threshold decoder and an autoregressive model of the same size (:mod:`backend.reasoning.d2f.jobs`).

- ``generate``: one question through one decoder or all of them: the answer, forward passes, passes per token,
  tokens/s. ``python -m backend d2f generate --prompt "Compute 12 + 7 * 3." --json``
- ``bench``: accuracy, forward passes per token and tokens/s per decoder on generated problems (vanilla once per step
  count), and the verdict on D2F's claim. ``python -m backend d2f bench --n 20 --json``
- ``invariance``: block-causal invariance of the student: the largest change of a block's logits when later blocks
  are re-drawn (exact caching rests on it).

Bad input (an empty or over-long prompt, thresholds outside [0, 1], block or lengths out of range, step counts
outside 1..length, unknown decoders or splits) exits with code 2 before any work.
"""

from __future__ import annotations

import argparse
from typing import Any

from backend.cli_common import Output, add_action, add_group, int_list


def add_parser(subparsers: Any) -> argparse._SubParsersAction:
    sub = add_group(subparsers, "d2f", "D2F discrete diffusion forcing: pipelined block decoding with a KV cache vs "
                    "vanilla diffusion, a threshold decoder and AR")
    g = add_action(sub, "generate", cmd_generate, "decode one question with one decoder (or all)")
    g.add_argument("--prompt", required=True, help="the question (at most 400 characters)")
    g.add_argument("--decoder", default="d2f", help="d2f | d2f_nocache | vanilla | vanilla_blocks | threshold | ar | all")
    g.add_argument("--steps", type=int, default=None, help="vanilla, vanilla_blocks: forward passes (default: the length)")
    g.add_argument("--grid", action="store_true", help="include the decode-pass x position state grid")
    _thresholds(g)

    b = add_action(sub, "bench", cmd_bench, "accuracy and costs per decoder on generated problems")
    b.add_argument("--n", type=int, default=20, help="problems (1-500)")
    b.add_argument("--split", default="train", help="train (unseen problems of the training templates and numbers) | "
                   "heldout | heldout_numbers | heldout_templates")
    b.add_argument("--ops", default="1,3", help="operations per problem: min,max")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--decoders", default="d2f,vanilla,vanilla_blocks,threshold,ar", help="comma-separated decoders")
    b.add_argument("--vanilla-steps", default="160,107,80,53,40,27,20", help="step counts of the two vanilla decoders")
    _thresholds(b)

    i = add_action(sub, "invariance", cmd_invariance, "block-causal invariance of the student's logits")
    i.add_argument("--seed", type=int, default=0)
    i.add_argument("--trials", type=int, default=4)
    return sub


def _thresholds(a: argparse.ArgumentParser) -> None:
    a.add_argument("--tau-add", type=float, default=0.1, help="add a block when the last is more than this decoded")
    a.add_argument("--tau-act", type=float, default=0.95, help="a block is fully active when its predecessor is "
                   "more than this decoded")
    a.add_argument("--tau-conf", type=float, default=0.9, help="accept tokens above this confidence")
    a.add_argument("--block", type=int, default=None, help="block size (default: the trained 16)")
    a.add_argument("--max-new", type=int, default=None, help="generated positions (default: the trained 160)")


def _thresholds_of(args: argparse.Namespace) -> dict[str, Any]:
    return {"tau_add": args.tau_add, "tau_act": args.tau_act, "tau_conf": args.tau_conf, "block": args.block,
            "max_new": args.max_new}


def cmd_generate(args: argparse.Namespace) -> Output:
    from .jobs import GenerateConfig, run_generate

    cfg = GenerateConfig(decoders=args.decoder, steps=args.steps, grid=args.grid, **_thresholds_of(args))
    out = run_generate(args.prompt, cfg)
    lines = [f"{r['decoder']:12s} answer {r['answer']!s:>6}  passes {r['forward_passes']:4d}  "
             f"passes/token {r['passes_per_token']:.3f}  tokens/s {r['tokens_per_s']:.0f}  {r['text']}"
             for r in out["runs"]]
    dom = out["domain"]
    lines.insert(0, f"{dom['label']} (the tiny reasoner's grammar): {dom['reason']}")
    return Output(out, lines=lines, compact=True)


def cmd_bench(args: argparse.Namespace) -> Output:
    from backend.errors import InputError

    from .jobs import BenchConfig, run_bench

    try:
        ops = tuple(int_list(args.ops))
        steps = tuple(int_list(args.vanilla_steps))
    except argparse.ArgumentTypeError as err:
        raise InputError(str(err)) from None
    cfg = BenchConfig(n=args.n, split=args.split, ops=ops, seed=args.seed, decoders=args.decoders,
                      vanilla_steps=steps, **_thresholds_of(args))
    out = run_bench(cfg)
    lines = [f"{r['label']:60s} acc {r['accuracy']:.3f}  passes/token {r['passes_per_token']:.3f}  "
             f"tokens/s {r['tokens_per_s']:.0f}" for r in out["rows"]] + [f"claim: {out['claim']}"]
    return Output(out, lines=lines, compact=True)


def cmd_invariance(args: argparse.Namespace) -> dict:
    from .jobs import InvarianceConfig, run_invariance

    return run_invariance(InvarianceConfig(seed=args.seed, trials=args.trials))
