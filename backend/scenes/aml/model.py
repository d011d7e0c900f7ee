"""The segmentation head over frozen features, and the metrics.

``RefSegHead``: patch tokens ``[B, 64, 384]`` and token states ``[B, T, 384]`` are projected to a shared width D
(``vis``, ``txt``); each patch attends to the expression's tokens (one head, padding masked) and is gated by the
mean-pooled sentence (FiLM); a 1 x 1 and two 3 x 3 convolutions on the 8 x 8 grid; the result is upsampled to 28 x 28 and
joined with a small CNN over the image (pooled to 28 x 28, so object edges finer than a 14-pixel patch are
reachable); two convolutions give mask logits ``[B, 1, 28, 28]``, upsampled bilinearly to 112 x 112 for scoring.
``features(patches, tokens, mask)`` returns the head's own visual and text features (after ``vis`` / ``txt``), the
features AML's first pass compares. Loss: binary cross-entropy plus soft Dice on the 28 x 28 mask (area-averaged).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from .data import GRID, SIZE

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
OUT = 28


@dataclass(frozen=True)
class HeadConfig:
    """``width``: the shared width D; ``feat``: the encoders' width (384 for DINOv2-S and MiniLM); ``skip``: channels
    of the image CNN."""

    width: int = 48
    feat: int = 384
    skip: int = 16


def normalise_images(images: torch.Tensor) -> torch.Tensor:
    """uint8 ``[B, H, W, 3]`` -> ImageNet-normalised float ``[B, 3, H, W]`` (a zeroed pixel is the mean colour)."""
    x = images.permute(0, 3, 1, 2).float() / 255.0
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return (x - mean) / std


class RefSegHead(nn.Module):
    def __init__(self, cfg: HeadConfig = HeadConfig()) -> None:
        super().__init__()
        d, s = cfg.width, cfg.skip
        self.cfg = cfg
        self.vis = nn.Linear(cfg.feat, d)
        self.txt = nn.Linear(cfg.feat, d)
        self.val = nn.Linear(d, d)
        self.film = nn.Linear(d, 2 * d)
        self.grid = nn.Sequential(nn.Conv2d(2 * d, d, 1), nn.GELU(), nn.Conv2d(d, d, 3, padding=1),
                                  nn.GELU(), nn.Conv2d(d, d // 2, 3, padding=1), nn.GELU())
        self.img = nn.Sequential(nn.Conv2d(3, s, 3, padding=1), nn.GELU(), nn.Conv2d(s, s, 3, padding=1), nn.GELU())
        self.out = nn.Sequential(nn.Conv2d(d // 2 + s, 24, 3, padding=1), nn.GELU(), nn.Conv2d(24, 1, 3, padding=1))

    def features(self, patches: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The head's visual ``[B, 64, D]`` and text ``[B, T, D]`` features."""
        return self.vis(patches.float()), self.txt(tokens.float())

    def forward(self, patches: torch.Tensor, tokens: torch.Tensor, token_mask: torch.Tensor,
                pixels: torch.Tensor) -> torch.Tensor:
        """patches ``[B, 64, 384]``, tokens ``[B, T, 384]``, token_mask bool ``[B, T]``, normalised pixels
        ``[B, 3, 112, 112]`` -> logits ``[B, 1, 28, 28]``."""
        v, t = self.features(patches, tokens)
        b, n, d = v.shape
        logits = v @ t.transpose(1, 2) / d ** 0.5
        logits = logits.masked_fill(~token_mask[:, None, :], float("-inf"))
        ctx = torch.softmax(logits, -1) @ self.val(t)
        m = token_mask.float().unsqueeze(-1)
        sent = (t * m).sum(1) / m.sum(1).clamp_min(1.0)
        gamma, beta = self.film(sent).chunk(2, -1)
        fused = torch.cat([v * (1 + gamma[:, None]) + beta[:, None], ctx], -1)
        x = fused.transpose(1, 2).reshape(b, 2 * d, GRID, GRID)
        x = F.interpolate(self.grid(x), size=(OUT, OUT), mode="bilinear", align_corners=False)
        skip = self.img(F.adaptive_avg_pool2d(pixels, OUT))
        return self.out(torch.cat([x, skip], 1))


def target_28(masks: torch.Tensor) -> torch.Tensor:
    """bool ``[B, 112, 112]`` -> area-averaged float ``[B, 1, 28, 28]``."""
    return F.adaptive_avg_pool2d(masks.float().unsqueeze(1), OUT)


def seg_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """BCE + soft Dice; logits and target ``[B, 1, 28, 28]``."""
    bce = F.binary_cross_entropy_with_logits(logits, target)
    p = torch.sigmoid(logits)
    inter = (p * target).sum((1, 2, 3))
    dice = 1 - (2 * inter + 1) / (p.sum((1, 2, 3)) + target.sum((1, 2, 3)) + 1)
    return bce + dice.mean()


def predict_masks(logits: torch.Tensor) -> torch.Tensor:
    """logits ``[B, 1, 28, 28]`` -> bool masks ``[B, 112, 112]`` (bilinear upsampling, threshold 0.5)."""
    up = F.interpolate(logits, size=(SIZE, SIZE), mode="bilinear", align_corners=False)
    return (up[:, 0] > 0)


def iou_parts(pred: torch.Tensor, gt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sample intersection and union (pixels) of bool masks ``[B, H, W]``."""
    inter = (pred & gt).flatten(1).sum(1).double()
    union = (pred | gt).flatten(1).sum(1).double()
    return inter, union


def scores(inter: torch.Tensor, union: torch.Tensor) -> dict[str, float]:
    """The RefCOCO protocol: mIoU (mean of per-sample IoU), oIoU (total intersection / total union), prec@0.5/0.7/0.9
    (share of samples with IoU above the threshold); all in percent."""
    iou = inter / union.clamp_min(1)
    out = {"miou": 100 * float(iou.mean()), "oiou": 100 * float(inter.sum() / union.sum().clamp_min(1))}
    for th in (0.5, 0.7, 0.9):
        out[f"prec@{th}"] = 100 * float((iou > th).double().mean())
    return out
