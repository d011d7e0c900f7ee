"""The sentence poolings compared on the GLOT page, behind one registry (:data:`POOLINGS`): mean, max, CLS / last
token, AdaPool and GLOT (layers in :mod:`backend.tokens.pool_layers`).

Each entry is a factory ``factory(in_dim, *, is_decoder=False, config=None) -> nn.Module``; ``config`` is a
:class:`~backend.tokens.pool_layers.GlotConfig` (GLOT's graph and GAT settings; AdaPool reads its ``scorer_hidden``).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from ..registry import Registry
from .pool_layers import GLOT, AdaPool, ClsPool, GlotConfig, MaxPool, MeanPool

Factory = Any  # (in_dim, *, is_decoder=False, config=None) -> nn.Module


def _mean(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> nn.Module:
    return MeanPool(in_dim)


def _max(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> nn.Module:
    return MaxPool(in_dim)


def _cls(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> nn.Module:
    return ClsPool(in_dim, last_token=is_decoder)


def _adapool(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> nn.Module:
    return AdaPool(in_dim, getattr(config, "scorer_hidden", None))


def _glot(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> nn.Module:
    return GLOT(in_dim, config or GlotConfig())


POOLINGS: Registry[Factory] = Registry("pooling")
POOLINGS.add("mean", _mean, label="Mean", kind="baseline", color="#7f7f7f", about="masked mean of the token states")
POOLINGS.add("max", _max, label="Max", kind="baseline", color="#bcbd22", about="channel-wise masked max")
POOLINGS.add("cls", _cls, label="CLS / last token", kind="baseline", color="#17becf",
             about="the first token (encoders) or the last valid token (decoders)")
POOLINGS.add("adapool", _adapool, label="AdaPool", kind="baseline", color="#ff7f0e",
             about="attention readout over the tokens, no graph (GLOT with K = 0)")
POOLINGS.add("glot", _glot, label="GLOT", kind="ours", color="#d62728",
             about="token graph -> K GAT layers -> jumping knowledge -> attention readout")
POOLING_NAMES: tuple[str, ...] = tuple(POOLINGS)
get_method = POOLINGS.get


def build_pooler(name: str, in_dim: int, *, is_decoder: bool = False, config: Any = None) -> nn.Module:
    """Shortcut for ``get_method(name)(in_dim, is_decoder=..., config=...)``."""
    return get_method(name)(in_dim, is_decoder=is_decoder, config=config)


__all__ = ["POOLINGS", "POOLING_NAMES", "build_pooler", "get_method"]
