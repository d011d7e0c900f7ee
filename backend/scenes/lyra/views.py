"""Scenes, camera paths and view sets of the Lyra miniature (numpy + torch; scenes from :mod:`backend.scenes.scene3d`).

Every scene is seen from an orbit camera (radius :data:`RADIUS` about ``(0, 0.5, 0)``, elevation :data:`ELEVATION`,
vertical field of view :data:`FOV`) at a base azimuth drawn from the scene seed: that is the first view, the one
image the teacher and the student get. A camera path is a list of azimuth offsets ``delta`` (degrees, |delta| <=
:data:`MAX_DELTA`) along the same orbit. All geometry is expressed in the first camera's frame: the first view's
world-to-camera matrix is the identity and a path view's is ``W_delta W_0^{-1}``, the same for every scene (the orbit is
symmetric about the vertical axis), so an uploaded photo can be given the same path.

Splits (scene seeds): training ``TRAIN_SEEDS``; held-out evaluation ``EVAL_SEEDS`` (disjoint). Training views sit at
random offsets; the held-out evaluation views at :data:`EVAL_DELTAS`, offsets between the teacher's supervision path
:data:`PATH_DELTAS` (views no arm was trained at for that scene).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

SIZE = 32
RADIUS = 3.6
ELEVATION = 22.0
FOV = 50.0
CENTER = (0.0, 0.5, 0.0)
MAX_DELTA = 40.0
FAR = 12.0
#: the teacher's imagined path for the student and for per-scene optimisation (the first view, delta 0, included)
PATH_DELTAS: tuple[float, ...] = (-40.0, -30.0, -20.0, -10.0, 0.0, 10.0, 20.0, 30.0, 40.0)
#: held-out true views of the claims: offsets between the path's
EVAL_DELTAS: tuple[float, ...] = (-35.0, -25.0, -15.0, -5.0, 5.0, 15.0, 25.0, 35.0)
TRAIN_SEEDS = range(0, 100_000)
EVAL_SEEDS = range(500_000, 600_000)


@lru_cache(maxsize=512)
def _camera(delta: float, size: int):
    from ..scene3d import orbit

    return orbit(1, RADIUS, ELEVATION, size, size, CENTER, start_deg=float(delta), span_deg=0.0, fov_deg=FOV)[0]


def intrinsics(size: int = SIZE) -> torch.Tensor:
    """``K [3, 3]`` of the orbit camera at ``size x size`` (pixel centres at integer coordinates)."""
    return torch.as_tensor(_camera(0.0, size).intrinsics(), dtype=torch.float32)


def relative_viewmats(deltas, size: int = SIZE) -> torch.Tensor:
    """World-to-camera matrices ``[V, 4, 4]`` of the path views at ``deltas`` in the first camera's frame."""
    w0inv = np.linalg.inv(_camera(0.0, size).world_to_camera())
    return torch.as_tensor(np.stack([_camera(float(d), size).world_to_camera() @ w0inv for d in deltas]),
                           dtype=torch.float32)


def scene_for(seed: int):
    """The procedural scene of ``seed`` and its base azimuth (degrees)."""
    from ..scene3d import random_scene

    rng = np.random.default_rng([int(seed), 7])
    return random_scene(int(seed)), float(rng.uniform(0.0, 360.0))


def render_views(seed: int, deltas, size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """True renders of scene ``seed`` at path offsets ``deltas``: rgb float32 ``[V, H, W, 3]``, depth ``[V, H, W]``
    (z in the view's camera, clamped to :data:`FAR` on the sky)."""
    from ..scene3d import orbit, render

    scene, base = scene_for(seed)
    rgb, depth = [], []
    for d in deltas:
        cam = orbit(1, RADIUS, ELEVATION, size, size, CENTER, start_deg=base + float(d), span_deg=0.0, fov_deg=FOV)[0]
        r = render(scene, cam)
        rgb.append(r.rgb)
        depth.append(np.minimum(r.depth, FAR))
    return np.stack(rgb).astype(np.float32), np.stack(depth).astype(np.float32)


@dataclass
class ViewSet:
    """Scenes with their first views and views at offsets: ``first [B, 3, H, W]``, ``first_depth [B, H, W]``,
    ``targets [B, V, 3, H, W]``, ``deltas [B, V]`` (degrees), ``seeds``."""

    first: torch.Tensor
    first_depth: torch.Tensor
    targets: torch.Tensor
    deltas: torch.Tensor
    seeds: list[int]


def make_viewset(seeds, deltas=None, n_random: int = 8, size: int = SIZE, rng_seed: int = 0) -> ViewSet:
    """True views of the scenes ``seeds``: at the fixed offsets ``deltas``, or (None) at ``n_random`` offsets drawn
    uniformly in [-MAX_DELTA, MAX_DELTA] per scene (generator ``rng_seed``)."""
    rng = np.random.default_rng(rng_seed)
    firsts, fdepth, targets, ds = [], [], [], []
    for s in seeds:
        d = np.asarray(deltas if deltas is not None else rng.uniform(-MAX_DELTA, MAX_DELTA, n_random), np.float32)
        rgb, depth = render_views(int(s), [0.0, *d.tolist()], size)
        firsts.append(rgb[0])
        fdepth.append(depth[0])
        targets.append(rgb[1:])
        ds.append(d)
    first = torch.as_tensor(np.stack(firsts)).permute(0, 3, 1, 2).contiguous()
    tg = torch.as_tensor(np.stack(targets)).permute(0, 1, 4, 2, 3).contiguous()
    return ViewSet(first, torch.as_tensor(np.stack(fdepth)), tg, torch.as_tensor(np.stack(ds)), [int(s) for s in seeds])


def camera_code(deltas: torch.Tensor) -> torch.Tensor:
    """The teacher's camera conditioning ``[..., 4]`` of offsets in degrees: sin, cos - 1, delta / MAX_DELTA and the
    relative translation's x (from the orbit geometry)."""
    r = torch.deg2rad(deltas)
    return torch.stack([torch.sin(r), torch.cos(r) - 1, deltas / MAX_DELTA,
                        torch.sin(r) * RADIUS * math.cos(math.radians(ELEVATION)) / 2], -1)


def render_at(g: Any, deltas: torch.Tensor, background: torch.Tensor, size: int, tile: int = 4) -> torch.Tensor:
    """Gaussians ``[B, N, ...]`` (first-camera frame) rendered at offsets ``deltas [B, V]`` over ``background
    [B, 3]``: ``[B, V, 3, size, size]``."""
    B, V = deltas.shape
    from ..splat import render_gaussians

    K = intrinsics(size)
    vm = relative_viewmats(deltas.reshape(-1).tolist(), size)
    rep = lambda x: x.repeat_interleave(V, 0)  # noqa: E731
    r = render_gaussians(rep(g.means), rep(g.scales), rep(g.quats), rep(g.opacities), rep(g.colors), K, vm,
                         size, size, background=rep(background), tile=tile)
    return r.rgb.reshape(B, V, size, size, 3).permute(0, 1, 4, 2, 3)


def sky_colour(image: torch.Tensor) -> torch.Tensor:
    """The background colour of first views ``[B, 3, H, W]``: the mean of the top row, ``[B, 3]``."""
    return image[:, :, 0, :].mean(-1)
