"""``python -m backend orprm <action>``: OR-PRM's data gates and process reward model on generated OR problems.

Actions:
  clean   a noisy dataset through the three gates: counts per gate and flaw kind, corrupted labels kept or caught
  bon     best-of-N accuracy per selector (OR-PRM, gates, majority, random, oracle) at n = 1..N
  check   your own model in the five-tuple form (JSON): validated, solved, gates 1 and 2, structured text

Examples::

    python -m backend orprm clean --json
    python -m backend orprm clean --samples 200 --rate 0.6 --kinds unit_error,swapped,wrong_domain
    python -m backend orprm bon --n 8 --json
    python -m backend orprm check model.json --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``orprm`` group to ``python -m backend``."""
    acts = add_group(subparsers, "orprm", "OR-PRM: gates that clean OR data, a step-level reward model for best-of-N")
    c = add_action(acts, "clean", cmd_clean, "a noisy dataset through the three gates: counts per gate and flaw kind")
    c.add_argument("--samples", type=int, default=300)
    c.add_argument("--rate", type=float, default=0.36, help="share of flawed formulations")
    c.add_argument("--kinds", default="all", help="flaw kinds: all, train, heldout or a comma-separated list")
    c.add_argument("--families", default="all", help="problem families: all or a comma-separated list")
    c.add_argument("--variation", type=float, default=0.5, help="share of equivalent rewritings")
    c.add_argument("--problem-seed", type=int, default=0)
    c.add_argument("--seed", type=int, default=0)
    b = add_action(acts, "bon", cmd_bon, "best-of-N accuracy per selector over generated problems")
    b.add_argument("--problems", type=int, default=40)
    b.add_argument("--n", type=int, default=8, help="candidate formulations per problem (N)")
    b.add_argument("--rate", type=float, default=0.7, help="share of flawed candidates")
    b.add_argument("--kinds", default="heldout", help="flaw kinds (default: the kinds held out of PRM training)")
    b.add_argument("--families", default="all")
    b.add_argument("--variation", type=float, default=0.5)
    b.add_argument("--problem-seed", type=int, default=1000)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--prm-seed", type=int, default=0, help="training seed of the shipped PRM (0, 1 or 2)")
    b.add_argument("--draws", type=int, default=200, help="subsets per n for the vote")
    k = add_action(acts, "check", cmd_check, "your model (five-tuple JSON): validated, solved, gates 1-2")
    k.add_argument("model", type=Path, help="a JSON file in the five-tuple form")
    return acts


def cmd_clean(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import CleanConfig, run_clean

    cfg = CleanConfig(samples=args.samples, flaw_rate=args.rate, kinds=args.kinds, families=args.families,
                      variation=args.variation, problem_seed=args.problem_seed, seed=args.seed)
    res = run_clean(cfg)
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, **{k: v for k, v in out["config"].items() if k != "seed"})
    lines = [f"{res.samples} samples, {res.flawed} flawed, {res.corrupted} with a wrong recorded optimum; the gates "
             f"keep {res.kept} ({res.kept_flawed} of them flawed)"]
    lines += [f"{r['label']:26} n {r['samples']:4d}  corrupted {r['corrupted']:4d}  gate1 {r['rejected_execution']:4d}  "
              f"gate2 {r['rejected_feasibility']:4d}  judge {r['rejected_judge']:4d}  kept {r['kept']:4d}  "
              f"corrupted missed by gates 1-2 {r['corrupted_missed_12']:4d}" for r in res.table]
    return Output(out, lines=lines)


def cmd_bon(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import BonConfig, prm_path, run_bon

    cfg = BonConfig(problems=args.problems, n=args.n, flaw_rate=args.rate, kinds=args.kinds, families=args.families,
                    variation=args.variation, problem_seed=args.problem_seed, seed=args.seed,
                    prm_seed=args.prm_seed, draws=args.draws)
    res = run_bon(cfg)
    out = res.to_dict()
    out["provenance"] = provenance(args.seed, assets=[prm_path(cfg.prm_seed)],
                                   **{k: v for k, v in out["config"].items() if k != "seed"})
    n = res.ns[-1]
    lines = [f"{cfg.problems} problems, N = {n}, flaw kinds {cfg.kinds}; pass@1 {res.pass_at_1:.3f}, PRM step AUROC "
             f"{res.step_auroc:.3f}"]
    lines += [f"{res.labels[k]:28} BoN@{n} {v[-1]:.3f}" for k, v in res.curves.items()]
    return Output(out, lines=lines)


def cmd_check(args: argparse.Namespace) -> Output:
    import json

    from ...io.registry import read_path
    from ...runtime import provenance
    from .jobs import LpConfig, run_lp

    form = read_path("lp_json", args.model)  # the registered decoder refuses a bad file before anything runs
    res = run_lp(LpConfig(json.dumps(form), name=args.model.name))
    out = res.to_dict()
    out["provenance"] = provenance(None, model=args.model.name)
    lines = [s["text"] for s in res.steps]
    lines += [f"optimum {res.objective:.6g} ({res.size['variables']} variables, {res.size['rows']} rows, "
              f"{res.seconds:.3f} s)"]
    lines += [f"{g['label']}: {'pass' if g['passed'] else 'REJECT'} ({g['reason']})" for g in res.gates.values()]
    return Output(out, lines=lines)
