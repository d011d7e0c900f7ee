"""Puzzles: images cut into a grid of tiles, shuffled, with the raster-order answer; the image sources.

- A puzzle of grid ``g`` has ``n = g * g`` tiles. ``order [n]`` is the shuffle: shown tile ``j`` is original tile
  ``order[j]``. The answer ``truth [n]`` (0-based) gives, for each original position ``k`` in raster order, the shown
  tile that belongs there (``truth[order[j]] = j``), as in the official data code (``gt = [order.index(k) + 1]``).
- Sources (:data:`SOURCES`): ``scenes`` (the training source: procedural scenes of :mod:`backend.scenes` at 168 pixels,
  seeds from 0), ``scenes_val`` (the same generator, seeds from 500,000: in-distribution validation) and ``photos``
  (held out, another source: square crops of the colour photographs that ship inside scikit-image, never seen in
  training).

Shapes: images uint8 ``[S, S, 3]`` with ``S = IMAGE_SIZE = 168``; tiles uint8 ``[n, S / g, S / g, 3]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...errors import InputError

IMAGE_SIZE = 168
SOURCES = ("scenes", "scenes_val", "photos")
VAL_SEED0 = 500_000
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "retina", "immunohistochemistry", "hubble_deep_field",
          "motorcycle_left", "colorwheel", "camera")


@dataclass
class Puzzle:
    """``image`` uint8 ``[S, S, 3]``; ``grid``; ``order [n]`` (shown j is original order[j]); ``truth [n]`` (0-based
    answer in raster order); ``shown`` uint8 ``[n, t, t, 3]`` (the tiles as shown)."""

    image: np.ndarray
    grid: int
    order: np.ndarray
    truth: np.ndarray
    shown: np.ndarray

    @property
    def n(self) -> int:
        return self.grid * self.grid

    def truth_labels(self) -> list[int]:
        return [int(v) + 1 for v in self.truth]


def to_square(image: np.ndarray, size: int = IMAGE_SIZE) -> np.ndarray:
    """Centre-crop to a square and resize to ``size`` (bicubic): uint8 ``[size, size, 3]``."""
    from PIL import Image

    a = np.asarray(image)
    if a.ndim == 2:
        a = np.repeat(a[..., None], 3, -1)
    if a.ndim != 3 or a.shape[2] not in (3, 4) or min(a.shape[:2]) < 16:
        raise InputError(f"The image must be RGB and at least 16 pixels a side; got shape {a.shape}.")
    a = a[..., :3].astype(np.uint8)
    h, w = a.shape[:2]
    s = min(h, w)
    a = a[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    return np.asarray(Image.fromarray(a).resize((size, size), Image.Resampling.BICUBIC), np.uint8)


def cut(image: np.ndarray, grid: int) -> np.ndarray:
    """Tiles of a square image in raster order: uint8 ``[g * g, S / g, S / g, 3]`` (S a multiple of g)."""
    s = image.shape[0]
    t = s // grid
    return np.stack([image[r * t:(r + 1) * t, c * t:(c + 1) * t] for r in range(grid) for c in range(grid)])


def assemble(tiles: np.ndarray, grid: int, gap: int = 0) -> np.ndarray:
    """Tiles ``[n, t, t, 3]`` laid out in raster order (with ``gap`` white pixels between them)."""
    t = tiles.shape[1]
    side = grid * t + (grid - 1) * gap
    out = np.full((side, side, 3), 255, np.uint8)
    for k, tile in enumerate(tiles):
        r, c = divmod(k, grid)
        out[r * (t + gap):r * (t + gap) + t, c * (t + gap):c * (t + gap) + t] = tile
    return out


def truth_of(order: np.ndarray) -> np.ndarray:
    """The raster-order answer of a shuffle: ``truth[order[j]] = j``."""
    truth = np.empty_like(order)
    truth[order] = np.arange(len(order))
    return truth


def make_puzzle(image: np.ndarray, grid: int, seed: int) -> Puzzle:
    """Cut a square image (``to_square`` first) and shuffle the tiles with ``seed`` (never the identity)."""
    img = to_square(image)
    n = grid * grid
    rng = np.random.default_rng(int(seed))
    order = rng.permutation(n)
    while (order == np.arange(n)).all():
        order = rng.permutation(n)
    tiles = cut(img, grid)
    return Puzzle(img, grid, order, truth_of(order), tiles[order])


# --------------------------------------------------------------------------------------------------------- sources
def scene_image(seed: int) -> np.ndarray:
    """One procedural scene of :mod:`backend.scenes` at IMAGE_SIZE pixels (2 to 6 objects, every backdrop)."""
    from ..clips import SceneConfig, make_scene

    return make_scene(int(seed), SceneConfig(size=IMAGE_SIZE, objects=(2, 6), radius=(0.1, 0.25))).image


@lru_cache(maxsize=16)
def photo(name: str) -> np.ndarray:
    """A scikit-image photograph as RGB uint8."""
    from skimage import data

    if name == "motorcycle_left":
        a = data.stereo_motorcycle()[0]
    else:
        a = getattr(data, name)()
    a = np.asarray(a)
    if a.dtype != np.uint8:
        a = (255 * (a - a.min()) / max(float(a.max() - a.min()), 1e-9)).astype(np.uint8)
    if a.ndim == 2:
        a = np.repeat(a[..., None], 3, -1)
    return a[..., :3]


def photo_crop(index: int) -> np.ndarray:
    """Held-out image ``index``: a random square crop (35 to 90 % of the short side) of one of :data:`PHOTOS`."""
    rng = np.random.default_rng(7_000_000 + int(index))
    a = photo(PHOTOS[int(index) % len(PHOTOS)])
    h, w = a.shape[:2]
    s = int(min(h, w) * rng.uniform(0.35, 0.9))
    y, x = int(rng.integers(0, h - s + 1)), int(rng.integers(0, w - s + 1))
    return to_square(a[y:y + s, x:x + s])


def source_image(source: str, index: int) -> np.ndarray:
    """Image ``index`` of a source (see :data:`SOURCES`)."""
    if source == "scenes":
        return scene_image(index)
    if source == "scenes_val":
        return scene_image(VAL_SEED0 + index)
    if source == "photos":
        return photo_crop(index)
    raise InputError(f"source must be one of {', '.join(SOURCES)}; got {source!r}.")
