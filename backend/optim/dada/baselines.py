"""Baselines for the DADA race and the race itself: gradient descent over a learning-rate grid, AdaGrad-norm and DoG,
all projected onto Q, all batched over their setting (one row per learning rate / initial distance guess).

- ``gd``: ``x_{k+1} = proj(x_k - lr g_k)`` (constant step; the learning rate is what the grid sweeps).
- ``adagrad_norm`` (Ward, Wu, Bottou 2019; Streeter & McMahan 2010): ``x_{k+1} = proj(x_k - lr g_k / b_{k+1})``,
  ``b_{k+1}^2 = b_k^2 + ||g_k||^2`` (one scalar step size; ``lr`` plays the role of a distance and is swept too).
- ``dog`` (Ivgi, Hinder, Carmon 2023, "DoG is SGD's best friend"): ``eta_k = rbar_k / sqrt(sum_{i<=k} ||g_i||^2)``,
  ``rbar_k = max(r_eps, max_{i<=k} ||x_i - x_0||)``, ``r_eps = 1e-6 (1 + ||x_0||)`` (the same initial guess DADA gets).
- ``dada``: :func:`backend.optim.dada.dada.dada_numpy`.

``get_method(name)`` returns a runner ``run(problem, iters, settings) -> Trace``; each runner's ``sweeps`` attribute
names what its settings are (``"lr"``: a learning-rate grid; ``"rbar0"``: initial distance guesses, None = the
default guess), from which :data:`TUNED` and :data:`RBAR_METHODS` are derived. :func:`race` runs them all on one
problem and reports best-so-far gaps ``(min_{i<=k} f(x_i) - f*) / (f(x_0) - f*)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import Registry
from ...runtime import Progress, report
from .dada import C_DEFAULT, Trace, _rownorm, dada_numpy, default_rbar
from .problems import Problem

LR_GRID_DEFAULT = tuple(float(v) for v in np.logspace(-5, 2, 15))  # half-decade steps, 1e-5 .. 1e2
RBAR_GRID_DEFAULT = (1e-8, 1e-6, 1e-4, 1e-2, 1.0, 10.0)
Runner = Callable[..., Trace]


def _sweeps(setting: str) -> Callable[[Runner], Runner]:
    """Mark a runner with what its batch of settings is: ``"lr"`` (learning rates) or ``"rbar0"`` (initial guesses)."""

    def mark(run: Runner) -> Runner:
        run.sweeps = setting  # type: ignore[attr-defined]
        return run

    return mark


def _loop(problem: Problem, iters: int, B: int, update: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
          name: str, settings: np.ndarray, setting_name: str, rbar_out: np.ndarray | None = None) -> Trace:
    x0 = problem.x0
    x = np.broadcast_to(x0, (B, x0.size)).copy()
    fs = np.empty((B, iters + 1))
    best_f = np.full(B, np.inf)
    x_best = x.copy()
    for k in range(iters + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            fk, g = problem.value_and_grad(x)
        fs[:, k] = fk
        better = fk < best_f
        best_f = np.where(better, fk, best_f)
        x_best[better] = x[better]
        if k == iters:
            break
        with np.errstate(over="ignore", invalid="ignore"):
            x = update(k, x, g)
        bad = ~np.all(np.isfinite(x), axis=1)
        if bad.any():  # a diverged learning rate: freeze the row at x0's value so it shows as "no progress"
            x[bad] = x0
    fs = np.where(np.isfinite(fs), fs, np.inf)
    return Trace(name, fs, rbar_out, x, x_best, settings, setting_name)


@_sweeps("lr")
def run_gd(problem: Problem, iters: int, lrs: tuple[float, ...] | np.ndarray = LR_GRID_DEFAULT) -> Trace:
    lr = np.asarray(lrs, dtype=np.float64)

    def update(k: int, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        return problem.project(x - lr[:, None] * g)

    return _loop(problem, iters, lr.size, update, "gd", lr, "lr")


@_sweeps("lr")
def run_adagrad_norm(problem: Problem, iters: int, lrs: tuple[float, ...] | np.ndarray = LR_GRID_DEFAULT) -> Trace:
    lr = np.asarray(lrs, dtype=np.float64)
    b2 = np.zeros(lr.size)

    def update(k: int, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        nonlocal b2
        b2 = b2 + np.einsum("bi,bi->b", g, g)
        step = np.divide(lr, np.sqrt(b2), out=np.zeros_like(lr), where=b2 > 0)
        return problem.project(x - step[:, None] * g)

    return _loop(problem, iters, lr.size, update, "adagrad_norm", lr, "lr")


@_sweeps("rbar0")
def run_dog(problem: Problem, iters: int, rbars: tuple[float, ...] | np.ndarray | None = None) -> Trace:
    x0 = problem.x0
    rb = np.atleast_1d(np.asarray(default_rbar(x0) if rbars is None else rbars, dtype=np.float64))
    settings = rb.copy()
    g2 = np.zeros(rb.size)
    rbar_hist = np.empty((rb.size, iters + 1))

    def update(k: int, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        nonlocal rb, g2
        rb = np.maximum(rb, _rownorm(x - x0))
        rbar_hist[:, k] = rb
        g2 = g2 + np.einsum("bi,bi->b", g, g)
        eta = np.divide(rb, np.sqrt(g2), out=np.zeros_like(rb), where=g2 > 0)
        return problem.project(x - eta[:, None] * g)

    tr = _loop(problem, iters, rb.size, update, "dog", settings, "rbar0", rbar_hist)
    rbar_hist[:, iters] = np.maximum(rb, _rownorm(tr.x_last - x0))
    return tr


@_sweeps("rbar0")
def run_dada(problem: Problem, iters: int, rbars: tuple[float, ...] | np.ndarray | None = None,
             c: float = C_DEFAULT) -> Trace:
    return dada_numpy(problem.value_and_grad, problem.x0, iters, rbar=rbars, c=c, project=problem.project)


METHODS: Registry[Runner] = Registry("optimisation method")
METHODS.add("dada", run_dada, label="DADA", kind="ours", color="#d62728",
            about="dual averaging with distance adaptation (parameter-free)")
METHODS.add("dog", run_dog, label="DoG", kind="baseline", color="#1f77b4",
            about="distance over gradients (parameter-free)")
METHODS.add("adagrad_norm", run_adagrad_norm, label="AdaGrad-norm", kind="baseline", color="#2ca02c",
            about="one scalar AdaGrad step size, learning-rate grid")
METHODS.add("gd", run_gd, label="GD", kind="baseline", color="#7f7f7f",
            about="projected gradient descent, learning-rate grid")
LABELS = METHODS.labels()  # name -> label, for scripts that print tables
TUNED = tuple(m for m, run in METHODS.items() if run.sweeps == "lr")  # methods that take a learning-rate grid
RBAR_METHODS = tuple(m for m, run in METHODS.items() if run.sweeps == "rbar0")  # take an initial distance guess


def get_method(name: str) -> Callable[..., Trace]:
    """The runner of a method by name (case-insensitive; '-' and '_' alike); InputError lists the valid names."""
    return METHODS.get(str(name).replace("-", "_"))


# ---------------------------------------------------------------------------------------------------------- race
def best_gaps(f: np.ndarray, f_star: float, f0_gap: float, floor: float = 1e-16) -> np.ndarray:
    """Best-so-far relative gaps ``(min_{i<=k} f_i - f*) / (f(x0) - f*)``, floored at ``floor`` (log plots)."""
    best = np.minimum.accumulate(f, axis=-1)
    return np.maximum((best - f_star) / max(f0_gap, 1e-300), floor)


@dataclass
class RaceCurves:
    """Curves of every method on one problem. ``gaps[m]``: ``[B_m, K + 1]`` best relative gaps per setting;
    ``settings[m]``: the swept values (learning rates, or initial rbar); ``rbar[m]``: distance estimate traces (DADA,
    DoG); ``best_setting[m]``: index of the setting with the smallest final gap; ``f_star`` used (lowered to the best
    value seen when it is numerical)."""

    problem: dict[str, object]
    iters: int
    gaps: dict[str, np.ndarray]
    settings: dict[str, np.ndarray]
    setting_names: dict[str, str]
    rbar: dict[str, np.ndarray]
    best_setting: dict[str, int]
    seconds: dict[str, float]
    f_star: float
    evals: dict[str, int] = field(default_factory=dict)

    def final_gap(self, method: str, index: int | None = None) -> float:
        i = self.best_setting[method] if index is None else index
        return float(self.gaps[method][i, -1])

    def iters_to(self, method: str, tol: float, index: int | None = None) -> int | None:
        """First iteration where the best gap <= tol (None if never)."""
        i = self.best_setting[method] if index is None else index
        hit = np.flatnonzero(self.gaps[method][i] <= tol)
        return int(hit[0]) if hit.size else None

    def summary(self, tol: float = 1e-2) -> list[dict[str, object]]:
        rows = []
        for m, g in self.gaps.items():
            i = self.best_setting[m]
            rows.append({
                "method": METHODS.label(m), "key": m, "setting": self.setting_names[m],
                "best_setting_value": float(self.settings[m][i]), "settings_tried": int(g.shape[0]),
                "final_gap": float(g[i, -1]), f"iters_to_{tol:g}": self.iters_to(m, tol),
                "worst_setting_final_gap": float(g[:, -1].max()), "seconds": round(self.seconds[m], 4),
                "gradient_evals": self.evals[m],
            })
        return rows

    def to_json(self, stride: int | None = None) -> dict[str, object]:
        """A JSON-able dict (curves thinned to at most ~500 points unless ``stride`` is given)."""
        K = self.iters
        stride = stride or max(1, K // 500)
        idx = list(range(0, K + 1, stride))
        if idx[-1] != K:
            idx.append(K)
        out: dict[str, object] = {"problem": self.problem, "iters": K, "f_star": self.f_star, "iterations": idx,
                                  "summary": self.summary(), "curves": {}}
        for m, g in self.gaps.items():
            out["curves"][m] = {  # type: ignore[index]
                "setting": self.setting_names[m],
                "values": [float(v) for v in self.settings[m]],
                "best_index": self.best_setting[m],
                "gaps": [[float(v) for v in row[idx]] for row in g],
                "rbar": None if m not in self.rbar else [[float(v) for v in row[idx]] for row in self.rbar[m]],
            }
        return out


def race(
    problem: Problem,
    iters: int = 2000,
    *,
    methods: tuple[str, ...] | None = None,
    lr_grid: tuple[float, ...] | np.ndarray = LR_GRID_DEFAULT,
    rbar: float | None = None,
    rbar_grid: tuple[float, ...] | np.ndarray | None = None,
    max_work: float = 4e10,
    progress: Progress | None = None,
) -> RaceCurves:
    """Run every method on ``problem`` for ``iters`` steps.

    DADA and DoG run once with the default initial guess ``rbar`` (None = ``1e-6 (1 + ||x0||)``), or once per value
    of ``rbar_grid`` (the sensitivity study); GD and AdaGrad-norm run once per learning rate of ``lr_grid``.
    ``max_work`` caps ``iters x (total runs) x (cost of one gradient)`` so a page cannot start hours of work.
    """
    methods = tuple(METHODS) if methods is None else tuple(methods)
    if not 1 <= iters <= 100_000:
        raise InputError(f"The number of iterations must be between 1 and 100000 (got {iters}).")
    lr_grid = np.asarray(lr_grid, dtype=np.float64)
    if lr_grid.size == 0 or np.any(lr_grid <= 0):
        raise InputError("The learning-rate grid must hold positive values.")
    rb_setting = None if rbar_grid is None else np.asarray(rbar_grid, dtype=np.float64)
    if rb_setting is None and rbar is not None:
        rb_setting = np.array([float(rbar)])
    if rb_setting is not None and np.any(rb_setting <= 0):
        raise InputError("The initial distance guess rbar must be > 0.")
    runners = {m: get_method(m) for m in methods}
    grids = {m: lr_grid if run.sweeps == "lr" else rb_setting for m, run in runners.items()}
    runs = sum(1 if g is None else g.size for g in grids.values())
    work = iters * runs * problem.gradient_cost
    if work > max_work:
        raise InputError(f"This race would take about {work:.1e} multiply-adds (limit {max_work:.0e}); lower the "
                         "dimension, the iterations or the size of the learning-rate grid.")
    gaps, settings, names, rbars, best, secs, evals = {}, {}, {}, {}, {}, {}, {}
    traces: dict[str, Trace] = {}
    for i, (m, run) in enumerate(runners.items()):
        report(progress, i / len(runners), f"running {METHODS.label(m)}")
        start = time.perf_counter()
        tr = run(problem, iters, grids[m])
        secs[m] = time.perf_counter() - start
        traces[m] = tr
        evals[m] = int(tr.f.shape[0] * (iters + 1))
    f_star = problem.f_star
    if not problem.f_star_exact:  # numerical f*: never above the best value any method reached
        f_star = min(f_star, min(float(np.min(t.f)) for t in traces.values()))
    f0 = float(problem.f(problem.x0))
    for m, tr in traces.items():
        g = best_gaps(tr.f, f_star, f0 - f_star)
        gaps[m] = g
        settings[m] = tr.settings
        names[m] = tr.setting_name
        if tr.rbar is not None:
            rbars[m] = tr.rbar
        best[m] = int(np.argmin(g[:, -1]))
    report(progress, 1.0, "race done")
    return RaceCurves(problem.describe(), iters, gaps, settings, names, rbars, best, secs, f_star, evals)
