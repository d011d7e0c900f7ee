"""Referring-expression scenes: procedural shapes (:mod:`backend.scenes`) with one templated expression that picks
out exactly one object, and that object's visible mask.

Two sources, so that a generalisation claim is tested on data unlike the training data:

- ``train`` (also its own in-distribution ``val`` split): plain and gradient backdrops, flat and striped objects,
  the templates of :data:`TEMPLATES` ``"train"`` ("the small red circle", "the red circle left of the square");
- ``heldout``: grating and fractal backdrops, checkered and dotted objects, more clutter, and paraphrased templates
  ("the circle coloured red", "the red circle, the smaller one", "the red circle to the left of the square").

Each scene draws 3 to 5 objects apart from each other; half the scenes copy the target's colour and shape onto a
second object (a twin), so that only size or a relation to a landmark tells them apart. An expression is chosen at
random among the descriptions that are unique in the scene: colour and shape (or the shape alone) when unique; size
when the twins differ in radius by at least 25 %; a relation (left of, right of, above, below, by the larger of the
centre offsets) to a landmark whose shape is unique, when no twin stands in the same relation.

Shapes: images uint8 ``[H, W, 3]`` with H = W = :data:`SIZE` (112 = 8 x 14, the DINOv2 patch grid 8 x 8); masks
bool ``[H, W]``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..clips import SceneConfig, sample_layout
from ..render import draw

SIZE = 112
PATCH = 14
GRID = SIZE // PATCH  # 8 x 8 patches and masking blocks
SHAPE_WORDS = ("circle", "square", "triangle", "diamond", "star", "cross")
COLOR_WORDS = ("red", "green", "blue", "yellow", "purple", "black")
SEED_BASE = {"train": 0, "val": 500_000, "heldout": 900_000}
SOURCES: dict[str, SceneConfig] = {
    "train": SceneConfig(size=SIZE, objects=(3, 5), shapes=SHAPE_WORDS, colors=COLOR_WORDS,
                         textures=("flat", "stripes"), radius=(0.09, 0.16), backgrounds=("plain", "gradient"),
                         clutter=(0, 3), overlap=False),
    "heldout": SceneConfig(size=SIZE, objects=(3, 5), shapes=SHAPE_WORDS, colors=COLOR_WORDS,
                           textures=("checker", "dots"), radius=(0.09, 0.16), backgrounds=("grating", "fractal"),
                           clutter=(2, 6), overlap=False),
}
SOURCES["val"] = SOURCES["train"]
TEMPLATES: dict[str, dict[str, str]] = {
    "train": {"name": "the {color} {shape}", "shape": "the {shape}", "size": "the {size} {color} {shape}",
              "relation": "the {color} {shape} {rel} the {landmark}"},
    "heldout": {"name": "the {shape} coloured {color}", "shape": "the {shape} in the picture",
                "size": "the {color} {shape}, the {sizer} one", "relation": "the {color} {shape} {relx} the {landmark}"},
}
TEMPLATES["val"] = TEMPLATES["train"]
RELATIONS = {"left": ("left of", "to the left of"), "right": ("right of", "to the right of"),
             "above": ("above", "just above"), "below": ("below", "just below")}
SIZE_WORDS = {"small": "smaller", "big": "larger"}


@dataclass(frozen=True)
class Sample:
    """One scene with its expression. ``image`` uint8 ``[H, W, 3]``; ``mask`` bool ``[H, W]`` (the referent's
    visible pixels); ``text``; ``kind`` (name, shape, size or relation); ``target`` (index into ``objects``)."""

    image: np.ndarray
    mask: np.ndarray
    text: str
    kind: str
    target: int
    objects: tuple


def _relation(a, b) -> str:  # noqa: ANN001 - Instances
    dx, dy = a.cx - b.cx, a.cy - b.cy
    if abs(dx) >= abs(dy):
        return "left" if dx < 0 else "right"
    return "above" if dy < 0 else "below"


def describe(objects: tuple, target: int, rng: np.random.Generator, style: str = "train") -> tuple[str, str]:
    """A unique referring expression for ``objects[target]`` in the ``style`` templates: ``(text, kind)``."""
    tpl = TEMPLATES[style]
    t = objects[target]
    twins = [o for i, o in enumerate(objects) if i != target and o.shape == t.shape and o.color == t.color]
    options: list[tuple[str, str]] = []
    if not twins:
        options.append((tpl["name"].format(color=t.color, shape=t.shape), "name"))
        if sum(o.shape == t.shape for o in objects) == 1:
            options.append((tpl["shape"].format(shape=t.shape), "shape"))
    else:
        radii = [o.radius for o in twins]
        if t.radius >= 1.25 * max(radii) or t.radius * 1.25 <= min(radii):
            size = "big" if t.radius > max(radii) else "small"
            options.append((tpl["size"].format(size=size, sizer=SIZE_WORDS[size], color=t.color, shape=t.shape),
                            "size"))
    for k, land in enumerate(objects):
        if k == target or land.shape == t.shape or sum(o.shape == land.shape for o in objects) != 1:
            continue
        rel = _relation(t, land)
        if any(_relation(o, land) == rel for o in twins):
            continue
        options.append((tpl["relation"].format(color=t.color, shape=t.shape, rel=RELATIONS[rel][0],
                                               relx=RELATIONS[rel][1], landmark=land.shape), "relation"))
    if not options:
        return "", ""
    # a relation when one exists half of the time, so that every kind is frequent
    rels = [o for o in options if o[1] == "relation"]
    pool = rels if rels and rng.random() < 0.5 else options
    return pool[int(rng.integers(len(pool)))]


def make_sample(index: int, source: str = "train") -> Sample:
    """Scene ``index`` of ``source`` (``train``, ``val`` or ``heldout``); the same index and source give the same
    sample. Scenes without a unique description are skipped to the next seed (deterministically)."""
    from ...registry import choose

    source = choose(source, SOURCES, "source")
    cfg = SOURCES[source]
    seed = SEED_BASE[source] + 7919 * int(index)
    for attempt in range(50):
        s = seed + attempt
        layout = sample_layout(s, cfg)
        objects = tuple(layout.objects)
        rng = np.random.default_rng([s, 52])
        if len(objects) < 2:
            continue
        target = int(rng.integers(len(objects)))
        if rng.random() < 0.5:
            j = int(rng.choice([i for i in range(len(objects)) if i != target]))
            objects = tuple(replace(o, shape=objects[target].shape, color=objects[target].color) if i == j else o
                            for i, o in enumerate(objects))
        text, kind = describe(objects, target, rng, "heldout" if source == "heldout" else "train")
        if not text:
            continue
        frame = draw(layout.backdrop, objects, (0.0, 0.0), layout.lighting)
        mask = frame.instances == target + 1
        if mask.sum() < 20:
            continue
        return Sample(frame.image, mask, text, kind, target, objects)
    raise RuntimeError(f"no describable scene near seed {seed}")


def make_samples(start: int, count: int, source: str = "train") -> list[Sample]:
    return [make_sample(i, source) for i in range(start, start + count)]
