"""Image attacks on ``(H, W, 3)`` uint8 arrays: ``fn(img, strength, rng) -> img``, deterministic given ``rng``.

Their names, parameters and units are the table of :mod:`backend.watermark.attacks`, which parses chains.
"""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter

from backend.errors import InputError


# ------------------------------------------------------------------------------------------- common attacks
def jpeg(img: np.ndarray, quality: float, rng: np.random.Generator | None = None) -> np.ndarray:
    q = int(round(min(100, max(1, quality))))
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=q)
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"), dtype=np.uint8)


def gaussian_noise(img: np.ndarray, sigma: float, rng: np.random.Generator | None = None) -> np.ndarray:
    rng = rng or np.random.default_rng(0)
    noisy = img.astype(np.float32) + rng.normal(0.0, sigma, img.shape).astype(np.float32)
    return np.clip(np.round(noisy), 0, 255).astype(np.uint8)


def gaussian_blur(img: np.ndarray, kernel: float, rng: np.random.Generator | None = None) -> np.ndarray:
    import cv2

    k = max(1, int(round(kernel)))
    k += 1 - k % 2  # odd
    return cv2.GaussianBlur(img, (k, k), 0) if k > 1 else img.copy()


def brightness(img: np.ndarray, factor: float, rng: np.random.Generator | None = None) -> np.ndarray:
    return np.asarray(ImageEnhance.Brightness(Image.fromarray(img)).enhance(factor), dtype=np.uint8)


def contrast(img: np.ndarray, factor: float, rng: np.random.Generator | None = None) -> np.ndarray:
    return np.asarray(ImageEnhance.Contrast(Image.fromarray(img)).enhance(factor), dtype=np.uint8)


def resize_attack(img: np.ndarray, scale: float, rng: np.random.Generator | None = None) -> np.ndarray:
    h, w = img.shape[:2]
    nh, nw = max(8, int(round(h * scale))), max(8, int(round(w * scale)))
    return np.asarray(Image.fromarray(img).resize((nw, nh), Image.BILINEAR, reducing_gap=None), dtype=np.uint8)


def crop_attack(img: np.ndarray, fraction: float, rng: np.random.Generator | None = None) -> np.ndarray:
    rng = rng or np.random.default_rng(0)
    if not 0.0 <= fraction < 1.0:
        raise InputError(f"crop fraction must be in [0, 1), got {fraction}")
    h, w = img.shape[:2]
    side = math.sqrt(1.0 - fraction)
    ch, cw = max(8, int(round(h * side))), max(8, int(round(w * side)))
    y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
    return np.ascontiguousarray(img[y:y + ch, x:x + cw])


def gaussian_blur_sigma(img: np.ndarray, sigma: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """Gaussian blur of standard deviation ``sigma`` px (Pillow's GaussianBlur radius)."""
    return np.asarray(Image.fromarray(img).filter(ImageFilter.GaussianBlur(float(sigma))), dtype=np.uint8)
