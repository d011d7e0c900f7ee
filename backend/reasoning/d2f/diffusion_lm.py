"""A small masked-diffusion language model for D2F, with the two attention patterns D2F needs and an exact KV cache.

Paper: "Diffusion LLMs Can Do Faster-Than-AR Inference via Discrete Diffusion Forcing" (D2F), Wang et al., ICLR 2026
(arXiv 2508.09192). This module is the model only; decoding lives in :mod:`backend.reasoning.d2f.decode`.

- The model (one readable file): the tiny reasoner's Llama architecture (:mod:`backend.models.tinyreasoner`):
  token embeddings, pre-norm blocks (RMSNorm, rotary position embeddings, SDPA attention with an explicit boolean
  mask, SwiGLU MLP), tied output head, and its vocabulary, which includes ``<mask>``.
- Dream-style adaptation (the teacher D2F distils from is Dream, a diffusion LM initialised from an autoregressive
  LM): :func:`from_autoregressive` copies the tiny reasoner's weights, and the **shifted** prediction keeps the AR
  layout: the output at position i predicts the token at position i + 1 (``cfg.shift``). A masked position j is
  thus predicted from the output at j - 1, which sees position j's mask token but never its true token.
- :func:`bidirectional_mask` ``(T)``: every position sees every position (the teacher, vanilla diffusion decoding).
- :func:`block_causal_mask` ``(T, prompt_len, block)``: the prompt is block 0; generated positions are grouped in
  blocks of ``block`` tokens; attention is bidirectional inside a block and causal across blocks (block i sees blocks
  0..i). Hence a block's hidden states do not depend on later blocks, and the keys/values of finished blocks can be
  cached exactly (:meth:`DiffusionLM.forward` with ``past`` and ``return_kv``). With the shift, the first token of a
  block is predicted by the last position of the block before (which sees no later block either).

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
    rope_theta: float = 10_000.0
    shift: bool = True        # the output at position i predicts token i + 1 (AR layout, Dream-style)


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


def rope(t: int, dim: int, theta: float, start: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin [t, dim] of rotary embeddings for positions ``start .. start + t - 1`` (the Llama layout: the two
    halves of the head dimension rotate together)."""
    inv = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    f = torch.arange(start, start + t, dtype=torch.float32)[:, None] * inv[None]
    emb = torch.cat([f, f], dim=-1)
    return emb.cos(), emb.sin()


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., h:], x[..., :h]], dim=-1) * sin


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

    def forward(self, x: torch.Tensor, mask: torch.Tensor, rot: tuple[torch.Tensor, torch.Tensor],
                past: tuple[torch.Tensor, torch.Tensor] | None = None
                ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.n_head, self.hd).transpose(1, 2) for z in (q, k, v))
        q, k = _rotate(q, *rot), _rotate(k, *rot)
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
        """Logits [B, T, V] at the positions ``start .. start + T - 1`` (with ``cfg.shift`` those at position i
        are the prediction of token i + 1); ``mask`` [T, start + T] says which of
        (cached past + these) positions each may attend to; ``past`` holds the cached keys/values of positions
        ``0 .. start - 1`` per layer. With ``return_kv`` also returns the per-layer (k, v) including these positions."""
        t = ids.shape[1]
        if start + t > self.cfg.max_positions:
            raise ValueError(f"sequence of {start + t} positions exceeds {self.cfg.max_positions}")
        x = self.tok(ids)
        rot = rope(t, self.cfg.hidden // self.cfg.n_head, self.cfg.rope_theta, start)
        kvs = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, mask, rot, None if past is None else past[i])
            kvs.append(kv)
        logits = self.ln_f(x) @ self.tok.weight.T
        return (logits, kvs) if return_kv else logits


def _rope_theta(c) -> float:  # noqa: ANN001
    params = getattr(c, "rope_parameters", None) or {}
    return float(params.get("rope_theta") or getattr(c, "rope_theta", None) or 10_000.0)


def aligned(logits: torch.Tensor, shift: bool) -> torch.Tensor:
    """[B, T, V] with position j holding the prediction of token j: with the shift, the logits of position j - 1
    (position 0, never predicted, repeats position 0's)."""
    return torch.cat([logits[:, :1], logits[:, :-1]], dim=1) if shift else logits


def from_autoregressive(ar_model: nn.Module, vocab_size: int) -> DiffusionLM:
    """A DiffusionLM holding the weights of a transformers Llama causal LM of the tiny reasoner's shape."""
    c = ar_model.config
    cfg = DiffusionLMConfig(vocab_size=vocab_size, n_layer=c.num_hidden_layers, hidden=c.hidden_size,
                            n_head=c.num_attention_heads, intermediate=c.intermediate_size,
                            max_positions=c.max_position_embeddings, rope_theta=_rope_theta(c), shift=True)
    m = DiffusionLM(cfg)
    src = ar_model.model
    with torch.no_grad():
        m.tok.weight.copy_(src.embed_tokens.weight)
        m.ln_f.weight.copy_(src.norm.weight)
        for blk, lay in zip(m.blocks, src.layers, strict=True):
            a, f = lay.self_attn, lay.mlp
            blk.qkv.weight.copy_(torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
            blk.proj.weight.copy_(a.o_proj.weight)
            blk.gate.weight.copy_(f.gate_proj.weight)
            blk.up.weight.copy_(f.up_proj.weight)
            blk.down.weight.copy_(f.down_proj.weight)
            blk.ln1.weight.copy_(lay.input_layernorm.weight)
            blk.ln2.weight.copy_(lay.post_attention_layernorm.weight)
    return m


def load_diffusion_lm(path) -> tuple[DiffusionLM, dict]:
    """A DiffusionLM written by ``python -m backend.train d2f`` and its metadata extra (vocabulary, length, block)."""
    from ... import weights

    tensors, meta = weights.load(path, made_by="python -m backend.train d2f")
    model = DiffusionLM(DiffusionLMConfig(**meta.config))
    model.load_state_dict(tensors)
    model.eval()
    return model, meta.extra
