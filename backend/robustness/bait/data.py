"""The image sets: a 10-class 32 x 32 shape set drawn by the scene package, scikit-learn's bundled digits (upsampled)
as a second source, and the prior's pretraining set of DISJOINT classes (ten other outlines).

``shapes``: one object per image near the centre (class = its shape, :data:`backend.scenes.SHAPES`, 10 classes),
random colour, texture, size (radius 0.26-0.40 of the side), angle, backdrop and pale clutter, random lighting.
``digits``: the 1,797 8 x 8 digits of ``sklearn.datasets.load_digits`` upsampled bilinearly to 32 x 32, grey repeated
over 3 channels, a fixed shuffle. ``prior``: scenes drawn as the shape set's (other seeds: backdrop, colour, texture,
size, angle, lighting) but showing one of ten outlines that are not target shapes (:data:`PRIOR_SHAPES`), labelled
by the outline: the prior learns shape features without ever seeing a target class.

Arrays: images uint8 ``[N, 32, 32, 3]``, labels int64 ``[N]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ...registry import Registry
from ...scenes.objects import polygon, regular

SIZE = 32
N_CLASSES = 10

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


# The prior's classes: ten outlines that are not among the target shapes (drawn with the scene package's
# backdrops, colours, textures and lighting), so fine-tuning from the prior starts from shape features without ever
# having seen a target class. Polygon vertices are given for radius 1 (every outline lies within the scene
# package's extent of 1.25 radii).
def _outline(vertices: list[tuple[float, float]]) -> Callable[[np.ndarray, np.ndarray, float], np.ndarray]:
    return polygon(np.asarray(vertices, dtype=np.float32))


PRIOR_SHAPES: dict[str, Callable[[np.ndarray, np.ndarray, float], np.ndarray]] = {
    "heptagon": polygon(regular(7)),
    "octagon": polygon(regular(8, start=np.pi / 8)),
    "star4": polygon(regular(4, inner=0.4)),
    "star6": polygon(regular(6, inner=0.55)),
    "bar": lambda u, v, r: (np.abs(u) <= 0.95 * r) & (np.abs(v) <= 0.42 * r),
    "half-disc": lambda u, v, r: (u * u + (v - 0.4 * r) ** 2 <= r * r) & (v <= 0.4 * r),
    "crescent": lambda u, v, r: (u * u + v * v <= r * r) & ((u - 0.45 * r) ** 2 + v * v > (0.8 * r) ** 2),
    "arrow": _outline([(-1, -0.25), (0.2, -0.25), (0.2, -0.65), (1, 0), (0.2, 0.65), (0.2, 0.25), (-1, 0.25)]),
    "L": _outline([(-0.7, -0.95), (-0.2, -0.95), (-0.2, 0.4), (0.75, 0.4), (0.75, 0.95), (-0.7, 0.95)]),
    "T": _outline([(-0.9, -0.9), (0.9, -0.9), (0.9, -0.45), (0.25, -0.45), (0.25, 0.95), (-0.25, 0.95),
                (-0.25, -0.45), (-0.9, -0.45)]),
}


def prior_image(seed: int, cls: int) -> np.ndarray:
    """Scene ``seed`` (the shape set's backdrop, colour, texture, size, angle and lighting) with one outline of
    :data:`PRIOR_SHAPES` (index ``cls``) within 2 px of the centre: uint8 ``[32, 32, 3]``."""
    from ...scenes import SHAPES, sample_layout
    from ...scenes.objects import paint
    from ...scenes.render import backdrop_window

    lay = sample_layout(int(seed), replace(_scene_config(), shapes=(SHAPES[0],)))
    rng = np.random.default_rng([int(seed), 51])
    obj = replace(lay.objects[0], cx=float(SIZE / 2 + rng.integers(-2, 3)), cy=float(SIZE / 2 + rng.integers(-2, 3)))
    canvas = backdrop_window(lay.backdrop, (0.0, 0.0))
    paint(canvas, obj, mask=list(PRIOR_SHAPES.values())[cls])
    return lay.lighting.apply(canvas) if lay.lighting is not None else canvas


def prior_set(n: int, seed0: int = PRIOR_SEEDS) -> tuple[np.ndarray, np.ndarray]:
    """The prior's pretraining images uint8 ``[n, 32, 32, 3]`` and labels int64 ``[n]`` (an index of
    :data:`PRIOR_SHAPES`, cycling; never a target shape)."""
    labels = np.arange(n, dtype=np.int64) % len(PRIOR_SHAPES)
    return np.stack([prior_image(seed0 + i, int(c)) for i, c in enumerate(labels)]), labels
