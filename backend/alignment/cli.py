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
import math
from pathlib import Path

from ..cli_common import Output, add_action, add_group, float_list, int_list


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``softbon`` group to ``python -m backend``."""
    acts = add_group(subparsers, "softbon", "Soft Best-of-N: KL bound, reward hacking and the best beta per N")

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--ns", type=int_list, default=(1, 2, 4, 8, 16, 32, 64), help="values of N (default 1,2,...,64)")
        q.add_argument(
            "--betas", type=float_list, default=(0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128), help="finite betas; BoN is added"
        )
        q.add_argument("--reward", choices=("proxy", "calibrated", "true"), default="proxy", help="selection reward")

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


def _report(inst, args: argparse.Namespace, seed: int | None, extra: dict) -> dict:
    from ..runtime import provenance
    from . import softbon as sb

    res = sb.sweep(inst, sb.SweepConfig(ns=args.ns, betas=args.betas, reward=args.reward))
    out = {"method": "softbon", **extra, **res.to_dict()}
    if inst.true_reward is not None:
        tc = sb.calibrate(inst.true_reward, inst.pi_ref)
        pc = sb.calibrate(inst.proxy, inst.pi_ref)
        n_max = max(res.ns)
        out["regret_terms_at_max_n"] = {
            (f"beta={b:g}" if math.isfinite(b) else "beta=inf"): {
                "regret": round(float(tc.max() - sb.sbon_policy(inst.pi_ref, pc, n_max, b) @ tc), 6),
                **{k: round(v, 6) for k, v in sb.regret_terms(tc, pc, inst.pi_ref, n_max, b).items()},
            }
            for b in res.betas
            if b > 0 and math.isfinite(b)
        }
    if inst.labels:
        out["selection_probability_at_max_n"] = {
            (f"beta={b:g}" if math.isfinite(b) else "beta=inf"): [round(float(v), 6) for v in res.policies[-1, j]]
            for j, b in enumerate(res.betas)
        }
    params = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in ("func", "seed")}
    out["provenance"] = provenance(seed, **params)
    return out


def _output(out: dict) -> Output:
    if not out["best_beta_per_n"]:
        lines = [f"{key} " + " ".join(f"{p:.3f}" for p in probs)
                 for key, probs in out.get("selection_probability_at_max_n", {}).items()]
        return Output(out, lines=lines)
    lines = ["N     best beta   true reward (best)   true reward (hard BoN)"]
    for n, b, t, h in zip(out["ns"], out["best_beta_per_n"], out["best_true_per_n"], out["bon_true_per_n"]):
        lines.append(f"{n:<5} {b!s:<11} {t:<20} {h}")
    return Output(out, lines=lines)


def cmd_sweep(args: argparse.Namespace) -> Output:
    from . import softbon as sb

    cfg = sb.InstanceConfig(k=args.k, dirichlet_alpha=args.dirichlet_alpha, noise=args.noise, hack_frac=args.hack_frac)
    inst = sb.make_instance(cfg, seed=args.seed)
    return _output(_report(inst, args, args.seed, {"instance": vars(cfg)}))


def cmd_text(args: argparse.Namespace) -> Output:
    from ..io.registry import read_path
    from ..models.text import load_text_encoder
    from . import softbon as sb

    cands = read_path("candidates", args.candidates)
    enc = load_text_encoder(args.encoder)
    inst = sb.text_instance(
        cands, args.reference, lambda xs: enc.embed(xs).numpy(), true_scores=args.scores
    )
    extra = {"encoder": enc.source, "candidates": inst.labels, "proxy_cosine": [round(float(v), 6) for v in inst.proxy]}
    return _output(_report(inst, args, None, extra))
