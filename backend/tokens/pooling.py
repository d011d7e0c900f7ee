"""Sentence poolings over the token states of a frozen model, behind one registry: mean, max, CLS/last token, AdaPool
and GLOT.

The baselines follow the released code of GLOT (Mantri et al., ICLR 2026, arXiv 2603.03389, ``main.py`` and
``diagnostic_stress_test.py``): masked mean, masked max, the first token of an encoder or the last valid token of a
decoder (right padding), and AdaPool = a tanh-MLP scorer with a softmax over the valid tokens (no graph). Here AdaPool
uses GLOT's scorer width rule ``max(128, d // 2)``, so that AdaPool is exactly GLOT with K = 0 (the released stress
script fixes AdaPool's width at 128; set ``scorer_hidden=128`` to match it).

Every pooler maps ``hidden [B, L, d]`` and ``mask [B, L]`` (1 = token, 0 = padding) to :class:`Pooled`: the vector
``z [B, D]`` and, for attention readouts, the weights ``pi [B, L]`` (0 on padding, summing to 1 per row).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

POOLINGS: tuple[str, ...] = ("mean", "max", "cls", "adapool", "glot")
POOLING_LABELS: dict[str, str] = {
    "mean": "Mean", "max": "Max", "cls": "CLS / last token", "adapool": "AdaPool", "glot": "GLOT",
}


@dataclass
class Pooled:
    """``z``: pooled vectors ``[B, D]``; ``weights``: readout weights ``[B, L]`` or None (mean/max/CLS)."""

    z: torch.Tensor
    weights: torch.Tensor | None = None


def masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[B, L, d], [B, L] -> [B, d]``: the mean over valid tokens."""
    m = mask.to(hidden.dtype).unsqueeze(-1)
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1e-6)


def masked_max(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[B, L, d], [B, L] -> [B, d]``: the channel-wise max over valid tokens."""
    return hidden.masked_fill(~mask.bool().unsqueeze(-1), torch.finfo(hidden.dtype).min).amax(1)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax of ``scores [B, L]`` over the valid positions of ``mask``; padding gets exactly 0."""
    return torch.softmax(scores.masked_fill(~mask.bool(), float("-inf")), dim=-1)


def scorer_width(in_dim: int) -> int:
    """Hidden width of the readout scorer in the released code: ``max(128, in_dim // 2)``."""
    return max(128, int(in_dim) // 2)


class MeanPool(nn.Module):
    """Masked mean of the token states (no parameters)."""

    def __init__(self, in_dim: int) -> None:
        super().__init__()
        self.out_dim = in_dim

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> Pooled:
        return Pooled(masked_mean(hidden, mask))


class MaxPool(nn.Module):
    """Channel-wise masked max of the token states (no parameters)."""

    def __init__(self, in_dim: int) -> None:
        super().__init__()
        self.out_dim = in_dim

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> Pooled:
        return Pooled(masked_max(hidden, mask))


class ClsPool(nn.Module):
    """The first token (encoders: [CLS]) or the last valid token (decoders, right padding). No parameters."""

    def __init__(self, in_dim: int, last_token: bool = False) -> None:
        super().__init__()
        self.out_dim = in_dim
        self.last_token = last_token

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> Pooled:
        if not self.last_token:
            return Pooled(hidden[:, 0])
        idx = (mask.long().sum(1) - 1).clamp_min(0)
        return Pooled(hidden[torch.arange(hidden.shape[0], device=hidden.device), idx])


class AttentionReadout(nn.Module):
    """AdaPool readout: ``m_i = v^T tanh(W u_i + b) + c``, ``pi = softmax(m)`` over valid tokens, ``z = sum_i pi_i u_i``.

    ``u [B, L, D] -> z [B, D], pi [B, L]``. GLOT uses the same module on its jumping-knowledge features.
    """

    def __init__(self, in_dim: int, scorer_hidden: int | None = None) -> None:
        super().__init__()
        width = scorer_hidden or scorer_width(in_dim)
        self.score = nn.Sequential(nn.Linear(in_dim, width), nn.Tanh(), nn.Linear(width, 1))
        self.out_dim = in_dim

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> Pooled:
        pi = masked_softmax(self.score(hidden).squeeze(-1), mask)
        return Pooled((pi.unsqueeze(-1) * hidden).sum(1), pi)


AdaPool = AttentionReadout
_CLASSES: dict[str, type[nn.Module]] = {"mean": MeanPool, "max": MaxPool, "cls": ClsPool, "adapool": AdaPool}


def get_method(name: str) -> Callable[..., Any]:
    """The factory of pooling ``name``: ``factory(in_dim, *, is_decoder=False, config=None) -> nn.Module``.

    ``config`` is a :class:`backend.tokens.glot.GlotConfig` (GLOT's graph and GAT settings; AdaPool reads its
    ``scorer_hidden``). Unknown names raise ``ValueError`` listing the valid ones.
    """
    key = str(name).strip().lower()
    if key not in POOLINGS:
        raise ValueError(f"Unknown pooling '{name}'. Valid poolings: {', '.join(POOLINGS)}.")

    def factory(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
        if key == "glot":
            from .glot import GLOT, GlotConfig

            return GLOT(in_dim, config or GlotConfig())
        cls = _CLASSES[key]
        if key == "cls":
            return cls(in_dim, last_token=is_decoder)
        if key == "adapool":
            return cls(in_dim, getattr(config, "scorer_hidden", None))
        return cls(in_dim)

    return factory


def build_pooler(name: str, in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
    """Shortcut for ``get_method(name)(in_dim, is_decoder=..., config=...)``."""
    return get_method(name)(in_dim, is_decoder=is_decoder, config=config)
