"""Physics crowd models: a vectorised social-force model (torch) and ORCA (through ``pyrvo``, the RVO2 library).

Social force: Helbing & Molnar, "Social force model for pedestrian dynamics", Phys. Rev. E 51 (1995), in the circular
specification with anisotropy (Helbing, Farkas & Vicsek, Nature 407, 2000; Helbing & Johansson 2009 review):

    a_i = (v0_i e_i - v_i) / tau_i
          + sum_j A exp((r_i + r_j - d_ij) / B) n_ij (lam + (1 - lam) (1 + cos phi_ij) / 2)
          + sum_walls A_w exp((r_i - d_iW) / B_w) n_iW

with the speed capped at ``max_speed_factor * v0`` (semi-implicit Euler). The same function drives the ground-truth
generator (with hidden per-agent parameters) and the social-force baseline (with the defaults below).

ORCA: van den Berg, Guy, Lin & Manocha, "Reciprocal n-body collision avoidance" (ISRR 2009), via ``pyrvo`` 0.4.3
(bindings of the reference RVO2 C++ library); walls become RVO2 line obstacles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class SocialForceConfig:
    """Default social-force parameters (per unit mass). The baseline uses exactly these for every agent."""

    tau: float = 0.5  # relaxation time (s)
    A: float = 4.5  # agent repulsion strength (m/s^2)
    B: float = 0.35  # agent repulsion range (m)
    lam: float = 0.35  # anisotropy: weight of interactions behind the agent
    radius: float = 0.25  # body radius (m)
    A_wall: float = 8.0  # wall repulsion strength (m/s^2)
    B_wall: float = 0.2  # wall repulsion range (m)
    max_speed_factor: float = 1.3  # speed cap = factor * desired speed
    cutoff: float = 4.0  # interactions beyond this distance are ignored (m)


def segment_distance(p: torch.Tensor, walls: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Distance and unit normal (pointing to the agent) from points ``p [N, 2]`` to segments ``walls [S, 4]``.

    Returns ``d [N, S]`` and ``n [N, S, 2]``.
    """
    a, b = walls[:, :2], walls[:, 2:]
    ab = b - a  # [S, 2]
    ap = p[:, None, :] - a[None]  # [N, S, 2]
    t = ((ap * ab[None]).sum(-1) / (ab * ab).sum(-1).clamp_min(1e-9)).clamp(0.0, 1.0)
    q = a[None] + t[..., None] * ab[None]
    diff = p[:, None, :] - q
    d = diff.norm(dim=-1)
    return d, diff / d.clamp_min(1e-6)[..., None]


def social_force_acceleration(
    p: torch.Tensor,
    v: torch.Tensor,
    goal_dir: torch.Tensor,
    v0: torch.Tensor,
    present: torch.Tensor,
    walls: torch.Tensor,
    cfg: SocialForceConfig,
    tau: torch.Tensor | None = None,
    A: torch.Tensor | None = None,
    B: torch.Tensor | None = None,
    radius: torch.Tensor | None = None,
) -> torch.Tensor:
    """Social-force acceleration ``[N, 2]`` for agents at ``p, v [N, 2]`` walking along unit ``goal_dir [N, 2]`` at
    desired speed ``v0 [N]``. Absent agents (``present [N]`` False) exert and feel nothing. Optional per-agent
    parameter tensors ``[N]`` override the config (the ground-truth generator draws them)."""
    n = p.shape[0]
    tau = torch.full((n,), cfg.tau) if tau is None else tau
    A = torch.full((n,), cfg.A) if A is None else A
    B = torch.full((n,), cfg.B) if B is None else B
    radius = torch.full((n,), cfg.radius) if radius is None else radius
    pz = torch.where(present[:, None], p, torch.zeros_like(p))
    acc = (v0[:, None] * goal_dir - v) / tau[:, None]
    # agent-agent repulsion
    diff = pz[:, None, :] - pz[None, :, :]  # i - j
    d = diff.norm(dim=-1)
    pair = present[:, None] & present[None, :] & (d < cfg.cutoff)
    pair.fill_diagonal_(False)
    nij = diff / d.clamp_min(1e-6)[..., None]
    speed = v.norm(dim=-1, keepdim=True)
    heading = torch.where(speed > 0.05, v / speed.clamp_min(1e-6), goal_dir)
    cos_phi = -(nij * heading[:, None, :]).sum(-1)
    aniso = cfg.lam + (1 - cfg.lam) * 0.5 * (1 + cos_phi)
    mag = A[:, None] * torch.exp((radius[:, None] + radius[None, :] - d) / B[:, None]) * aniso
    mag = torch.where(pair, mag, torch.zeros_like(mag))
    acc = acc + (mag[..., None] * nij).sum(1)
    # walls
    if walls.numel():
        dw, nw = segment_distance(pz, walls)
        magw = cfg.A_wall * torch.exp((radius[:, None] - dw) / cfg.B_wall)
        magw = torch.where(dw < cfg.cutoff, magw, torch.zeros_like(magw))
        acc = acc + (magw[..., None] * nw).sum(1)
    return torch.where(present[:, None], acc, torch.zeros_like(acc))


def social_force_step(
    p: torch.Tensor, v: torch.Tensor, goal_dir: torch.Tensor, v0: torch.Tensor, present: torch.Tensor,
    walls: torch.Tensor, dt: float, cfg: SocialForceConfig, **params: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One semi-implicit Euler step; returns ``(p_next, v_next, a)``."""
    a = social_force_acceleration(p, v, goal_dir, v0, present, walls, cfg, **params)
    v_new = v + a * dt
    vmax = (cfg.max_speed_factor * v0)[:, None]
    speed = v_new.norm(dim=-1, keepdim=True)
    v_new = torch.where(speed > vmax, v_new * vmax / speed.clamp_min(1e-6), v_new)
    p_new = p + v_new * dt
    return p_new, v_new, a


@dataclass
class OrcaConfig:
    """RVO2 defaults for walking pedestrians."""

    neighbor_dist: float = 4.0
    max_neighbors: int = 10
    time_horizon: float = 2.0
    time_horizon_obst: float = 1.0
    radius: float = 0.25


class Orca:
    """ORCA velocities for agents in persistent slots (pyrvo). RVO2's agent k-d tree cannot drop agents (after
    ``clear_agents`` it keeps stale entries), so every slot keeps its RVO2 agent for the whole run and absent agents are
    parked far away, 10 m apart, with zero preferred velocity. Walls are added once as line obstacles."""

    PARK = 1.0e4

    def __init__(self, walls: np.ndarray, dt: float, cfg: OrcaConfig | None = None) -> None:
        import pyrvo

        self.cfg = cfg or OrcaConfig()
        c = self.cfg
        self.sim = pyrvo.RVOSimulator(dt, c.neighbor_dist, c.max_neighbors, c.time_horizon, c.time_horizon_obst,
                                      c.radius, 2.0)
        for x0, y0, x1, y1 in np.asarray(walls, dtype=float).reshape(-1, 4):
            self.sim.add_obstacle([(x0, y0), (x1, y1)])
        self.sim.process_obstacles()
        self.parked = np.zeros(0, bool)

    def _park(self, i: int) -> None:
        self.sim.set_agent_position(i, (self.PARK + 10.0 * i, self.PARK))
        self.sim.set_agent_velocity(i, (0.0, 0.0))
        self.sim.set_agent_pref_velocity(i, (0.0, 0.0))

    def velocities(self, p: np.ndarray, v: np.ndarray, pref: np.ndarray, max_speed: np.ndarray, present: np.ndarray,
                   radius: np.ndarray | None = None) -> np.ndarray:
        """New velocities ``[N, 2]`` of present agents (0 for absent ones) given preferred velocities ``pref``;
        slot ``i`` of the arrays is always the same agent."""
        c = self.cfg
        sim = self.sim
        n = len(p)
        while sim.get_num_agents() < n:
            k = sim.get_num_agents()
            sim.add_agent((self.PARK + 10.0 * k, self.PARK))
            self.parked = np.append(self.parked, True)
            self._park(k)
        r = np.full(n, c.radius) if radius is None else radius
        for i in range(n):
            if present[i]:
                sim.set_agent_position(i, (float(p[i, 0]), float(p[i, 1])))
                sim.set_agent_velocity(i, (float(v[i, 0]), float(v[i, 1])))
                sim.set_agent_pref_velocity(i, (float(pref[i, 0]), float(pref[i, 1])))
                sim.set_agent_max_speed(i, float(max_speed[i]))
                sim.set_agent_radius(i, float(r[i]))
                self.parked[i] = False
            elif not self.parked[i]:
                self._park(i)
                self.parked[i] = True
        for i in np.flatnonzero(~self.parked[n:]) + n:  # slots beyond this call's agents
            self._park(int(i))
            self.parked[i] = True
        sim.do_step()
        out = np.zeros((n, 2), dtype=np.float32)
        for i in np.flatnonzero(present):
            vel = sim.get_agent_velocity(int(i))
            out[i] = (vel.x, vel.y)
        return out
