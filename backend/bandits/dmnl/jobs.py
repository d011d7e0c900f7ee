"""The DMNL experiments as pure jobs: what the page, the CLI and the benchmark call.

- :func:`run_bandits`: the agents of :data:`backend.bandits.dmnl.agents.AGENTS` on one catalogue, the same contexts
  and random numbers for all (``dmnl run``, the page's race).
- :func:`run_greedy`: greedy vs the enumerated optimum on random small instances of the bounded regime, and the
  hand-built instance where greedy is strictly suboptimal (``dmnl greedy``, the page's guarantee section).
- :func:`run_runtime`: milliseconds and candidate sets scored per round vs the catalogue size N (``dmnl runtime``,
  the page's runtime section).

Configs are frozen dataclasses validated on construction (InputError saying what to change); results are small
JSON-able summaries. The catalogue (:class:`backend.bandits.dmnl.items.Catalogue`: a preset of ``inputs`` or a
decoded ``item_table``) is passed beside the config.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, report
from . import model as M
from .agents import AGENTS, DEFAULT_AGENTS, TIMED_AGENTS, check_settings, enumerating, runtime_vs_n, simulate
from .items import MAX_ITEMS, Catalogue

# The choices the page offers (the CLI takes any value in the ranges the configs accept).
K_RANGE = (2, 10)
ROUND_CHOICES = (200, 500, 1000, 2000, 5000)
INSTANCE_CHOICES = (50, 100, 300, 1000)
RUNTIME_NS = (10, 15, 20, 50, 100)
MAX_INSTANCES = 10_000
MAX_RUNTIME_ROUNDS = 1_000


def _positive(name: str, value: int, hi: int) -> int:
    if not 1 <= int(value) <= hi:
        raise InputError(f"{name} must be between 1 and {hi:,} (got {value}).")
    return int(value)


@dataclass(frozen=True)
class BanditConfig:
    """One race of the agents: assortment size ``k``, true diversity weight ``lam``, horizon ``rounds``, the diversity
    function (a name of :data:`backend.bandits.dmnl.model.DIVERSITY`), the coverage decay ``rho``, the per-round
    context noise ``sigma``, the ``agents`` (names of AGENTS), the ``seed``. ``skip_unenumerable``: when ``C(N, K)``
    is past the enumeration limit, leave out the agents that score every assortment (with a note) instead of
    refusing. ``points``: rounds kept per curve in the result."""

    k: int = 5
    lam: float = 1.0
    rounds: int = 2000
    diversity: str = "coverage"
    rho: float = 0.5
    sigma: float = 0.3
    agents: tuple[str, ...] = DEFAULT_AGENTS
    seed: int = 0
    skip_unenumerable: bool = False
    points: int = 400

    def __post_init__(self) -> None:
        check_settings(rounds=int(self.rounds), lam=float(self.lam), sigma=float(self.sigma))
        object.__setattr__(self, "diversity", M.DIVERSITY.key(self.diversity))
        if not self.agents:
            raise InputError(f"Name at least one agent of: {', '.join(AGENTS)}.")
        object.__setattr__(self, "agents", tuple(AGENTS.key(a) for a in self.agents))
        if int(self.points) < 1:
            raise InputError("The number of curve points must be >= 1.")


@dataclass
class BanditResult:
    """``run``: :meth:`backend.bandits.dmnl.agents.Simulation.to_json` (curves, per-agent summaries, assortments,
    lambda estimates, settings); ``left_out``: agents left out past the enumeration limit; ``note`` says why."""

    run: dict[str, object]
    left_out: list[str] = field(default_factory=list)
    note: str = ""

    def last_assortment_categories(self) -> dict[str, list[str]]:
        """Per agent, the category names of its last assortment."""
        names, cats = self.run["category_names"], self.run["item_categories"]
        return {a: [names[cats[i]] for i in S[-1]] for a, S in self.run["assortments"].items()}  # type: ignore[index]

    def last_assortment_items(self) -> dict[str, list[str]]:
        """Per agent, the names of the items of its last assortment (the table's id column, else row numbers)."""
        names = self.run["item_names"]
        return {a: [names[i] for i in S[-1]] for a, S in self.run["assortments"].items()}  # type: ignore[index]

    def to_json(self) -> dict[str, object]:
        return {**self.run, "left_out": self.left_out, "note": self.note}


def run_bandits(catalogue: Catalogue, config: BanditConfig, progress: Progress | None = None,
                token: CancelToken | None = None) -> BanditResult:
    """Race ``config.agents`` on ``catalogue`` for ``config.rounds`` rounds."""
    agents, left_out, note = list(config.agents), [], ""
    n, k = catalogue.n_items, int(config.k)
    if config.skip_unenumerable and 1 <= k <= n and M.n_subsets(n, k) > M.MAX_ENUMERATION:
        left_out = enumerating(agents)
        agents = [a for a in agents if a not in left_out] or list(AGENTS.names("ours"))
        if left_out:
            note = (f"{', '.join(AGENTS.label(a).split(' (')[0] for a in left_out)} left out: C({n}, {k}) assortments "
                    f"are past the enumeration limit of {M.MAX_ENUMERATION:,}.")
    sim = simulate(catalogue, k=k, lam=float(config.lam), rounds=int(config.rounds), diversity=config.diversity,
                   rho=float(config.rho), sigma=float(config.sigma), agents=agents, seed=int(config.seed),
                   progress=progress, cancel=token)
    return BanditResult(sim.to_json(catalogue, points=int(config.points)), left_out, note)


@dataclass(frozen=True)
class GreedyConfig:
    """Greedy vs the enumerated optimum on ``instances`` random small instances (N 4-10, K 2-4, ``|u| <= 1``,
    ``0 <= lambda <= 1``), every diversity function in turn, from ``seed``."""

    instances: int = 300
    seed: int = 0
    search_restarts: int = 30  # of the adversarial search (0: skip it); 120 steps each

    def __post_init__(self) -> None:
        object.__setattr__(self, "instances", _positive("The number of instances", self.instances, MAX_INSTANCES))
        if not 0 <= int(self.search_restarts) <= 200:
            raise InputError(f"The adversarial search takes 0 to 200 restarts (got {self.search_restarts}).")


@dataclass
class GreedyResult:
    """``random``: :meth:`backend.bandits.dmnl.model.RatioCheck.summary`; ``hard_instance``: greedy's and the
    optimum's items and their value ratio on :func:`backend.bandits.dmnl.model.hard_instance`."""

    random: dict[str, float]
    hard_instance: dict[str, object]
    adversarial: dict[str, object] | None = None  # AdversarialCheck.summary(), None when skipped

    def to_json(self) -> dict[str, object]:
        return {"random": self.random, "hard_instance": self.hard_instance, "adversarial": self.adversarial}


def run_greedy(config: GreedyConfig, progress: Progress | None = None,
               token: CancelToken | None = None) -> GreedyResult:
    """The greedy guarantee on random instances, on the hand-built hard instance and on the worst instance an
    adversarial search finds (:func:`backend.bandits.dmnl.model.adversarial_ratio`)."""
    if token is not None:
        token.check()
    report(progress, 0.0, f"{config.instances} random instances")
    check = M.random_instances_ratio(config.instances, seed=int(config.seed))
    if token is not None:
        token.check()
    u, lam, div, k = M.hard_instance()
    subsets = M.all_subsets(len(u), k)
    opt = M.exhaustive_true(u, lam, subsets, div.enumerate_values(subsets))
    got = M.greedy_true(u, lam, div, k)
    worst = None
    if config.search_restarts:
        report(progress, 0.5, f"adversarial search, {config.search_restarts} restarts")
        if token is not None:
            token.check()
        worst = M.adversarial_ratio(int(config.search_restarts), 120, seed=int(config.seed)).summary()
    report(progress, 1.0, "done")
    return GreedyResult(check.summary(), {"greedy": got.items.tolist(), "optimum": opt.items.tolist(),
                                          "ratio": got.value / opt.value}, worst)


@dataclass(frozen=True)
class RuntimeConfig:
    """Per-round cost on synthetic catalogues of each size in ``ns`` (K = ``k``, ``rounds`` timed rounds per point)
    for ``agents`` (default: OFU-DMNL and its exhaustive ablation); the exhaustive agents up to ``full_max_n``."""

    ns: tuple[int, ...] = RUNTIME_NS
    k: int = 5
    rounds: int = 30
    agents: tuple[str, ...] = TIMED_AGENTS
    full_max_n: int = 20
    seed: int = 0

    def __post_init__(self) -> None:
        ns = tuple(int(n) for n in self.ns)
        if not ns or not all(3 <= n <= MAX_ITEMS for n in ns):
            raise InputError(f"Give catalogue sizes N between 3 and {MAX_ITEMS} (got {list(self.ns)}).")
        object.__setattr__(self, "ns", ns)
        object.__setattr__(self, "k", _positive("K", self.k, 50))
        object.__setattr__(self, "rounds", _positive("The number of timed rounds", self.rounds, MAX_RUNTIME_ROUNDS))
        object.__setattr__(self, "agents", tuple(AGENTS.key(a) for a in self.agents))


@dataclass
class RuntimeResult:
    """One row per (agent, N): ``agent``, ``n_items``, ``ms_per_round``, ``evaluations_per_round``, ``assortments``."""

    rows: list[dict[str, object]]
    k: int

    def to_json(self) -> dict[str, object]:
        return {"rows": self.rows}


def run_runtime(config: RuntimeConfig, progress: Progress | None = None,
                token: CancelToken | None = None) -> RuntimeResult:
    """Milliseconds per round vs N (every round searching: the random-assortment rule is off for timing)."""
    rows = runtime_vs_n(config.ns, k=config.k, rounds=config.rounds, seed=config.seed, agents=config.agents,
                        full_max_n=config.full_max_n, progress=checked(progress, token))
    return RuntimeResult(rows, config.k)


__all__ = ["BanditConfig", "BanditResult", "GreedyConfig", "GreedyResult", "INSTANCE_CHOICES", "K_RANGE",
           "ROUND_CHOICES", "RUNTIME_NS", "RuntimeConfig", "RuntimeResult", "run_bandits", "run_greedy",
           "run_runtime"]
