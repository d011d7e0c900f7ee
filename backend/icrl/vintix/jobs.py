"""The Vintix II / DPT runs as pure jobs: what the page and the CLI call.

- :func:`run_task`: one task (a name of ``inputs.PRESETS`` or a task object of ``tasks``: arm means, peaks, a curve,
  a decoded ``bandit_task``): the heads' action densities given a context, the entropy curve over context lengths,
  and the online regret: the DPT vs UCB1, Thompson sampling and Algorithm Distillation on K-armed tasks, the DPT
  acting from each head vs GP-UCB and discretised Thompson sampling on continuous ones, the DPT vs Algorithm
  Distillation and posterior sampling in the dark room (``vintix run``, the page).
- :func:`run_eval`: the claims' measurements on held-out tasks (``vintix eval``).

Configs are frozen dataclasses validated on construction (InputError saying what to change); results are small
JSON-able summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, report
from . import evaluate as E
from .claims import PARTS, measure
from .dpt import DPTConfig
from .run import check_replicas, check_samples, run

# The choices the page offers (the CLI takes any value in the ranges the configs accept).
HORIZON_CHOICES = (16, 32, 64, 128, E.MAX_HORIZON)
REPLICA_CHOICES = (8, 16, 32, 64)
MAX_EVAL_TASKS = 1024
MAX_CONTEXT = DPTConfig().max_context


@dataclass(frozen=True)
class RunConfig:
    """``context`` uniformly random tuples (0 to the model's context, ``MAX_CONTEXT``), ``horizon`` online rounds,
    ``n_samples`` action samples per head, ``replicas`` online runs (reward draws), ``seed``; ``online``: run the online
    bandit on a continuous task too (K-armed tasks and the dark room always run online)."""

    context: int = 64
    horizon: int = 64
    n_samples: int = 512
    replicas: int = 32
    seed: int = 0
    online: bool = True

    def __post_init__(self) -> None:
        check_samples(self.n_samples)
        check_replicas(self.replicas)
        E.check_context(self.context, None)
        E.check_horizon(self.horizon)


@dataclass
class RunResult:
    """``summary``: the run's dictionary (:func:`backend.icrl.vintix.run.run`: ``task``, ``family``, the densities,
    entropy curves, regret curves, ``seconds``)."""

    summary: dict[str, Any]

    @property
    def family(self) -> str:
        return str(self.summary["family"])

    def to_json(self) -> dict[str, Any]:
        return dict(self.summary)

    def compact(self) -> dict[str, Any]:
        """The summary without long arrays: no densities, samples, grid or context points, no per-run finals; regret
        curves thinned to about 8 points (what ``vintix run --json`` prints)."""
        out = dict(self.summary)
        for key in ("context_points", "reward_curve", "grid"):
            out.pop(key, None)
        if "entropy_curve" in out:
            out["entropy_curve"] = {k: v for k, v in out["entropy_curve"].items() if k != "densities"}
        if "heads" in out:
            out["heads"] = {h: {k: x for k, x in v.items() if k != "density"} for h, v in out["heads"].items()}
        if "regret" in out:
            agents = {a: {**{k: x for k, x in v.items() if k != "final_per_task"},
                          "cum_regret": v["cum_regret"][:: max(1, len(v["cum_regret"]) // 8)]}
                      for a, v in out["regret"]["agents"].items()}
            out["regret"] = {**out["regret"], "agents": agents}
        if out.get("family") == "dark":
            out["agents"] = {a: {k: x for k, x in v.items() if k != "total_per_run"} for a, v in out["agents"].items()}
        return out


def run_task(task: Any, config: RunConfig, progress: Progress | None = None,
             token: CancelToken | None = None) -> RunResult:
    """Run one task (a name of ``inputs.PRESETS`` or a task object) with the settings of ``config``."""
    if token is not None:
        token.check()
    res = run(task, context=config.context, horizon=config.horizon, n_samples=config.n_samples,
              replicas=config.replicas, seed=config.seed, progress=checked(progress, token), online=bool(config.online))
    return RunResult(res)


@dataclass(frozen=True)
class EvalConfig:
    """The claims' measurements on ``n_tasks`` held-out tasks each, context ``context``, ``horizon`` online rounds."""

    n_tasks: int = 64
    context: int = 64
    horizon: int = 64
    seed: int = 0
    parts: tuple[str, ...] = PARTS

    def __post_init__(self) -> None:
        if not 1 <= int(self.n_tasks) <= MAX_EVAL_TASKS:
            raise InputError(f"Held-out tasks must be 1 to {MAX_EVAL_TASKS:,}; got {self.n_tasks}.")
        E.check_context(self.context, None)
        E.check_horizon(self.horizon)
        object.__setattr__(self, "parts", tuple(choose(p, PARTS, "measurement") for p in self.parts))


@dataclass
class EvalResult:
    """:func:`backend.icrl.vintix.claims.measure`'s dictionary: ``entropy``, ``peak_mass``, ``regret``,
    ``invariance`` and their timings."""

    summary: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return dict(self.summary)


def run_eval(config: EvalConfig, progress: Progress | None = None, token: CancelToken | None = None) -> EvalResult:
    """The measurements behind the claims (``claims/vintix.toml``)."""
    if token is not None:
        token.check()
    report(progress, 0.0, "measuring")
    res = measure(n_tasks=int(config.n_tasks), context=int(config.context), horizon=int(config.horizon),
                  seed=int(config.seed), parts=tuple(config.parts))
    report(progress, 1.0, "done")
    return EvalResult(res)

__all__ = ["EvalConfig", "EvalResult", "HORIZON_CHOICES", "MAX_CONTEXT", "REPLICA_CHOICES", "RunConfig", "RunResult",
           "run_eval", "run_task"]
