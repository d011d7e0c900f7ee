"""The encoder and the MoCo-v3 objective (Chen, Xie and He, ICCV 2021), at miniature size.

- :class:`Encoder`: a four-layer CNN on 32 x 32 RGB (3 -> 24 -> 48 -> 64 -> 64 channels, batch norm, ReLU, strides
  2-2-2-1, global average pool): ``[B, 3, 32, 32]`` -> features ``[B, 64]``. The probes read these features.
- :class:`MoCo`: the query branch (encoder, projector MLP 64 -> 128 -> 64, predictor MLP 64 -> 128 -> 64) and the
  key branch (a copy of encoder and projector, updated as an exponential moving average of the query branch,
  momentum ``m``; no gradient). :func:`info_nce` is the symmetrised InfoNCE of MoCo v3,
  ``2 tau CE(q_1 k_2^T / tau, diag) + 2 tau CE(q_2 k_1^T / tau, diag)``, whose negatives are the batch's other keys.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812


@dataclass(frozen=True)
class ModelConfig:
    """``width``: channels of the four conv layers; ``hidden`` / ``dim``: the MLPs' hidden and output sizes;
    ``tau``: InfoNCE temperature (MoCo v3: 0.2); ``momentum``: EMA of the key branch (MoCo v3: 0.99 to 1)."""

    width: tuple[int, int, int, int] = (24, 48, 64, 64)
    hidden: int = 128
    dim: int = 64
    tau: float = 0.2
    momentum: float = 0.99


class Encoder(nn.Module):
    """``[B, 3, 32, 32]`` floats in [0, 1] -> ``[B, width[-1]]``."""

    MEAN = (0.75, 0.72, 0.70)
    STD = (0.22, 0.22, 0.22)

    def __init__(self, width: tuple[int, ...] = ModelConfig.width):
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for i, c in enumerate(width):
            layers += [nn.Conv2d(cin, c, 3, stride=1 if i == len(width) - 1 else 2, padding=1, bias=False), nn.BatchNorm2d(c),
                       nn.ReLU(inplace=True)]
            cin = c
        self.net = nn.Sequential(*layers)
        self.register_buffer("mean", torch.tensor(self.MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(self.STD).view(1, 3, 1, 1), persistent=False)
        self.out_dim = cin

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.std).mean((2, 3))


def mlp(din: int, hidden: int, dout: int, last_bn: bool = True) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Linear(din, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True),
                               nn.Linear(hidden, dout, bias=False)]
    if last_bn:
        layers.append(nn.BatchNorm1d(dout, affine=False))
    return nn.Sequential(*layers)


def info_nce(q: torch.Tensor, k: torch.Tensor, tau: float) -> torch.Tensor:
    """InfoNCE of queries ``[B, d]`` against keys ``[B, d]`` (row i's positive is key i), times ``2 tau``."""
    q, k = F.normalize(q, dim=1), F.normalize(k, dim=1)
    logits = q @ k.t() / tau
    return F.cross_entropy(logits, torch.arange(q.shape[0])) * (2 * tau)


class MoCo(nn.Module):
    """MoCo v3 with an EMA key branch; :meth:`loss` of a batch of positive pairs ``x1, x2 [B, 3, 32, 32]``."""

    def __init__(self, config: ModelConfig = ModelConfig()):
        super().__init__()
        self.config = config
        self.encoder = Encoder(config.width)
        self.projector = mlp(self.encoder.out_dim, config.hidden, config.dim)
        self.predictor = mlp(config.dim, config.hidden, config.dim, last_bn=False)
        self.key_encoder = copy.deepcopy(self.encoder)
        self.key_projector = copy.deepcopy(self.projector)
        for p in [*self.key_encoder.parameters(), *self.key_projector.parameters()]:
            p.requires_grad_(False)

    @torch.no_grad()
    def update_keys(self, m: float | None = None) -> None:
        """key = m key + (1 - m) query, for every parameter (buffers copied)."""
        m = self.config.momentum if m is None else m
        for src, dst in ((self.encoder, self.key_encoder), (self.projector, self.key_projector)):
            for ps, pd in zip(src.parameters(), dst.parameters(), strict=True):
                pd.mul_(m).add_(ps.detach(), alpha=1 - m)
            for bs, bd in zip(src.buffers(), dst.buffers(), strict=True):
                bd.copy_(bs)

    def loss(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        q1 = self.predictor(self.projector(self.encoder(x1)))
        q2 = self.predictor(self.projector(self.encoder(x2)))
        with torch.no_grad():
            k1 = self.key_projector(self.key_encoder(x1))
            k2 = self.key_projector(self.key_encoder(x2))
        return info_nce(q1, k2, self.config.tau) + info_nce(q2, k1, self.config.tau)
