"""CLI group ``stamp``: ``python -m backend stamp <action> ... [--json]``.

Actions:
  eval       perplexity of SmolLM2 (or any Llama-family causal LM) with fake-quantized linear-layer inputs: A4, A4 +
             STaMP, Hadamard, Hadamard + STaMP, SmoothQuant, A8, dense, and the controls (token 0 at 8 bits,
             the first k raw tokens at 8 bits, with and without Hadamard), each at its own average bits; SQNR, the
             Theorem 1 bound ratio and the per-window NLL per method, and ours against the controls paired over
             the windows (``gains``)
  synthetic  the Theorem 1 bound vs the measured error and the MSE gain over plain per-token quantization on AR(1)
             sequences, for every sequence transform (no model)

Examples::

    python -m backend stamp eval --bits 4 --json                       # the built-in Python reference text
    python -m backend stamp eval --text FILE --bits 4 --high-bits 8 --hp-tokens 8 --transform haar --json
    python -m backend stamp synthetic --json

Bad input (empty or non-UTF-8 text, a text too short for the context, a checkpoint that is not a Llama-family causal
LM, bits outside the supported set) exits with code 2 and a message; nothing is written. Both actions build the config
of a job of :mod:`.jobs` and run it (``eval``: ``run_evaluate``, ``synthetic``: ``run_synthetic``).
"""

from __future__ import annotations

import argparse
from typing import Any

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``stamp`` group to ``python -m backend``."""
    acts = add_group(subparsers, "stamp", "STaMP: sequence transform + mixed precision for low-bit activations")
    e = add_action(acts, "eval", cmd_eval, "perplexity per activation-quantization method at matched average bits")
    e.add_argument("--text", default=None, help="UTF-8 text file (default: the built-in Python reference text); "
                   "the last 30 %% is held out for perplexity")
    e.add_argument("--model", default=None, help="local folder or cached hub name of a Llama-family causal LM "
                   "(default: the embedded SmolLM2-135M)")
    e.add_argument("--bits", type=int, default=4, help="the low activation bit-width (2, 3, 4, 5, 6, 8, 16)")
    e.add_argument("--high-bits", type=int, default=8, help="bit-width of the high-precision tokens")
    e.add_argument("--hp-tokens", type=int, default=None, help="high-precision tokens k (default seqlen / 32)")
    e.add_argument("--transform", default="haar", help="sequence transform: haar | dct | wht | klt | identity")
    e.add_argument("--sink-tokens", type=int, default=1, help="leading tokens kept at high bits outside the "
                   "transform (counted in k)")
    e.add_argument("--allocation", default="first", choices=("first", "energy"),
                   help="which transformed rows get the high bits")
    e.add_argument("--weight-bits", type=int, default=None, help="also quantize weights (per-channel RTN)")
    e.add_argument("--seqlen", type=int, default=256)
    e.add_argument("--windows", type=int, default=4, help="held-out windows of --seqlen tokens")
    e.add_argument("--methods", default=None, help="comma-separated methods (default: all)")
    e.add_argument("--no-stats", action="store_true", help="skip the per-layer statistics and energy")

    s = add_action(acts, "synthetic", cmd_synthetic, "Theorem 1 bound and MSE gain on AR(1) sequences")
    s.add_argument("--seqlen", type=int, default=256)
    s.add_argument("--dim", type=int, default=64)
    s.add_argument("--rho", type=float, default=0.99)
    s.add_argument("--bits", type=int, default=4)
    s.add_argument("--high-bits", type=int, default=8)
    s.add_argument("--hp-tokens", type=int, default=8)
    s.add_argument("--seed", type=int, default=0)
    return acts


def cmd_eval(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from .hooks import DEFAULT_METHODS, EvalConfig
    from .jobs import EvaluateConfig, gain_table, run_evaluate

    methods = DEFAULT_METHODS if args.methods is None else tuple(m.strip() for m in args.methods.split(",") if
                                                                  m.strip())
    cfg = EvalConfig(seqlen=args.seqlen, n_windows=args.windows, low_bits=args.bits, high_bits=args.high_bits,
                     hp_tokens=args.hp_tokens, transform=args.transform, sink_tokens=args.sink_tokens,
                     allocation=args.allocation, weight_bits=args.weight_bits, methods=methods,
                     stats=not args.no_stats)
    text = read_path("text_corpus", args.text) if args.text else None
    res = run_evaluate(text, EvaluateConfig(cfg, model=args.model), source=args.text or None)
    out: dict[str, Any] = {"method": "stamp", "model": res["model"], "text": res["source"], "tokens": res["tokens"],
                           "config": res["config"], "rows": res["rows"]}
    if res["energy"]:
        out["energy_first_eighth_mean"] = {t: {lin: sum(v) / len(v) for lin, v in per.items()}
                                           for t, per in res["energy"].items()}
    out["gains"] = gain_table(res["rows"])
    lines = [f"{r['label']:<42} ppl {r['ppl']:9.3f}  avg bits {r['avg_bits']:6.3f}" for r in res["rows"]]
    return Output(out, lines=lines)


def cmd_synthetic(args: argparse.Namespace) -> dict:
    from .jobs import SyntheticConfig, run_synthetic

    return run_synthetic(SyntheticConfig(seqlen=args.seqlen, dim=args.dim, rho=args.rho, bits=args.bits,
                                         high_bits=args.high_bits, hp_tokens=args.hp_tokens, seed=args.seed))
