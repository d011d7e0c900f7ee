"""Where the camera wearer looks: spectral-residual saliency (Hou and Zhang, CVPR 2007) computed on the frame, its
peak as the gaze point, and the square crop of a given size around it.

The saliency of an image is the part of its log-amplitude spectrum that a local average does not predict (the
spectral residual), brought back to pixels with the original phase: ``S = G_sigma * |F^-1[exp(R + i P)]|^2`` with
``R = log|F| - box_3(log|F|)`` and ``P`` the phase, summed over the three colour channels. The gaze point is the
peak of ``S`` away from the border (where the transform's wrap-around leaves artefacts). Nothing here reads the
scene's labels: the ground-truth object centre would make central vision look better by construction.

Shapes: frames uint8 ``[T, H, W, 3]``; saliency float32 ``[T, H, W]`` (each map scaled to [0, 1]); gaze float
``[T, 2]`` as ``(x, y)`` pixels; crops uint8 ``[T, N, N, 3]``.
"""

from __future__ import annotations

import numpy as np

BORDER = 0.08  # share of the side next to each edge where the gaze never lands


def spectral_residual(frames: np.ndarray, sigma: float = 2.5) -> np.ndarray:
    """Spectral-residual saliency of each frame: float32 ``[T, H, W]`` in [0, 1]."""
    from scipy import ndimage

    x = np.asarray(frames, dtype=np.float32)
    if x.ndim == 3:
        x = x[None]
    if x.ndim != 4 or x.shape[-1] != 3:
        raise ValueError(f"frames must be [T, H, W, 3], got {x.shape}")
    spec = np.fft.fft2(x / 255.0, axes=(1, 2))
    amp = np.log(np.abs(spec) + 1e-8)
    phase = np.angle(spec)
    resid = amp - ndimage.uniform_filter(amp, size=(1, 3, 3, 1), mode="wrap")
    sal = (np.abs(np.fft.ifft2(np.exp(resid + 1j * phase), axes=(1, 2))) ** 2).sum(-1)
    sal = ndimage.gaussian_filter(sal, sigma=(0, sigma, sigma), mode="nearest").astype(np.float32)
    lo = sal.min(axis=(1, 2), keepdims=True)
    hi = sal.max(axis=(1, 2), keepdims=True)
    return (sal - lo) / np.maximum(hi - lo, 1e-12)


def gaze_points(saliency: np.ndarray, border: float = BORDER) -> np.ndarray:
    """The peak of each saliency map outside a border of ``border`` times the side: float ``[T, 2]`` ``(x, y)``."""
    s = np.asarray(saliency)
    t, h, w = s.shape
    by, bx = int(round(border * h)), int(round(border * w))
    inner = s[:, by:h - by, bx:w - bx].reshape(t, -1)
    idx = inner.argmax(1)
    ww = w - 2 * bx
    return np.stack([idx % ww + bx, idx // ww + by], 1).astype(np.float64)


def crop_boxes(gaze: np.ndarray, size: int, shape: tuple[int, int]) -> np.ndarray:
    """The ``size`` x ``size`` window centred on each gaze point, moved inside the frame: int ``[T, 4]`` as
    ``(x0, y0, x1, y1)``."""
    h, w = shape
    if not 1 <= size <= min(h, w):
        raise ValueError(f"crop size must be 1 to {min(h, w)} pixels, got {size}")
    g = np.asarray(gaze, dtype=np.float64)
    x0 = np.clip(np.round(g[:, 0] - size / 2), 0, w - size).astype(int)
    y0 = np.clip(np.round(g[:, 1] - size / 2), 0, h - size).astype(int)
    return np.stack([x0, y0, x0 + size, y0 + size], 1)


def crops(frames: np.ndarray, gaze: np.ndarray, size: int) -> np.ndarray:
    """The gaze-centred crops: uint8 ``[T, size, size, 3]``."""
    f = np.asarray(frames)
    boxes = crop_boxes(gaze, size, f.shape[1:3])
    return np.stack([f[i, y0:y1, x0:x1] for i, (x0, y0, x1, y1) in enumerate(boxes)])


def gaze_hits(gaze: np.ndarray, instances: np.ndarray, object_id: int = 1, radius: float = 3.0) -> np.ndarray:
    """Diagnostics only (never used for training): whether the focal object lies within ``radius`` pixels of each
    gaze point: bool ``[T]``."""
    out = []
    for (x, y), inst in zip(np.asarray(gaze), np.asarray(instances), strict=True):
        h, w = inst.shape
        r = int(np.ceil(radius))
        y0, y1, x0, x1 = max(int(y) - r, 0), min(int(y) + r + 1, h), max(int(x) - r, 0), min(int(x) + r + 1, w)
        out.append(bool((inst[y0:y1, x0:x1] == object_id).any()))
    return np.array(out)
