"""The things a scene is made of: the palette, the object classes (shapes), their textures, and one placed object.

An object is a flat shape with a colour and a texture, placed at a centre with a radius, an in-plane rotation (its
pose), a depth and an opacity (:class:`Instance`). Its pixels are found by :func:`object_mask` on the pixel grid of
a bounding box only, in float32 local coordinates ``(u, v)`` (the offset from the centre, rotated by the object's
angle), so an object costs time in proportion to its area, not to the image's.

Shapes and textures are plain tables of functions (:data:`SHAPE_MASKS`, :data:`TEXTURES`): a new object class is one
more entry. Every palette colour has a channel at or below :data:`PALETTE_MAX_LOW`, and every background of
:mod:`backend.scenes.render` keeps all channels at or above :data:`PALE_FLOOR`, so an opaque object always differs
from the background behind it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# name -> RGB. Saturated or dark: each has a channel <= PALETTE_MAX_LOW.
PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (214, 39, 40),
    "green": (44, 160, 44),
    "blue": (31, 90, 220),
    "yellow": (235, 200, 20),
    "orange": (245, 130, 20),
    "purple": (140, 60, 180),
    "cyan": (20, 170, 200),
    "magenta": (210, 40, 160),
    "brown": (140, 85, 35),
    "black": (35, 35, 35),
}
PALETTE_MAX_LOW = 60  # every palette colour (and its shade) has a channel at or below this
PALE_FLOOR = 150  # every background pixel has all channels at or above this
SHADE = 0.55  # a texture's second colour: the object's colour times this


def tint(color: str, white: float = 0.6) -> tuple[int, int, int]:
    """A pale tint of ``color`` (mixed with white by ``white``): the colour of background clutter."""
    return tuple(int(round(c * (1 - white) + 255 * white)) for c in PALETTE[color])


@dataclass(frozen=True)
class Instance:
    """One object of a scene, in pixels of the frame (``cx`` to the right, ``cy`` down, from the top-left corner).

    ``radius``: half the object's size; ``angle``: in-plane rotation in radians (clockwise on screen);
    ``depth``: distance from the camera in units of the reference plane (1 = the plane that moves with the camera
    one pixel per pixel; larger is farther); ``texture``: a key of :data:`TEXTURES`; ``opacity`` in (0, 1]."""

    shape: str
    color: str
    cx: float
    cy: float
    radius: float
    angle: float = 0.0
    texture: str = "flat"
    depth: float = 1.0
    opacity: float = 1.0

    @property
    def label(self) -> str:
        """``"red striped star"``: colour, texture (unless flat) and class."""
        tex = "" if self.texture == "flat" else f"{TEXTURE_WORDS[self.texture]} "
        return f"{self.color} {tex}{self.shape}"

    @property
    def extent(self) -> float:
        """A radius around the centre that contains every pixel of the object, whatever its rotation."""
        return EXTENT * self.radius


EXTENT = 1.25  # every shape lies within EXTENT * radius of its centre (the triangle's corners at about 1.22)


# ------------------------------------------------------------------------------------------------------- shapes
# Each takes the local coordinates (u, v) (float32 arrays: right and down from the centre, rotated with the object)
# and the radius r (a Python float) and returns a boolean mask. Circle, square and triangle keep the exact float32
# expressions of the iLLaVA scenes (their images are pinned by tests/backend/test_scenes.py).
def _circle(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    return u * u + v * v <= r * r


def _square(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    s = r * 0.85
    return (np.abs(u) <= s) & (np.abs(v) <= s)


def _triangle(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    top, bottom = -r, r * 0.6  # pointing up, inscribed in the circle of radius r
    half = (v - top) / (bottom - top) * r * 1.05
    return (v >= top) & (v <= bottom) & (np.abs(u) <= half)


def _ellipse(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    b = r * 0.6
    return (u * u) / (r * r) + (v * v) / (b * b) <= 1.0


def _ring(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    d = u * u + v * v
    return (d <= r * r) & (d >= (0.55 * r) ** 2)


def _cross(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    a, b = np.abs(u), np.abs(v)
    w = 0.34 * r
    return ((a <= r * 0.95) & (b <= w)) | ((b <= r * 0.95) & (a <= w))


def polygon(vertices: np.ndarray) -> Callable[[np.ndarray, np.ndarray, float], np.ndarray]:
    """A shape from polygon vertices given for radius 1 (even-odd rule, so non-convex outlines work)."""

    def mask(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
        pts = vertices * r
        inside = np.zeros(u.shape, dtype=bool)
        for (xi, yi), (xj, yj) in zip(pts, np.roll(pts, -1, axis=0), strict=True):
            if yi == yj:
                continue
            crosses = (yi > v) != (yj > v)
            inside ^= crosses & (u < (xj - xi) * (v - yi) / (yj - yi) + xi)
        return inside

    return mask


def regular(n: int, start: float = -math.pi / 2, inner: float | None = None) -> np.ndarray:
    """Vertices of a regular n-gon (or an n-pointed star when ``inner`` is the inner radius), first one up."""
    if inner is None:
        a = start + 2 * math.pi * np.arange(n) / n
        return np.stack([np.cos(a), np.sin(a)], 1).astype(np.float32)
    a = start + math.pi * np.arange(2 * n) / n
    rad = np.where(np.arange(2 * n) % 2 == 0, 1.0, inner)
    return np.stack([rad * np.cos(a), rad * np.sin(a)], 1).astype(np.float32)


SHAPE_MASKS: dict[str, Callable[[np.ndarray, np.ndarray, float], np.ndarray]] = {
    "circle": _circle,
    "square": _square,
    "triangle": _triangle,
    "ellipse": _ellipse,
    "diamond": polygon(np.array([[0, -1], [0.7, 0], [0, 1], [-0.7, 0]], dtype=np.float32)),
    "pentagon": polygon(regular(5)),
    "hexagon": polygon(regular(6, start=0.0)),
    "star": polygon(regular(5, inner=0.45)),
    "cross": _cross,
    "ring": _ring,
}
SHAPES: tuple[str, ...] = tuple(SHAPE_MASKS)  # the object classes; class id = index + 1 (0 = background)


# ----------------------------------------------------------------------------------------------------- textures
# Each takes (u, v, r) and returns the share of the second colour per pixel (float32 in [0, 1]) or None for a flat
# object. Textures live in the object's own coordinates, so they move and turn with it.
def _stripes(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    p = max(2.0, 0.45 * r)
    return (np.floor(u / p) % 2).astype(np.float32)


def _checker(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    p = max(2.0, 0.5 * r)
    return ((np.floor(u / p) + np.floor(v / p)) % 2).astype(np.float32)


def _dots(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    p = max(3.0, 0.5 * r)
    a, b = u / p - np.floor(u / p) - 0.5, v / p - np.floor(v / p) - 0.5
    return (a * a + b * b <= 0.09).astype(np.float32)


def _gradient(u: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    return np.clip((v / r + 1.0) / 2.0, 0.0, 1.0).astype(np.float32)


TEXTURES: dict[str, Callable[[np.ndarray, np.ndarray, float], np.ndarray] | None] = {
    "flat": None,
    "stripes": _stripes,
    "checker": _checker,
    "dots": _dots,
    "gradient": _gradient,
}
TEXTURE_WORDS = {"flat": "plain", "stripes": "striped", "checker": "checkered", "dots": "dotted",
                 "gradient": "shaded"}


# ---------------------------------------------------------------------------------------------------- rasterise
def _validate(inst: Instance) -> None:
    if inst.shape not in SHAPE_MASKS:
        raise ValueError(f"Unknown shape '{inst.shape}'. Valid shapes: {', '.join(SHAPES)}.")
    if inst.color not in PALETTE:
        raise ValueError(f"Unknown colour '{inst.color}'. Valid colours: {', '.join(PALETTE)}.")
    if inst.texture not in TEXTURES:
        raise ValueError(f"Unknown texture '{inst.texture}'. Valid textures: {', '.join(TEXTURES)}.")
    if not 0 < inst.opacity <= 1 or inst.depth <= 0 or inst.radius < 0:
        raise ValueError(f"opacity must be in (0, 1], depth > 0 and radius >= 0, got {inst}")


def object_box(inst: Instance, h: int, w: int) -> tuple[int, int, int, int] | None:
    """The pixel box ``(y0, y1, x0, x1)`` (ends exclusive) that holds every pixel of ``inst`` inside an ``h`` x
    ``w`` frame, or None when the object lies outside it."""
    e = inst.extent + 1.0
    y0, y1 = max(0, math.floor(inst.cy - e)), min(h, math.ceil(inst.cy + e) + 1)
    x0, x1 = max(0, math.floor(inst.cx - e)), min(w, math.ceil(inst.cx + e) + 1)
    if y0 >= y1 or x0 >= x1:
        return None
    return y0, y1, x0, x1


def local_coords(inst: Instance, box: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The float32 coordinates ``(u, v)`` of the box's pixels in the object's frame: the offset from the centre,
    rotated by ``-angle`` (so the shape is drawn turned by ``angle``, clockwise on screen)."""
    y0, y1, x0, x1 = box
    dx = (np.arange(x0, x1, dtype=np.float32) - float(inst.cx))[None, :]
    dy = (np.arange(y0, y1, dtype=np.float32) - float(inst.cy))[:, None]
    if inst.angle == 0:
        return tuple(np.broadcast_arrays(dx, dy))
    c, s = math.cos(inst.angle), math.sin(inst.angle)
    return c * dx + s * dy, c * dy - s * dx


def object_mask(inst: Instance, h: int, w: int) -> np.ndarray:
    """Boolean ``[h, w]`` mask of every pixel of ``inst`` (its whole shape, occluded or not)."""
    _validate(inst)
    out = np.zeros((h, w), dtype=bool)
    box = object_box(inst, h, w)
    if box is not None:
        u, v = local_coords(inst, box)
        out[box[0]:box[1], box[2]:box[3]] = SHAPE_MASKS[inst.shape](u, v, float(inst.radius))
    return out


def paint(canvas: np.ndarray, inst: Instance, rgb: tuple[int, int, int] | None = None,
          mask: Callable[[np.ndarray, np.ndarray, float], np.ndarray] | None = None
          ) -> tuple[tuple[int, int, int, int], np.ndarray] | None:
    """Paint ``inst`` into ``canvas`` (uint8 ``[h, w, 3]``, in place) with a hard edge, in its palette colour or in
    ``rgb`` when given (the clutter's tints); ``mask`` (a function like those of :data:`SHAPE_MASKS`, within
    :data:`EXTENT` radii) draws an outline that is not one of the object classes in place of ``inst.shape``. Returns
    its box and its boolean mask inside the box (None when it lies outside the canvas)."""
    _validate(inst)
    box = object_box(inst, *canvas.shape[:2])
    if box is None:
        return None
    u, v = local_coords(inst, box)
    r = float(inst.radius)
    m = (mask or SHAPE_MASKS[inst.shape])(u, v, r)
    region = canvas[box[0]:box[1], box[2]:box[3]]
    tex = TEXTURES[inst.texture]
    color = PALETTE[inst.color] if rgb is None else rgb
    if tex is None and inst.opacity == 1:
        region[m] = color
        return box, m
    out = np.broadcast_to(np.asarray(color, np.float32), (int(m.sum()), 3))
    if tex is not None:
        t = tex(u[m], v[m], r)[:, None]
        out = out * (1 - t) + np.asarray(color, np.float32) * SHADE * t
    if inst.opacity < 1:
        out = inst.opacity * out + (1 - inst.opacity) * region[m].astype(np.float32)
    region[m] = np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return box, m
