"""``python -m backend t1 <action>``: T1's tool-integrated best-of-N on the tiny reasoner.

Actions:
  bon     best-of-N accuracy at n = 1..N per selector over generated problems (own samples or slip-injected gold)
  check   one question: its candidates (sampled, or read from a text file) with tool verdicts, RM scores and picks

Examples::

    python -m backend t1 bon --model tinyreasoner --n 16 --json
    python -m backend t1 bon --source slips --arithmetic 0 --logic 0.6 --json
    python -m backend t1 check --question "Compute (12 + 5) * 3 - 4." --n 8 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``t1`` group to ``python -m backend``."""
    acts = add_group(subparsers, "t1", "T1: a tool vetoes candidates with wrong calculations, a reward model ranks the rest")
    b = add_action(acts, "bon", cmd_bon, "best-of-N accuracy per selector and n over generated problems")
    b.add_argument("--model", choices=["tinyreasoner"], default="tinyreasoner", help="the policy (and RM backbone)")
    b.add_argument("--split", default="grammar", help="problem split of the task generator (default grammar)")
    b.add_argument("--problems", type=int, default=40)
    b.add_argument("--ops", default="5-8", help="operations per problem, LOW-HIGH (default 5-8)")
    b.add_argument("--n", type=int, default=16, help="candidates per problem (N)")
    b.add_argument("--source", default="samples", help="samples (the model's own) or slips (gold with injected slips)")
    b.add_argument("--temperature", type=float, default=0.8)
    b.add_argument("--arithmetic", type=float, default=0.3, help="arithmetic-slip rate (source slips)")
    b.add_argument("--logic", type=float, default=0.3, help="logic-slip rate (source slips)")
    b.add_argument("--problem-seed", type=int, default=0)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--draws", type=int, default=200, help="subsets per n for the votes")
    c = add_action(acts, "check", cmd_check, "one question: candidates with verdicts, RM scores and each pick")
    c.add_argument("--question", required=True)
    c.add_argument("--candidates", type=Path, default=None, help="text file: candidates separated by blank lines")
    c.add_argument("--answer", type=int, default=None, help="the right answer, if known")
    c.add_argument("--n", type=int, default=16)
    c.add_argument("--temperature", type=float, default=0.8)
    c.add_argument("--seed", type=int, default=0)
    return acts


def _ops(text: str) -> tuple[int, int]:
    from ...errors import InputError

    try:
        lo, _, hi = str(text).partition("-")
        return int(lo), int(hi or lo)
    except ValueError:
        raise InputError(f"--ops must be LOW-HIGH, e.g. 5-8; got {text!r}.") from None


def cmd_bon(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import CACHE_FILE, BonConfig, run_bon

    cfg = BonConfig(split=args.split, problems=args.problems, ops=_ops(args.ops), n=args.n, source=args.source,
                    temperature=args.temperature, arithmetic=args.arithmetic, logic=args.logic,
                    problem_seed=args.problem_seed, seed=args.seed, draws=args.draws)
    from ..candidates import CandidateCache

    res = run_bon(cfg, cache=CandidateCache(CACHE_FILE) if CACHE_FILE.is_file() else None)
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, model=args.model, **{k: v for k, v in out["config"].items()
                                                                   if k != "seed"})
    n = res.ns[-1]
    lines = [f"{res.config['problems']} problems of {res.config['split']}, N = {n}, pass@1 {res.pass_at_1:.3f}; "
             f"tool false-veto rate {res.false_veto_rate:.3f}, veto rate on wrong candidates {res.true_veto_rate:.3f}"]
    lines += [f"{res.labels[k]:32} BoN@{n} {v[-1]:.3f}" for k, v in res.curves.items()]
    return Output(out, lines=lines)


def cmd_check(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import QuestionConfig, run_question

    text = ""
    if args.candidates is not None:
        from ...io.registry import read_path

        text = "\n\n".join(read_path("candidates", args.candidates))
    res = run_question(QuestionConfig(args.question, n=args.n, temperature=args.temperature, seed=args.seed,
                                      candidates=text, answer=args.answer))
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, question=args.question, n=args.n, temperature=args.temperature)
    lines = [f"{res.domain['label']}: {res.domain['reason']}"]
    for i, c in enumerate(res.candidates):
        mark = "pass" if c["passed"] else "VETO"
        lines.append(f"{i:2d} {mark} rm {c['rm']:.3f} answer {c['answer']!s:>8}  {c['text'][:100]}")
    lines += [f"{res.labels[k]:32} picks {v}" for k, v in res.picks.items()]
    return Output(out, lines=lines)
