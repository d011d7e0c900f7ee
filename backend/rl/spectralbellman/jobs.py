"""The Spectral Bellman experiments as pure jobs: what the page and the CLI call.

- :func:`run_spectrum`: singular values of stacked Bellman backups of random Q tables on one environment.
- :func:`run_represent`: the SBM iterations (largest principal angle to the true span, closure residual), optionally
  with the spectra of the reference low-rank and full-rank MDPs beside the environment's.
- :func:`run_explore`: the exploration agents of :data:`backend.rl.spectralbellman.agents.AGENTS` side by side.
- :func:`run_sweep`: episodes to solve DeepSea(N) / chain(N) per agent over sizes and seeds.
- :func:`shipped_log`: the evaluation of the shipped DeepSea(N) log (N in {10, 20}, 10 seeds, tuned references;
  :mod:`backend.rl.spectralbellman.explore_log`), read from ``assets/spectralbellman_deepsea_log.json``: instant.

Configs are frozen dataclasses validated on construction (InputError saying what to change); results are small
JSON-able dicts. An uploaded MDP (decoded by the ``mdp_json`` input kind) is passed beside the configs and replaces
the environment the :class:`EnvConfig` names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, sub_progress
from .agents import AGENTS, AgentConfig, run_agents, solve_sweep
from .mdps import ENVS, MDP, full_rank_mdp, low_rank_mdp, make_env, spectrum
from .spectral_bellman import SBMConfig, backup_rank, capture, learn_features

SWEEP_ENVS = ("deepsea", "chain")
FEATURES = ("table", "network")
REFERENCE_ENVS = ("lowrank", "fullrank")  # the environments whose spectra the representation shows anyway


def _agents(names: tuple[str, ...] | None) -> tuple[str, ...]:
    if names is None:
        return tuple(AGENTS)
    out = tuple(AGENTS.key(n) for n in names)
    if not out:
        raise InputError("Choose at least one agent.")
    return out


@dataclass(frozen=True)
class EnvConfig:
    """Which environment (:data:`backend.rl.spectralbellman.mdps.ENVS`): ``size`` is N of DeepSea / chain, ``rank``
    the d of the low-rank MDP; the defaults are the CLI's."""

    env: str = "deepsea"
    size: int = 10
    rank: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", choose(self.env, ENVS, "environment"))
        if not 1 <= int(self.rank) <= 50:
            raise InputError(f"Rank {self.rank} is out of range; choose d in 1..50.")

    def build(self, mdp: MDP | None = None) -> MDP:
        """``mdp`` when one was uploaded, else the named environment."""
        if mdp is not None:
            return mdp
        return make_env(self.env, size=int(self.size), seed=int(self.seed), rank=int(self.rank))


@dataclass(frozen=True)
class SpectrumConfig:
    n: int = 256
    seed: int = 0

    def __post_init__(self) -> None:
        if not 2 <= int(self.n) <= 4096:
            raise InputError("--n must be in 2..4,096.")


@dataclass(frozen=True)
class RepresentConfig:
    """``d`` None: the numerical rank of the stacked backups; ``features`` None: a network of the pixels when the
    environment has observations, else a table; ``spectra``: add the stacked-backup spectra to the result."""

    d: int | None = None
    iters: int = 200
    features: str | None = None
    seed: int = 0
    spectra: bool = False

    def __post_init__(self) -> None:
        if self.features is not None:
            object.__setattr__(self, "features", choose(self.features, FEATURES, "feature kind"))
        if self.d is not None and int(self.d) < 1:
            raise InputError(f"The feature dimension must be at least 1 (got {self.d}).")
        if int(self.iters) < 1:
            raise InputError(f"The number of SBM iterations must be at least 1 (got {self.iters}).")


@dataclass(frozen=True)
class ExploreConfig:
    """The agents to run (None: every one) and the settings of :class:`backend.rl.spectralbellman.agents.AgentConfig`."""

    agents: tuple[str, ...] | None = None
    episodes: int = 200
    sigma_exp: float = 0.1
    lam: float = 1.0
    d: int | None = None
    seed: int = 0
    stop_when_solved: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", _agents(None if self.agents is None else tuple(self.agents)))
        if not 1 <= int(self.episodes) <= 5000:
            raise InputError(f"Episodes {self.episodes} out of range; choose 1..5,000.")
        if not 1e-6 <= float(self.lam) <= 1e3:
            raise InputError(f"lambda {self.lam} is out of range; choose a prior weight in 1e-6..1,000.")

    def agent_config(self) -> AgentConfig:
        return AgentConfig(episodes=int(self.episodes), sigma_exp=float(self.sigma_exp), lam=float(self.lam), d=self.d,
                           seed=int(self.seed), stop_when_solved=bool(self.stop_when_solved))


@dataclass(frozen=True)
class SweepConfig:
    sizes: tuple[int, ...] = (6, 10)
    seeds: int = 3
    episodes: int = 400
    agents: tuple[str, ...] | None = None
    env: str = "deepsea"

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", choose(self.env, SWEEP_ENVS, "sweep environment"))
        object.__setattr__(self, "agents", _agents(None if self.agents is None else tuple(self.agents)))
        if not self.sizes:
            raise InputError("Choose at least one N.")
        if not 1 <= int(self.seeds) <= 50:
            raise InputError("--seeds must be in 1..50.")
        if not 1 <= int(self.episodes) <= 5000:
            raise InputError("--episodes must be in 1..5,000.")


def run_spectrum(env: EnvConfig, config: SpectrumConfig, mdp: MDP | None = None, progress: Progress | None = None,
                 token: CancelToken | None = None) -> dict:
    """Singular values of ``config.n`` stacked backups, relative to the largest, and the numerical rank."""
    checked(progress, token)
    m = env.build(mdp)
    s = spectrum(m, int(config.n), int(config.seed))
    rel = (s / s[0]).tolist()
    out = {"env": m.summary(), "singular_values": s.tolist(), "relative": rel,
           "numerical_rank": int((s > 1e-10 * s[0]).sum())}
    d = int(m.meta.get("rank", 0)) or None
    if d and d < len(s):
        out["ratio_d_plus_1"] = float(s[d] / s[0])
    return out


def run_represent(env: EnvConfig, config: RepresentConfig, mdp: MDP | None = None,
                  progress: Progress | None = None, token: CancelToken | None = None) -> dict:
    """The SBM iterations on the environment: ``env``, ``features``, ``d``, ``sbm`` (the learner's summary) and, with
    ``config.spectra``, ``spectra`` (relative singular values per MDP, keyed by a label or the environment's name)."""
    progress = checked(progress, token)
    m = env.build(mdp)
    d = int(config.d or backup_rank(m))
    feats = config.features or ("network" if m.obs is not None else "table")
    out: dict = {"env": m.summary(), "features": feats, "d": d}
    if config.spectra:
        spec = {}
        for name, ref in (("low-rank MDP (d = 8)", low_rank_mdp()), ("full-rank MDP", full_rank_mdp())):
            s = spectrum(ref)
            spec[name] = (s / s[0]).tolist()
        if mdp is not None or env.env not in REFERENCE_ENVS:
            s = spectrum(m)
            spec[m.name] = (s / s[0]).tolist()
        out["spectra"] = spec
    res = learn_features(m, SBMConfig(d=d, iters=int(config.iters), features=feats, seed=int(config.seed)),
                         progress=progress)
    out["sbm"] = res.summary()
    out["capture"] = capture(m, res.phi)
    return out


def shipped_log() -> dict:
    """The shipped DeepSea(N) log's evaluation (:func:`backend.rl.spectralbellman.explore_log.evaluate`) with the
    variants' labels; WeightsError naming the command when the file is missing or altered."""
    from ... import weights
    from .explore_log import LOG_NAME, evaluate, load

    log = load(weights.check(weights.ASSETS / LOG_NAME))
    out = evaluate(log)
    out["variants"] = log["variants"]
    return out


def run_explore(env: EnvConfig, config: ExploreConfig, mdp: MDP | None = None, progress: Progress | None = None,
                token: CancelToken | None = None) -> dict:
    """The agents on one environment: per-agent summary rows, return curves and state visitation."""
    progress = checked(progress, token)
    m = env.build(mdp)
    runs = run_agents(m, config.agents, config.agent_config(), progress=progress)
    return {
        "env": m.summary(),
        "coords": None if m.coords is None else m.coords.tolist(),
        "grid_shape": None if m.grid_shape is None else list(m.grid_shape),
        "rows": [r.summary(curve=False) for r in runs.values()],
        "returns": {n: r.returns for n, r in runs.items()},
        "visits": {n: r.visits.tolist() for n, r in runs.items()},
    }


def run_sweep(config: SweepConfig, progress: Progress | None = None, token: CancelToken | None = None) -> dict:
    """Episodes to solve per agent, size and seed (censored at the budget): medians and quartiles."""
    progress = checked(progress, token)
    return solve_sweep(sorted(int(n) for n in config.sizes), int(config.seeds), config.agents, int(config.episodes),
                       env=config.env, progress=sub_progress(progress, 0, 1))
