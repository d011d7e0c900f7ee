"""``python -m backend mathmo <action>``: MATHMO's bi-level search over modelling frameworks and models.

Actions:
  search   Pareto-UCB + surrogate against random search, NSGA-II and its ablations (random framework, flat search,
           no surrogate) on one facility-location instance: the front of the models run, hypervolume per round,
           the chosen models
  grid     every model of the space on one instance, its objectives and the space's Pareto front
  methods  the strategies and proposal operators

Examples::

    python -m backend mathmo search --problem facility --rounds 20 --json
    python -m backend mathmo search --instance sites.csv --strategies pareto-ucb,flat --json
    python -m backend mathmo search --operator lm --rounds 8 --max-calls 20 --json   # SmolLM2 as the operator
"""

from __future__ import annotations

import argparse

from ...cli_common import Output, add_action, add_group


def _strategies(text: str) -> list[str]:
    from .bilevel import STRATEGIES

    return STRATEGIES.parse_names(text)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``mathmo`` group to ``python -m backend``."""
    acts = add_group(subparsers, "mathmo", "MATHMO: Pareto-UCB search over modelling frameworks (facility location)")
    s = add_action(acts, "search", cmd_search, "the strategies on one instance: fronts and hypervolume per round")
    _instance_args(s)
    s.add_argument("--rounds", type=int, default=20, help="models run per strategy (default 20)")
    s.add_argument("--proposals", type=int, default=3, help="proposals per round l (default 3)")
    s.add_argument("--operator", default="grid", help="grid (default) or lm (a local causal LM)")
    s.add_argument("--lm", default=None, help="the LM of --operator lm: a local folder or cached hub name "
                                              "(default: the embedded SmolLM2)")
    s.add_argument("--max-calls", type=int, default=None, help="--operator lm: at most this many LM calls per run")
    s.add_argument("--strategies", type=_strategies, default=None, help="comma-separated (default all)")
    s.add_argument("--seed", type=int, default=0)
    g = add_action(acts, "grid", cmd_grid, "every model of the space and the space's Pareto front")
    _instance_args(g)
    g.add_argument("--seed", type=int, default=0)
    add_action(acts, "methods", cmd_methods, "the strategies and proposal operators")
    return acts


def _instance_args(q: argparse.ArgumentParser) -> None:
    q.add_argument("--problem", default="facility", choices=("facility",), help="the problem (facility location)")
    q.add_argument("--instance", default=None, help="a CSV kind,x,y,amount,fixed_cost (default: generated)")
    q.add_argument("--facilities", type=int, default=10, help="generated facilities m (default 10)")
    q.add_argument("--customers", type=int, default=30, help="generated customers n (default 30)")


def _instance(args: argparse.Namespace):  # noqa: ANN202 - an Instance or None (generated)
    if not args.instance:
        return None
    from pathlib import Path

    from ...io.registry import read_path

    return read_path("facility_csv", Path(args.instance))


def cmd_search(args: argparse.Namespace) -> Output:
    from .jobs import SearchConfig, run_search

    instance = _instance(args)
    config = SearchConfig(rounds=args.rounds, proposals=args.proposals, operator=args.operator,
                          strategies=tuple(args.strategies) if args.strategies else None, seed=args.seed,
                          facilities=args.facilities, customers=args.customers, lm=args.lm,
                          max_calls=args.max_calls)
    out = run_search(instance, config)
    lines = [f"{out['instance']['source']}; {args.rounds} rounds, operator {config.operator}; hypervolume as a "
             f"fraction of the grid front's"]
    for s in out["strategies"].values():
        pr = f", LM parse rate {s['parse_rate']:.2f}" if config.uses_lm else ""
        lines.append(f"{s['label']:<40} final HV {s['final_hv']:.4f}{pr}")
    return Output(out, lines=lines)


def cmd_grid(args: argparse.Namespace) -> Output:
    from .jobs import GridConfig, run_grid

    out = run_grid(_instance(args), GridConfig(seed=args.seed, facilities=args.facilities, customers=args.customers))
    return Output(out, lines=[f"{len(out['models'])} models, {len(out['front'])} on the front, normalised HV "
                              f"{out['front_hv']:.4f}"])


def cmd_methods(args: argparse.Namespace) -> dict:  # noqa: ARG001 - the parsed arguments are unused
    from .bilevel import OPERATORS, STRATEGIES

    return {"strategies": STRATEGIES.table(), "operators": OPERATORS.table()}
