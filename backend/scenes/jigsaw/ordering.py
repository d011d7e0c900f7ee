"""Clip ordering: the temporal jigsaw. A clip's frames are shown shuffled; the answer is, for each moment in
chronological order, the shown frame that belongs there (the raster-order answer of the image jigsaw with time in place
of space), scored by the same graded reward.

A shuffled clip has an order to recover only if time has a direction. Procedural objects move at random, so the
direction here is the camera's: every clip is a tracking shot whose camera moves right (its heading drawn within 45
degrees of the +x axis) by ``PAN_PX`` pixels per frame, so the scene drifts left across the frame as time goes on (the
backdrop, further away, drifts less: parallax). That rule is the whole arrow of time; a clip played backwards is a
clip of the opposite heading, which the sources never show.

Sources (:data:`CLIP_SOURCES`): ``clips`` (training: procedural clips of :mod:`backend.scenes`, objects moving and
spinning, light drifting; seeds from 0), ``clips_val`` (the same generator, seeds from 500,000) and ``photo_pans``
(held out, another source: a window sliding right over a scikit-image photograph, never seen in training).

Frame features: each frame encoded on its own by the embedded DINOv2 ViT-S/14 at ``FRAME_PX = 112`` pixels (8 x 8
patches), summarised like a tile (mean, top, bottom, left and right patch rows/columns: the borders carry what enters
and leaves the frame). Shapes: clips uint8 ``[T, 168, 168, 3]``; features float16 ``[N, T, 5, 384]`` in
chronological order (a shuffle permutes the frame axis, so one encoding serves every shuffle).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import InputError
from .puzzle import IMAGE_SIZE, PHOTOS, VAL_SEED0, photo, to_square

FRAMES = 4
PAN_PX = 20
FRAME_PX = 112
CLIP_SOURCES = ("clips", "clips_val", "photo_pans")
CACHE_VERSION = 1


def _heading(rng: np.random.Generator) -> tuple[float, float]:
    ang = rng.uniform(-math.pi / 4, math.pi / 4)
    return math.cos(ang), math.sin(ang)


def scene_clip(seed: int, frames: int = FRAMES) -> np.ndarray:
    """Procedural clip ``seed``: uint8 ``[frames, 168, 168, 3]``, the camera moving right (see the module docstring),
    objects moving up to 1.5 pixels and spinning up to 0.05 radians per frame, the light drifting."""
    from ..clips import Motion, SceneConfig, make_clip

    dx, dy = _heading(np.random.default_rng([int(seed), 41]))
    path = tuple((t * PAN_PX * dx, t * PAN_PX * dy) for t in range(int(frames)))
    clip = make_clip(int(seed), SceneConfig(size=IMAGE_SIZE, objects=(2, 6), radius=(0.1, 0.25)),
                     Motion(frames=int(frames), camera_path=path))
    return clip.images


def pan_over(image: np.ndarray, seed: int, frames: int = FRAMES) -> np.ndarray:
    """A square window (35 to 60 % of the image's short side) sliding right over ``image`` (RGB uint8, any size of
    at least 64 pixels a side), ``PAN_PX`` output pixels per frame: uint8 ``[frames, 168, 168, 3]``."""
    a = np.asarray(image)
    if a.ndim != 3 or a.shape[2] < 3 or min(a.shape[:2]) < 64:
        raise InputError(f"A pan needs an RGB image of at least 64 pixels a side; got shape {a.shape}.")
    a = a[..., :3]
    rng = np.random.default_rng(int(seed))
    h, w = a.shape[:2]
    s = int(min(h, w) * rng.uniform(0.35, 0.6))
    dx, dy = _heading(rng)
    step = PAN_PX * s / IMAGE_SIZE  # image pixels per frame
    span_x, span_y = step * dx * (frames - 1), step * dy * (frames - 1)
    x0 = rng.uniform(0, max(w - s - span_x, 0))
    y_lo, y_hi = max(0.0, -span_y), max(0.0, h - s - max(span_y, 0.0))
    y0 = rng.uniform(y_lo, max(y_lo, y_hi))
    out = []
    for t in range(int(frames)):
        x, y = int(round(x0 + t * step * dx)), int(round(y0 + t * step * dy))
        x, y = min(max(x, 0), w - s), min(max(y, 0), h - s)
        out.append(to_square(a[y:y + s, x:x + s]))
    return np.stack(out)


def photo_pan(index: int, frames: int = FRAMES) -> np.ndarray:
    """Held-out clip ``index``: :func:`pan_over` one of :data:`~.puzzle.PHOTOS` (seeded by the index)."""
    return pan_over(photo(PHOTOS[int(index) % len(PHOTOS)]), 8_000_000 + int(index), frames)


def clip_frames(source: str, index: int, frames: int = FRAMES) -> np.ndarray:
    """Clip ``index`` of a source (see :data:`CLIP_SOURCES`): uint8 ``[frames, 168, 168, 3]`` in time order."""
    if not 3 <= int(frames) <= 8:
        raise InputError(f"A clip has 3 to 8 frames; got {frames}.")
    if source == "clips":
        return scene_clip(index, frames)
    if source == "clips_val":
        return scene_clip(VAL_SEED0 + index, frames)
    if source == "photo_pans":
        return photo_pan(index, frames)
    raise InputError(f"clip source must be one of {', '.join(CLIP_SOURCES)}; got {source!r}.")


def frame_features(frames: np.ndarray, vision: Any = None) -> Any:
    """uint8 frames ``[T, S, S, 3]`` -> float32 ``[T, 5, 384]`` (each frame resized to FRAME_PX)."""
    from .features import tile_features

    return tile_features(frames, vision, batch=64, px=FRAME_PX)


def clip_set(source: str, count: int, frames: int = FRAMES, vision: Any = None, cache: bool = True) -> Any:
    """Features ``[count, frames, 5, 384]`` (float16) of the first ``count`` clips of ``source`` in time order
    (cached on disk)."""
    from .features import cached

    def make() -> Any:
        allf = np.concatenate([clip_frames(source, i, frames) for i in range(int(count))])
        return frame_features(allf, vision).half().view(int(count), int(frames), 5, -1)

    return cached(f"clips_v{CACHE_VERSION}_{source}_{int(count)}_t{int(frames)}", make, cache)
