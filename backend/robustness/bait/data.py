"""The image sets: a 10-class 32 x 32 shape set drawn by the scene package, scikit-learn's bundled digits (upsampled)
as a second source, and the prior's pretraining set with DISJOINT labels (colour, texture, rotation).

``shapes``: one object per image near the centre (class = its shape, :data:`backend.scenes.SHAPES`, 10 classes),
random colour, texture, size (radius 0.26-0.40 of the side), angle, backdrop and pale clutter, random lighting.
``digits``: the 1,797 8 x 8 digits of ``sklearn.datasets.load_digits`` upsampled bilinearly to 32 x 32, grey repeated
over 3 channels, a fixed shuffle. ``prior``: shape-set images drawn upright from other seeds, labelled by the object's
colour (10), texture (5) and a random quarter-turn of the whole image (4, self-supervised): none of these labels is
the shape, so the prior never sees a target label.

Arrays: images uint8 ``[N, 32, 32, 3]``, labels int64 ``[N]`` (prior: ``[N, 3]`` colour, texture, rotation).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ...registry import Registry

SIZE = 32
N_CLASSES = 10
PRIOR_HEADS = (10, 5, 4)  # colour, texture, quarter-turn

# Seed ranges of the scene images (disjoint between splits and the prior's set).
SHAPES_TRAIN = 0
SHAPES_TEST = 100_000
PRIOR_SEEDS = 200_000
DIGITS_TRAIN = 1000  # the first 1,000 of the shuffled digits train, the other 797 test


@dataclass(frozen=True)
class ImageSet:
    """One split of a source: ``images`` uint8 ``[N, 32, 32, 3]``, ``labels`` int64 ``[N]``, ``class_names``."""

    name: str
    images: np.ndarray
    labels: np.ndarray
    class_names: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def subset(self, n: int) -> ImageSet:
        """The first ``n`` items (every source is shuffled or class-cycled, so a prefix is balanced)."""
        return replace(self, images=self.images[:n], labels=self.labels[:n])


def _scene_config(upright: bool = False):  # noqa: ANN202 - SceneConfig, imported lazily
    from ...scenes import SceneConfig

    return SceneConfig(size=SIZE, objects=(1, 1), radius=(0.26, 0.40), depth=(1.0, 1.5), clutter=(0, 2),
                       rotate=not upright)


def shape_image(seed: int, cls: int, upright: bool = False) -> tuple[np.ndarray, tuple[int, int]]:
    """Scene ``seed`` with one object of class ``cls`` (shape index) placed within 2 px of the centre: the image
    uint8 ``[32, 32, 3]`` and ``(colour index, texture index)`` of the object."""
    from ...scenes import PALETTE, SHAPES, TEXTURES, draw, sample_layout

    cfg = replace(_scene_config(upright), shapes=(SHAPES[cls],))
    lay = sample_layout(int(seed), cfg)
    rng = np.random.default_rng([int(seed), 51])
    obj = replace(lay.objects[0], cx=float(SIZE / 2 + rng.integers(-2, 3)), cy=float(SIZE / 2 + rng.integers(-2, 3)))
    frame = draw(lay.backdrop, (obj,), lighting=lay.lighting)
    return frame.image, (list(PALETTE).index(obj.color), list(TEXTURES).index(obj.texture))


@lru_cache(maxsize=8)
def _shapes(split: str, n: int | None) -> ImageSet:
    from ...scenes import SHAPES

    n = min(n or 1000, 1000 if split == "train" else 500)
    base = SHAPES_TRAIN if split == "train" else SHAPES_TEST
    labels = np.arange(n, dtype=np.int64) % N_CLASSES
    images = np.stack([shape_image(base + i, int(c))[0] for i, c in enumerate(labels)])
    return ImageSet("shapes", images, labels, tuple(SHAPES))


def upsample(images8: np.ndarray, size: int = SIZE) -> np.ndarray:
    """Grey ``[N, h, w]`` floats in [0, 1] -> uint8 ``[N, size, size, 3]`` (bilinear, align_corners=False)."""
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(np.asarray(images8, dtype=np.float32))[:, None]
    up = F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False)[:, 0].clamp(0, 1)
    u8 = np.rint(up.numpy() * 255).astype(np.uint8)
    return np.repeat(u8[..., None], 3, axis=-1)


@lru_cache(maxsize=4)
def _digits(split: str, n: int | None) -> ImageSet:
    from sklearn.datasets import load_digits

    d = load_digits()
    order = np.random.default_rng(7).permutation(len(d.target))
    idx = order[:DIGITS_TRAIN] if split == "train" else order[DIGITS_TRAIN:]
    idx = idx[:n or len(idx)]
    return ImageSet("digits", upsample(d.images[idx] / 16.0), d.target[idx].astype(np.int64),
                    tuple(str(i) for i in range(10)))


SOURCES: Registry = Registry("image source")
SOURCES.add("shapes", _shapes, label="scene shapes (10 classes)", kind="ours")
SOURCES.add("digits", _digits, label="sklearn digits (upsampled)", kind="reference")


def load_source(name: str, split: str, n: int | None = None) -> ImageSet:
    """``split`` ``train`` (1,000 images) or ``test`` (shapes 500, digits 797) of source ``name``, or its first
    ``n``."""
    return SOURCES.get(name)(split, None if n is None else int(n))


def prior_set(n: int, seed0: int = PRIOR_SEEDS) -> tuple[np.ndarray, np.ndarray]:
    """The prior's pretraining images uint8 ``[n, 32, 32, 3]`` and labels ``[n, 3]`` (colour, texture, turns).
    Shapes cycle over the 10 classes but are never a label; objects are drawn upright, then the image turns by
    ``turns x 90`` degrees."""
    rng = np.random.default_rng(seed0)
    imgs, labels = [], []
    for i in range(n):
        img, (col, tex) = shape_image(seed0 + i, i % N_CLASSES, upright=True)
        k = int(rng.integers(0, 4))
        imgs.append(np.ascontiguousarray(np.rot90(img, k)))
        labels.append((col, tex, k))
    return np.stack(imgs), np.asarray(labels, dtype=np.int64)
