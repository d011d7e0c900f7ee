"""``python -m backend spectralbellman <action>``: Spectral Bellman features and Thompson-sampling exploration.

Actions:
  run        the agents (TS with SBM / random / true features, RND, epsilon-greedy) on one environment: episodes to
             solve, returns, visitation, time per episode
  spectrum   singular values of stacked Bellman backups of random Q tables (cut at d for a low-rank MDP)
  represent  the SBM iterations: largest principal angle to the true span and the Bellman-closure residual per
             iteration
  sweep      episodes to solve DeepSea(N) (or the chain) per agent over sizes and seeds: medians and quartiles

Examples::

    python -m backend spectralbellman run --env deepsea --size 10 --json
    python -m backend spectralbellman spectrum --env lowrank --json
    python -m backend spectralbellman represent --env lowrank --iters 200 --json
    python -m backend spectralbellman run --mdp my_mdp.json --episodes 200 --json
    python -m backend spectralbellman sweep --sizes 6,10 --seeds 3 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli_common import Output, add_action, add_group, int_list


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


def _env(args: argparse.Namespace):  # noqa: ANN202 - an MDP
    from .mdps import make_env

    if args.mdp is not None:
        from ..io.registry import read_path

        return read_path("mdp_json", args.mdp)
    return make_env(args.env, size=args.size, seed=args.seed, rank=args.rank)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add the ``spectralbellman`` group to ``python -m backend``."""
    acts = add_group(subparsers, "spectralbellman", "Spectral Bellman Method: Bellman-aligned features, TS exploration")

    r = add_action(acts, "run", cmd_run, "the agents side by side on one environment")
    _env_args(r, "deepsea")
    r.add_argument("--agents", type=_agents, default=None, help="comma-separated agents (default all)")
    r.add_argument("--episodes", type=int, default=200, help="episodes per agent (default 200)")
    r.add_argument("--sigma-exp", type=float, default=0.1, help="Thompson-sampling scale (default 0.1)")
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
    return acts


def cmd_run(args: argparse.Namespace) -> Output:
    from .agents import AGENTS, AgentConfig, run_agents

    mdp = _env(args)
    names = args.agents or tuple(AGENTS)
    runs = run_agents(
        mdp,
        names,
        AgentConfig(
            episodes=args.episodes,
            sigma_exp=args.sigma_exp,
            d=args.d,
            seed=args.seed,
            stop_when_solved=args.stop_when_solved,
        ),
    )
    rows = [r.summary(curve=False) for r in runs.values()]
    lines = [f"{mdp.name}: {mdp.n_states} states, {mdp.n_actions} actions, horizon {mdp.horizon}"]
    lines += [
        f"{AGENTS.label(r['agent'])}: solved at episode {r['episodes_to_solve']}, mean return "
        f"{r['mean_return']:.3f}, {r['ms_per_episode']:.2f} ms/episode"
        for r in rows
    ]
    return Output({"method": "spectralbellman", "action": "run", "env": mdp.summary(), "agents": rows}, lines=lines)


def cmd_spectrum(args: argparse.Namespace) -> Output:
    from ..errors import InputError
    from .mdps import spectrum

    if not 2 <= args.n <= 4096:
        raise InputError("--n must be in 2..4,096.")
    mdp = _env(args)
    s = spectrum(mdp, args.n, args.seed)
    d = int(mdp.meta.get("rank", 0)) or None
    rel = (s / s[0]).tolist()
    out = {
        "method": "spectralbellman",
        "action": "spectrum",
        "env": mdp.summary(),
        "singular_values": s.tolist(),
        "relative": rel,
        "numerical_rank": int((s > 1e-10 * s[0]).sum()),
    }
    if d and d < len(s):
        out["ratio_d_plus_1"] = float(s[d] / s[0])
    return Output(
        out,
        lines=[
            f"sigma_i / sigma_1: {', '.join(f'{v:.2e}' for v in rel[:12])}",
            f"numerical rank {out['numerical_rank']}",
        ],
        compact=True,
    )


def cmd_represent(args: argparse.Namespace) -> Output:
    from .spectral_bellman import SBMConfig, backup_rank, learn_features

    mdp = _env(args)
    d = args.d or backup_rank(mdp)
    feats = args.features or ("network" if mdp.obs is not None else "table")
    res = learn_features(mdp, SBMConfig(d=d, iters=args.iters, features=feats, seed=args.seed))
    out = {"method": "spectralbellman", "action": "represent", "env": mdp.summary(), "features": feats, **res.summary()}
    return Output(
        out,
        lines=[
            f"d = {d}, {args.iters} iterations ({res.seconds:.2f} s): largest principal angle "
            f"{res.max_angle[-1]:.2e} rad to the {res.reference}, closure residual "
            f"{res.closure[-1]:.2e}"
        ],
        compact=True,
    )


def cmd_sweep(args: argparse.Namespace) -> Output:
    from ..errors import InputError
    from .agents import AGENTS, solve_sweep

    if not 1 <= args.seeds <= 50:
        raise InputError("--seeds must be in 1..50.")
    if not 1 <= args.episodes <= 5000:
        raise InputError("--episodes must be in 1..5,000.")
    out = solve_sweep(args.sizes, args.seeds, args.agents or tuple(AGENTS), args.episodes, env=args.env)
    lines = [
        f"{AGENTS.label(n)}: " + ", ".join(f"N={N} median {v['median']:g}" for N, v in a["sizes"].items())
        for n, a in out["agents"].items()
    ]
    return Output({"method": "spectralbellman", "action": "sweep", **out}, lines=lines)
