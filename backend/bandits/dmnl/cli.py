"""``python -m backend dmnl <action>``: diversified MNL assortment bandits.

Actions:
  run      OFU-DMNL and the baselines on one catalogue: cumulative exact and approximate regret, random rounds,
           milliseconds per round, the last assortments
  greedy   greedy vs exhaustive assortment value on random small instances and the hand-built hard instance
  runtime  milliseconds and evaluations per round vs the catalogue size N (OFU-DMNL vs OFU-DMNL-FULL)
  methods  the agents and diversity functions

Each action builds the config of ``jobs`` and calls its job (``run_bandits``, ``run_greedy``, ``run_runtime``), as
the page does.

Examples::

    python -m backend dmnl run --items medium --k 5 --rounds 2000 --json
    python -m backend dmnl run --items items.csv --k 3 --agents ofu-dmnl,ucb-mnl --json
    python -m backend dmnl greedy --instances 300 --json
    python -m backend dmnl runtime --ns 10,20,50,100 --json
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from ...cli_common import Output, add_action, add_group, int_list


def _agents(text: str) -> list[str]:
    from .agents import AGENTS

    return AGENTS.parse_names(text)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``dmnl`` group to ``python -m backend``."""
    from .agents import DEFAULT_AGENTS
    from .jobs import RUNTIME_NS

    acts = add_group(subparsers, "dmnl", "DMNL: diversity-aware MNL assortment bandits (OFU-DMNL vs baselines)")
    r = add_action(acts, "run", cmd_run, "OFU-DMNL and the baselines on one catalogue")
    r.add_argument("--items", default="medium", help="a preset (small, medium, large) or a CSV item table path")
    r.add_argument("--category-column", default=None, help="category column of the CSV (default: 'category' or "
                                                           "the last column)")
    r.add_argument("--id-column", default=None, help="the column naming the items (default: the first other "
                                                     "column holding text; none: items are named by row)")
    r.add_argument("--theta", default=None, help="the true preference of a CSV catalogue: one number per feature "
                                                 "column, comma separated (rescaled to unit norm; default: drawn "
                                                 "from the seed)")
    r.add_argument("--choices", default=None, help="a CSV log of choices (columns shown, chosen) to fit the true "
                                                   "preference and lambda* of a CSV catalogue to (replaces --theta "
                                                   "and --lam)")
    r.add_argument("--k", type=int, default=5, help="assortment size K (default 5)")
    r.add_argument("--rounds", type=int, default=2000, help="horizon T (default 2000)")
    r.add_argument("--lam", type=float, default=1.0, help="true diversity weight lambda* (default 1)")
    r.add_argument("--diversity", default="coverage", help="coverage or facility (default coverage)")
    r.add_argument("--rho", type=float, default=0.5, help="coverage decay rho (default 0.5)")
    r.add_argument("--sigma", type=float, default=0.3, help="per-round context noise (default 0.3)")
    r.add_argument("--agents", type=_agents, default=list(DEFAULT_AGENTS),
                   help=f"comma-separated agents (default {','.join(DEFAULT_AGENTS)})")
    r.add_argument("--seed", type=int, default=0)
    g = add_action(acts, "greedy", cmd_greedy, "greedy vs exhaustive value on random small instances")
    g.add_argument("--instances", type=int, default=300)
    g.add_argument("--seed", type=int, default=0)
    t = add_action(acts, "runtime", cmd_runtime, "milliseconds per round vs N")
    t.add_argument("--ns", type=int_list, default=RUNTIME_NS)
    t.add_argument("--k", type=int, default=5)
    t.add_argument("--rounds", type=int, default=30)
    add_action(acts, "methods", cmd_methods, "the agents and diversity functions")
    return acts


def load_catalogue(items: str, seed: int, category_column: str | None = None,  # noqa: ANN201 - a Catalogue
                   id_column: str | None = None):
    from pathlib import Path

    from ...io.registry import read_path
    from .inputs import PRESETS, preset

    if items.strip().lower() in PRESETS:
        return preset(items, seed=seed)
    return read_path("item_table", Path(items), category_column=category_column, seed=seed, id_column=id_column)


def preference_of(cat, theta: str | None, choices: str | None, cfg):  # noqa: ANN001, ANN201
    """The catalogue with its true preference: typed (``theta``), fitted to a log of choices (``choices``, a path;
    also gives lambda*), or as drawn from the seed. Returns ``(catalogue, lambda*, fit or None)``."""
    from pathlib import Path

    from ...errors import InputError
    from ...io.registry import read_path
    from . import items as I
    from .model import make_diversity

    log = read_path("choice_log", Path(choices)) if choices else None
    if (theta or choices) and cat.source.startswith("synthetic"):
        raise InputError("--theta and --choices apply to a CSV catalogue (--items FILE), not to a preset.")
    if log is not None:
        log = log.resolve(cat)
        div = make_diversity(cfg.diversity, categories=cat.categories, features=cat.features, k=cfg.k, rho=cfg.rho)
        fit = I.fit_preference(cat, log, div)
        return I.with_fitted_preference(cat, fit), max(0.0, fit.lam), fit
    if theta:
        return I.with_preference(cat, theta), cfg.lam, None
    return cat, cfg.lam, None


def cmd_run(args: argparse.Namespace) -> Output:
    from .jobs import BanditConfig, run_bandits

    cfg = BanditConfig(k=args.k, lam=args.lam, rounds=args.rounds, diversity=args.diversity, rho=args.rho,
                       sigma=args.sigma, agents=tuple(args.agents), seed=args.seed)
    cat = load_catalogue(args.items, args.seed, args.category_column, args.id_column)
    cat, lam, fitted = preference_of(cat, args.theta, args.choices, cfg)
    if fitted is not None:
        cfg = replace(cfg, lam=lam)
    res = run_bandits(cat, cfg)
    rows = res.run["agents"]
    pref = None if fitted is None else {"theta": [round(float(v), 4) for v in fitted.theta], "lam": fitted.lam,
                                        "rounds": fitted.rounds, "purchases": fitted.purchases,
                                        "loglik": fitted.loglik, "baseline_loglik": fitted.baseline_loglik}
    out = {"catalogue": cat.summary(), "preference_fit": pref, "settings": res.run["settings"],
           "optimum": res.run["optimum"],
           "greedy_ratio_min": res.run["greedy_ratio_min"], "agents": rows,
           "last_assortment_categories": res.last_assortment_categories(),
           "last_assortment_items": res.last_assortment_items()}
    lines = [f"{cat.source}; K={args.k}, lambda*={args.lam}, T={args.rounds}; regret vs the {out['optimum']} optimum"]
    lines += [f"{r['label']:<28} regret {r['cumulative_regret']:8.2f}  approx {r['cumulative_approx_regret']:9.2f}  "
              f"{r['ms_per_round']:.3f} ms/round  random rounds {r['random_rounds']}" for r in rows]
    return Output(out, lines=lines)


def cmd_greedy(args: argparse.Namespace) -> Output:
    from .jobs import GreedyConfig, run_greedy
    from .model import APPROX

    res = run_greedy(GreedyConfig(instances=args.instances, seed=args.seed))
    r, hard = res.random, res.hard_instance
    return Output(res.to_json(), lines=[
        f"random instances: min ratio {r['min_ratio']:.4f} (bound {APPROX:.4f}), greedy suboptimal on "
        f"{r['greedy_suboptimal']} of {r['instances']}",
        f"hard instance: greedy {hard['greedy']} vs optimum {hard['optimum']}, ratio {hard['ratio']:.4f}"]
        + ([f"adversarial search: worst ratio {w['min_ratio']:.4f} after {w['evaluations']} instances (N = "
            f"{w['n_items']}, K = {w['k']})"] if (w := res.adversarial) else []))


def cmd_runtime(args: argparse.Namespace) -> Output:
    from .jobs import RuntimeConfig, run_runtime

    rows = run_runtime(RuntimeConfig(ns=tuple(args.ns), k=args.k, rounds=args.rounds)).rows
    return Output({"rows": rows}, lines=[f"{r['agent']:<14} N={r['n_items']:<4} {r['ms_per_round']:.3f} ms/round, "
                                         f"{r['evaluations_per_round']:.0f} evaluations" for r in rows])


def cmd_methods(args: argparse.Namespace) -> dict:  # noqa: ARG001 - the parsed arguments are unused
    from .agents import AGENTS
    from .model import DIVERSITY

    return {"agents": AGENTS.table(), "diversity": DIVERSITY.table()}
