"""An egocentric stream and object photos: what self-supervised learning from first-person video needs from the scenes.

A *stream clip* is what a person sees while carrying and handling one object: a backdrop of one background class
(a texture type in a colour tone, with pale clutter) wider than the view, the focal object (one instance of an
object category) held in front of the camera, where it turns, grows or shrinks and drifts while the light changes,
a few smaller distractor objects that stay in the world, and a camera that alternates fixation periods (nearly
still, a little shake) with quick pans to a new point. A pan moves the backdrop and the distractors across the view
(parallax at their depths) but not the held object: over a few frames the object stays and its surroundings change,
the situation in which the paper argues temporal slowness singles out objects. Object categories co-occur with
background classes (category ``c`` appears on its usual background ``c mod B`` with probability ``context``, as a
cup goes with a kitchen), which is what the foreground and background swaps of the probes measure.

A *photo* is one object-centred image (the probes' data): an instance on a backdrop of a given class, with a random
pose and light. Its object and its background come from two random streams of the seed, so the same seed with
another instance is a foreground swap (same pose, same background) and with another background class a background
swap (same object, same pose).

Instances: instance ``k`` of :meth:`EgoConfig.instances` is ``(category, colour, texture)``; within a category the
instances differ in colour and texture, and a colour alone names no instance. Labels of every frame: the focal
instance, its category, the background class, and the instance map (id 1 = the focal object).

Shapes: clip images uint8 ``[T, H, W, 3]``, instance maps int32 ``[T, H, W]``; photos uint8 ``[H, W, 3]``.
Rendering is :func:`backend.scenes.render.draw` (no second renderer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .objects import PALE_FLOOR, PALETTE, SHAPES, TEXTURES, Instance, paint, tint
from .render import BACKGROUNDS, Backdrop, Frame, Lighting, draw, quantize

TONES: dict[str, tuple[int, int, int]] = {"warm": (252, 214, 168), "cool": (168, 206, 252)}
BACKGROUND_CLASSES: tuple[str, ...] = tuple(f"{t} {b}" for b in BACKGROUNDS for t in TONES)  # 8 classes
STREAM_STREAMS = (41, 43, 47)  # second entries of the random streams: clip layout, motion, distractors
PHOTO_STREAMS = (53, 59)  # photo object, photo backdrop


@dataclass(frozen=True)
class EgoConfig:
    """The stream's world. ``size``: frame side in pixels; ``frames`` per clip; ``categories`` (object classes) with
    ``instances_per_category`` instances each; ``context``: the chance that a clip (or photo) shows its category's
    usual background class; ``radius``: the focal object's radius as a fraction of the side (photos use
    ``photo_radius``); ``distractors``: how many smaller other objects; ``clutter``: pale shapes in the backdrop;
    ``fixation`` / ``saccade``: frames per fixation and per pan (inclusive ranges); ``look``: the largest camera
    offset in pixels at depth 1 (the backdrop sits at depth ``background_depth``, so it moves by ``look`` over that); ``spin`` (radians per frame), ``growth`` (relative radius change per frame), ``drift`` (pixels
    per frame) of the focal object; ``light_drift``: the light's relative gain change over a clip."""

    size: int = 64
    frames: int = 24
    categories: tuple[str, ...] = SHAPES[:8]
    instances_per_category: int = 4
    context: float = 0.75
    radius: tuple[float, float] = (0.07, 0.11)
    photo_radius: tuple[float, float] = (0.2, 0.28)
    distractors: tuple[int, int] = (1, 3)
    clutter: tuple[int, int] = (3, 7)
    fixation: tuple[int, int] = (3, 7)
    saccade: tuple[int, int] = (1, 2)
    look: float = 40.0
    spin: float = 0.15
    growth: float = 0.02
    drift: float = 0.4
    light_drift: float = 0.35
    background_depth: float = 2.0

    def __post_init__(self) -> None:
        if not 32 <= self.size <= 512:
            raise ValueError(f"size must be 32 to 512 pixels, got {self.size}")
        if not 2 <= self.frames <= 256:
            raise ValueError(f"frames must be 2 to 256, got {self.frames}")
        bad = [c for c in self.categories if c not in SHAPES]
        if len(self.categories) < 2 or bad:
            raise ValueError(f"categories must be at least two of {', '.join(SHAPES)}; unknown: {bad}")
        if not 1 <= self.instances_per_category <= len(PALETTE):
            raise ValueError(f"instances_per_category must be 1 to {len(PALETTE)}")
        if not 0 <= self.context <= 1:
            raise ValueError(f"context is a probability, got {self.context}")
        for name in ("fixation", "saccade", "distractors", "clutter"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi or (name in ("fixation", "saccade") and lo < 1):
                raise ValueError(f"{name} must be (low, high) with 0 <= low <= high (>= 1 frame), got {(lo, hi)}")

    def instances(self) -> list[tuple[str, str, str]]:
        """The instance table: ``(category, colour, texture)``, instance ``k`` of category ``k // per_category``."""
        colors, textures = list(PALETTE), list(TEXTURES)
        out = []
        for c, cat in enumerate(self.categories):
            for j in range(self.instances_per_category):
                out.append((cat, colors[(3 * c + 7 * j) % len(colors)], textures[(c + 2 * j) % len(textures)]))
        return out

    @property
    def n_instances(self) -> int:
        return len(self.categories) * self.instances_per_category

    def category_of(self, instance: int) -> int:
        return int(instance) // self.instances_per_category

    def usual_background(self, category: int) -> int:
        """The background class category ``category`` is usually seen on."""
        return int(category) % len(BACKGROUND_CLASSES)


def backdrop_image(rng: np.random.Generator, background: int, h: int, w: int, clutter: int) -> np.ndarray:
    """A backdrop of background class ``background`` (index into :data:`BACKGROUND_CLASSES`): its texture type
    blended with its colour tone, plus ``clutter`` pale shapes; every channel stays >= ``PALE_FLOOR``."""
    name = BACKGROUND_CLASSES[int(background)]
    tone_name, kind = name.split(" ", 1)
    tex = BACKGROUNDS[kind](rng, h, w).astype(np.float32)
    canvas = np.clip(0.5 * tex + 0.5 * np.array(TONES[tone_name], np.float32), PALE_FLOOR, 255).astype(np.uint8)
    side = min(h, w)
    for _ in range(int(clutter)):
        shape, color = SHAPES[int(rng.integers(len(SHAPES)))], list(PALETTE)[int(rng.integers(len(PALETTE)))]
        inst = Instance(shape, color, float(rng.uniform(0, w)), float(rng.uniform(0, h)),
                        float(rng.uniform(0.04, 0.08) * side), float(rng.uniform(0, 2 * math.pi)))
        paint(canvas, inst, rgb=tint(color))
    return canvas


def _lighting(rng: np.random.Generator) -> Lighting:
    return Lighting(float(rng.uniform(0.8, 1.1)), tuple(float(t) for t in rng.uniform(0.93, 1.07, 3)),
                    float(rng.uniform(-0.4, 0.4)), float(rng.uniform(0, 2 * math.pi)))


def _instance(cfg: EgoConfig, k: int, cx: float, cy: float, radius: float, angle: float, depth: float) -> Instance:
    cat, color, texture = cfg.instances()[int(k)]
    return Instance(cat, color, quantize(cx), quantize(cy), radius, angle, texture, depth)


@dataclass
class EgoClip:
    """One stream clip: ``images`` uint8 ``[T, H, W, 3]``, ``instances`` int32 ``[T, H, W]`` (1 = the focal
    object, 2.. = distractors), ``camera`` float ``[T, 2]``, ``fixating`` bool ``[T]`` (False during a pan), the
    focal ``instance``, its ``category`` and the ``background`` class."""

    images: np.ndarray
    instances: np.ndarray
    camera: np.ndarray
    fixating: np.ndarray
    instance: int
    category: int
    background: int
    frames: list[Frame] = field(default_factory=list, repr=False)


def _camera(rng: np.random.Generator, cfg: EgoConfig) -> tuple[np.ndarray, np.ndarray]:
    """Fixations (a point plus a little shake) joined by linear pans: offsets ``[T, 2]`` and ``fixating [T]``."""
    pts, fix = [], []
    here = rng.uniform(-cfg.look / 2, cfg.look / 2, 2)
    while len(pts) < cfg.frames:
        for _ in range(int(rng.integers(cfg.fixation[0], cfg.fixation[1] + 1))):
            pts.append(here + rng.normal(0, 0.3, 2))
            fix.append(True)
        there = rng.uniform(-cfg.look, cfg.look, 2)
        n = int(rng.integers(cfg.saccade[0], cfg.saccade[1] + 1))
        for i in range(1, n + 1):
            pts.append(here + (there - here) * i / (n + 1))
            fix.append(False)
        here = there
    cam = np.clip(np.array(pts[:cfg.frames]), -cfg.look, cfg.look)
    return np.round(cam / (1 / 256)) * (1 / 256), np.array(fix[:cfg.frames])


def make_ego_clip(seed: int, config: EgoConfig = EgoConfig(), instance: int | None = None) -> EgoClip:
    """Stream clip ``seed`` (its focal instance drawn from the seed unless given). Deterministic in ``seed``."""
    cfg = config
    rng = np.random.default_rng([int(seed), STREAM_STREAMS[0]])
    k = int(rng.integers(cfg.n_instances)) if instance is None else int(instance)
    cat = cfg.category_of(k)
    n_bg = len(BACKGROUND_CLASSES)
    bg = cfg.usual_background(cat) if rng.random() < cfg.context else int(rng.integers(n_bg))
    s = cfg.size
    margin = math.ceil(cfg.look / cfg.background_depth) + 2
    side = s + 2 * margin
    n_clutter = int(rng.integers(cfg.clutter[0], cfg.clutter[1] + 1) * side * side / (s * s))
    canvas = backdrop_image(rng, bg, side, side, n_clutter)
    backdrop = Backdrop(canvas, margin, cfg.background_depth)
    light = _lighting(rng)
    mot = np.random.default_rng([int(seed), STREAM_STREAMS[1]])
    cam, fixating = _camera(mot, cfg)
    r0 = float(rng.uniform(*cfg.radius)) * s
    depth = float(rng.uniform(0.8, 1.1))
    cx, cy = rng.uniform(0.35 * s, 0.65 * s, 2)
    ang0, spin = float(rng.uniform(0, 2 * math.pi)), float(rng.uniform(-cfg.spin, cfg.spin))
    growth = float(rng.uniform(-cfg.growth, cfg.growth))
    vel = rng.uniform(-cfg.drift, cfg.drift, 2)
    drift = float(rng.uniform(-cfg.light_drift, cfg.light_drift))
    dis = np.random.default_rng([int(seed), STREAM_STREAMS[2]])
    others = []
    for _ in range(int(dis.integers(cfg.distractors[0], cfg.distractors[1] + 1))):
        j = int(dis.integers(cfg.n_instances))
        depth_j = float(dis.uniform(1.2, 1.9))
        reach = cfg.look / depth_j  # spread over the part of the world the camera can see
        others.append((_instance(cfg, j, dis.uniform(-reach, s + reach), dis.uniform(-reach, s + reach),
                                 float(dis.uniform(0.04, 0.07)) * s, float(dis.uniform(0, 2 * math.pi)), depth_j),
                       dis.uniform(-0.5, 0.5, 2)))
    frames = []
    for t in range(cfg.frames):
        px = float(np.clip(cx + t * vel[0], 0.2 * s, 0.8 * s))
        py = float(np.clip(cy + t * vel[1], 0.2 * s, 0.8 * s))
        rad = float(np.clip(r0 * (1 + growth) ** t, 0.05 * s, 0.14 * s))
        # held: the object moves with the camera (its world position follows the offset), so it keeps its place
        focal = _instance(cfg, k, px + cam[t, 0] / depth, py + cam[t, 1] / depth, rad, ang0 + t * spin, depth)
        objs = [focal] + [replace(o, cx=quantize(o.cx + t * v[0]), cy=quantize(o.cy + t * v[1])) for o, v in others]
        lt = replace(light, gain=light.gain * (1 + drift * t / max(cfg.frames - 1, 1)))
        frames.append(draw(backdrop, objs, (float(cam[t, 0]), float(cam[t, 1])), lt))
    return EgoClip(np.stack([f.image for f in frames]), np.stack([f.instances for f in frames]), cam, fixating, k,
                   cat, bg, frames)


def make_stream(seeds, config: EgoConfig = EgoConfig()) -> list[EgoClip]:  # noqa: ANN001 - any int iterable
    """:func:`make_ego_clip` for each seed; clip ``i`` shows instance ``seeds[i] mod n_instances`` (every instance
    equally often over consecutive seeds)."""
    return [make_ego_clip(int(s), config, int(s) % config.n_instances) for s in seeds]


@dataclass(frozen=True)
class Photo:
    """An object-centred photo: ``image`` uint8 ``[H, W, 3]``, ``mask`` bool ``[H, W]`` (the object's visible
    pixels), its ``instance``, ``category`` and ``background`` class."""

    image: np.ndarray
    mask: np.ndarray
    instance: int
    category: int
    background: int


def photo_labels(seed: int, config: EgoConfig = EgoConfig(), instance: int | None = None) -> tuple[int, int]:
    """``(instance, background)`` that photo ``seed`` shows when neither is given: the instance from the seed, the
    background its category's usual one with probability ``context``."""
    rng = np.random.default_rng([int(seed), PHOTO_STREAMS[0]])
    k = int(rng.integers(config.n_instances)) if instance is None else int(instance)
    pick = np.random.default_rng([int(seed), PHOTO_STREAMS[1] + 1])
    usual = config.usual_background(config.category_of(k))
    bg = usual if pick.random() < config.context else int(pick.integers(len(BACKGROUND_CLASSES)))
    return k, bg


def make_photo(seed: int, config: EgoConfig = EgoConfig(), instance: int | None = None,
               background: int | None = None) -> Photo:
    """Photo ``seed``: the object's pose and light come from one random stream of the seed and the backdrop from
    another, so changing ``instance`` swaps the foreground and changing ``background`` swaps the background while
    everything else stays."""
    k0, bg0 = photo_labels(seed, config, instance)
    k = k0 if instance is None else int(instance)
    bg = bg0 if background is None else int(background)
    s = config.size
    obj = np.random.default_rng([int(seed), PHOTO_STREAMS[0], 1])
    radius = float(obj.uniform(*config.photo_radius)) * s
    cx, cy = s / 2 + obj.uniform(-0.06, 0.06, 2) * s
    inst = _instance(config, k, cx, cy, radius, float(obj.uniform(0, 2 * math.pi)), 1.0)
    light = _lighting(obj)
    back = np.random.default_rng([int(seed), PHOTO_STREAMS[1]])
    canvas = backdrop_image(back, bg, s, s, int(back.integers(config.clutter[0], config.clutter[1] + 1)))
    f = draw(Backdrop(canvas, 0, 8.0), [inst], (0.0, 0.0), light)
    return Photo(f.image, f.instances == 1, k, config.category_of(k), bg)
