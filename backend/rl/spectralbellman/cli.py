"""``python -m backend spectralbellman <action>``: Spectral Bellman features and Thompson-sampling exploration.

Actions:
  run        the agents (TS with SBM / random / true / one-hot features, UCB-VI, RND, epsilon-greedy) on one
             environment: episodes to
             solve, returns, visitation, time per episode
  spectrum   singular values of stacked Bellman backups of random Q tables (cut at d for a low-rank MDP)
  represent  the SBM iterations: largest principal angle to the true span and the Bellman-closure residual per
             iteration
  sweep      episodes to solve DeepSea(N) (or the chain) per agent over sizes and seeds: medians and quartiles
  log        the shipped DeepSea(N) log (N in {10, 20}, 10 seeds, tuned references): medians, the tuned settings and
             paired intervals of the log-ratio of episodes (TS + SBM / reference)

Examples::

    python -m backend spectralbellman run --env deepsea --size 10 --json
    python -m backend spectralbellman spectrum --env lowrank --json
    python -m backend spectralbellman represent --env lowrank --iters 200 --json
    python -m backend spectralbellman run --mdp my_mdp.json --episodes 200 --json
    python -m backend spectralbellman sweep --sizes 6,10 --seeds 3 --json
    python -m backend spectralbellman log --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli_common import Output, add_action, add_group, int_list


def _agents(text: str) -> tuple[str, ...]:
    from .agents import AGENTS

    out = tuple(AGENTS.parse_names(text))
    if not out:
        raise argparse.ArgumentTypeError(f"name at least one agent of: {', '.join(AGENTS)}")
    return out


def _env_args(q: argparse.ArgumentParser, default: str) -> None:
    q.add_argument("--env", default=default, help=f"lowrank, fullrank, deepsea, chain, gridworld (default {default})")
    q.add_argument("--size", type=int, default=10, help="N of DeepSea / chain (default 10)")
    q.add_argument("--rank", type=int, default=8, help="rank d of the low-rank MDP (default 8)")
    q.add_argument("--mdp", type=Path, default=None, help="an MDP as JSON (states, actions, P, R, gamma) instead")
    q.add_argument("--seed", type=int, default=0)


def _env(args: argparse.Namespace) -> tuple:
    """The environment config and the MDP read from ``--mdp`` (None without one)."""
    from .jobs import EnvConfig

    mdp = None
    if args.mdp is not None:
        from ...io.registry import read_path

        mdp = read_path("mdp_json", args.mdp)
    return EnvConfig(args.env, size=args.size, rank=args.rank, seed=args.seed), mdp


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``spectralbellman`` group to ``python -m backend``."""
    acts = add_group(subparsers, "spectralbellman", "Spectral Bellman Method: Bellman-aligned features, TS exploration")

    r = add_action(acts, "run", cmd_run, "the agents side by side on one environment")
    _env_args(r, "deepsea")
    r.add_argument("--agents", type=_agents, default=None, help="comma-separated agents (default all)")
    r.add_argument("--episodes", type=int, default=200, help="episodes per agent (default 200)")
    r.add_argument("--sigma-exp", type=float, default=0.1, help="Thompson-sampling scale (default 0.1)")
    r.add_argument("--lam", type=float, default=1.0, help="prior weight lambda of Sigma (default 1)")
    r.add_argument("--d", type=int, default=None, help="feature dimension (default: rank of the stacked backups)")
    r.add_argument("--stop-when-solved", action="store_true", help="stop each agent at its first solving episode")

    s = add_action(acts, "spectrum", cmd_spectrum, "singular values of stacked backups of random Q tables")
    _env_args(s, "lowrank")
    s.add_argument("--n", type=int, default=256, help="number of backed-up Q tables (default 256)")

    p = add_action(acts, "represent", cmd_represent, "SBM iterations: principal angles to the true span")
    _env_args(p, "lowrank")
    p.add_argument("--d", type=int, default=None, help="feature dimension (default: rank of the stacked backups)")
    p.add_argument("--iters", type=int, default=200, help="SBM iterations (default 200)")
    p.add_argument(
        "--features",
        choices=("table", "network"),
        default=None,
        help="table or a network of the pixels (default: network for the gridworld)",
    )

    w = add_action(acts, "sweep", cmd_sweep, "episodes to solve DeepSea(N) vs N per agent")
    w.add_argument("--env", choices=("deepsea", "chain"), default="deepsea")
    w.add_argument("--sizes", type=int_list, default=(6, 10), help="comma-separated sizes (default 6,10)")
    w.add_argument("--seeds", type=int, default=3, help="seeds per size (default 3)")
    w.add_argument("--episodes", type=int, default=400, help="episode budget per run (default 400)")
    w.add_argument("--agents", type=_agents, default=None, help="comma-separated agents (default all)")

    add_action(acts, "log", cmd_log, "the shipped DeepSea(N) log: tuned references and paired intervals")
    return acts


def cmd_run(args: argparse.Namespace) -> Output:
    from .agents import AGENTS
    from .jobs import ExploreConfig, run_explore

    env, mdp = _env(args)
    config = ExploreConfig(args.agents, episodes=args.episodes, sigma_exp=args.sigma_exp, lam=args.lam, d=args.d,
                           seed=args.seed, stop_when_solved=args.stop_when_solved)
    res = run_explore(env, config, mdp)
    rows, e = res["rows"], res["env"]
    lines = [f"{e['name']}: {e['states']} states, {e['actions']} actions, horizon {e['horizon']}"]
    lines += [
        f"{AGENTS.label(r['agent'])}: solved at episode {r['episodes_to_solve']}, mean return "
        f"{r['mean_return']:.3f}, {r['ms_per_episode']:.2f} ms/episode"
        for r in rows
    ]
    return Output({"method": "spectralbellman", "action": "run", "env": e, "agents": rows}, lines=lines)


def cmd_spectrum(args: argparse.Namespace) -> Output:
    from .jobs import SpectrumConfig, run_spectrum

    config = SpectrumConfig(args.n, args.seed)
    env, mdp = _env(args)
    out = {"method": "spectralbellman", "action": "spectrum", **run_spectrum(env, config, mdp)}
    rel = out["relative"]
    return Output(
        out,
        lines=[
            f"sigma_i / sigma_1: {', '.join(f'{v:.2e}' for v in rel[:12])}",
            f"numerical rank {out['numerical_rank']}",
        ],
        compact=True,
    )


def cmd_represent(args: argparse.Namespace) -> Output:
    from .jobs import RepresentConfig, run_represent

    config = RepresentConfig(d=args.d, iters=args.iters, features=args.features, seed=args.seed)
    env, mdp = _env(args)
    res = run_represent(env, config, mdp)
    sbm = res["sbm"]
    out = {"method": "spectralbellman", "action": "represent", "env": res["env"], "features": res["features"], **sbm,
           "capture": res["capture"]}
    cap = res["capture"]
    return Output(
        out,
        lines=[
            f"d = {res['d']}, {args.iters} iterations ({sbm['seconds']:.2f} s): largest principal angle "
            f"{sbm['final_max_angle']:.2e} rad to the {sbm['reference']}, closure residual "
            f"{sbm['final_closure']:.2e}",
            f"held-out backups: residual {cap['residual']:.3f} vs {cap['optimum']:.3f} for the best {cap['d']}-dim "
            f"subspace (ratio {cap['ratio']:.3f})",
        ],
        compact=True,
    )


def cmd_sweep(args: argparse.Namespace) -> Output:
    from .agents import AGENTS
    from .jobs import SweepConfig, run_sweep

    out = run_sweep(SweepConfig(tuple(args.sizes), args.seeds, args.episodes, args.agents, env=args.env))
    lines = [
        f"{AGENTS.label(n)}: " + ", ".join(f"N={N} median {v['median']:g}" for N, v in a["sizes"].items())
        for n, a in out["agents"].items()
    ]
    return Output({"method": "spectralbellman", "action": "sweep", **out}, lines=lines)


def cmd_log(args: argparse.Namespace) -> Output:  # noqa: ARG001 - every action takes its arguments
    from .jobs import shipped_log

    ev = shipped_log()
    ev.pop("variants")
    lines = []
    for N, per in ev["sizes"].items():
        lines.append(f"DeepSea({N}), {ev['seeds']} seeds, budget {ev['budget']}: strongest reference {per['strongest']}")
        for var in per["tuned"].values():
            v = per["variants"][var]
            lines.append(f"  {var}: median {v['median']:g} [{v['q25']:g}, {v['q75']:g}], solved {v['solved']}/{v['runs']}")
        for lr in per["log_ratio"].values():
            lines.append(f"  {lr['ours']} / {lr['other']}: x{lr['ratio_geomean']:.2f} (log-ratio 95 % CI "
                         f"[{lr['ci'][0]:.2f}, {lr['ci'][1]:.2f}], {lr['pairs']} seeds)")
    return Output({"method": "spectralbellman", "action": "log", **ev}, lines=lines)
