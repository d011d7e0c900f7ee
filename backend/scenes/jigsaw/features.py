"""Tile features: each tile encoded on its own by the frozen embedded DINOv2 ViT-S/14 (as the paper shows the tiles to
the model as separate images), at ``TILE_PX = 56`` pixels (4 x 4 patches of 14), summarised into five 384-d vectors:
the mean patch token and the mean tokens of the top row, bottom row, left column and right column of patches (the
borders carry what neighbouring tiles share).

:func:`puzzle_set` builds the cached features of the first ``count`` images of a source at a grid:
``feats`` float16 ``[N, n, 5, 384]`` in original raster order (a shuffle is a permutation of the tile axis, so one
encoding serves every shuffle), stored under ``cache_dir()/jigsaw``; :func:`tile_features` encodes tiles directly
(the page's photo).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...runtime import cache_dir
from .puzzle import cut, source_image

TILE_PX = 56
PARTS = 5
DIM = 384
CACHE_VERSION = 1


def summarise(tokens: Any, side: int) -> Any:
    """Patch tokens ``[B, side * side, D]`` -> ``[B, 5, D]`` (mean, top, bottom, left, right)."""
    import torch

    g = tokens.view(tokens.shape[0], side, side, -1)
    return torch.stack([g.mean((1, 2)), g[:, 0].mean(1), g[:, -1].mean(1), g[:, :, 0].mean(1), g[:, :, -1].mean(1)],
                       1)


def tile_features(tiles: np.ndarray, vision: Any = None, batch: int = 128, px: int = TILE_PX) -> Any:
    """uint8 tiles ``[T, t, t, 3]`` -> float32 ``[T, 5, 384]`` (each tile resized to ``px``, a multiple of 14)."""
    import torch
    from PIL import Image

    from ...models.vision import load_vision_encoder

    vision = vision or load_vision_encoder()
    out = []
    for i in range(0, len(tiles), batch):
        pil = [Image.fromarray(np.asarray(t, np.uint8)) for t in tiles[i:i + batch]]
        tok = vision.patch_features(pil, px).float()
        out.append(summarise(tok, px // vision.patch_size))
    return torch.cat(out, 0)


def cached(name: str, make: Callable[[], Any], cache: bool = True) -> Any:
    """``make()`` stored as ``cache_dir()/jigsaw/<name>.pt`` (read back when present)."""
    import torch

    path = cache_dir() / "jigsaw" / f"{name}.pt"
    if cache and path.exists():
        return torch.load(path, weights_only=True)
    value = make()
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        torch.save(value, tmp)
        tmp.replace(path)
    return value


def puzzle_set(source: str, count: int, grid: int, vision: Any = None, cache: bool = True) -> Any:
    """Features ``[count, g * g, 5, 384]`` (float16) of the first ``count`` images of ``source`` cut at ``grid``, in
    raster order (cached on disk)."""

    def make() -> Any:
        tiles = np.concatenate([cut(source_image(source, i), grid) for i in range(int(count))])
        return tile_features(tiles, vision).half().view(int(count), grid * grid, PARTS, DIM)

    return cached(f"v{CACHE_VERSION}_{source}_{int(count)}_g{int(grid)}", make, cache)
