"""The small network of the page: the classifier of the prior, the surrogates and the victims.

``SmallCNN``: three 3 x 3 conv layers (16, 32, 64 channels, ReLU, 2 x 2 max-pool after each) on ``[B, 3, 32, 32]``
images in [0, 1], average pooling to 4 x 4, one linear head ``[B, heads]``; no normalisation layers, so a functional
(unrolled) training step through :func:`torch.func.functional_call` needs no running statistics. The prior has 10
outputs (its own ten outlines, none a target class); a victim or surrogate starting from it keeps the conv trunk and
gets a fresh 10-way head.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SmallCNN(nn.Module):
    """``[B, 3, H, W]`` in [0, 1] -> logits ``[B, heads]`` (33,834 parameters with 10 outputs)."""

    def __init__(self, heads: int = 10, width: int = 16) -> None:
        super().__init__()
        w = width
        self.features = nn.Sequential(
            nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 4 * w, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(4 * w * 16, heads)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(F.adaptive_avg_pool2d(self.features(x * 2 - 1), 4).flatten(1))


def from_prior(prior_state: dict[str, torch.Tensor] | None, heads: int = 10, seed: int = 0) -> SmallCNN:
    """A 10-way classifier: the prior's conv trunk (when given) and a fresh head drawn with ``seed``; ``None`` = a
    network drawn from scratch with ``seed``."""
    torch.manual_seed(int(seed))
    net = SmallCNN(heads)
    if prior_state is not None:
        trunk = {k: v for k, v in prior_state.items() if k.startswith("features.")}
        net.load_state_dict(trunk, strict=False)
    return net


def n_params(module: nn.Module) -> int:
    return int(sum(p.numel() for p in module.parameters()))
