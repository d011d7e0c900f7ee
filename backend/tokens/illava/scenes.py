"""Procedural scenes with questions and one-word answers, the data of the tiny vision-language model of ``illava``.

Design (our miniature, not from the paper): a pale, slightly noisy background with 1-4 flat shapes (circle, square,
triangle) in four colours (red, green, blue, yellow). Each object sits in its own quadrant of the canvas (with a random
offset inside it), so "left/right" and "top/bottom" answers are never ambiguous. Most of the canvas is background: the
redundancy that token merging is meant to exploit.

This module is the question/answer layer: which objects a scene holds (the quadrant layout and its random draws) and
what is asked about them. The pixels come from the shared scene package :mod:`backend.scenes` (its ``plain``
background, its shapes and its renderer, with every object flat, unrotated and at one depth, painted in list
order); ``tests/backend/test_scenes.py`` pins the images of the seeds the claims and the shipped evaluation use.

Every answer is one word that SmolLM2's tokenizer encodes as a single token after a space (" red", " circle", " three",
" left", " yes", ...). A question has a *closed answer set* (its type's candidates) and is scored by the language
model's log-likelihood of each candidate at the answer position, so "chance" is ``1 / len(candidates)`` for each
question.

Question types (one short template each, see :data:`TEMPLATES`): colour of a shape that is unique in the scene, shape
of a colour that is unique, number of objects, left/right and top/bottom of an object, and whether a colour-shape pair
is present. ``make_scene(seed)`` is deterministic; training uses seeds from :data:`TRAIN_SEED0`, held-out evaluation
from :data:`HELDOUT_SEED0` (disjoint ranges).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from backend.registry import choose
from backend.scenes.objects import PALETTE, Instance, object_mask
from backend.scenes.render import Backdrop, Frame, draw, plain

COLORS: dict[str, tuple[int, int, int]] = {c: PALETTE[c] for c in ("red", "green", "blue", "yellow")}
SHAPES: tuple[str, ...] = ("circle", "square", "triangle")
COUNTS: tuple[str, ...] = ("one", "two", "three", "four")

# question type -> (template, candidates). Templates take {color} and {shape}.
TEMPLATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "color": ("What color is the {shape}?", tuple(COLORS)),
    "shape": ("What shape is the {color} object?", SHAPES),
    "count": ("How many objects are there?", COUNTS),
    "horizontal": ("Is the {color} {shape} on the left or right?", ("left", "right")),
    "vertical": ("Is the {color} {shape} at the top or bottom?", ("top", "bottom")),
    "exists": ("Is there a {color} {shape}?", ("yes", "no")),
}
QUESTION_TYPES: tuple[str, ...] = tuple(TEMPLATES)
ALL_ANSWERS: tuple[str, ...] = tuple(dict.fromkeys(a for _, c in TEMPLATES.values() for a in c))

TRAIN_SEED0 = 0
HELDOUT_SEED0 = 1_000_000
SIZE = 224
RADIUS_RANGE = (0.09, 0.13)  # object radius as a fraction of the image side (held-out scenes always use this)
EQUAL_AREA_SPREAD = 0.25  # equal-area training scenes: each object's radius varies by up to exp(+-0.25) around its share
EQUAL_AREA_CLIP = (0.04, 0.2)  # and is kept within these fractions of the side
OBJECT_COVERAGE = 0.25  # a patch "shows an object" when an object covers at least a quarter of it
INTERIOR_COVERAGE = 0.999  # an object patch is "interior" when fully covered, otherwise an "edge" patch


@dataclass(frozen=True)
class SceneObject:
    color: str
    shape: str
    cx: float  # centre, pixels
    cy: float
    radius: float
    quadrant: int  # 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right

    @property
    def horizontal(self) -> str:
        return "left" if self.quadrant in (0, 2) else "right"

    @property
    def vertical(self) -> str:
        return "top" if self.quadrant in (0, 1) else "bottom"

    def instance(self) -> Instance:
        """This object in the shared scene package: flat, unrotated, at depth 1."""
        return Instance(self.shape, self.color, self.cx, self.cy, self.radius)


@dataclass(frozen=True)
class Question:
    """One question: its type, text, the correct answer and the closed candidate set (answer included)."""

    kind: str
    text: str
    answer: str
    candidates: tuple[str, ...]

    @property
    def chance(self) -> float:
        return 1.0 / len(self.candidates)

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "text": self.text, "answer": self.answer, "candidates": list(self.candidates)}


@dataclass
class Scene:
    """A rendered scene: ``image`` uint8 ``[size, size, 3]``, its objects and its questions (one per type)."""

    seed: int
    image: np.ndarray
    objects: list[SceneObject]
    questions: list[Question] = field(default_factory=list)

    def pil(self):  # noqa: ANN201 - PIL.Image.Image
        from PIL import Image

        return Image.fromarray(self.image)

    def frame(self) -> Frame:
        """The scene rendered with its instance ids and depth (:class:`backend.scenes.Frame`; the same image)."""
        return _render(self.seed, self.image.shape[0], self.objects)


def object_pixels(obj: SceneObject, h: int, w: int) -> np.ndarray:
    """Boolean ``[h, w]`` mask of every pixel of one object."""
    return object_mask(obj.instance(), h, w)


def _render(seed: int, size: int, objs: list[SceneObject]) -> Frame:
    """The background of scene ``seed`` (the first draws of its stream) with ``objs`` painted in list order."""
    rng = np.random.default_rng([int(seed), 7])
    return draw(Backdrop(plain(rng, size, size, 200, 245, 4.0)), [o.instance() for o in objs])


def _objects(rng: np.random.Generator, size: int,
             radius_range: tuple[float, float] = RADIUS_RANGE,
             area_rng: np.random.Generator | None = None,
             area_range: tuple[float, float] | None = None) -> list[SceneObject]:
    k = int(rng.integers(1, 5))
    quads = rng.permutation(4)[:k]
    pairs = [(c, s) for c in COLORS for s in SHAPES]
    chosen = rng.permutation(len(pairs))[:k]
    radii = None if area_range is None else equal_area_radii(area_rng, k, area_range)
    half = size / 2
    out = []
    for j, (q, p) in enumerate(zip(quads, chosen, strict=True)):
        radius = float(rng.uniform(*radius_range) * size)  # drawn in every mode: the later draws stay the same
        if radii is not None:
            radius = float(radii[j] * size)
        margin = radius + 0.02 * size
        x0 = (q % 2) * half
        y0 = (q // 2) * half
        cx = float(rng.uniform(x0 + margin, x0 + half - margin))
        cy = float(rng.uniform(y0 + margin, y0 + half - margin))
        color, shape = pairs[int(p)]
        out.append(SceneObject(color, shape, cx, cy, radius, int(q)))
    return out


def equal_area_radii(rng: np.random.Generator, k: int, area_range: tuple[float, float]) -> np.ndarray:
    """Radii (fractions of the side) of ``k`` objects whose total area does not depend on ``k``: the radius ``R`` of
    one object with the same total area (``sqrt(sum r_i^2)``) is drawn uniformly in ``area_range`` whatever ``k`` is,
    and split over the ``k`` objects with random shares (each radius varies by up to ``exp(+-EQUAL_AREA_SPREAD)``
    around ``R / sqrt(k)``), then clipped to :data:`EQUAL_AREA_CLIP` (so four objects are each about half as wide as
    one). Training scenes only (``--equal-area``): in them the object area carries no information about the count."""
    big = float(rng.uniform(*area_range))
    w = np.exp(2 * rng.uniform(-EQUAL_AREA_SPREAD, EQUAL_AREA_SPREAD, size=k))
    r = big * np.sqrt(w / w.sum())
    return np.clip(r, *EQUAL_AREA_CLIP)


def _question_pool(objs: list[SceneObject]) -> dict[str, list[Question]]:
    """Every question the templates can ask about ``objs``, per type, in a fixed order: the colour of each unique
    shape, the shape of each unique colour, the count, left/right and top/bottom of every object (in ``objs`` order),
    and "is there" for every present object ("yes"); absent pairs are :func:`_absent_pairs`."""
    by_shape = {s: [o for o in objs if o.shape == s] for s in SHAPES}
    by_color = {c: [o for o in objs if o.color == c] for c in COLORS}
    pool: dict[str, list[Question]] = {k: [] for k in TEMPLATES}
    for s, v in by_shape.items():
        if len(v) == 1:
            pool["color"].append(Question("color", TEMPLATES["color"][0].format(shape=s), v[0].color,
                                          TEMPLATES["color"][1]))
    for c, v in by_color.items():
        if len(v) == 1:
            pool["shape"].append(Question("shape", TEMPLATES["shape"][0].format(color=c), v[0].shape,
                                          TEMPLATES["shape"][1]))
    pool["count"].append(Question("count", TEMPLATES["count"][0], COUNTS[len(objs) - 1], TEMPLATES["count"][1]))
    for o in objs:
        for kind in ("horizontal", "vertical"):
            t, cands = TEMPLATES[kind]
            pool[kind].append(Question(kind, t.format(color=o.color, shape=o.shape), getattr(o, kind), cands))
        pool["exists"].append(_exists(o.color, o.shape, "yes"))
    return pool


def _absent_pairs(objs: list[SceneObject]) -> list[tuple[str, str]]:
    present = {(o.color, o.shape) for o in objs}
    return [(c, s) for c in COLORS for s in SHAPES if (c, s) not in present]


def _exists(color: str, shape: str, answer: str) -> Question:
    return Question("exists", TEMPLATES["exists"][0].format(color=color, shape=shape), answer, TEMPLATES["exists"][1])


def _questions(rng: np.random.Generator, objs: list[SceneObject]) -> list[Question]:
    """The evaluation questions of a scene: one of each type that applies, drawn by ``rng``."""
    pool = _question_pool(objs)
    qs: list[Question] = []
    for kind in ("color", "shape"):
        if pool[kind]:
            qs.append(pool[kind][int(rng.integers(len(pool[kind])))])
    qs += pool["count"]
    for kind in ("horizontal", "vertical"):
        qs.append(pool[kind][int(rng.integers(len(objs)))])
    if rng.random() < 0.5:
        qs.append(pool["exists"][int(rng.integers(len(objs)))])
    else:
        absent = _absent_pairs(objs)
        qs.append(_exists(*absent[int(rng.integers(len(absent)))], "no"))
    return qs


def patch_coverage(scene: Scene, patch: int = 14) -> np.ndarray:
    """Share of each encoder patch covered by the scene's objects (the largest share of any one object), row-major
    over the ``(size // patch)^2`` patch grid: ``[grid * grid]`` floats in [0, 1]."""
    size = scene.image.shape[0]
    grid = size // patch
    cov = np.zeros(grid * grid)
    for o in scene.objects:
        m = object_pixels(o, size, size)[: grid * patch, : grid * patch]
        cov = np.maximum(cov, m.reshape(grid, patch, grid, patch).mean((1, 3)).reshape(-1))
    return cov


def make_scene(seed: int, size: int = SIZE, radius_range: tuple[float, float] = RADIUS_RANGE,
               area_range: tuple[float, float] | None = None) -> Scene:
    """Render scene ``seed`` (deterministic) at ``size`` x ``size`` pixels with its questions (one per type that
    applies: 4 to 6 questions). ``radius_range``: object radii drawn uniformly in this fraction of the side (at most
    0.2, so an object fits its quadrant); only the radii change with it, every other draw is the same.
    ``area_range`` (training only): radii from :func:`equal_area_radii` instead (a separate random stream, so again
    only the radii change): the total object area is independent of the count."""
    if not 0 < radius_range[0] <= radius_range[1] <= 0.2:
        raise ValueError(f"radius_range must satisfy 0 < low <= high <= 0.2, got {radius_range}")
    if area_range is not None and not 0 < area_range[0] <= area_range[1] <= 0.2:
        raise ValueError(f"area_range must satisfy 0 < low <= high <= 0.2, got {area_range}")
    rng = np.random.default_rng([int(seed), 7])
    canvas = plain(rng, size, size, 200, 245, 4.0)  # the background's draws come first in the stream
    area_rng = None if area_range is None else np.random.default_rng([int(seed), 11])
    objs = _objects(rng, size, radius_range, area_rng, area_range)
    image = draw(Backdrop(canvas), [o.instance() for o in objs]).image
    return Scene(seed=int(seed), image=image, objects=objs, questions=_questions(rng, objs))


def with_object_scale(scene: Scene, factor: float) -> Scene:
    """The same scene (same background, objects, centres and questions) with every object's radius multiplied by
    ``factor``: a control for what a model reads from object size. Objects may overlap or cross quadrant borders at
    large factors, so only the counting and colour/shape questions stay exactly valid."""
    objs = [replace(o, radius=o.radius * float(factor)) for o in scene.objects]
    image = _render(scene.seed, scene.image.shape[0], objs).image
    return Scene(seed=scene.seed, image=image, objects=objs, questions=list(scene.questions))


def scenes(n: int, split: str = "heldout", start: int = 0, size: int = SIZE,
           radius_range: tuple[float, float] = RADIUS_RANGE,
           area_range: tuple[float, float] | None = None) -> list[Scene]:
    """``n`` scenes of ``split`` ("train" or "heldout"), seeds ``SEED0 + start ...``; ``radius_range`` and
    ``area_range`` as in :func:`make_scene` (training only: the held-out evaluation keeps the default)."""
    split = choose(split, ("train", "heldout"), "split")
    seed0 = (TRAIN_SEED0 if split == "train" else HELDOUT_SEED0) + int(start)
    return [make_scene(seed0 + i, size, radius_range, area_range) for i in range(int(n))]


def question_for(kind: str, color: str | None = None, shape: str | None = None) -> str:
    """The template text of ``kind`` filled with ``color``/``shape`` (for the page's question picker)."""
    kind = choose(kind, TEMPLATES, "question type")
    return TEMPLATES[kind][0].format(color=color or "red", shape=shape or "circle")


def candidates_for(question: str) -> tuple[str, ...]:
    """The closed answer set of a free-form question: the candidates of the template it matches best (by the type's
    keywords), else every answer word. Lets users type their own questions on the page."""
    q = question.lower()
    if "how many" in q:
        return TEMPLATES["count"][1]
    if "left" in q or "right" in q:
        return TEMPLATES["horizontal"][1]
    if "top" in q or "bottom" in q:
        return TEMPLATES["vertical"][1]
    if "color" in q or "colour" in q:
        return TEMPLATES["color"][1]
    if "shape" in q:
        return TEMPLATES["shape"][1]
    if q.startswith(("is ", "are ", "does ", "do ")):
        return TEMPLATES["exists"][1]
    return ALL_ANSWERS


def training_questions(scene: Scene, rng: np.random.Generator, limit: int = 12) -> list[Question]:
    """Every question the templates can ask about ``scene`` (used for training, not for evaluation): the colour of
    each unique shape, the shape of each unique colour, the count, left/right and top/bottom of every object, and
    "is there" for every present pair plus as many absent ones. At most ``limit`` of them, drawn at random (without
    replacement, by ``rng``) so that each type keeps at least one question where it applies."""
    objs = scene.objects
    pool = _question_pool(objs)
    absent = _absent_pairs(objs)
    for j in rng.permutation(len(absent))[: len(objs)]:
        pool["exists"].append(_exists(*absent[int(j)], "no"))
    first, rest = [], []
    for kind in TEMPLATES:
        qs = [pool[kind][int(j)] for j in rng.permutation(len(pool[kind]))]
        first += qs[:1]
        rest += qs[1:]
    rest = [rest[int(j)] for j in rng.permutation(len(rest))]
    return (first + rest)[: max(1, int(limit))]
