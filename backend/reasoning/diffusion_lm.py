"""A small masked-diffusion language model for D2F, with the two attention patterns D2F needs and an exact KV cache.

Paper: "Diffusion LLMs Can Do Faster-Than-AR Inference via Discrete Diffusion Forcing" (D2F), Wang et al., ICLR 2026
(arXiv 2508.09192). This module is the model only; decoding lives in :mod:`backend.reasoning.d2f`.

- The model (nanoGPT-style, one readable file): token + learned position embeddings, pre-norm blocks (RMSNorm, SDPA
  attention with an explicit boolean mask, SwiGLU MLP), tied output head. It predicts every position's token; the
  vocabulary (the tiny reasoner's, :mod:`backend.models.tinyreasoner`) includes ``<mask>``.
- :func:`bidirectional_mask` ``(T)``: every position sees every position (the teacher, vanilla diffusion decoding).
- :func:`block_causal_mask` ``(T, prompt_len, block)``: the prompt is block 0; generated positions are grouped in
  blocks of ``block`` tokens; attention is bidirectional inside a block and causal across blocks (block i sees blocks
  0..i). Hence a block's hidden states do not depend on later blocks, and the keys/values of finished blocks can be
  cached exactly (:meth:`DiffusionLM.forward` with ``past`` and ``return_kv``).

Shapes: ``ids`` [B, T] int64 -> logits [B, T, V]; masks [T_new, T_past + T_new] bool (True = may attend).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class DiffusionLMConfig:
    vocab_size: int = 330
    n_layer: int = 4
    hidden: int = 192
    n_head: int = 3
    intermediate: int = 512
    max_positions: int = 256


def bidirectional_mask(t: int) -> torch.Tensor:
    return torch.ones(t, t, dtype=torch.bool)


def block_ids(t: int, prompt_len: int, block: int) -> torch.Tensor:
    """Block index per position: 0 for the prompt, then 1, 2, ... for each run of ``block`` generated positions."""
    pos = torch.arange(t)
    return torch.where(pos < prompt_len, torch.zeros_like(pos), 1 + (pos - prompt_len) // block)


def block_causal_mask(t: int, prompt_len: int, block: int) -> torch.Tensor:
    """[T, T]: position i may attend to j iff block(j) <= block(i)."""
    b = block_ids(t, prompt_len, block)
    return b[None, :] <= b[:, None]


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, cfg: DiffusionLMConfig):
        super().__init__()
        self.n_head, self.hd = cfg.n_head, cfg.hidden // cfg.n_head
        self.ln1, self.ln2 = RMSNorm(cfg.hidden), RMSNorm(cfg.hidden)
        self.qkv = nn.Linear(cfg.hidden, 3 * cfg.hidden, bias=False)
        self.proj = nn.Linear(cfg.hidden, cfg.hidden, bias=False)
        self.gate = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.up = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.down = nn.Linear(cfg.intermediate, cfg.hidden, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor,
                past: tuple[torch.Tensor, torch.Tensor] | None = None
                ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.n_head, self.hd).transpose(1, 2) for z in (q, k, v))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        h = self.ln2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h)), (k, v)


class DiffusionLM(nn.Module):
    """Masked-diffusion LM (see the module docstring)."""

    def __init__(self, cfg: DiffusionLMConfig):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.pos = nn.Embedding(cfg.max_positions, cfg.hidden)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = RMSNorm(cfg.hidden)
        self.apply(self._init)
        for blk in self.blocks:  # GPT-2 style scaled init of the residual projections
            nn.init.normal_(blk.proj.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))
            nn.init.normal_(blk.down.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, start: int = 0,
                past: list[tuple[torch.Tensor, torch.Tensor]] | None = None, return_kv: bool = False):
        """Logits [B, T, V] of the positions ``start .. start + T - 1``; ``mask`` [T, start + T] says which of
        (cached past + these) positions each may attend to; ``past`` holds the cached keys/values of positions
        ``0 .. start - 1`` per layer. With ``return_kv`` also returns the per-layer (k, v) including these positions."""
        t = ids.shape[1]
        if start + t > self.cfg.max_positions:
            raise ValueError(f"sequence of {start + t} positions exceeds {self.cfg.max_positions}")
        x = self.tok(ids) + self.pos(torch.arange(start, start + t))[None]
        kvs = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, mask, None if past is None else past[i])
            kvs.append(kv)
        logits = self.ln_f(x) @ self.tok.weight.T
        return (logits, kvs) if return_kv else logits


def load_diffusion_lm(path) -> tuple[DiffusionLM, dict]:
    """A DiffusionLM written by ``python -m backend.train d2f`` and its metadata extra (vocabulary, length, block)."""
    from .. import weights

    tensors, meta = weights.load(path, made_by="python -m backend.train d2f")
    model = DiffusionLM(DiffusionLMConfig(**meta.config))
    model.load_state_dict(tensors)
    model.eval()
    return model, meta.extra
