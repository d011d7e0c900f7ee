"""Trajectory clips: the one data structure every crowd method reads and writes.

A :class:`Clip` holds positions ``[T, N, 2]`` (metres, NaN while agent ``n`` is absent), each agent's waypoints
(the last one is its exit / destination), the ground truth's current waypoint index per frame, the frame step ``dt``
(0.08 s, as in STDDN/SPDiff) and the scene walls. Velocities and accelerations follow the released code's convention of
forward differences: ``v_t = (p_{t+1} - p_t) / dt`` and ``a_t = (v_{t+1} - v_t) / dt`` so that the state update
``p_{t+1} = p_t + v_t dt, v_{t+1} = v_t + a_t dt`` reproduces the data exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .scenes import Scene

DT = 0.08
WARMUP = 25  # frames of ground truth every agent gets after it enters (SPDiff/STDDN "skip_frames")


@dataclass
class Clip:
    """Ground-truth (or uploaded) trajectories of one scene.

    positions: ``[T, N, 2]`` float32, NaN when absent. waypoints: ``[N, W, 2]`` float32 (NaN padded).
    n_waypoints: ``[N]`` int. wp_index: ``[T, N]`` int, the waypoint each agent heads to (-1 when absent).
    """

    positions: np.ndarray
    waypoints: np.ndarray
    n_waypoints: np.ndarray
    wp_index: np.ndarray
    dt: float = DT
    scene: Scene | None = None
    name: str = "clip"
    bounds: tuple[float, float, float, float] = (0.0, 0.0, 20.0, 20.0)
    meta: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ shape
    @property
    def num_frames(self) -> int:
        return int(self.positions.shape[0])

    @property
    def num_agents(self) -> int:
        return int(self.positions.shape[1])

    @property
    def seconds(self) -> float:
        return self.num_frames * self.dt

    @property
    def present(self) -> np.ndarray:
        """``[T, N]`` bool."""
        return ~np.isnan(self.positions[..., 0])

    def walls(self) -> np.ndarray:
        return self.scene.wall_array() if self.scene is not None else np.zeros((0, 4), np.float32)

    def obstacle_points(self) -> np.ndarray:
        return self.scene.obstacle_points() if self.scene is not None else np.zeros((0, 2), np.float32)

    # ---------------------------------------------------------------- derived
    def entry_frames(self) -> np.ndarray:
        """``[N]`` first frame each agent is present (T if never)."""
        pres = self.present
        first = np.argmax(pres, axis=0)
        first[~pres.any(axis=0)] = self.num_frames
        return first

    def velocities(self) -> np.ndarray:
        """``[T, N, 2]`` forward differences; the last present frame repeats the previous value; 0 when absent."""
        p = self.positions
        v = np.zeros_like(p)
        v[:-1] = (p[1:] - p[:-1]) / self.dt
        bad = np.isnan(v[..., 0])
        # last present frame (next absent): repeat the previous velocity
        last = self.present & np.concatenate([bad[:-1], np.ones((1, p.shape[1]), bool)], axis=0)
        v[bad] = 0.0
        prev = np.concatenate([np.zeros((1, p.shape[1], 2), p.dtype), v[:-1]], axis=0)
        v[last] = prev[last]
        v[~self.present] = 0.0
        return v.astype(np.float32)

    def accelerations(self) -> np.ndarray:
        """``[T, N, 2]`` forward differences of :meth:`velocities` (0 at an agent's last frame and when absent)."""
        v = self.velocities()
        pres = self.present
        a = np.zeros_like(v)
        both = pres[:-1] & pres[1:]
        a[:-1][both] = (v[1:][both] - v[:-1][both]) / self.dt
        return a.astype(np.float32)

    def desired_speed(self, frames: int = WARMUP) -> np.ndarray:
        """``[N]`` mean speed over each agent's first ``frames`` present frames (the released code's estimate)."""
        v = np.linalg.norm(self.velocities(), axis=-1)
        pres = self.present
        out = np.zeros(self.num_agents, np.float32)
        entry = self.entry_frames()
        for n in range(self.num_agents):
            if entry[n] >= self.num_frames:
                continue
            sl = slice(entry[n], min(self.num_frames, entry[n] + frames))
            sel = pres[sl, n]
            out[n] = float(v[sl, n][sel].mean()) if sel.any() else 0.0
        return out

    def waypoint_at(self, t: int) -> np.ndarray:
        """``[N, 2]`` the ground truth's current waypoint at frame ``t`` (NaN when absent)."""
        idx = np.clip(self.wp_index[t], 0, None)
        wp = self.waypoints[np.arange(self.num_agents), np.minimum(idx, self.waypoints.shape[1] - 1)]
        wp = wp.copy()
        wp[self.wp_index[t] < 0] = np.nan
        return wp

    def crop(self, start: int, stop: int) -> Clip:
        """Frames ``[start, stop)``, keeping only agents present in them (ids renumbered in order)."""
        pos = self.positions[start:stop]
        keep = ~np.isnan(pos[..., 0]).all(axis=0)
        return Clip(pos[:, keep], self.waypoints[keep], self.n_waypoints[keep], self.wp_index[start:stop][:, keep],
                    self.dt, self.scene, self.name, self.bounds, dict(self.meta, cropped=(start, stop)))

    def summary(self) -> dict:
        pres = self.present
        return {"name": self.name, "frames": self.num_frames, "seconds": round(self.seconds, 2),
                "agents": self.num_agents,
                "max_present": int(pres.sum(axis=1).max()) if pres.size else 0,
                "mean_present": round(float(pres.sum(axis=1).mean()), 1) if pres.size else 0.0, "dt": self.dt}
