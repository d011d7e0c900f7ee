"""The DADA race as pure jobs: what the page, the CLI and the benchmark call.

- :func:`run_race`: every method of :data:`backend.optim.dada.baselines.METHODS` on one problem (DADA and DoG once,
  GD and AdaGrad-norm once per learning rate of the grid), and optionally the sweep of the initial distance guess.
- :func:`run_sensitivity`: DADA and DoG for each initial guess ``rbar`` of a grid: final gaps and their spread.

Configs are frozen dataclasses validated on construction (InputError saying what to change); results are small
JSON-able summaries. A user table (:class:`backend.optim.dada.problems.Table`, decoded by the ``table`` input kind)
is passed beside the config; without one the logistic problem reads the config's bundled data set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, sub_progress
from .baselines import LR_GRID_DEFAULT, METHODS, RBAR_GRID_DEFAULT, RBAR_METHODS, race
from .problems import CHAIN_VARIANTS, CONSTRAINTS, DATASETS, MAX_DIM, Problem, Table, make_problem, problem_key

MAX_ITERS = 100_000
CURVE_POINTS = 500  # points per curve in the JSON by default (0 = every iteration)

# The choices the page offers (the CLI takes any value in the ranges its configs accept).
DIM_CHOICES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
ITER_CHOICES = (250, 500, 1000, 2000, 4000, 8000)
KAPPA_CHOICES = (1e1, 1e2, 1e3, 1e4, 1e5, 1e6)
P_CHOICES = (2, 3, 4, 6, 8)
LAM_CHOICES = (0.0, 1e-4, 1e-3, 1e-2, 1e-1)
LOG_RBAR_RANGE = (-10, 1)  # log10 of the relative initial guess rbar / (1 + ||x0||)
RADIUS_RANGE = (1e-3, 1e4)


@dataclass(frozen=True)
class ProblemConfig:
    """Which problem to build (:data:`backend.optim.dada.problems.PROBLEMS`) and its settings; the defaults are the
    CLI's. ``dim`` is ignored by ``logistic`` (its size is features x classes); ``dataset`` is the bundled table
    used by ``logistic`` when no table is passed to the job."""

    problem: str = "quadratic"
    dim: int = 100
    constraint: str = "none"
    radius: float = 1.0
    kappa: float = 1e4
    p: float = 4.0
    chain: str = "dada"
    lam: float = 1e-3
    dataset: str = "breast_cancer"
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "problem", problem_key(self.problem))
        object.__setattr__(self, "constraint", choose(self.constraint, CONSTRAINTS, "constraint"))
        object.__setattr__(self, "chain", choose(self.chain, CHAIN_VARIANTS, "chain variant"))
        object.__setattr__(self, "dataset", DATASETS.key(self.dataset))
        if not 2 <= int(self.dim) <= MAX_DIM:
            raise InputError(f"The dimension must be between 2 and {MAX_DIM} (got {self.dim}).")
        if self.constraint != "none" and not (math.isfinite(self.radius) and self.radius > 0):
            raise InputError(f"The constraint radius must be a positive number (got {self.radius}).")
        if self.lam < 0:
            raise InputError("The L2 coefficient must be >= 0.")

    def build(self, table: Table | None = None) -> Problem:
        """The problem (``table``: a decoded user table for ``logistic``, else the bundled ``dataset``)."""
        return make_problem(self.problem, int(self.dim), constraint=self.constraint, radius=float(self.radius),
                            kappa=float(self.kappa), p=float(self.p), chain=self.chain, lam=float(self.lam),
                            table=table, dataset=self.dataset, seed=int(self.seed))


def _grid(name: str, values: tuple[float, ...]) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if not out or not all(math.isfinite(v) and v > 0 for v in out):
        raise InputError(f"The {name} must hold positive values.")
    return out


@dataclass(frozen=True)
class RaceConfig:
    """The race: ``methods`` (names of METHODS) for ``iters`` steps; GD and AdaGrad-norm sweep ``lr_grid``. DADA and
    DoG start from ``rbar`` (absolute), or ``rbar_rel (1 + ||x0||)``, or (both None) ``1e-6 (1 + ||x0||)``.
    ``sensitivity_grid``: also run DADA and DoG once per initial guess of this grid (empty: no sweep).
    ``curve_points``: points per curve in the result (0 = every iteration)."""

    iters: int = 2000
    methods: tuple[str, ...] = tuple(METHODS)
    lr_grid: tuple[float, ...] = LR_GRID_DEFAULT
    rbar: float | None = None
    rbar_rel: float | None = None
    sensitivity_grid: tuple[float, ...] = ()
    curve_points: int = CURVE_POINTS

    def __post_init__(self) -> None:
        if not 1 <= int(self.iters) <= MAX_ITERS:
            raise InputError(f"The number of iterations must be between 1 and {MAX_ITERS} (got {self.iters}).")
        if not self.methods:
            raise InputError(f"Name at least one method of: {', '.join(METHODS)}.")
        object.__setattr__(self, "methods", tuple(METHODS.key(str(m).replace("-", "_")) for m in self.methods))
        object.__setattr__(self, "lr_grid", _grid("learning-rate grid", self.lr_grid))
        if self.rbar is not None and self.rbar_rel is not None:
            raise InputError("Give the initial distance guess either absolute (rbar) or relative (rbar_rel), not both.")
        for v in (self.rbar, self.rbar_rel):
            if v is not None and not (math.isfinite(v) and v > 0):
                raise InputError("The initial distance guess rbar must be > 0.")
        if self.sensitivity_grid:
            object.__setattr__(self, "sensitivity_grid", _grid("rbar grid", self.sensitivity_grid))
        if int(self.curve_points) < 0:
            raise InputError("The number of curve points must be >= 0 (0 = every iteration).")

    def stride(self) -> int:
        """Every how many iterations the result keeps a curve point."""
        return 1 if self.curve_points == 0 else max(1, int(self.iters) // int(self.curve_points))


@dataclass(frozen=True)
class SensitivityConfig:
    """DADA and DoG (the methods that take an initial guess) for each ``rbar`` of ``rbar_grid``, ``iters`` steps."""

    iters: int = 2000
    rbar_grid: tuple[float, ...] = RBAR_GRID_DEFAULT

    def __post_init__(self) -> None:
        if not 1 <= int(self.iters) <= MAX_ITERS:
            raise InputError(f"The number of iterations must be between 1 and {MAX_ITERS} (got {self.iters}).")
        object.__setattr__(self, "rbar_grid", _grid("rbar grid", self.rbar_grid))


@dataclass
class SensitivityResult:
    """Per method of RBAR_METHODS: the final best relative gap and the final distance estimate for each initial
    guess of ``rbar_grid``, and the spread ``max/min`` of the gaps."""

    problem: dict[str, object]
    f_star: float
    iters: int
    rbar_grid: list[float]
    methods: dict[str, dict[str, object]]  # name -> {"final_gaps", "max_over_min", "final_rbar"}

    def finals(self) -> dict[str, list[float]]:
        return {m: list(row["final_gaps"]) for m, row in self.methods.items()}  # type: ignore[call-overload]

    def to_json(self) -> dict[str, object]:
        return {"problem": self.problem, "f_star": self.f_star, "iters": self.iters, "rbar_grid": self.rbar_grid,
                **self.methods}


@dataclass
class RaceResult:
    """The race in JSON form: ``race`` is :meth:`backend.optim.dada.baselines.RaceCurves.to_json` (``problem``,
    ``iters``, ``f_star``, ``iterations``, ``summary``, ``curves``); ``sensitivity`` ``{"grid", "finals"}`` when the
    sweep ran; ``params`` the settings that produced it."""

    race: dict[str, object]
    params: dict[str, object]
    dist_x0_xstar: float | None = None
    sensitivity: dict[str, object] | None = None

    def to_json(self) -> dict[str, object]:
        out = {**self.race, "dist_x0_xstar": self.dist_x0_xstar, "params": self.params}
        if self.sensitivity is not None:
            out["sensitivity"] = self.sensitivity
        return out


def _sensitivity(prob: Problem, iters: int, grid: tuple[float, ...], progress: Progress | None) -> SensitivityResult:
    res = race(prob, iters, methods=RBAR_METHODS, rbar_grid=grid, progress=progress)
    rows: dict[str, dict[str, object]] = {}
    for m in RBAR_METHODS:
        finals = [float(v) for v in res.gaps[m][:, -1]]
        rows[m] = {"final_gaps": finals, "max_over_min": max(finals) / min(finals),
                   "final_rbar": [float(v) for v in res.rbar[m][:, -1]]}
    return SensitivityResult(res.problem, res.f_star, iters, list(grid), rows)


def run_race(problem: ProblemConfig, config: RaceConfig, table: Table | None = None,
             progress: Progress | None = None, token: CancelToken | None = None) -> RaceResult:
    """Race the methods of ``config`` on the problem of ``problem`` (``table``: a decoded user table for the
    logistic problem); with ``config.sensitivity_grid`` also the sweep of the initial guess (the last 30 % of the
    progress)."""
    progress = checked(progress, token)
    prob = problem.build(table)
    rbar = config.rbar
    if config.rbar_rel is not None:
        rbar = config.rbar_rel * (1 + float(np.linalg.norm(prob.x0)))
    sweep = bool(config.sensitivity_grid)
    res = race(prob, int(config.iters), methods=config.methods, lr_grid=config.lr_grid, rbar=rbar,
               progress=sub_progress(progress, 0.0, 0.7 if sweep else 1.0))
    sens = None
    if sweep:
        s = _sensitivity(prob, int(config.iters), config.sensitivity_grid, sub_progress(progress, 0.7, 1.0))
        sens = {"grid": s.rbar_grid, "finals": s.finals()}
    params = {"problem": problem.problem, "dim": prob.dim, "iters": int(config.iters),
              "constraint": problem.constraint, "radius": float(problem.radius), "kappa": float(problem.kappa),
              "p": float(problem.p), "chain": problem.chain, "lam": float(problem.lam), "rbar": rbar,
              "data": prob.meta.get("source")}
    return RaceResult(res.to_json(stride=config.stride()), params, prob.meta.get("dist_x0_xstar"), sens)


def run_sensitivity(problem: ProblemConfig, config: SensitivityConfig, table: Table | None = None,
                    progress: Progress | None = None, token: CancelToken | None = None) -> SensitivityResult:
    """DADA and DoG for each initial guess of ``config.rbar_grid`` on the problem of ``problem``."""
    progress = checked(progress, token)
    return _sensitivity(problem.build(table), int(config.iters), config.rbar_grid, progress)
