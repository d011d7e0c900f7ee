"""Ground-truth crowd generator (no crowd dataset can be downloaded here, so the project makes its own).

The ground truth must not be the social-force baseline itself, so every clip mixes two models and hides parameters:

* each agent draws hidden parameters (desired speed, relaxation time, repulsion strength/range, body radius);
* its desired direction and speed carry Ornstein-Uhlenbeck noise (people wander and hesitate);
* a fraction of the agents (``orca_fraction``) moves by ORCA (pyrvo) instead of social force, while seeing everyone;
* scenes are open: Poisson sources spawn agents at entrances and agents leave at exits (as in GC);
* a burn-in lets the scene fill before recording starts.

The social-force *baseline* later runs with :class:`~.physics.SocialForceConfig` defaults, no noise and no ORCA agents.
Evaluation uses held-out scene geometries (``scenes.EVAL_SCENES``). Step 0.08 s, as STDDN/SPDiff's GC data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.runtime import Progress, report

from .data import DT, Clip
from .physics import Orca, SocialForceConfig, social_force_step
from .scenes import Scene


@dataclass
class GeneratorConfig:
    seconds: float = 60.0  # recorded length
    burn_in: float = 15.0  # simulated before recording so the scene is populated
    dt: float = DT
    orca_fraction: float = 0.35
    speed_mean: float = 1.3
    speed_std: float = 0.2
    speed_range: tuple[float, float] = (0.8, 1.8)
    tau_range: tuple[float, float] = (0.3, 0.9)
    A_range: tuple[float, float] = (3.0, 7.0)
    B_range: tuple[float, float] = (0.25, 0.5)
    radius_range: tuple[float, float] = (0.2, 0.3)
    noise_angle: float = 0.2  # stationary std of the heading noise (rad)
    noise_speed: float = 0.08  # stationary relative std of the speed noise
    noise_tau: float = 1.5  # correlation time of both noises (s)
    switch_radius: float = 1.0  # an intermediate waypoint counts as reached within this distance (m)
    exit_radius: float = 0.5  # the final waypoint: within 0.5 m (as in the released code) or outside the window
    max_agents: int = 160
    spawn_clearance: float = 0.6
    rate_scale: float = 1.0


def _uniform_in(rng: np.random.Generator, rect: tuple[float, float, float, float]) -> np.ndarray:
    x0, y0, x1, y1 = rect
    return np.array([rng.uniform(x0, x1), rng.uniform(y0, y1)], dtype=np.float32)


def outside(p: np.ndarray, bounds: tuple[float, float, float, float]) -> np.ndarray:
    x0, y0, x1, y1 = bounds
    return (p[..., 0] < x0) | (p[..., 0] > x1) | (p[..., 1] < y0) | (p[..., 1] > y1)


def generate_clip(scene: Scene, seed: int, cfg: GeneratorConfig | None = None,
                  progress: Progress | None = None) -> Clip:
    """Simulate ``scene`` and return the recorded ground truth as a :class:`Clip` (deterministic for a seed)."""
    cfg = cfg or GeneratorConfig()
    rng = np.random.default_rng(seed)
    sf = SocialForceConfig()
    walls_np = scene.wall_array()
    walls = torch.from_numpy(walls_np)
    orca = Orca(walls_np, cfg.dt)
    wmax = max((len(r.regions) for s in scene.sources for r in s.routes), default=1)

    cap = 256
    pos = np.full((cap, 2), np.nan, np.float32)
    vel = np.zeros((cap, 2), np.float32)
    present = np.zeros(cap, bool)
    wps = np.full((cap, wmax, 2), np.nan, np.float32)
    nwp = np.zeros(cap, np.int64)
    wpi = np.zeros(cap, np.int64)
    par = {k: np.zeros(cap, np.float32) for k in ("v0", "tau", "A", "B", "radius")}
    is_orca = np.zeros(cap, bool)
    theta = np.zeros(cap, np.float32)
    snoise = np.zeros(cap, np.float32)
    used = 0

    def grow() -> None:
        nonlocal pos, vel, present, wps, nwp, wpi, is_orca, theta, snoise, cap
        extra = cap
        pos = np.concatenate([pos, np.full((extra, 2), np.nan, np.float32)])
        vel = np.concatenate([vel, np.zeros((extra, 2), np.float32)])
        present = np.concatenate([present, np.zeros(extra, bool)])
        wps = np.concatenate([wps, np.full((extra, wmax, 2), np.nan, np.float32)])
        nwp = np.concatenate([nwp, np.zeros(extra, np.int64)])
        wpi = np.concatenate([wpi, np.zeros(extra, np.int64)])
        for k in par:
            par[k] = np.concatenate([par[k], np.zeros(extra, np.float32)])
        is_orca = np.concatenate([is_orca, np.zeros(extra, bool)])
        theta = np.concatenate([theta, np.zeros(extra, np.float32)])
        snoise = np.concatenate([snoise, np.zeros(extra, np.float32)])
        cap += extra

    total = int(round((cfg.burn_in + cfg.seconds) / cfg.dt))
    start = int(round(cfg.burn_in / cfg.dt))
    frames_pos: list[np.ndarray] = []
    frames_wpi: list[np.ndarray] = []
    decay = float(np.exp(-cfg.dt / cfg.noise_tau))
    kick = float(np.sqrt(1 - decay**2))

    for k in range(total):
        # ---- spawn
        for src in scene.sources:
            for _ in range(rng.poisson(src.rate * cfg.rate_scale * cfg.dt)):
                if present.sum() >= cfg.max_agents:
                    break
                cand = _uniform_in(rng, src.region)
                if present.any() and np.min(np.linalg.norm(pos[present] - cand, axis=1)) < cfg.spawn_clearance:
                    continue
                if used >= cap:
                    grow()
                i = used
                used += 1
                w = np.array([r.weight for r in src.routes], float)
                route = src.routes[int(rng.choice(len(src.routes), p=w / w.sum()))]
                for j, reg in enumerate(route.regions):
                    wps[i, j] = _uniform_in(rng, reg)
                nwp[i] = len(route.regions)
                wpi[i] = 0
                par["v0"][i] = np.clip(rng.normal(cfg.speed_mean, cfg.speed_std), *cfg.speed_range)
                par["tau"][i] = rng.uniform(*cfg.tau_range)
                par["A"][i] = rng.uniform(*cfg.A_range)
                par["B"][i] = rng.uniform(*cfg.B_range)
                par["radius"][i] = rng.uniform(*cfg.radius_range)
                is_orca[i] = rng.random() < cfg.orca_fraction
                theta[i] = rng.normal(0, cfg.noise_angle)
                snoise[i] = rng.normal(0, cfg.noise_speed)
                d = wps[i, 0] - cand
                vel[i] = par["v0"][i] * rng.uniform(0.5, 1.0) * d / max(np.linalg.norm(d), 1e-6)
                pos[i] = cand
                present[i] = True
        idx = np.flatnonzero(present)
        if len(idx):
            p, v = pos[idx], vel[idx]
            target = wps[idx, wpi[idx]]
            d = target - p
            e = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-6)
            c, s = np.cos(theta[idx]), np.sin(theta[idx])
            e = np.stack([c * e[:, 0] - s * e[:, 1], s * e[:, 0] + c * e[:, 1]], axis=1).astype(np.float32)
            v0 = (par["v0"][idx] * (1 + snoise[idx])).astype(np.float32)
            pres_t = torch.ones(len(idx), dtype=torch.bool)
            p_sf, v_sf, _ = social_force_step(
                torch.from_numpy(p), torch.from_numpy(v), torch.from_numpy(e), torch.from_numpy(v0), pres_t, walls,
                cfg.dt, sf, tau=torch.from_numpy(par["tau"][idx]), A=torch.from_numpy(par["A"][idx]),
                B=torch.from_numpy(par["B"][idx]), radius=torch.from_numpy(par["radius"][idx]),
            )
            p_new, v_new = p_sf.numpy(), v_sf.numpy()
            orc = is_orca[idx]
            if orc.any():
                vo = orca.velocities(p, v, v0[:, None] * e, sf.max_speed_factor * par["v0"][idx],
                                     np.ones(len(idx), bool), par["radius"][idx])
                v_new = np.where(orc[:, None], vo, v_new)
                p_new = np.where(orc[:, None], p + vo * cfg.dt, p_new)
            pos[idx], vel[idx] = p_new, v_new
            # ---- waypoints and exits
            dist = np.linalg.norm(wps[idx, wpi[idx]] - p_new, axis=1)
            last = wpi[idx] >= nwp[idx] - 1
            advance = (~last) & (dist < cfg.switch_radius)
            wpi[idx[advance]] += 1
            gone = (last & (dist < cfg.exit_radius)) | outside(p_new, scene.bounds)
            present[idx[gone]] = False
            pos[idx[gone]] = np.nan
            # ---- noise (Ornstein-Uhlenbeck)
            theta[idx] = decay * theta[idx] + kick * cfg.noise_angle * rng.standard_normal(len(idx))
            snoise[idx] = decay * snoise[idx] + kick * cfg.noise_speed * rng.standard_normal(len(idx))
        if k >= start:
            frames_pos.append(np.where(present[:, None], pos, np.nan)[:cap].copy())
            frames_wpi.append(np.where(present, wpi, -1)[:cap].copy())
        if k % 50 == 0:
            report(progress, k / total, f"ground truth {scene.name}: {k * cfg.dt:.0f} of {total * cfg.dt:.0f} s")

    n = used
    P = np.full((len(frames_pos), n, 2), np.nan, np.float32)
    W = np.full((len(frames_pos), n), -1, np.int64)
    for t, (fp, fw) in enumerate(zip(frames_pos, frames_wpi, strict=True)):
        m = min(n, fp.shape[0])
        P[t, :m], W[t, :m] = fp[:m], fw[:m]
    keep = ~np.isnan(P[..., 0]).all(axis=0)
    report(progress, 1.0, f"ground truth {scene.name}: done")
    return Clip(P[:, keep], wps[:n][keep], nwp[:n][keep], W[:, keep], cfg.dt, scene, f"{scene.name}/seed{seed}",
                scene.bounds, {"seed": seed, "orca_agents": int(is_orca[:n][keep].sum()), "generator": "sf+orca",
                 "is_orca": is_orca[:n][keep].copy()})
