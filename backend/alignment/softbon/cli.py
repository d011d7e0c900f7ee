"""``python -m backend softbon <action>``: Soft Best-of-N sweeps on random discrete instances and on pasted texts.

Actions:
  sweep   exact SBoN over an (N, beta) grid on a random instance: expected true reward, KL vs Lemma 4.1, best beta per N
  text    SBoN over candidate answers in a text file (blocks separated by blank lines), MiniLM similarity to a reference

Examples::

    python -m backend softbon sweep --json
    python -m backend softbon sweep --hack-frac 0.03 --ns 2,8,32 --betas 0,1,4,16,64 --reward calibrated --json
    python -m backend softbon text --candidates answers.txt --reference "Paris is the capital of France." --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, float_list, int_list


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``softbon`` group to ``python -m backend``."""
    from .jobs import BETAS, NS
    from .softbon import REWARDS

    acts = add_group(subparsers, "softbon", "Soft Best-of-N: KL bound, reward hacking and the best beta per N")

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--ns", type=int_list, default=NS, help="values of N (default 1,2,...,64)")
        q.add_argument("--betas", type=float_list, default=BETAS, help="finite betas; BoN is added")
        q.add_argument("--reward", choices=list(REWARDS), default="proxy", help="selection reward")

    s = add_action(acts, "sweep", cmd_sweep, "exact SBoN over an (N, beta) grid on a random discrete instance")
    s.add_argument("--k", type=int, default=200, help="number of responses (default 200)")
    s.add_argument("--dirichlet-alpha", type=float, default=1.0, help="pi_ref ~ Dirichlet(alpha 1_K)")
    s.add_argument("--noise", type=float, default=0.0, help="proxy noise std")
    s.add_argument("--hack-frac", type=float, default=0.03, help="fraction of hackable items (default 0.03)")
    s.add_argument("--seed", type=int, default=0)
    common(s)

    t = add_action(acts, "text", cmd_text,
                   "SBoN over pasted candidate answers, MiniLM cosine to a reference as the proxy")
    t.add_argument("--candidates", type=Path, required=True, help="text file: candidates separated by blank lines")
    t.add_argument("--reference", required=True, help="the reference answer")
    t.add_argument("--scores", type=float_list, default=None, help="optional true scores, one per candidate")
    t.add_argument("--encoder", default=None, help="encoder folder or cached hub name (default: embedded MiniLM)")
    common(t)
    return acts


def _grid(args: argparse.Namespace):  # noqa: ANN202 - SweepConfig
    from .softbon import SweepConfig

    return SweepConfig(ns=args.ns, betas=args.betas, reward=args.reward)


def _output(out: dict, args: argparse.Namespace, seed: int | None) -> Output:
    from ...runtime import provenance

    params = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in ("func", "seed")}
    out["provenance"] = provenance(seed, **params)
    if not out["best_beta_per_n"]:
        lines = [f"{key} " + " ".join(f"{p:.3f}" for p in probs)
                 for key, probs in out.get("selection_probability_at_max_n", {}).items()]
        return Output(out, lines=lines)
    lines = ["N     best beta   true reward (best)   true reward (hard BoN)"]
    for n, b, t, h in zip(out["ns"], out["best_beta_per_n"], out["best_true_per_n"], out["bon_true_per_n"]):
        lines.append(f"{n:<5} {b!s:<11} {t:<20} {h}")
    return Output(out, lines=lines)


def cmd_sweep(args: argparse.Namespace) -> Output:
    from .jobs import RandomConfig, run_random
    from .softbon import InstanceConfig

    config = RandomConfig(InstanceConfig(k=args.k, dirichlet_alpha=args.dirichlet_alpha, noise=args.noise,
                                         hack_frac=args.hack_frac), _grid(args), args.seed)
    res = run_random(config)
    out = {"method": "softbon", "instance": res.instance, **res.sweep,
           "regret_terms_at_max_n": res.regret_at_max_n()}
    return _output(out, args, args.seed)


def cmd_text(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from .jobs import TextConfig, run_text

    cands = read_path("candidates", args.candidates)
    config = TextConfig(args.reference, _grid(args), true_scores=args.scores, encoder=args.encoder)
    res = run_text(cands, config)
    out = {"method": "softbon", "encoder": res.encoder, "candidates": res.labels,
           "proxy_cosine": [round(float(v), 6) for v in res.proxy], **res.sweep}
    if res.true is not None:
        out["regret_terms_at_max_n"] = res.regret_at_max_n()
    out["selection_probability_at_max_n"] = {f"beta={b}": [round(float(v), 6) for v in p]
                                             for b, p in res.probs().items()}
    return _output(out, args, None)
