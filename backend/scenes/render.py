"""Rendering: backgrounds with clutter, lighting, and the renderer that paints objects far to near and writes the
per-pixel instance ids and depth of what is visible.

The world is a stack of fronto-parallel layers seen by a camera that translates parallel to the image plane: a
backdrop at depth ``Backdrop.depth`` (its clutter is part of it) and flat objects at their own depths. A camera
offset ``(x, y)`` (pixels at depth 1) moves a layer at depth ``d`` by ``-(x, y) / d`` on screen: the reference
plane (depth 1) moves by exactly the offset, the backdrop by the offset over its depth, rounded to whole pixels (it
is an image, cropped from a canvas ``margin`` pixels wider on every side). Objects are drawn far to near (equal
depths in list order, later on top), so the instance and depth maps are those of the nearest surface.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .objects import PALE_FLOOR, SHAPES, Instance, paint

BACKGROUND_DEPTH = 8.0
QUANTUM = 1 / 256  # moved object positions are rounded to this many pixels, so whole-pixel moves are exact


def quantize(x: float) -> float:
    """``x`` rounded to a multiple of :data:`QUANTUM` (exact in float32 for frames below 32,768 pixels)."""
    return round(float(x) / QUANTUM) * QUANTUM


# -------------------------------------------------------------------------------------------------- backgrounds
def plain(rng: np.random.Generator, h: int, w: int, low: float = 175.0, high: float = 245.0,
          noise: float = 3.0) -> np.ndarray:
    """One colour (each channel uniform in ``[low, high]``) plus Gaussian pixel noise: uint8 ``[h, w, 3]``. Draws
    the colour, then the noise, from ``rng`` (the iLLaVA scenes use ``low=200, high=245, noise=4``)."""
    base = rng.uniform(low, high, size=3)
    return np.clip(base[None, None, :] + rng.normal(0, noise, size=(h, w, 3)), 0, 255).astype(np.uint8)


def _pale(rng: np.random.Generator, n: int = 1) -> np.ndarray:
    return rng.uniform(PALE_FLOOR + 15, 250, size=(n, 3))


def _mix(t: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Colour ``a`` where ``t == 0`` to ``b`` where ``t == 1``: float32 ``[h, w, 3]``."""
    t = np.asarray(t, np.float32)[..., None]
    return a.astype(np.float32) + (b - a).astype(np.float32) * t


def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel rows ``[h, 1]`` and columns ``[1, w]`` as float32 (broadcast, not materialised)."""
    return np.arange(h, dtype=np.float32)[:, None], np.arange(w, dtype=np.float32)[None, :]


def gradient(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A linear blend of two pale colours in a random direction, with mild noise."""
    a, b = _pale(rng, 2)
    ang = rng.uniform(0, 2 * math.pi)
    yy, xx = _grid(h, w)
    t = (math.cos(ang) * xx + math.sin(ang) * yy) / max(h, w)
    t = (t - t.min()) / max(float(np.ptp(t)), 1e-6)
    img = _mix(t, a, b) + rng.normal(0, 2.0, size=(h, w, 3)).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def grating(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A sinusoidal or square grating between two pale colours (random period and direction)."""
    a, b = _pale(rng, 2)
    ang, period = rng.uniform(0, math.pi), rng.uniform(6, 40)
    yy, xx = _grid(h, w)
    t = 0.5 + 0.5 * np.sin(2 * math.pi * (math.cos(ang) * xx + math.sin(ang) * yy) / period)
    if rng.random() < 0.4:
        t = (t > 0.5).astype(np.float32)
    return np.clip(_mix(t, a, b), 0, 255).astype(np.uint8)


def fractal(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Fractal (1/f^beta) noise between two pale colours: cloud-like texture, beta uniform in [1.6, 3.0]."""
    a, b = _pale(rng, 2)
    beta = rng.uniform(1.6, 3.0)
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.rfftfreq(w)[None, :]
    f = np.sqrt(fx * fx + fy * fy)
    f[0, 0] = 1.0
    spec = (rng.normal(size=f.shape) + 1j * rng.normal(size=f.shape)) / f ** (beta / 2)
    spec[0, 0] = 0.0
    t = np.fft.irfft2(spec, s=(h, w))
    t = (t - t.min()) / max(float(np.ptp(t)), 1e-9)
    return np.clip(_mix(t, a, b), 0, 255).astype(np.uint8)


BACKGROUNDS: dict[str, Callable[[np.random.Generator, int, int], np.ndarray]] = {
    "plain": plain,
    "gradient": gradient,
    "grating": grating,
    "fractal": fractal,
}


@dataclass(frozen=True)
class Backdrop:
    """The background layer: ``image`` uint8 ``[h + 2 margin, w + 2 margin, 3]`` (clutter included), seen at
    ``depth``; a frame shows its centre ``h`` x ``w`` window, moved by the camera."""

    image: np.ndarray
    margin: int = 0
    depth: float = BACKGROUND_DEPTH

    @property
    def frame_shape(self) -> tuple[int, int]:
        return self.image.shape[0] - 2 * self.margin, self.image.shape[1] - 2 * self.margin


# ----------------------------------------------------------------------------------------------------- lighting
@dataclass(frozen=True)
class Lighting:
    """A light change over the whole frame (fixed to the camera): every pixel times ``gain * tint[c] * (1 + slope
    * s)``, where ``s`` runs from -1/2 to 1/2 across the frame along ``direction`` (radians, 0 = left to right)."""

    gain: float = 1.0
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)
    slope: float = 0.0
    direction: float = 0.0

    def field(self, h: int, w: int) -> np.ndarray:
        """The multiplier, float32 ``[h, w, 3]``."""
        yy, xx = _grid(h, w)
        s = (math.cos(self.direction) * (xx - (w - 1) / 2) + math.sin(self.direction) * (yy - (h - 1) / 2))
        s = s / max(h, w)
        return (self.gain * (1 + self.slope * s))[..., None] * np.asarray(self.tint, np.float32)

    def apply(self, image: np.ndarray) -> np.ndarray:
        """``image`` (uint8 ``[h, w, 3]``) under this light, rounded and clipped to uint8."""
        lit = image.astype(np.float32) * self.field(*image.shape[:2])
        return np.clip(np.rint(lit), 0, 255).astype(np.uint8)


# ------------------------------------------------------------------------------------------------------- frames
@dataclass
class Frame:
    """One rendered view. ``image`` uint8 ``[H, W, 3]``; ``instances`` int32 ``[H, W]`` (0 = background, ``k`` =
    ``objects[k - 1]``, the visible surface); ``depth`` float32 ``[H, W]`` (the visible surface's depth, the
    backdrop's where no object is); ``objects`` as drawn, in frame coordinates; ``camera`` the offset it was seen
    from."""

    image: np.ndarray
    instances: np.ndarray
    depth: np.ndarray
    objects: tuple[Instance, ...]
    camera: tuple[float, float] = (0.0, 0.0)
    lighting: Lighting | None = field(default=None, repr=False)

    @property
    def classes(self) -> np.ndarray:
        """Semantic map int32 ``[H, W]``: 0 background, else the object's class (its index in ``SHAPES``) + 1."""
        lut = np.array([0] + [SHAPES.index(o.shape) + 1 for o in self.objects], dtype=np.int32)
        return lut[self.instances]

    def pil(self):  # noqa: ANN201 - PIL.Image.Image
        from PIL import Image

        return Image.fromarray(self.image)


def screen_objects(objects: Sequence[Instance], camera: tuple[float, float]) -> tuple[Instance, ...]:
    """``objects`` as seen from ``camera``: each moved by ``-camera / depth`` (positions rounded to
    :data:`QUANTUM`); unchanged when the camera is at the origin."""
    cx, cy = float(camera[0]), float(camera[1])
    if cx == 0 and cy == 0:
        return tuple(objects)
    return tuple(replace(o, cx=quantize(o.cx - cx / o.depth), cy=quantize(o.cy - cy / o.depth)) for o in objects)


def backdrop_window(backdrop: Backdrop, camera: tuple[float, float]) -> np.ndarray:
    """The backdrop's ``[h, w, 3]`` window seen from ``camera`` (a copy): moved by ``round(-camera / depth)``."""
    h, w = backdrop.frame_shape
    m = backdrop.margin
    sx, sy = round(camera[0] / backdrop.depth), round(camera[1] / backdrop.depth)
    if abs(sx) > m or abs(sy) > m:
        raise ValueError(f"camera offset {camera} moves the backdrop by ({sx}, {sy}) px, beyond its margin of {m} px")
    return backdrop.image[m + sy:m + sy + h, m + sx:m + sx + w].copy()


def draw(backdrop: Backdrop, objects: Sequence[Instance], camera: tuple[float, float] = (0.0, 0.0),
         lighting: Lighting | None = None) -> Frame:
    """Paint ``objects`` over the backdrop as seen from ``camera`` (far to near; equal depths in list order), then
    apply ``lighting``: a :class:`Frame` with the image, instance ids and depth of the visible surfaces."""
    canvas = backdrop_window(backdrop, camera)
    h, w = canvas.shape[:2]
    objs = screen_objects(objects, camera)
    ids = np.zeros((h, w), dtype=np.int32)
    depth = np.full((h, w), backdrop.depth, dtype=np.float32)
    for i in sorted(range(len(objs)), key=lambda j: -objs[j].depth):  # stable: ties keep list order
        res = paint(canvas, objs[i])
        if res is not None:
            (y0, y1, x0, x1), m = res
            ids[y0:y1, x0:x1][m] = i + 1
            depth[y0:y1, x0:x1][m] = objs[i].depth
    if lighting is not None:
        canvas = lighting.apply(canvas)
    return Frame(canvas, ids, depth, objs, (float(camera[0]), float(camera[1])), lighting)


def patch_coverage(masks: Sequence[np.ndarray], patch: int) -> np.ndarray:
    """Share of each ``patch`` x ``patch`` cell covered by the masks (the largest share of any one mask), row-major
    over the ``(H // patch) x (W // patch)`` grid: float64 ``[cells]`` in [0, 1]."""
    if not masks:
        raise ValueError("patch_coverage needs at least one mask")
    h, w = masks[0].shape
    gh, gw = h // patch, w // patch
    cov = np.zeros(gh * gw)
    for m in masks:
        cell = m[: gh * patch, : gw * patch].reshape(gh, patch, gw, patch).mean((1, 3)).reshape(-1)
        cov = np.maximum(cov, cell)
    return cov


# -------------------------------------------------------------------------------------------------------- views
_ID_COLORS = np.array([[230, 230, 230], [31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40],
                       [148, 103, 189], [140, 86, 75], [227, 119, 194], [127, 127, 127], [188, 189, 34],
                       [23, 190, 207]], dtype=np.uint8)


def instance_colors(instances: np.ndarray) -> np.ndarray:
    """A colour picture of an instance map (uint8 ``[H, W, 3]``): light grey background, one colour per id."""
    ids = np.asarray(instances)
    out = _ID_COLORS[1:][(ids - 1) % (len(_ID_COLORS) - 1)]
    out[ids == 0] = _ID_COLORS[0]
    return out


def depth_image(depth: np.ndarray, far: float | None = None) -> np.ndarray:
    """A grey picture of a depth map (uint8 ``[H, W, 3]``): near is bright, ``far`` (default: the map's largest
    depth) is black."""
    d = np.asarray(depth, dtype=np.float32)
    near, far = float(d.min()), float(d.max() if far is None else far)
    g = 255 * (far - d) / max(far - near, 1e-6)
    return np.repeat(np.clip(np.rint(g), 0, 255).astype(np.uint8)[..., None], 3, axis=2)


def contact_sheet(frames: Sequence[Frame], gap: int = 2) -> np.ndarray:
    """One picture of same-size frames for display: their images on the first row, instance maps on the second,
    depth on the third (white gaps of ``gap`` pixels): uint8 ``[3 H + 2 gap, n W + (n - 1) gap, 3]``."""
    if not frames:
        raise ValueError("contact_sheet needs at least one frame")
    far = max(float(f.depth.max()) for f in frames)
    rows = [[f.image for f in frames], [instance_colors(f.instances) for f in frames],
            [depth_image(f.depth, far) for f in frames]]
    h, w = frames[0].image.shape[:2]
    out = np.full((3 * h + 2 * gap, len(frames) * w + (len(frames) - 1) * gap, 3), 255, np.uint8)
    for r, row in enumerate(rows):
        for c, im in enumerate(row):
            out[r * (h + gap):r * (h + gap) + h, c * (w + gap):c * (w + gap) + w] = im
    return out
