"""The pooling layers over the token states of a frozen model: mean, max, CLS / last token, the attention readout
(AdaPool) and GLOT's token graph, GAT layers and readout. Layers only (a leaf module: torch and the error type); the
registry that names them is :mod:`backend.tokens.glot.pooling`.

Every pooler maps ``hidden [B, L, d]`` and ``mask [B, L]`` (1 = token, 0 = padding) to :class:`Pooled`: the vector
``z [B, D]`` and, for attention readouts, the weights ``pi [B, L]`` (0 on padding, summing to 1 per row).

The baselines follow the released code of GLOT (Mantri et al., ICLR 2026, arXiv 2603.03389, ``main.py`` and
``diagnostic_stress_test.py``): masked mean, masked max, the first token of an encoder or the last valid token of a
decoder (right padding), and AdaPool = a tanh-MLP scorer with a softmax over the valid tokens (no graph). Here AdaPool
uses GLOT's scorer width rule ``max(128, d // 2)``, so that AdaPool is exactly GLOT with K = 0 (the released stress
script fixes AdaPool's width at 128; set ``scorer_hidden=128`` to match it).

GLOT (per text, on the last hidden states ``H [L, d]`` and the attention mask):

1. Graph over the valid tokens: ``S_ij = cos(h_i, h_j)``, ``A_ij = 1`` iff ``S_ij > tau`` (strict). Self-loops are kept
   (the diagonal passes for tau < 1 and the GAT layer adds them anyway). The released code gives every edge the constant
   attribute 1, which cannot change a GAT softmax, so the graph is unweighted here and the unused edge projection of
   ``GATConv(edge_dim=1)`` is left out.
2. ``K`` single-head GAT layers, each followed by ReLU: ``g_i = W u_i``, ``e_ij = LeakyReLU_0.2(a_dst.g_i + a_src.g_j)``
   for ``j`` in ``N(i)`` (self included), ``alpha_ij = softmax_j e_ij``, ``u'_i = sum_j alpha_ij g_j + b``.
   Implemented densely: attention logits on ``[B, L, L]`` masked by ``A`` (no graph library).
3. Jumping knowledge "cat": ``U = [H, H_1, ..., H_K]`` of width ``d + K * hidden`` (also "max" / "mean" as in the code).
4. Readout (AdaPool form): ``m_i = v^T tanh(W_r u_i + b)`` with scorer width ``max(128, D // 2)``, ``pi = softmax(m)``
   over the valid tokens, ``z = sum_i pi_i u_i``.

Defaults (:class:`GlotConfig`) are the CPU miniature of the spec: K = 2, GAT hidden 64, tau 0.6, JK "cat". The paper's
stress test uses K = 4, hidden 64, tau 0.6 (``PAPER_STRESS``); its GLUE runs K = 2, hidden 256, tau 0.8 (``PAPER_GLUE``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ...errors import InputError
from ...registry import Registry


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


# ========================================================================================== jumping knowledge
@dataclass(frozen=True)
class JumpingKnowledge:
    """How the input states and the K GAT layers' states combine into the readout's features: ``combine(states)``
    with ``states = [H, H_1, ..., H_K]`` (each ``[B, L, *]``); ``keeps_input``: the input ``H`` is part of the result
    (width ``d + K * hidden``), else only the layers are (width ``hidden``)."""

    combine: Any
    keeps_input: bool

    def __call__(self, states: list[torch.Tensor]) -> torch.Tensor:
        return self.combine(states)


def _jk_cat(states: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat(states, dim=-1)


def _jk_max(states: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack(states[1:], dim=-1).amax(-1)


def _jk_mean(states: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack(states[1:], dim=-1).mean(-1)


JUMPING_KNOWLEDGE: Registry[JumpingKnowledge] = Registry("jumping-knowledge mode")
JUMPING_KNOWLEDGE.add("cat", JumpingKnowledge(_jk_cat, True), label="JK concatenation", kind="ours",
                      about="the input and every GAT layer side by side (the paper's runs)")
JUMPING_KNOWLEDGE.add("max", JumpingKnowledge(_jk_max, False), label="JK max", kind="ablation",
                      about="channel-wise max over the GAT layers")
JUMPING_KNOWLEDGE.add("mean", JumpingKnowledge(_jk_mean, False), label="JK mean", kind="ablation",
                      about="mean over the GAT layers")


# ======================================================================================================== GLOT
@dataclass(frozen=True)
class GlotConfig:
    """GLOT's pooling settings. ``scorer_hidden=None`` = the released rule ``max(128, D // 2)``."""

    num_layers: int = 2  # K, the number of GAT layers
    gat_hidden: int = 64
    tau: float = 0.6  # cosine threshold of the token graph (strict: an edge when cos > tau)
    jk: str = "cat"  # jumping knowledge: "cat" | "max" | "mean"
    negative_slope: float = 0.2
    scorer_hidden: int | None = None

    def __post_init__(self) -> None:
        if self.num_layers < 0 or self.num_layers > 8:
            raise InputError(f"K (GAT layers) must be between 0 and 8; got {self.num_layers}.")
        if not 1 <= self.gat_hidden <= 1024:
            raise InputError(f"The GAT hidden size must be between 1 and 1024; got {self.gat_hidden}.")
        if not -1.0 <= self.tau <= 1.0:
            raise InputError(f"tau is a cosine threshold in [-1, 1]; got {self.tau}.")
        object.__setattr__(self, "jk", JUMPING_KNOWLEDGE.key(self.jk))
        if not JUMPING_KNOWLEDGE[self.jk].keeps_input and self.num_layers == 0:
            raise InputError(f"JK {self.jk!r} combines the GAT layers only: it needs at least one (K >= 1).")


PAPER_STRESS = GlotConfig(num_layers=4, gat_hidden=64, tau=0.6)
PAPER_GLUE = GlotConfig(num_layers=2, gat_hidden=256, tau=0.8)


def cosine_matrix(hidden: torch.Tensor) -> torch.Tensor:
    """``[B, L, d] -> [B, L, L]`` cosine similarities of the token states."""
    x = F.normalize(hidden.float(), dim=-1, eps=1e-8)
    return x @ x.transpose(1, 2)


def token_graph(hidden: torch.Tensor, mask: torch.Tensor, tau: float) -> torch.Tensor:
    """The binary token graph ``A [B, L, L]`` (bool): ``cos(h_i, h_j) > tau`` between valid tokens, self-loops on every
    valid token, nothing on padding. Symmetric; the edge count is non-increasing in ``tau``."""
    valid = mask.bool()
    pair = valid.unsqueeze(2) & valid.unsqueeze(1)
    adj = (cosine_matrix(hidden) > tau) & pair
    eye = torch.eye(hidden.shape[1], dtype=torch.bool, device=hidden.device).unsqueeze(0)
    return adj | (eye & valid.unsqueeze(2))


def edge_density(adj: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[B]``: the fraction of ordered pairs ``i != j`` of valid tokens that are linked (self-loops not counted)."""
    n = mask.bool().sum(1).float()
    eye = torch.eye(adj.shape[1], dtype=torch.bool, device=adj.device).unsqueeze(0)
    edges = (adj & ~eye).sum((1, 2)).float()
    return edges / (n * (n - 1)).clamp_min(1.0)


class DenseGATLayer(nn.Module):
    """One single-head GAT layer on a dense adjacency (GATConv semantics: shared linear map, attention vectors for the
    target and the source node, LeakyReLU, softmax over the neighbours including the node itself, output bias).

    ``u [B, L, d_in], adj [B, L, L] (bool, self-loops included) -> [B, L, d_out]``. Rows of padding (no neighbour)
    give the bias only; they are masked out downstream.
    """

    def __init__(self, in_dim: int, out_dim: int, negative_slope: float = 0.2) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.att_src = nn.Parameter(torch.empty(out_dim))
        self.att_dst = nn.Parameter(torch.empty(out_dim))
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.negative_slope = negative_slope
        nn.init.xavier_uniform_(self.lin.weight)
        bound = math.sqrt(6.0 / (1 + out_dim))  # glorot on a [1, out_dim] attention vector, as in the code
        nn.init.uniform_(self.att_src, -bound, bound)
        nn.init.uniform_(self.att_dst, -bound, bound)

    def attention(self, g: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        """``alpha [B, L, L]``: row i = attention of target i over its neighbours j (0 off the graph)."""
        logits = (g @ self.att_dst).unsqueeze(2) + (g @ self.att_src).unsqueeze(1)
        logits = F.leaky_relu(logits, self.negative_slope).masked_fill(~adj, float("-inf"))
        alpha = torch.softmax(logits, dim=-1)
        return torch.nan_to_num(alpha, nan=0.0)  # padding rows have no neighbour at all

    def forward(self, u: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        g = self.lin(u)
        return self.attention(g, adj) @ g + self.bias


class GLOT(nn.Module):
    """GLOT pooling: token graph -> K GAT layers with ReLU -> jumping knowledge -> attention readout.

    ``forward(hidden [B, L, d], mask [B, L], adj=None) -> Pooled(z [B, D], weights [B, L])`` with ``D = d + K * hidden``
    for JK "cat" (``hidden`` for "max"/"mean"). ``adj`` may be passed precomputed (it depends only on the frozen states
    and tau); else it is built from ``hidden`` with ``config.tau``.
    """

    def __init__(self, in_dim: int, config: GlotConfig | None = None) -> None:
        super().__init__()
        self.config = cfg = config or GlotConfig()
        self.in_dim = in_dim
        dims = [in_dim] + [cfg.gat_hidden] * cfg.num_layers
        self.convs = nn.ModuleList(DenseGATLayer(a, b, cfg.negative_slope) for a, b in zip(dims[:-1], dims[1:]))
        self.jk = JUMPING_KNOWLEDGE[cfg.jk]
        self.out_dim = in_dim + cfg.num_layers * cfg.gat_hidden if self.jk.keeps_input else cfg.gat_hidden
        self.readout = AttentionReadout(self.out_dim, cfg.scorer_hidden)

    def refine(self, hidden: torch.Tensor, mask: torch.Tensor, adj: torch.Tensor | None = None) -> torch.Tensor:
        """The token features ``U [B, L, D]`` fed to the readout (input and every GAT layer, combined by JK)."""
        if adj is None:
            adj = token_graph(hidden, mask, self.config.tau)
        states = [hidden]
        h = hidden
        for conv in self.convs:
            h = F.relu(conv(h, adj))
            states.append(h)
        return self.jk(states)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor, adj: torch.Tensor | None = None) -> Pooled:
        return self.readout(self.refine(hidden, mask, adj), mask)
