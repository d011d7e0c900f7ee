"""Random scenes and clips: a :class:`SceneConfig` says what may appear, a seed says what does.

:func:`sample_layout` draws a backdrop (one of :data:`~backend.scenes.render.BACKGROUNDS`, with pale clutter), the
objects (class, colour, texture, size, pose, depth) and a lighting; :func:`make_scene` renders it. :func:`make_clip`
moves the objects (velocity, spin, growth), the camera (a pan with optional shake, or a given path) and the light
over ``Motion.frames`` frames. Each uses its own random stream of the seed (``default_rng([seed, k])``), so the
same seed and config give the same arrays on every machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .objects import PALE_FLOOR, PALETTE, SHAPES, TEXTURES, Instance, paint, tint
from .render import BACKGROUND_DEPTH, BACKGROUNDS, QUANTUM, Backdrop, Frame, Lighting, draw, quantize

LAYOUT_STREAM, MOTION_STREAM = 23, 29  # the second entries of the seeds' random streams


def _range(name: str, r: tuple[float, float], low: float, high: float | None = None) -> None:
    if len(r) != 2 or not low <= r[0] <= r[1] or (high is not None and r[1] > high):
        top = "" if high is None else f" and <= {high}"
        raise ValueError(f"{name} must be (low, high) with {low} <= low <= high{top}, got {r}")


def _subset(name: str, chosen: tuple[str, ...], valid: tuple[str, ...]) -> None:
    bad = [c for c in chosen if c not in valid]
    if not chosen or bad:
        raise ValueError(f"{name} must name at least one of {', '.join(valid)}; unknown: {', '.join(bad) or 'none'}")


@dataclass(frozen=True)
class SceneConfig:
    """What a scene may hold. ``size``: side in pixels, or ``(height, width)``; counts are inclusive ranges;
    ``radius`` as fractions of the short side; ``depth`` of the objects (the backdrop sits at
    ``background_depth``); ``lighting``: draw a random light change (gain 0.75-1.15, tint 0.92-1.08, slope
    -0.5-0.5); ``translucent``: the chance that an object is see-through (opacity 0.5-0.8); ``overlap``: False
    places objects apart (up to 50 tries each; an object that finds no room is left out)."""

    size: int | tuple[int, int] = 128
    objects: tuple[int, int] = (2, 5)
    shapes: tuple[str, ...] = SHAPES
    colors: tuple[str, ...] = tuple(PALETTE)
    textures: tuple[str, ...] = tuple(TEXTURES)
    radius: tuple[float, float] = (0.08, 0.18)
    depth: tuple[float, float] = (1.0, 3.0)
    rotate: bool = True
    backgrounds: tuple[str, ...] = tuple(BACKGROUNDS)
    clutter: tuple[int, int] = (0, 6)
    background_depth: float = BACKGROUND_DEPTH
    lighting: bool = True
    translucent: float = 0.0
    overlap: bool = True

    def __post_init__(self) -> None:
        h, w = self.shape
        if not (16 <= min(h, w) and max(h, w) <= 4096):
            raise ValueError(f"size must be 16 to 4096 pixels a side, got {self.size}")
        _range("objects", self.objects, 0, 32)
        _range("clutter", self.clutter, 0, 64)
        _range("radius", self.radius, 0.01, 0.5)
        _range("depth", self.depth, 0.1)
        _subset("shapes", self.shapes, SHAPES)
        _subset("colors", self.colors, tuple(PALETTE))
        _subset("textures", self.textures, tuple(TEXTURES))
        _subset("backgrounds", self.backgrounds, tuple(BACKGROUNDS))
        if self.background_depth < self.depth[1]:
            raise ValueError(f"background_depth ({self.background_depth}) must be behind every object "
                             f"(>= depth high, {self.depth[1]})")
        if not 0 <= self.translucent <= 1:
            raise ValueError(f"translucent must be a probability in [0, 1], got {self.translucent}")

    @property
    def shape(self) -> tuple[int, int]:
        """``(height, width)`` in pixels."""
        return (int(self.size), int(self.size)) if isinstance(self.size, int) else (int(self.size[0]),
                                                                                     int(self.size[1]))


@dataclass(frozen=True)
class Layout:
    """A scene before rendering: the backdrop, the objects (positions at camera offset 0) and the lighting."""

    backdrop: Backdrop
    objects: tuple[Instance, ...]
    lighting: Lighting | None = None

    def render(self, camera: tuple[float, float] = (0.0, 0.0)) -> Frame:
        return draw(self.backdrop, self.objects, camera, self.lighting)


def _pick(rng: np.random.Generator, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def _backdrop(rng: np.random.Generator, cfg: SceneConfig, margin: int) -> Backdrop:
    h, w = cfg.shape
    hh, ww = h + 2 * margin, w + 2 * margin
    canvas = BACKGROUNDS[_pick(rng, cfg.backgrounds)](rng, hh, ww)
    np.maximum(canvas, PALE_FLOOR, out=canvas)
    side = min(h, w)
    for _ in range(int(rng.integers(cfg.clutter[0], cfg.clutter[1] + 1))):
        shape, color = _pick(rng, SHAPES), _pick(rng, tuple(PALETTE))
        radius = float(rng.uniform(0.03, 0.07) * side)
        cx, cy = float(rng.uniform(0, ww)), float(rng.uniform(0, hh))
        angle = float(rng.uniform(0, 2 * math.pi))
        paint(canvas, Instance(shape, color, cx, cy, radius, angle), rgb=tint(color))
    return Backdrop(canvas, margin, cfg.background_depth)


def _apart(o: Instance, placed: list[Instance]) -> bool:
    return all(math.hypot(o.cx - p.cx, o.cy - p.cy) > o.extent + p.extent for p in placed)


def _objects(rng: np.random.Generator, cfg: SceneConfig) -> tuple[Instance, ...]:
    h, w = cfg.shape
    side = min(h, w)
    out: list[Instance] = []
    for _ in range(int(rng.integers(cfg.objects[0], cfg.objects[1] + 1))):
        shape, color, texture = _pick(rng, cfg.shapes), _pick(rng, cfg.colors), _pick(rng, cfg.textures)
        radius = float(rng.uniform(*cfg.radius) * side)
        angle = float(rng.uniform(0, 2 * math.pi)) if cfg.rotate else 0.0
        depth = float(rng.uniform(*cfg.depth))
        opacity = float(rng.uniform(0.5, 0.8)) if rng.random() < cfg.translucent else 1.0
        for _try in range(1 if cfg.overlap else 50):
            mx, my = min(radius, w / 2), min(radius, h / 2)  # keep the centre far enough inside the frame
            cx, cy = quantize(rng.uniform(mx, w - mx)), quantize(rng.uniform(my, h - my))
            o = Instance(shape, color, cx, cy, radius, angle, texture, depth, opacity)
            if cfg.overlap or _apart(o, out):
                out.append(o)
                break
    return tuple(out)


def _lighting(rng: np.random.Generator, cfg: SceneConfig) -> Lighting | None:
    if not cfg.lighting:
        return None
    return Lighting(float(rng.uniform(0.75, 1.15)), tuple(float(t) for t in rng.uniform(0.92, 1.08, 3)),
                    float(rng.uniform(-0.5, 0.5)), float(rng.uniform(0, 2 * math.pi)))


def sample_layout(seed: int, config: SceneConfig = SceneConfig(), margin: int = 0) -> Layout:
    """The layout of scene ``seed``: backdrop (``margin`` extra pixels on every side for camera moves), objects
    and lighting, in that order from the stream ``default_rng([seed, 23])``."""
    rng = np.random.default_rng([int(seed), LAYOUT_STREAM])
    backdrop = _backdrop(rng, config, int(margin))
    objects = _objects(rng, config)
    return Layout(backdrop, objects, _lighting(rng, config))


def make_scene(seed: int, config: SceneConfig = SceneConfig()) -> Frame:
    """Scene ``seed`` rendered: a :class:`~backend.scenes.render.Frame` (image, instances, depth, objects)."""
    return sample_layout(seed, config).render()


def make_scenes(seeds, config: SceneConfig = SceneConfig()) -> list[Frame]:  # noqa: ANN001 - any int iterable
    """:func:`make_scene` for each seed."""
    return [make_scene(int(s), config) for s in seeds]


def stack(frames: list[Frame]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(images uint8 [B, H, W, 3], instances int32 [B, H, W], depth float32 [B, H, W])`` of same-size frames."""
    return (np.stack([f.image for f in frames]), np.stack([f.instances for f in frames]),
            np.stack([f.depth for f in frames]))


# -------------------------------------------------------------------------------------------------------- clips
@dataclass(frozen=True)
class Motion:
    """How a clip moves. Each object draws a velocity of up to ``speed`` pixels per frame, a spin of up to ``spin``
    radians per frame and a growth of up to ``growth`` (relative radius change) per frame; the camera pans at
    ``camera_speed`` pixels per frame (at depth 1) in a random direction, plus a random walk of ``shake`` pixels
    per frame, unless ``camera_path`` gives its offset ``(x, y)`` for every frame; the light's gain drifts by up to
    ``light_drift`` (relative) over the clip."""

    frames: int = 8
    speed: float = 1.5
    spin: float = 0.05
    growth: float = 0.0
    camera_speed: float = 2.0
    shake: float = 0.0
    camera_path: tuple[tuple[float, float], ...] | None = None
    light_drift: float = 0.15

    def __post_init__(self) -> None:
        if not 1 <= self.frames <= 1024:
            raise ValueError(f"frames must be 1 to 1024, got {self.frames}")
        if min(self.speed, self.spin, self.growth, self.camera_speed, self.shake, self.light_drift) < 0:
            raise ValueError("speed, spin, growth, camera_speed, shake and light_drift must be >= 0")
        if self.camera_path is not None and len(self.camera_path) != self.frames:
            raise ValueError(f"camera_path needs one (x, y) per frame ({self.frames}), got {len(self.camera_path)}")


@dataclass
class Clip:
    """A rendered clip: ``frames`` (one :class:`~backend.scenes.render.Frame` each; object ``k`` keeps id ``k + 1``
    in every frame), ``camera`` float ``[T, 2]`` (offsets), ``velocity`` float ``[N, 2]`` (pixels per frame) of the
    ``N`` objects, and the ``layout`` they move in."""

    frames: list[Frame]
    camera: np.ndarray
    velocity: np.ndarray
    layout: Layout

    @property
    def images(self) -> np.ndarray:
        """uint8 ``[T, H, W, 3]``."""
        return np.stack([f.image for f in self.frames])

    @property
    def instances(self) -> np.ndarray:
        """int32 ``[T, H, W]``."""
        return np.stack([f.instances for f in self.frames])

    @property
    def depth(self) -> np.ndarray:
        """float32 ``[T, H, W]``."""
        return np.stack([f.depth for f in self.frames])

    @property
    def centres(self) -> np.ndarray:
        """Each object's centre in each frame, ``(x, y)`` pixels: float ``[T, N, 2]`` (the forecasting target)."""
        n = len(self.layout.objects)
        return np.array([[(o.cx, o.cy) for o in f.objects] for f in self.frames]).reshape(len(self.frames), n, 2)

    @property
    def visible(self) -> np.ndarray:
        """bool ``[T, N]``: the object shows at least one pixel in the frame."""
        n = len(self.layout.objects)
        return np.stack([np.bincount(f.instances.ravel(), minlength=n + 1)[1:] > 0 for f in self.frames])


def _quantized(a: np.ndarray) -> np.ndarray:
    """:func:`~backend.scenes.render.quantize` of every element (the same half-to-even rounding)."""
    return np.round(np.asarray(a, dtype=np.float64) / QUANTUM) * QUANTUM


def _camera_path(rng: np.random.Generator, motion: Motion) -> np.ndarray:
    if motion.camera_path is not None:
        return np.array([(quantize(x), quantize(y)) for x, y in motion.camera_path], dtype=np.float64)
    ang = rng.uniform(0, 2 * math.pi)
    t = np.arange(motion.frames, dtype=np.float64)[:, None]
    pan = t * motion.camera_speed * np.array([math.cos(ang), math.sin(ang)])
    walk = np.cumsum(rng.normal(0, motion.shake, size=(motion.frames, 2)), axis=0) if motion.shake else 0.0
    return _quantized(pan + walk - (walk[0] if motion.shake else 0.0))


def make_clip(seed: int, config: SceneConfig = SceneConfig(), motion: Motion = Motion()) -> Clip:
    """Clip ``seed``: a scene of ``config`` moving as ``motion`` says (objects, camera, light), rendered frame by
    frame. The camera path and the object motions come from the stream ``default_rng([seed, 29])``; the backdrop is
    drawn wide enough for the whole pan, so the first frame is a scene of ``config`` but not ``make_scene(seed)``."""
    rng = np.random.default_rng([int(seed), MOTION_STREAM])
    cam = _camera_path(rng, motion)
    margin = math.ceil(float(np.abs(cam).max(initial=0.0)) / config.background_depth) + 1
    layout = sample_layout(seed, config, margin)
    n = len(layout.objects)
    ang = rng.uniform(0, 2 * math.pi, n)
    speed = rng.uniform(0, motion.speed, n)
    vel = np.stack([speed * np.cos(ang), speed * np.sin(ang)], 1)
    vel = _quantized(vel)
    spin = rng.uniform(-motion.spin, motion.spin, n)
    growth = rng.uniform(-motion.growth, motion.growth, n)
    drift = float(rng.uniform(-motion.light_drift, motion.light_drift))
    frames = []
    for t in range(motion.frames):
        objs = [replace(o, cx=quantize(o.cx + t * vel[i, 0]), cy=quantize(o.cy + t * vel[i, 1]),
                        angle=o.angle + t * float(spin[i]), radius=o.radius * (1 + float(growth[i])) ** t)
                for i, o in enumerate(layout.objects)]
        light = layout.lighting
        if light is not None and motion.frames > 1:
            light = replace(light, gain=light.gain * (1 + drift * t / (motion.frames - 1)))
        frames.append(draw(layout.backdrop, objs, (float(cam[t, 0]), float(cam[t, 1])), light))
    return Clip(frames, cam, vel, layout)
