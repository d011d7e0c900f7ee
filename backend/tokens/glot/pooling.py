"""The sentence poolings compared on the GLOT page, behind one registry (:data:`POOLINGS`): mean, max, CLS / last
token, AdaPool and GLOT (layers in :mod:`backend.tokens.glot.layers`).

Each entry is a :class:`Pooling`: a factory ``pooling(in_dim, *, is_decoder=False, config=None) -> nn.Module``
(``config`` is a :class:`~backend.tokens.glot.layers.GlotConfig`: GLOT's graph and GAT settings; AdaPool reads its
``scorer_hidden``) and what the rest of the package needs to know about it: whether it needs the token graph, whether
it has readout weights to show, and which entry is the same readout without the graph (the ablation that measures the
graph's effect). Importing this module loads no torch (the CLI reads the names).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...registry import Registry


@dataclass(frozen=True)
class Pooling:
    factory: Callable[..., Any]
    graph: bool = False          # needs the token graph (adjacency) of the cached states
    readout: bool = False        # attention readout: per-token weights the page shows
    without_graph: str | None = None  # the entry that is this pooling without its graph (GLOT with K = 0)
    scale: bool = False          # listed beside the graph's effect for scale

    def __call__(self, in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
        return self.factory(in_dim, is_decoder=is_decoder, config=config)


def _mean(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
    from .layers import MeanPool

    return MeanPool(in_dim)


def _max(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
    from .layers import MaxPool

    return MaxPool(in_dim)


def _cls(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
    from .layers import ClsPool

    return ClsPool(in_dim, last_token=is_decoder)


def _adapool(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
    from .layers import AdaPool

    return AdaPool(in_dim, getattr(config, "scorer_hidden", None))


def _glot(in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
    from .layers import GLOT, GlotConfig

    return GLOT(in_dim, config or GlotConfig())


POOLINGS: Registry[Pooling] = Registry("pooling")
POOLINGS.add("mean", Pooling(_mean, scale=True), label="Mean", kind="baseline", color="#7f7f7f",
             about="masked mean of the token states")
POOLINGS.add("max", Pooling(_max), label="Max", kind="baseline", color="#bcbd22", about="channel-wise masked max")
POOLINGS.add("cls", Pooling(_cls), label="CLS / last token", kind="baseline", color="#17becf",
             about="the first token (encoders) or the last valid token (decoders)")
POOLINGS.add("adapool", Pooling(_adapool, readout=True), label="AdaPool", kind="baseline", color="#ff7f0e",
             about="attention readout over the tokens, no graph (GLOT with K = 0)")
POOLINGS.add("glot", Pooling(_glot, graph=True, readout=True, without_graph="adapool"), label="GLOT", kind="ours",
             color="#d62728", about="token graph -> K GAT layers -> jumping knowledge -> attention readout")
POOLING_NAMES: tuple[str, ...] = tuple(POOLINGS)
#: GLOT (the method of the page), the registry's one ``ours`` entry.
OURS: str = POOLINGS.names("ours")[0]
#: The plain mean pooling, listed beside the graph's effect for scale.
MEAN: str = next(n for n, p in POOLINGS.items() if p.scale)
get_method = POOLINGS.get


def build_pooler(name: str, in_dim: int, *, is_decoder: bool = False, config: Any = None) -> Any:
    """Shortcut for ``get_method(name)(in_dim, is_decoder=..., config=...)``."""
    return get_method(name)(in_dim, is_decoder=is_decoder, config=config)


def needs_graph(names: Any) -> bool:
    return any(POOLINGS[n].graph for n in names)


def readouts(names: Any) -> list[str]:
    """The attention readouts among ``names``: GLOT first, then the registry's order."""
    have = set(names)
    return list(dict.fromkeys(n for n in (OURS, *POOLINGS) if n in have and POOLINGS[n].readout))


__all__ = ["MEAN", "OURS", "POOLINGS", "POOLING_NAMES", "Pooling", "build_pooler", "get_method", "needs_graph",
           "readouts"]
