"""STDDN crowd simulation as pure jobs: what the page and the CLI call.

- :func:`run_simulate`: one clip (a generated held-out scene, or the user's trajectories decoded as a
  :class:`~backend.forecast.crowd.data.Clip`) rolled out by the chosen methods of
  :data:`backend.forecast.crowd.interface.METHODS` under the paper's protocol and scored (MAE, OT, MMD, FDE,
  collisions, wall crossings, time); the page's figure data (rollouts, error curves, STDDN's density ODE view on
  generated scenes) and the learned networks' costs.
- :func:`run_evaluate`: the held-out evaluation table (one clip per scene, every method, averaged over scenes).

Configs are frozen dataclasses validated on construction (InputError saying what to change); results hold small
JSON-able summaries beside the arrays the page draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from backend.errors import InputError
from backend.runtime import CancelToken, Progress, checked, report, sub_progress

from .data import Clip
from .interface import LEARNED, METHODS, canonical

MAX_SECONDS = 300.0


def _methods(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    if not names:
        raise InputError("Pick at least one method.")
    return tuple(canonical(m) for m in names)


def _seconds(seconds: float) -> float:
    if not 1.0 <= float(seconds) <= MAX_SECONDS:
        raise InputError(f"--seconds must be between 1 and {MAX_SECONDS:g}")
    return float(seconds)


def _stride(stride: int) -> int:
    if int(stride) < 1:
        raise InputError(f"--stride must be at least 1 (got {stride}).")
    return int(stride)


def _weights(methods: tuple[str, ...] | list[str]) -> list[Path]:
    from .methods import weights_path

    return [weights_path(m) for m in methods if m in LEARNED]


@dataclass(frozen=True)
class SimulateConfig:
    """``methods`` (names of :data:`~backend.forecast.crowd.interface.METHODS`; '-' and ' ' read as '_'), the length
    ``seconds`` of a generated clip (1-300; an upload keeps its own length), the generator ``seed`` and ``stride``
    (OT and MMD every ``stride`` frames). The defaults are the CLI's."""

    methods: tuple[str, ...] = tuple(METHODS.names("ours"))
    seconds: float = 20.0
    seed: int = 0
    stride: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", _methods(self.methods))
        object.__setattr__(self, "seconds", _seconds(self.seconds))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "stride", _stride(self.stride))


@dataclass
class SimulateResult:
    """``clip``: the clip's summary; ``table``: one row per method (metrics, ms per simulated second);
    ``gt_collisions``: the ground truth's collisions per agent; ``assets``: the shipped weights the run loaded;
    ``costs``: the learned network's parameters and multiply-adds per agent and step (None without a learned method);
    ``view``: the page's figure data (``panels`` [frames, N, 2] per method, ``positions``, ``gt``, ``times``,
    ``colors``, ``walls``, ``bounds``, ``dt``, ``ids``, ``curves``, ``ode``)."""

    clip: dict
    table: list[dict]
    gt_collisions: float
    assets: list[Path]
    costs: dict | None = None
    view: dict = field(default_factory=dict, repr=False)

    def summary(self) -> dict[str, object]:
        """The CLI's JSON."""
        return {"clip": self.clip, "metrics": self.table, "ground_truth_collisions": self.gt_collisions}

    def rollouts_frame(self):  # noqa: ANN201 - a pandas DataFrame (pandas is imported here only)
        """The long table ``method, frame, time_s, id, x, y`` of the truth and every rollout."""
        from .csvio import trajectories_frame

        return trajectories_frame(self.view["gt"], self.view["positions"], self.view["dt"], self.view["ids"])


def _costs(methods: tuple[str, ...]) -> dict | None:
    learned = [m for m in methods if m in LEARNED]
    if not learned:
        return None
    from .methods import learned as learned_sim
    from .stddn import count_parameters, micro_macs

    net = learned_sim(learned[0]).net
    return {"parameters": count_parameters(net), "macs_per_agent_step": micro_macs(net.cfg, 1)}


def run_simulate(source: str | Clip, config: SimulateConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> SimulateResult:
    """Roll ``config.methods`` out on ``source``: a scene (kind such as ``bottleneck`` or full name, generated for
    ``config.seconds`` with ``config.seed``) or a decoded ``trajectories`` clip."""
    from .evaluate import eval_clip, ode_view, run_clip
    from .scenes import get_scene

    progress = checked(progress, token)
    generated = not isinstance(source, Clip)
    if generated:
        scene = get_scene(source)
        report(progress, 0.02, "generating the ground truth")
        clip = eval_clip(scene, config.seconds, config.seed)
    else:
        clip = source
    run = run_clip(clip, list(config.methods), stride=config.stride, progress=sub_progress(progress, 0.02, 0.95))
    # the macroscopic view of STDDN (the model's grid covers the generated scenes)
    ode = ode_view(clip) if generated and any(METHODS.kind(m) == "ours" for m in config.methods) else None
    step = max(1, clip.num_frames // 60)
    frames = np.arange(0, clip.num_frames, step)
    final = clip.waypoints[np.arange(clip.num_agents), np.maximum(clip.n_waypoints - 1, 0)]
    cx, cy = (clip.bounds[0] + clip.bounds[2]) / 2, (clip.bounds[1] + clip.bounds[3]) / 2
    view = {
        "panels": {"ground_truth": clip.positions[frames], **{m: r.positions[frames] for m, r in run.rollouts.items()}},
        "positions": {m: r.positions for m, r in run.rollouts.items()}, "gt": clip.positions,
        "times": frames * clip.dt, "colors": np.arctan2(final[:, 1] - cy, final[:, 0] - cx), "walls": clip.walls(),
        "bounds": clip.bounds, "dt": clip.dt, "ids": clip.meta.get("ids"),
        "curves": {m: {"t": c.frames * clip.dt, "MAE": c.mae, "OT": c.ot, "MMD": c.mmd} for m, c in run.curves.items()},
        "ode": ode,
    }
    report(progress, 1.0, "done")
    return SimulateResult(clip.summary(), run.table(), run.gt_collisions, _weights(config.methods),
                          _costs(config.methods), view)


@dataclass(frozen=True)
class EvaluateConfig:
    """``scenes`` (kinds or full names; empty: the held-out evaluation scenes), ``seconds`` per clip, the first
    generator ``seed`` (scene ``i`` uses ``seed + i``), ``methods`` (empty: every method) and ``stride``."""

    scenes: tuple[str, ...] = ()
    seconds: float = 60.0
    seed: int = 300
    methods: tuple[str, ...] = tuple(METHODS)
    stride: int = 2

    def __post_init__(self) -> None:
        from .scenes import get_scene

        object.__setattr__(self, "scenes", tuple(get_scene(s).name for s in self.scenes))
        object.__setattr__(self, "seconds", _seconds(self.seconds))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "methods", _methods(self.methods or tuple(METHODS)))
        object.__setattr__(self, "stride", _stride(self.stride))


@dataclass
class EvaluateResult:
    """``table``: per method, averaged over the scenes; ``per_scene``: per scene and method; ``assets``: the shipped
    weights the run loaded."""

    table: list[dict]
    per_scene: list[dict]
    assets: list[Path]

    def summary(self) -> dict[str, object]:
        return {"table": self.table, "per_scene": self.per_scene}


def run_evaluate(config: EvaluateConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> EvaluateResult:
    """The held-out evaluation of ``config.methods`` (long rollouts after the warm-up)."""
    from .evaluate import evaluate

    progress = checked(progress, token)
    res = evaluate(list(config.scenes) or None, config.seconds, config.seed, list(config.methods), config.stride,
                   progress=progress)
    return EvaluateResult(res.table, res.per_scene, _weights(config.methods))
