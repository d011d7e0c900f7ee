"""Images for training and evaluating image watermarks offline: scikit-image's shipped photos (split into a training and
a held-out set) plus procedurally generated images (gradients, shapes, fractal noise, gratings).

Split (fixed, stated in the UI and the manifest):

- ``HELDOUT_PHOTOS`` = astronaut, camera, coffee, chelsea, rocket: never seen in training; the page's presets and every
  claim are measured on them (and on procedural images drawn from a seed range training never uses).
- ``TRAIN_PHOTOS``: every other photo that ships inside scikit-image (none is downloaded).
- Procedural images: training uses seeds ``[0, 10**6)``, evaluation uses seeds from ``HELDOUT_SEED_BASE`` upwards.

All images are 8-bit RGB ``numpy`` arrays of shape ``(H, W, 3)``; functions are deterministic given their seed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

if TYPE_CHECKING:
    from backend.io import ImageLimits

HELDOUT_PHOTOS: tuple[str, ...] = ("astronaut", "camera", "coffee", "chelsea", "rocket")
TRAIN_PHOTOS: tuple[str, ...] = (
    "retina", "hubble_deep_field", "immunohistochemistry", "stereo_left", "stereo_right", "coins", "moon", "page",
    "text", "brick", "grass", "gravel", "colorwheel", "cell", "clock", "logo", "microaneurysms",
)
HELDOUT_SEED_BASE = 10**7


def _to_rgb8(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == bool:
        a = a.astype(np.uint8) * 255
    elif a.dtype != np.uint8:
        a = np.clip(a * (255.0 if a.max() <= 1.0 else 1.0), 0, 255).astype(np.uint8)
    if a.ndim == 2:
        a = np.stack([a] * 3, axis=-1)
    if a.shape[-1] == 4:  # alpha on white
        rgb = a[..., :3].astype(np.float32)
        alpha = a[..., 3:4].astype(np.float32) / 255.0
        a = (rgb * alpha + 255.0 * (1.0 - alpha)).round().astype(np.uint8)
    return np.ascontiguousarray(a[..., :3])


def load_photo(name: str) -> np.ndarray:
    """One scikit-image photo as RGB uint8 (``stereo_left``/``stereo_right`` are the two views of stereo_motorcycle)."""
    from skimage import data

    if name in ("stereo_left", "stereo_right"):
        left, right, _ = data.stereo_motorcycle()
        return _to_rgb8(left if name == "stereo_left" else right)
    if name not in HELDOUT_PHOTOS + TRAIN_PHOTOS:
        raise ValueError(f"unknown photo {name!r}; valid: {', '.join(HELDOUT_PHOTOS + TRAIN_PHOTOS)}")
    return _to_rgb8(getattr(data, name)())


# ---------------------------------------------------------------------------------------------------- procedural
def _fractal_noise(rng: np.random.Generator, size: int, exponent: float) -> np.ndarray:
    """(size, size) noise with power spectrum 1/f^exponent, scaled to [0, 1]."""
    f = np.fft.fftfreq(size)
    radius = np.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    radius[0, 0] = 1.0
    spectrum = (rng.normal(size=(size, size)) + 1j * rng.normal(size=(size, size))) / radius ** (exponent / 2)
    field = np.real(np.fft.ifft2(spectrum))
    field -= field.min()
    return field / max(field.max(), 1e-9)


def _colorize(field: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    c0, c1 = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    return field[..., None] * c1 + (1 - field[..., None]) * c0


def procedural_image(seed: int, size: int = 256) -> np.ndarray:
    """A procedural RGB image (uint8, ``(size, size, 3)``): a background (gradient, fractal noise or grating) with
    random shapes on top, sometimes blurred. Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] / size
    kind = rng.integers(0, 4)
    if kind == 0:  # linear or radial gradient
        if rng.random() < 0.5:
            angle = rng.uniform(0, 2 * np.pi)
            field = (np.cos(angle) * xx + np.sin(angle) * yy)
        else:
            cx, cy = rng.uniform(0, 1, 2)
            field = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
        field = (field - field.min()) / max(np.ptp(field), 1e-9)
        img = _colorize(field, rng)
    elif kind == 1:  # fractal noise, per channel or colourised
        exponent = rng.uniform(1.5, 3.5)
        if rng.random() < 0.5:
            img = np.stack([_fractal_noise(rng, size, exponent) for _ in range(3)], -1) * 255
        else:
            img = _colorize(_fractal_noise(rng, size, exponent), rng)
    elif kind == 2:  # grating / checker
        freq = rng.uniform(2, 24)
        angle = rng.uniform(0, np.pi)
        phase = np.cos(angle) * xx + np.sin(angle) * yy
        field = 0.5 + 0.5 * np.sin(2 * np.pi * freq * phase)
        if rng.random() < 0.4:
            field = (field > 0.5).astype(np.float64)
        img = _colorize(field, rng)
    else:  # flat colour plus mild noise
        img = np.ones((size, size, 3)) * rng.uniform(0, 255, 3) + rng.normal(0, rng.uniform(0, 12), (size, size, 3))
    pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(pil)
    for _ in range(int(rng.integers(0, 12))):
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        x0, y0 = rng.integers(0, size, 2)
        w, h = rng.integers(size // 20, size // 2, 2)
        shape = rng.integers(0, 3)
        if shape == 0:
            draw.ellipse([int(x0), int(y0), int(x0 + w), int(y0 + h)], fill=colour)
        elif shape == 1:
            draw.rectangle([int(x0), int(y0), int(x0 + w), int(y0 + h)], fill=colour)
        else:
            pts = [tuple(int(v) for v in rng.integers(0, size, 2)) for _ in range(int(rng.integers(3, 7)))]
            draw.polygon(pts, fill=colour)
    if rng.random() < 0.3:
        pil = pil.filter(ImageFilter.GaussianBlur(radius=float(rng.uniform(0.5, 3.0))))
    return np.asarray(pil, dtype=np.uint8).copy()


# --------------------------------------------------------------------------------------------------------- crops
def random_crop(img: np.ndarray, rng: np.random.Generator, out: int, min_frac: float = 0.25) -> np.ndarray:
    """A square crop of random side (``min_frac`` to 1 of the short side) at a random place, resized to ``out`` px."""
    h, w = img.shape[:2]
    side = int(rng.uniform(min_frac, 1.0) * min(h, w))
    side = max(side, min(16, h, w))
    y, x = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
    crop = Image.fromarray(img[y:y + side, x:x + side])
    if side != out:
        crop = crop.resize((out, out), Image.BICUBIC if side < out else Image.LANCZOS)
    return np.asarray(crop, dtype=np.uint8)


def train_bank(n_procedural: int = 600, size: int = 256, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The training sources: (the training photos at full size, ``n_procedural`` procedural images of ``size`` px)."""
    photos = [load_photo(n) for n in TRAIN_PHOTOS]
    procedural = [procedural_image(seed * 1_000_003 + i, size) for i in range(n_procedural)]
    return photos, procedural


def heldout_images(count: int, seed: int = 0, min_side: int = 128, max_side: int = 512,
                   photo_fraction: float = 0.7) -> list[np.ndarray]:
    """``count`` evaluation images that training never saw: rectangular crops (random size and aspect, ``min_side`` to
    ``max_side`` px) of the held-out photos, cycling through them, and procedural images with held-out seeds.

    The first five are the held-out photos themselves (full size) when ``count >= 5``.
    """
    rng = np.random.default_rng(HELDOUT_SEED_BASE + seed)
    photos = [load_photo(n) for n in HELDOUT_PHOTOS]
    out: list[np.ndarray] = []
    if count >= len(photos):
        out.extend(photos)
    i = 0
    while len(out) < count:
        if rng.random() < photo_fraction:
            src = photos[i % len(photos)]
            i += 1
            h, w = src.shape[:2]
            ch = int(rng.integers(min(min_side, h), min(max_side, h) + 1))
            cw = int(rng.integers(min(min_side, w), min(max_side, w) + 1))
            y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
            out.append(np.ascontiguousarray(src[y:y + ch, x:x + cw]))
        else:
            side = int(rng.integers(min_side, max_side + 1))
            out.append(procedural_image(HELDOUT_SEED_BASE + seed * 100_003 + len(out), side))
    return out[:count]


def preset_images() -> dict[str, Callable[[], np.ndarray]]:
    """Held-out photos for the page's presets (loaders, so nothing is decoded before it is needed)."""
    return {name: (lambda n=name: load_photo(n)) for name in HELDOUT_PHOTOS}


# ------------------------------------------------------------------------------------------- user files (CLIs)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


def read_image_file(path: str | Path, limits: ImageLimits | None = None) -> np.ndarray:
    """An image file as ``(H, W, 3)`` uint8 RGB, read through the registered input kind ``image``
    (:func:`backend.io.registry.read_path`: missing or oversized files refused before reading, then
    :func:`backend.io.decode_image` with ``limits``)."""
    from backend.io.registry import read_path

    return np.asarray(read_path("image", path, limits=limits))


def image_folder(folder: str | Path, limit: int) -> list[Path]:
    """The first ``limit`` PNG/JPEG/WebP files of a folder, by name; InputError if it is not a folder or holds none."""
    from backend.errors import InputError

    d = Path(folder)
    if not d.is_dir():
        raise InputError(f"{d} is not a folder of images.")
    files = sorted(p for p in d.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise InputError(f"No PNG/JPEG/WebP images in {d}.")
    return files[:limit]
