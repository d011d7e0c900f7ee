"""``python -m backend bridge <action>``: Bridge's interdependent parallel samples on the tiny reasoner.

Actions:
  sample    N samples of one question from Bridge, independent sampling (same data and budget) and the base model
  scaling   accuracy, pass@N, majority vote and distinct right solutions against the width N per mode

Examples::

    python -m backend bridge sample --prompt "Compute (12 + 5) * 3 - 4." --n 8 --json
    python -m backend bridge scaling --json
    python -m backend bridge scaling --source live --problems 6 --checkpoints 0 --json
"""

from __future__ import annotations

import argparse

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``bridge`` group to ``python -m backend``."""
    from .jobs import MODES

    acts = add_group(subparsers, "bridge", "Bridge: the N parallel samples of a question attend to each other")
    s = add_action(acts, "sample", cmd_sample, "N samples of one question per generation mode, side by side")
    s.add_argument("--prompt", required=True, help="a question in the tiny reasoner's grammar")
    s.add_argument("--n", type=int, default=8, help="samples per mode (the width N, 1-32)")
    s.add_argument("--temperature", type=float, default=1.0)
    s.add_argument("--seed", type=int, default=0, help="sampling seed")
    s.add_argument("--checkpoint", type=int, default=0, help="training seed of the checkpoints (0, 1, 2)")
    s.add_argument("--answer", type=int, default=None, help="the right answer, if known")
    s.add_argument("--modes", type=MODES.parse_names, default=list(MODES), help="comma-separated: " + ", ".join(MODES))
    c = add_action(acts, "scaling", cmd_scaling, "metrics against the width N per generation mode")
    c.add_argument("--source", default="log", help="log (the shipped evaluation) or live (sample now)")
    c.add_argument("--problems", type=int, default=24)
    c.add_argument("--widths", default="1,2,4,8", help="comma-separated widths")
    c.add_argument("--checkpoints", default="0,1,2", help="comma-separated training seeds")
    c.add_argument("--modes", type=MODES.parse_names, default=list(MODES), help="comma-separated: " + ", ".join(MODES))
    return acts


def _ints(text: str, what: str) -> tuple[int, ...]:
    from ...errors import InputError

    try:
        return tuple(int(t) for t in str(text).split(",") if t.strip())
    except ValueError:
        raise InputError(f"{what} must be comma-separated whole numbers, e.g. 1,2,4,8; got {text!r}.") from None


def cmd_sample(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import SampleConfig, run_sample

    cfg = SampleConfig(args.prompt, n=args.n, temperature=args.temperature, seed=args.seed,
                       checkpoint=args.checkpoint, answer=args.answer, modes=tuple(args.modes))
    res = run_sample(cfg)
    out = res.to_dict()
    for m in out["modes"].values():
        m.pop("seconds")
    out["provenance"] = provenance(args.seed, prompt=cfg.prompt, n=cfg.n, temperature=cfg.temperature,
                                   checkpoint=cfg.checkpoint)
    lines = [f"{res.domain['label']}: {res.domain['reason']} Right answer: {res.answer}"]
    for k, m in res.modes.items():
        right = "" if m["right"] is None else f", {m['right']}/{res.n} right"
        lines.append(f"{res.labels[k]}: majority {m['majority']}, {m['distinct_answers']} distinct answers{right}")
        lines += [f"  {i:2d} {r['answer']!s:>8}  {r['text'][:100]}" for i, r in enumerate(m["samples"])]
    p = res.parameters
    lines.append(f"Bridge adds {p['bridge_added']:,} parameters to {p['base']:,} ({100 * p['bridge_added'] / p['base']:.1f} %).")
    return Output(out, lines=lines)


def cmd_scaling(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import AGGREGATES, ScalingConfig, run_scaling

    cfg = ScalingConfig(source=args.source, problems=args.problems, widths=_ints(args.widths, "--widths"),
                        checkpoints=_ints(args.checkpoints, "--checkpoints"), modes=tuple(args.modes))
    res = run_scaling(cfg)
    out = res.to_dict()
    out.pop("seconds")
    out["provenance"] = provenance(None, **{k: v for k, v in out["config"].items()})
    lines = [f"{cfg.problems} held-out problems, checkpoints {list(cfg.checkpoints)}, source {cfg.source}"]
    for m, per in res.metrics.items():
        for a in AGGREGATES:
            vals = " ".join(f"N={w}:{v:.3f}" for w, v in zip(res.widths, per[a], strict=True))
            lines.append(f"{res.labels[m]:28} {a:9} {vals}")
    return Output(out, lines=lines)
