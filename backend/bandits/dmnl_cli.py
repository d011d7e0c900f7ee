"""``python -m backend dmnl <action>``: diversified MNL assortment bandits.

Actions:
  run      OFU-DMNL and the baselines on one catalogue: cumulative exact and approximate regret, random rounds,
           milliseconds per round, the last assortments
  greedy   greedy vs exhaustive assortment value on random small instances and the hand-built hard instance
  runtime  milliseconds and evaluations per round vs the catalogue size N (OFU-DMNL vs OFU-DMNL-FULL)
  methods  the agents and diversity functions

Examples::

    python -m backend dmnl run --items medium --k 5 --rounds 2000 --json
    python -m backend dmnl run --items items.csv --k 3 --agents ofu-dmnl,ucb-mnl --json
    python -m backend dmnl greedy --instances 300 --json
    python -m backend dmnl runtime --ns 10,20,50,100 --json
"""

from __future__ import annotations

import argparse

from ..cli_common import Output, add_action, add_group, int_list


def _agents(text: str) -> list[str]:
    from .agents import AGENTS

    return AGENTS.parse_names(text)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``dmnl`` group to ``python -m backend``."""
    acts = add_group(subparsers, "dmnl", "DMNL: diversity-aware MNL assortment bandits (OFU-DMNL vs baselines)")
    r = add_action(acts, "run", cmd_run, "OFU-DMNL and the baselines on one catalogue")
    r.add_argument("--items", default="medium", help="a preset (small, medium, large) or a CSV item table path")
    r.add_argument("--category-column", default=None, help="category column of the CSV (default: 'category' or "
                                                           "the last column)")
    r.add_argument("--k", type=int, default=5, help="assortment size K (default 5)")
    r.add_argument("--rounds", type=int, default=2000, help="horizon T (default 2000)")
    r.add_argument("--lam", type=float, default=1.0, help="true diversity weight lambda* (default 1)")
    r.add_argument("--diversity", default="coverage", help="coverage or facility (default coverage)")
    r.add_argument("--rho", type=float, default=0.5, help="coverage decay rho (default 0.5)")
    r.add_argument("--sigma", type=float, default=0.3, help="per-round context noise (default 0.3)")
    r.add_argument("--agents", type=_agents, default=["ofu-dmnl", "ofu-dmnl-full", "ofu-mnl+", "ucb-mnl", "ts-mnl"],
                   help="comma-separated agents (default ofu-dmnl,ofu-dmnl-full,ofu-mnl+,ucb-mnl,ts-mnl)")
    r.add_argument("--seed", type=int, default=0)
    g = add_action(acts, "greedy", cmd_greedy, "greedy vs exhaustive value on random small instances")
    g.add_argument("--instances", type=int, default=300)
    g.add_argument("--seed", type=int, default=0)
    t = add_action(acts, "runtime", cmd_runtime, "milliseconds per round vs N")
    t.add_argument("--ns", type=int_list, default=(10, 15, 20, 50, 100))
    t.add_argument("--k", type=int, default=5)
    t.add_argument("--rounds", type=int, default=30)
    add_action(acts, "methods", cmd_methods, "the agents and diversity functions")
    return acts


def load_catalogue(items: str, seed: int, category_column: str | None = None):  # noqa: ANN201 - a Catalogue
    from pathlib import Path

    from .presets import PRESETS, preset

    if items.strip().lower() in PRESETS:
        return preset(items, seed=seed)
    from ..io.registry import read_path

    return read_path("item_table", Path(items), category_column=category_column, seed=seed)


def cmd_run(args: argparse.Namespace) -> Output:
    from .agents import simulate

    cat = load_catalogue(args.items, args.seed, args.category_column)
    sim = simulate(cat, k=args.k, lam=args.lam, rounds=args.rounds, diversity=args.diversity, rho=args.rho,
                   sigma=args.sigma, agents=args.agents, seed=args.seed)
    rows = [r.summary() for r in sim.runs.values()]
    names = cat.category_names
    last = {a: [names[cat.categories[i]] for i in r.assortments[-1]] for a, r in sim.runs.items()}
    out = {"catalogue": cat.summary(), "settings": sim.settings, "optimum": sim.optimum_kind,
           "greedy_ratio_min": float(sim.greedy_ratio.min()), "agents": rows, "last_assortment_categories": last}
    lines = [f"{cat.source}; K={args.k}, lambda*={args.lam}, T={args.rounds}; regret vs the {sim.optimum_kind} optimum"]
    lines += [f"{r['label']:<28} regret {r['cumulative_regret']:8.2f}  approx {r['cumulative_approx_regret']:9.2f}  "
              f"{r['ms_per_round']:.3f} ms/round  random rounds {r['random_rounds']}" for r in rows]
    return Output(out, lines=lines)


def cmd_greedy(args: argparse.Namespace) -> Output:
    from . import dmnl as M

    check = M.random_instances_ratio(args.instances, seed=args.seed)
    u, lam, div, k = M.hard_instance()
    subsets = M.all_subsets(len(u), k)
    opt = M.exhaustive_true(u, lam, subsets, div.enumerate_values(subsets))
    got = M.greedy_true(u, lam, div, k)
    hard = {"greedy": got.items.tolist(), "optimum": opt.items.tolist(), "ratio": got.value / opt.value}
    out = {"random": check.summary(), "hard_instance": hard}
    return Output(out, lines=[f"random instances: min ratio {check.ratios.min():.4f} (bound {M.APPROX:.4f}), greedy "
                              f"suboptimal on {check.suboptimal} of {len(check.ratios)}",
                              f"hard instance: greedy {hard['greedy']} vs optimum {hard['optimum']}, ratio "
                              f"{hard['ratio']:.4f}"])


def cmd_runtime(args: argparse.Namespace) -> Output:
    from .agents import runtime_vs_n

    rows = runtime_vs_n(list(args.ns), k=args.k, rounds=args.rounds)
    return Output({"rows": rows}, lines=[f"{r['agent']:<14} N={r['n_items']:<4} {r['ms_per_round']:.3f} ms/round, "
                                         f"{r['evaluations_per_round']:.0f} evaluations" for r in rows])


def cmd_methods(args: argparse.Namespace) -> dict:  # noqa: ARG001 - the parsed arguments are unused
    from .agents import AGENTS
    from .dmnl import DIVERSITY

    return {"agents": AGENTS.table(), "diversity": DIVERSITY.table()}
