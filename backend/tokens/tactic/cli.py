"""CLI group ``tactic``: sparse decode attention by attention mass (Tactic) vs Quest, top-k and a window, on SmolLM2.

- ``run``: capture post-RoPE q, k, v of chosen layers on a text (``--text FILE`` or ``--preset pydoc|needle``) and
  compare every selector on the last ``--queries`` positions: realised mass, tokens, bytes, output error. Example:
  ``python -m backend tactic run --preset pydoc --p 0.9 --json``
- ``ppl``: teacher-forced perplexity of the last ``--last`` tokens with those positions attending through a selector
  in every layer, vs dense: ``python -m backend tactic ppl --text FILE --method tactic --p 0.9 --json``
- ``synth``: the selectors on seeded synthetic q, k, v of SmolLM2's shapes with planted sink and needle keys (no
  model; seconds).

Each action builds the config of ``jobs`` and calls its job (``run_compare``, ``run_perplexity``), as the page does.
Bad input (empty or non-UTF-8 text, a text too short for the context, P outside (0, 1], a checkpoint of another
architecture) exits with code 2 before any work; nothing is written except the capture cache of the user cache folder.
"""

from __future__ import annotations

import argparse
from typing import Any

from backend.cli_common import Output, add_action, add_group, int_list


def add_parser(subparsers: Any) -> argparse._SubParsersAction:
    sub = add_group(subparsers, "tactic", "Tactic sparse decode attention (target attention mass) vs Quest, top-k, "
                    "window on SmolLM2")
    r = add_action(sub, "run", cmd_run, "compare the selectors on captured attention of a text")
    _common(r, tokens=1024)
    r.add_argument("--layers", default="0,9,19,29", help="comma-separated layer indices")
    r.add_argument("--queries", type=int, default=16, help="decode queries: the last N positions")
    r.add_argument("--budget", default="match", help="tokens per head for top_k/quest/window, or 'match' (Tactic's "
                   "mean per layer and query)")
    r.add_argument("--methods", default=None, help="comma-separated selectors (default: all)")
    r.add_argument("--seed", type=int, default=0, help="seed of the synthetic preset")

    pp = add_action(sub, "ppl", cmd_ppl, "perplexity of the last tokens attending through a selector, vs dense")
    _common(pp, tokens=1024)
    pp.add_argument("--method", default="tactic", help="comma-separated selectors")
    pp.add_argument("--last", type=int, default=128, help="positions attending through the selector")
    pp.add_argument("--budget", default="match")
    pp.add_argument("--layers", default="all", help="'all' or comma-separated layer indices")

    s = add_action(sub, "synth", cmd_synth, "the selectors on seeded synthetic q, k, v (no model)")
    s.add_argument("--tokens", type=int, default=1024)
    s.add_argument("--queries", type=int, default=8)
    s.add_argument("--p", type=float, default=0.9)
    s.add_argument("--seed", type=int, default=0)
    return sub


def _common(a: argparse.ArgumentParser, tokens: int) -> None:
    a.add_argument("--text", default=None, help="UTF-8 text file (.txt, .md; at most 2 MB)")
    a.add_argument("--preset", default="pydoc", help="pydoc | needle | synthetic (run only; used without --text)")
    a.add_argument("--tokens", type=int, default=tokens, help="context length in tokens")
    a.add_argument("--p", type=float, default=0.9, help="target attention mass P in (0, 1]")
    a.add_argument("--model", default=None, help="local folder or cached hub name of a Llama-family causal LM")
    a.add_argument("--depth", type=float, default=0.4, help="needle depth in the context (needle preset)")


def _names(text: str | None) -> tuple[str, ...] | None:
    """Comma-separated selector names as given (the config checks them against the registry)."""
    return None if text is None else tuple(t.strip() for t in text.split(",") if t.strip())


def _layers(text: str, allow_all: bool = False) -> tuple[int, ...] | None:
    from backend.errors import InputError

    if allow_all and text.strip().lower() == "all":
        return None
    try:
        return int_list(text)
    except argparse.ArgumentTypeError:
        raise InputError("--layers must be " + ("'all' or " if allow_all else "") +
                         "comma-separated integers, e.g. 0,9,19,29.") from None


def _text(args: argparse.Namespace) -> str | None:
    from backend.io.registry import read_path

    return read_path("text_corpus", args.text) if args.text else None


def cmd_run(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import CompareConfig, run_compare

    cfg = CompareConfig(preset=args.preset, tokens=args.tokens, queries=args.queries, p=args.p,
                        layers=_layers(args.layers), budget=args.budget, methods=_names(args.methods) or None,
                        model=args.model, depth=args.depth, seed=args.seed, text_name=f"the text {args.text}",
                        figures=False)
    res = run_compare(_text(args), cfg)
    out = dict(res.summary)
    out["fixed_median_budget"] = res.fixed_median_budget
    out["text"] = res.text
    if res.needle:
        out["needle"] = res.needle
    out["provenance"] = provenance(None, (), model=args.model, text=args.text, preset=args.preset,
                                   tokens=args.tokens, p=args.p, layers=list(out["layers"]), queries=args.queries,
                                   budget=args.budget)
    lines = [f"{res.text['source']}: {res.text['tokens']} tokens, layers {out['layers']}, {args.queries} queries, "
             f"P = {args.p:g}; tokens needed for P per (head, query): {out['need']['min']:.0f} to "
             f"{out['need']['max']:.0f} (median {out['need']['median']:.0f})"]
    for r in out["methods"].values():
        lines.append(f"{r['label']:28} mass {r['mass_mean']:.3f}  >=0.85 {r['share_mass_ge_threshold']:5.1%}  "
                     f"tokens/head {r['tokens_per_head']:7.1f}  bytes {r['bytes_ratio']:6.1%} of full  "
                     f"rel. error {r['rel_err_mean']:.3f}")
    f = out["fixed_median_budget"]
    lines.append(f"fixed budget {f['budget']} (median need) with exact top-k: {f['share_below_threshold']:.1%} of "
                 "cases below 0.85")
    if "needle" in out:
        lines.append(f"needle: {out['needle']['found']} / {out['needle']['cases']} oracle cases in Tactic's union")
    return Output(out, lines=lines)


def cmd_ppl(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import PerplexityConfig, run_perplexity

    cfg = PerplexityConfig(preset=args.preset, tokens=args.tokens, last=args.last, p=args.p, budget=args.budget,
                           methods=_names(args.method) or (), layers=_layers(args.layers, allow_all=True),
                           model=args.model, depth=args.depth, text_name=f"the text {args.text}")
    res = run_perplexity(_text(args), cfg).to_json()
    res["provenance"] = provenance(None, (), model=args.model, text=args.text, preset=args.preset,
                                   tokens=args.tokens, p=args.p, method=args.method, last=args.last,
                                   budget=args.budget, layers=args.layers)
    d = res["dense"]
    lines = [f"{res['text']['source']}: perplexity of the last {args.last} tokens; dense {d['perplexity']:.3f}"]
    for r in res["methods"].values():
        lines.append(f"{r['label']:28} perplexity {r['perplexity']:.3f} ({r['ppl_ratio'] - 1:+.2%})  KV bytes "
                     f"{r['bytes_ratio']:.1%} of dense  tokens/head {r['tokens']:.1f}")
    return Output(res, lines=lines)


def cmd_synth(args: argparse.Namespace) -> Output:
    from backend.runtime import provenance

    from .jobs import CompareConfig, run_compare

    cfg = CompareConfig(preset="synthetic", tokens=args.tokens, queries=args.queries, p=args.p, layers=(0,),
                        seed=args.seed, figures=False)
    out = run_compare(None, cfg).summary
    for r in out["methods"].values():
        r.pop("seconds", None)
    out["provenance"] = provenance(args.seed, (), tokens=args.tokens, queries=args.queries, p=args.p)
    return Output(out, lines=[f"{r['label']:28} mass {r['mass_mean']:.3f} tokens/head {r['tokens_per_head']:.1f} "
                              f"bytes {r['bytes_ratio']:.1%}" for r in out["methods"].values()])
