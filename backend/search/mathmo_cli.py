"""``python -m backend mathmo <action>``: MATHMO's bi-level search over modelling frameworks and models.

Actions:
  search   Pareto-UCB + surrogate against random framework, flat search and no surrogate on one facility-location
           instance: the front of the models run, hypervolume per round, the chosen models
  grid     every model of the grid on one instance, its objectives and the grid's Pareto front
  methods  the strategies and proposal operators

Examples::

    python -m backend mathmo search --problem facility --rounds 20 --json
    python -m backend mathmo search --instance sites.csv --strategies pareto-ucb,flat --json
    python -m backend mathmo search --operator lm --rounds 8 --json      # SmolLM2 as the proposal operator
"""

from __future__ import annotations

import argparse

from ..cli_common import Output, add_action, add_group


def _strategies(text: str) -> list[str]:
    from .mathmo import STRATEGIES

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
    s.add_argument("--strategies", type=_strategies, default=None, help="comma-separated (default all)")
    s.add_argument("--seed", type=int, default=0)
    g = add_action(acts, "grid", cmd_grid, "every model of the grid and the grid's Pareto front")
    _instance_args(g)
    g.add_argument("--seed", type=int, default=0)
    add_action(acts, "methods", cmd_methods, "the strategies and proposal operators")
    return acts


def _instance_args(q: argparse.ArgumentParser) -> None:
    q.add_argument("--problem", default="facility", choices=("facility",), help="the problem (facility location)")
    q.add_argument("--instance", default=None, help="a CSV kind,x,y,amount,fixed_cost (default: generated)")
    q.add_argument("--facilities", type=int, default=10, help="generated facilities m (default 10)")
    q.add_argument("--customers", type=int, default=30, help="generated customers n (default 30)")


def _space(args: argparse.Namespace):  # noqa: ANN202 - a Space
    from . import facility as F
    from .mathmo import Space

    if args.instance:
        from pathlib import Path

        from ..io.registry import read_path

        inst = read_path("facility_csv", Path(args.instance))
    else:
        inst = F.generate(args.facilities, args.customers, args.seed)
    return Space(inst, args.seed)


def cmd_search(args: argparse.Namespace) -> Output:
    from .mathmo import MathmoConfig, compare, to_json

    space = _space(args)
    cfg = MathmoConfig(rounds=args.rounds, proposals=args.proposals, operator=args.operator)
    generate = None
    if args.operator == "lm":
        from ..models.lm import load_causal_lm

        lm = load_causal_lm(args.lm)

        def generate(prompt: str) -> str:
            return lm.generate(prompt, max_new_tokens=40)

    out = to_json(space, compare(space, args.strategies, cfg, seed=args.seed, generate=generate), cfg)
    lines = [f"{space.inst.source}; {args.rounds} rounds, operator {args.operator}; hypervolume as a fraction of "
             f"the grid front's"]
    for s in out["strategies"].values():
        pr = f", LM parse rate {s['parse_rate']:.2f}" if args.operator == "lm" else ""
        lines.append(f"{s['label']:<40} final HV {s['final_hv']:.4f}{pr}")
    return Output(out, lines=lines)


def cmd_grid(args: argparse.Namespace) -> Output:
    from .mathmo import OBJECTIVES

    space = _space(args)
    lo, hi, hv = space.grid()
    rows = [space.evaluate(i) for i in range(len(space.models))]
    import numpy as np

    from .mathmo import Space
    from .pareto import nondominated

    front = nondominated(Space.normalise(np.asarray([[r[o] for o in OBJECTIVES] for r in rows]), lo, hi)).tolist()
    return Output({"instance": space.inst.summary(), "models": rows, "front": front, "ideal": lo.tolist(),
                   "nadir": hi.tolist(), "front_hv": hv},
                  lines=[f"{len(rows)} models, {len(front)} on the front, normalised HV {hv:.4f}"])


def cmd_methods(args: argparse.Namespace) -> dict:  # noqa: ARG001 - the parsed arguments are unused
    from .mathmo import OPERATORS, STRATEGIES

    return {"strategies": STRATEGIES.table(), "operators": OPERATORS.table()}
