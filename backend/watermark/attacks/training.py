"""Differentiable distortions for training learned watermarks (torch batches ``(B, 3, H, W)`` in [0, 1])."""

from __future__ import annotations

import math

import numpy as np

from backend.watermark.attacks.image import jpeg


def noise_layer(x: torch.Tensor, rng: np.random.Generator, p_identity: float = 0.15,  # noqa: F821
                p_crop: float = 0.45, min_area: float = 0.55, frame: int | None = None):
    """A random chain of differentiable distortions for training, applied to a batch ``(B,3,H,W)`` in [0, 1].

    Each of crop, resize, colour, blur, noise and JPEG is applied with its own probability (one setting per batch,
    crop windows per image); JPEG is real Pillow JPEG with a straight-through gradient. Returns a batch whose size may
    differ from the input (crop/resize); decoders resize to their working size anyway."""
    import torch
    import torch.nn.functional as F

    b, _, h, w = x.shape
    geom = (1.0, np.zeros(b), np.zeros(b))
    if rng.random() < p_identity:
        return (x, geom) if frame else x
    if rng.random() < p_crop:  # crop: keep min_area-100 % of the area, same aspect, a random place per image
        side = math.sqrt(rng.uniform(min_area, 1.0))
        ch, cw = max(16, int(h * side)), max(16, int(w * side))
        ys = rng.integers(0, h - ch + 1, b)
        xs = rng.integers(0, w - cw + 1, b)
        x = torch.stack([x[i, :, ys[i]:ys[i] + ch, xs[i]:xs[i] + cw] for i in range(b)])
        if frame:
            geom = (cw / w, ys * frame / h, xs * frame / w)
        h, w = ch, cw
    if rng.random() < 0.4:  # resize down
        s = rng.uniform(0.3, 0.9)
        x = F.interpolate(x, size=(max(16, int(h * s)), max(16, int(w * s))), mode="bilinear", align_corners=False,
                          antialias=True)
    if rng.random() < 0.3:  # brightness / contrast
        c = torch.from_numpy(rng.uniform(0.6, 1.4, (b, 1, 1, 1))).float()
        br = torch.from_numpy(rng.uniform(-0.15, 0.15, (b, 1, 1, 1))).float()
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        x = ((x - mean) * c + mean + br).clamp(0, 1)
    if rng.random() < 0.25:  # Gaussian blur
        sigma = rng.uniform(0.4, 1.6)
        k = int(2 * math.ceil(2 * sigma) + 1)
        t = torch.arange(k, dtype=x.dtype) - k // 2
        g = torch.exp(-(t**2) / (2 * sigma**2))
        g = (g / g.sum()).view(1, 1, 1, k)
        x = F.conv2d(F.pad(x, (k // 2, k // 2, 0, 0), mode="reflect"), g.expand(3, 1, 1, k), groups=3)
        x = F.conv2d(F.pad(x, (0, 0, k // 2, k // 2), mode="reflect"), g.view(1, 1, k, 1).expand(3, 1, k, 1), groups=3)
    if rng.random() < 0.3:  # Gaussian noise
        x = (x + torch.randn_like(x) * rng.uniform(0.005, 0.06)).clamp(0, 1)
    if rng.random() < 0.5:  # JPEG, straight-through
        x = jpeg_straight_through(x, int(rng.integers(30, 95)))
    return (x, geom) if frame else x


def jpeg_straight_through(x: torch.Tensor, quality: int) -> torch.Tensor:  # noqa: F821
    """Real JPEG in the forward pass, identity gradient in the backward pass."""
    import torch

    with torch.no_grad():
        arr = (x.detach().clamp(0, 1) * 255.0).round().byte().permute(0, 2, 3, 1).numpy()
        out = np.stack([jpeg(a, quality) for a in arr])
        y = torch.from_numpy(out).permute(0, 3, 1, 2).float() / 255.0
    return x + (y - x).detach()
