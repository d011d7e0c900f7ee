"""Quality and bit metrics shared by the watermark methods: PSNR, SSIM (numpy, via scikit-image, and a differentiable
torch version for training losses), bitwise accuracy.

Images in numpy are ``(H, W, 3)`` uint8 (or float in [0, 255]); torch images are ``(B, 3, H, W)`` float in [0, 1].
"""

from __future__ import annotations

import math

import numpy as np


def psnr(original: np.ndarray, modified: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB for 8-bit images (``inf`` when identical)."""
    a = np.asarray(original, dtype=np.float64)
    b = np.asarray(modified, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    mse = float(np.mean((a - b) ** 2))
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def ssim(original: np.ndarray, modified: np.ndarray) -> float:
    """Structural similarity (scikit-image, Gaussian window sigma 1.5, over RGB channels) for 8-bit images."""
    from skimage.metrics import structural_similarity

    a = np.asarray(original)
    b = np.asarray(modified)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    return float(structural_similarity(a, b, channel_axis=2 if a.ndim == 3 else None, data_range=255,
                                       gaussian_weights=True, sigma=1.5, use_sample_covariance=False))


def bit_accuracy(decoded: np.ndarray, reference: np.ndarray) -> np.ndarray | float:
    """Fraction of equal bits; ``(n,)`` vs ``(n,)`` -> float, ``(B, n)`` vs ``(n,)`` or ``(B, n)`` -> ``(B,)``."""
    d = np.asarray(decoded, dtype=np.uint8)
    r = np.asarray(reference, dtype=np.uint8)
    acc = np.mean(d == r, axis=-1)
    return float(acc) if np.ndim(acc) == 0 else acc


def ssim_torch(x: torch.Tensor, y: torch.Tensor, window: int = 11,  # noqa: F821
               sigma: float = 1.5) -> torch.Tensor:  # noqa: F821
    """Differentiable mean SSIM of ``(B, C, H, W)`` images in [0, 1] (Gaussian window, valid region); ``(B,)``."""
    import torch
    import torch.nn.functional as F

    c = x.shape[1]
    coords = torch.arange(window, dtype=x.dtype, device=x.device) - (window - 1) / 2
    g = torch.exp(-(coords**2) / (2 * sigma**2))
    g = g / g.sum()
    gh = g.view(1, 1, 1, window).expand(c, 1, 1, window).contiguous()
    gv = g.view(1, 1, window, 1).expand(c, 1, window, 1).contiguous()

    def filt(t: torch.Tensor) -> torch.Tensor:  # separable Gaussian, valid region
        return F.conv2d(F.conv2d(t, gh, groups=c), gv, groups=c)

    c1, c2 = 0.01**2, 0.03**2
    mu_x, mu_y = filt(x), filt(y)
    sxx = filt(x * x) - mu_x**2
    syy = filt(y * y) - mu_y**2
    sxy = filt(x * y) - mu_x * mu_y
    s = ((2 * mu_x * mu_y + c1) * (2 * sxy + c2)) / ((mu_x**2 + mu_y**2 + c1) * (sxx + syy + c2))
    return s.mean(dim=(1, 2, 3))
