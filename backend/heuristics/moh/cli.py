"""``python -m backend moh <action>``: MoH meta-optimised heuristics for TSP and online bin packing.

Actions:
  evolve  MoH (size-weighted meta-optimisation), its ablations (single-size utility, no meta level) and the tuned
          constant, the searches with equal evaluation budgets on the training sizes; the winning heuristics'
          programs, the meta-level progress and the optimality gaps at evaluation sizes never trained on, next to the
          references
  solve   one instance (a TSPLIB file, or --n random cities) with a heuristic program (default: the shipped MoH
          heuristic): the tour as city indices, its length and the gap to LKH-3

Examples::

    python -m backend moh evolve --problem tsp --sizes 20,50,100 --generations 20 --json
    python -m backend moh evolve --problem bpp --sizes 20,50,100 --generations 2 --eval-sizes 200,1000 --json
    python -m backend moh solve --instance berlin52.tsp --json
    python -m backend moh solve --n 200 --program "(add d_cur (mul 0.5 nn_rest))" --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, int_list

PROBLEMS = {"tsp": "tsp_construct", "tsp_construct": "tsp_construct", "tsp_gls": "tsp_gls", "bpp": "bpp_online",
            "bpp_online": "bpp_online"}


def _problem(text: str) -> str:
    key = text.strip().lower()
    if key not in PROBLEMS:
        raise argparse.ArgumentTypeError(f"problem: one of {', '.join(PROBLEMS)}")
    return PROBLEMS[key]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``moh`` group to ``python -m backend``."""
    from .meta_operators import META_OPERATORS

    acts = add_group(subparsers, "moh", "MoH: meta-optimised heuristics for TSP and online bin packing")
    e = add_action(acts, "evolve", cmd_evolve, "MoH, its ablations (equal budgets) and the tuned constant; gaps at "
                   "unseen sizes")
    e.add_argument("--problem", type=_problem, default="tsp_construct",
                   help="tsp (construction), tsp_gls (improvement: guided local search), bpp (online bin packing)")
    e.add_argument("--sizes", type=int_list, default=(20, 50, 100), help="training sizes (default 20,50,100)")
    e.add_argument("--generations", type=int, default=2, help="meta iterations (default 2)")
    e.add_argument("--budget", type=int, default=16, help="heuristic evaluations per task per optimiser (default 16)")
    e.add_argument("--meta-population", type=int, default=4, help="optimisers per meta iteration (default 4)")
    e.add_argument("--train-instances", type=int, default=2, help="instances per training size (default 2)")
    e.add_argument("--single-size", type=int, default=50, help="training size of the single-size ablation")
    e.add_argument("--variants", default="", help="comma-separated variants (default: every one that applies: moh, "
                   "single_size, no_meta and, for tsp, tuned_constant)")
    e.add_argument("--eval-sizes", type=int_list, default=(200, 500, 1000), help="evaluation sizes (200-1000)")
    e.add_argument("--eval-instances", type=int, default=2, help="instances per evaluation size (default 2)")
    e.add_argument("--operator", choices=META_OPERATORS.names(), default="edits",
                   help="meta-level operator that proposes optimiser programs: edits (hand-written structural edits, "
                        "default) or lm (SmolLM2 writes programs, capped calls)")
    e.add_argument("--lm-calls", type=int, default=20, help="cap on LM calls with --operator lm (default 20)")
    e.add_argument("--seed", type=int, default=0)

    s = add_action(acts, "solve", cmd_solve, "one instance with a heuristic program: tour, length, gap to LKH-3")
    s.add_argument("--instance", type=Path, default=None, help="a TSPLIB .tsp file (5-1,000 cities)")
    s.add_argument("--n", type=int, default=100, help="random cities when no --instance (20-1,000; default 100)")
    s.add_argument("--program", default=None, help="an s-expression of tsp_construct (default: the shipped MoH one)")
    s.add_argument("--items", type=Path, default=None,
                   help="a bin-packing item-size CSV instead of a TSP instance: packs it online with the shipped "
                        "bin-packing heuristic and reports bins, first fit, best fit and the L1 bound")
    s.add_argument("--capacity", type=float, default=100.0, help="bin capacity of --items (default 100)")
    s.add_argument("--seed", type=int, default=0)
    return acts


def cmd_evolve(args: argparse.Namespace) -> Output:
    from ...runtime import provenance
    from .jobs import EvolveConfig, run_evolve

    config = EvolveConfig(args.problem, tuple(args.sizes), args.train_instances, args.budget, args.meta_population,
                          args.generations, args.single_size, args.seed,
                          tuple(v for v in args.variants.split(",") if v.strip()) or None,
                          args.operator, args.lm_calls, tuple(args.eval_sizes), args.eval_instances)
    got = run_evolve(config)
    ev, res, refs = got["evaluation"], got["variants"], config.shown_references()
    cfg = got["config"]
    out = {"method": "moh", "action": "evolve", "problem": got["problem"], "operator": got["operator"],
           "config": cfg, "variants": res, "evaluation": ev, "timing_s": got["timing_s"],
           "provenance": provenance(args.seed, problem=cfg["problem"], sizes=cfg["sizes"],
                                    generations=cfg["generations"], budget=cfg["budget"], operator=args.operator)}
    lines = [f"{cfg['problem']}: training sizes {cfg['sizes']}, operator {args.operator}",
             f"{'variant':<18} {'task evals':>10} " + " ".join(f"{'gap@' + str(n):>9}" for n in ev["sizes"])
             + "  heuristic"]
    for k in [*res, *refs]:
        gaps = " ".join(f"{g:>8.2f}%" for g in ev["gaps"][k])
        evals = res[k]["task_evals"] if k in res else ""
        lines.append(f"{k:<18} {evals!s:>10} {gaps}  {res[k]['readable'] if k in res else ''}")
    return Output(out, lines=lines, compact=True)


def cmd_solve(args: argparse.Namespace) -> Output:
    from ...io.registry import read_path
    from ...runtime import provenance
    from .jobs import SolveConfig, run_solve
    from .language import GRAMMARS, parse, render
    from .references import RULES

    config = SolveConfig(args.program, args.n, args.seed)
    if args.items is not None:
        inst = read_path("bin_items", args.items, capacity=args.capacity)
        got = run_solve(inst, config)
        text = got["program"]
        out = {"method": "moh", "action": "solve", "problem": "bpp_online", "items": int(len(inst.items)),
               "capacity": inst.cap, "program": text, "readable": render(parse(text, GRAMMARS["bpp_online"])),
               "bins": got["bins"]["moh"], **{k: got["bins"][k] for k in RULES}, "l1_bound": got["l1"]}
        return Output(out, lines=[f"{len(inst.items)} items, capacity {inst.cap:g}: {out['bins']} bins (first fit "
                                  f"{out['first_fit']}, best fit {out['best_fit']}, L1 bound {out['l1_bound']})"])
    inst = read_path("tsplib", args.instance) if args.instance is not None else None
    got = run_solve(inst, config)
    text = got["program"]
    readable = render(parse(text, GRAMMARS["tsp_construct"]))
    length, ref = got["lengths"]["moh"], got["lengths"]["lkh"]
    out = {"method": "moh", "action": "solve", "instance": got["name"], "n": got["n"], "program": text,
           "readable": readable, "tour": got["tours"]["moh"], "length": length, "lkh_length": ref,
           "gap_to_lkh_pct": got["gaps"]["moh"], "timing_s": {"heuristic": got["ms"]["moh"] / 1000,
                                                            "lkh": got["ms"]["lkh"] / 1000},
           "provenance": provenance(args.seed, instance=str(args.instance) if args.instance else None, n=got["n"])}
    return Output(out, lines=[f"{got['name']}: {got['n']} cities, length {length:.4f}, LKH-3 {ref:.4f}, gap "
                              f"{out['gap_to_lkh_pct']:.2f}%", f"program: {readable}"], compact=True)
