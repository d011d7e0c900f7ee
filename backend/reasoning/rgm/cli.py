"""``python -m backend rgm <action>``: the self-supervised process reward model (SPRM) on the tiny reasoner.

Actions:
  score   one question: n sampled traces, each step's SPRM score and every trace's score per aggregation
  eval    first-wrong-step AUROC per loss and seed, best-of-k per aggregation against majority vote

Examples::

    python -m backend rgm score --question "Compute (12 + 5) * 3 - 4." --json
    python -m backend rgm eval --problems 40 --json
"""

from __future__ import annotations

import argparse

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``rgm`` group to ``python -m backend``."""
    acts = add_group(subparsers, "rgm", "SPRM: a step-scoring head on the policy, trained from final answers only")
    s = add_action(acts, "score", cmd_score, "score the steps of n sampled traces of one question")
    s.add_argument("--question", required=True)
    s.add_argument("--n", type=int, default=8)
    s.add_argument("--temperature", type=float, default=0.8)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--head", default="spr_s0", help="spr_s0..2 (SPR loss) or bce_s0..2 (plain BCE)")
    e = add_action(acts, "eval", cmd_eval, "locate first wrong steps and select the best of k")
    e.add_argument("--split", default="grammar")
    e.add_argument("--problems", type=int, default=40)
    e.add_argument("--n", type=int, default=16)
    e.add_argument("--k", type=int, default=8)
    e.add_argument("--problem-seed", type=int, default=0)
    e.add_argument("--seed", type=int, default=0)
    return acts


def cmd_score(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import ScoreConfig, run_score

    res = run_score(ScoreConfig(args.question, n=args.n, temperature=args.temperature, seed=args.seed,
                                head=args.head))
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, question=args.question, n=args.n, head=args.head)
    lines = [f"{res.domain['label']}: {res.domain['reason']}"]
    for i, t in enumerate(res.traces):
        lines.append(f"{i:2d} answer {t['answer']!s:>7} geometric {t['geometric']:.3f}  steps "
                     + " ".join(f"{s:.2f}" for s in t["steps"]))
    lines += [f"{res.labels[k]:30} picks {v}" for k, v in res.picks.items()]
    return Output(out, lines=lines)


def cmd_eval(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from ..candidates import CandidateCache
    from ..t1.jobs import CACHE_FILE
    from .jobs import EvalConfig, run_eval

    cfg = EvalConfig(split=args.split, problems=args.problems, n=args.n, k=args.k, problem_seed=args.problem_seed,
                     seed=args.seed)
    res = run_eval(cfg, cache=CandidateCache(CACHE_FILE) if CACHE_FILE.is_file() else None)
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, **{k: v for k, v in out["config"].items() if k != "seed"})
    lines = ["first-wrong-step AUROC: " + ", ".join(f"{k} {v:.3f}" for k, v in res.locate_auroc.items())]
    lines += [f"{res.labels[k]:30} best-of-{cfg.k} {v[res.ks.index(cfg.k)]:.3f}" for k, v in res.bon.items()]
    return Output(out, lines=lines)
