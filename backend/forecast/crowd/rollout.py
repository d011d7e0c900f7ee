"""The long-term simulation protocol shared by every method (SPDiff/STDDN conventions).

* Agents enter at their real entry frame with their real state and destination (injected from the ground truth).
* Every agent is given its first ``warmup`` = 25 frames from the ground truth (its state is overwritten each frame, so
  the history encoder and the desired-speed estimate have data), then the method rolls it out autoregressively for the
  rest of the clip, interacting with everyone.
* An agent switches to its next waypoint within 1 m of an intermediate waypoint and leaves when it is within 0.5 m of
  its last waypoint or outside the scene window; once gone it stays masked (NaN).

``simulate(clip, simulator)`` returns a :class:`Rollout` with the predicted positions and the wall time, so inference
cost per simulated second can be compared across methods.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch

from backend.runtime import Progress, report

from .data import WARMUP, Clip
from .stddn import HISTORY

SWITCH_RADIUS = 1.0
EXIT_RADIUS = 0.5


@dataclass
class CrowdState:
    """The simulated crowd at one frame (all tensors over the clip's N agent slots)."""

    p: torch.Tensor  # [N, 2]
    v: torch.Tensor  # [N, 2]
    a: torch.Tensor  # [N, 2]
    present: torch.Tensor  # [N] bool
    hist: torch.Tensor  # [N, L, 6] absolute (p, v, a), oldest first
    hist_ok: torch.Tensor  # [N, L] bool
    goal: torch.Tensor  # [N, 2] current waypoint
    v0: torch.Tensor  # [N] desired speed
    t: int = 0


class CrowdSimulator(Protocol):
    """A method: ``reset(clip)`` once, then ``step(state, dt) -> (p, v, a)`` at the next frame for every slot."""

    name: str

    def reset(self, clip: Clip) -> None: ...

    def step(self, s: CrowdState, dt: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]: ...


@dataclass
class Rollout:
    """A method's simulation of a clip: positions ``[T, N, 2]`` (NaN when absent) and costs."""

    method: str
    positions: np.ndarray
    wall_s: float
    dt: float
    warmup: int = WARMUP
    meta: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.positions.shape[0] * self.dt

    @property
    def wall_per_sim_second(self) -> float:
        return self.wall_s / max(self.seconds, 1e-9)

    @property
    def sim_seconds_per_wall_second(self) -> float:
        return self.seconds / max(self.wall_s, 1e-9)


def simulate(clip: Clip, sim: CrowdSimulator, warmup: int = WARMUP, progress: Progress | None = None) -> Rollout:
    """Roll ``sim`` out over the whole clip under the protocol above."""
    T, N = clip.num_frames, clip.num_agents
    gt_p = torch.from_numpy(np.nan_to_num(clip.positions, nan=0.0))
    gt_v = torch.from_numpy(clip.velocities())
    gt_a = torch.from_numpy(clip.accelerations())
    gt_present = torch.from_numpy(clip.present)
    entry = torch.from_numpy(clip.entry_frames())
    waypoints = torch.from_numpy(np.nan_to_num(clip.waypoints, nan=0.0))
    n_wp = torch.from_numpy(clip.n_waypoints.astype(np.int64))
    gt_wpi = torch.from_numpy(clip.wp_index)
    v0 = torch.from_numpy(clip.desired_speed(warmup))
    x0, y0, x1, y1 = clip.bounds
    rows = torch.arange(N)

    state = CrowdState(
        p=torch.zeros(N, 2), v=torch.zeros(N, 2), a=torch.zeros(N, 2), present=torch.zeros(N, dtype=torch.bool),
        hist=torch.zeros(N, HISTORY, 6), hist_ok=torch.zeros(N, HISTORY, dtype=torch.bool), goal=torch.zeros(N, 2),
        v0=v0,
    )
    wpi = torch.zeros(N, dtype=torch.long)
    done = torch.zeros(N, dtype=torch.bool)
    out = np.full((T, N, 2), np.nan, np.float32)
    sim.reset(clip)
    wall = 0.0
    with torch.inference_mode():
        for t in range(T):
            state.t = t
            in_warmup = (t - entry) < warmup
            force = gt_present[t] & in_warmup & ~done
            lost = state.present & in_warmup & ~gt_present[t]  # left during its warm-up
            done |= lost
            state.present &= ~lost
            state.p = torch.where(force[:, None], gt_p[t], state.p)
            state.v = torch.where(force[:, None], gt_v[t], state.v)
            state.a = torch.where(force[:, None], gt_a[t], state.a)
            wpi = torch.where(force, gt_wpi[t].clamp_min(0), wpi)
            state.present |= force
            state.goal = waypoints[rows, wpi.clamp(max=waypoints.shape[1] - 1)]
            cur = torch.cat([state.p, state.v, state.a], dim=-1)
            state.hist = torch.cat([state.hist[:, 1:], cur[:, None]], dim=1)
            state.hist_ok = torch.cat([state.hist_ok[:, 1:], state.present[:, None]], dim=1)
            pres_np = state.present.numpy()
            out[t, pres_np] = state.p.numpy()[pres_np]
            if t == T - 1:
                break
            tic = time.perf_counter()
            p, v, a = sim.step(state, clip.dt)
            wall += time.perf_counter() - tic
            alive = state.present
            p = torch.where(alive[:, None], p, state.p)
            v = torch.where(alive[:, None], v, state.v)
            a = torch.where(alive[:, None], a, state.a)
            # waypoints and exits (for agents past their warm-up: forced ones follow the ground truth)
            free = alive & ~((t + 1 - entry) < warmup)
            d = (p - state.goal).norm(dim=-1)
            last = wpi >= n_wp - 1
            wpi = torch.where(free & ~last & (d < SWITCH_RADIUS), wpi + 1, wpi)
            outside = (p[:, 0] < x0) | (p[:, 0] > x1) | (p[:, 1] < y0) | (p[:, 1] > y1) | torch.isnan(p).any(-1)
            gone = free & ((last & (d < EXIT_RADIUS)) | outside)
            done |= gone
            state.present = alive & ~gone
            state.p, state.v, state.a = p, v, a
            if t % 25 == 0:
                report(progress, t / T, f"{sim.name}: {t * clip.dt:.1f} of {T * clip.dt:.1f} s")
    report(progress, 1.0, f"{sim.name}: done")
    return Rollout(sim.name, out, wall, clip.dt, warmup)
