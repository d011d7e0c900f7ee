"""The shared backbone's trainable top: LoRA on the last decoder layer of SmolLM2 plus decoupled task heads.

Size: one module holds the cached-state forward of the last layer (it must match the Hugging Face forward exactly,
see tests), the adapter, the heads and the text-generation path, because all three share the same weights.

The 29 lower layers stay frozen, so their output (the input of the last layer, ``hidden_states[29]``) is computed once
per row and cached. Training then runs only the last layer, and only at the positions a loss reads (the last prompt
position for a head; the answer positions for the LM head); keys and values still cover the whole row. Shapes: a batch
of cached states ``h`` is ``(B, T, 576)`` with a key mask ``(B, T)``; ``positions`` ``(B, P)`` index the query
positions; the output is the final-norm state ``(B, P, 576)``.

Routing (MFT): the prompt starts with a task-type token (``[regression:...]`` etc.); the state at the last prompt
position goes to the classification MLP of the task, the regression MLP of the task, or the LM head (text answers).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn


class Adapter(nn.Module):
    """LoRA (rank ``r``, scale ``alpha / r``) on the query and value projections of one decoder layer; ``B = 0`` at
    init, so an untrained adapter leaves the layer unchanged."""

    def __init__(self, d_model: int, d_q: int, d_v: int, r: int, alpha: float, seed: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(int(seed))
        self.r, self.scale = int(r), float(alpha) / max(int(r), 1)
        self.qA = nn.Parameter(torch.randn(r, d_model, generator=g) / math.sqrt(d_model))
        self.qB = nn.Parameter(torch.zeros(d_q, r))
        self.vA = nn.Parameter(torch.randn(r, d_model, generator=g) / math.sqrt(d_model))
        self.vB = nn.Parameter(torch.zeros(d_v, r))

    def dq(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ self.qA.T) @ self.qB.T * self.scale

    def dv(self, x: torch.Tensor) -> torch.Tensor:
        return (x @ self.vA.T) @ self.vB.T * self.scale


class MLPHead(nn.Module):
    """``576 -> hidden -> out`` with GELU: a classification head (``out`` = classes) or a regression head (``out`` = 1).

    The input is standardised per feature with fixed statistics (``mu``, ``sd``: buffers set from the frozen
    backbone's states of the training rows) because a few channels of the final state are 10-50 times larger than the
    rest and otherwise dominate a small head trained for a few epochs."""

    def __init__(self, d_model: int, hidden: int, out: int, seed: int) -> None:
        super().__init__()
        torch.manual_seed(int(seed))
        self.net = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, out))
        self.register_buffer("mu", torch.zeros(d_model))
        self.register_buffer("sd", torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mu) / self.sd)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class TopLayer:
    """The frozen last decoder layer, final norm and tied LM head of a LlamaForCausalLM, run on cached states."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.layer = model.model.layers[-1]
        self.norm = model.model.norm
        self.rotary = model.model.rotary_emb
        cfg = model.config
        self.n_heads, self.n_kv = int(cfg.num_attention_heads), int(cfg.num_key_value_heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
        self.d_model = int(cfg.hidden_size)
        self.lm_weight = model.get_output_embeddings().weight  # (V, D), tied to the input embeddings
        for p in model.parameters():
            p.requires_grad_(False)

    def new_adapter(self, r: int, alpha: float, seed: int) -> Adapter:
        a = self.layer.self_attn
        return Adapter(self.d_model, a.q_proj.out_features, a.v_proj.out_features, r, alpha, seed)

    def forward(self, h: torch.Tensor, key_mask: torch.Tensor, positions: torch.Tensor,
                adapter: Adapter | None = None) -> torch.Tensor:
        """Final-norm states at ``positions`` (B, P) from cached last-layer inputs ``h`` (B, T, D)."""
        B, T, D = h.shape
        P = positions.shape[1]
        attn, layer = self.layer.self_attn, self.layer
        x = layer.input_layernorm(h)
        pos_all = torch.arange(T).unsqueeze(0).expand(B, T)
        cos, sin = self.rotary(x, pos_all)  # (B, T, head_dim)
        k = attn.k_proj(x)
        v = attn.v_proj(x)
        if adapter is not None:
            v = v + adapter.dv(x)
        gidx = positions.unsqueeze(-1).expand(B, P, D)
        xq = torch.gather(x, 1, gidx)
        q = attn.q_proj(xq)
        if adapter is not None:
            q = q + adapter.dq(xq)
        q = q.view(B, P, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        cidx = positions.unsqueeze(-1).expand(B, P, self.head_dim)
        cq, sq = torch.gather(cos, 1, cidx).unsqueeze(1), torch.gather(sin, 1, cidx).unsqueeze(1)
        q = q * cq + _rotate_half(q) * sq
        k = k * cos.unsqueeze(1) + _rotate_half(k) * sin.unsqueeze(1)
        rep = self.n_heads // self.n_kv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        allowed = (torch.arange(T).view(1, 1, T) <= positions.unsqueeze(-1)) & key_mask.bool().unsqueeze(1)
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed.unsqueeze(1))
        o = attn.o_proj(o.transpose(1, 2).reshape(B, P, self.n_heads * self.head_dim))
        hq = torch.gather(h, 1, gidx) + o
        hq = hq + layer.mlp(layer.post_attention_layernorm(hq))
        return self.norm(hq)

    def logits(self, states: torch.Tensor) -> torch.Tensor:
        return states @ self.lm_weight.T

    @contextmanager
    def adapted(self, adapter: Adapter | None):
        """Patch the adapter into the Hugging Face layer (for full-model generation); restored on exit."""
        if adapter is None:
            yield
            return
        attn = self.layer.self_attn
        q0, v0 = attn.q_proj, attn.v_proj
        attn.q_proj, attn.v_proj = _Patched(q0, adapter.dq), _Patched(v0, adapter.dv)
        try:
            yield
        finally:
            attn.q_proj, attn.v_proj = q0, v0


class _Patched(nn.Module):
    def __init__(self, base: nn.Module, delta: Any) -> None:
        super().__init__()
        self.base, self.delta = base, delta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.delta(x)


@torch.no_grad()
def cache_states(model: Any, token_ids: list[list[int]], batch: int = 16, progress: Any = None,
                 token: Any = None) -> list[torch.Tensor]:
    """The input of the last decoder layer (``hidden_states[-2]``) for each token list: ``(T_i, D)`` tensors."""
    from ...runtime import report

    out: list[torch.Tensor] = []
    texts = token_ids
    for i in range(0, len(texts), batch):
        if token is not None:
            token.check()
        enc = texts[i : i + batch]
        T = max(len(e) for e in enc)
        ids = torch.zeros(len(enc), T, dtype=torch.long)
        mask = torch.zeros(len(enc), T, dtype=torch.long)
        for j, e in enumerate(enc):
            ids[j, : len(e)] = torch.tensor(e)
            mask[j, : len(e)] = 1
        hs = model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
        h = hs[-2]
        for j, e in enumerate(enc):
            out.append(h[j, : len(e)].clone())
        report(progress, min(1.0, (i + batch) / max(len(texts), 1)), f"backbone states {min(i + batch, len(texts))}/{len(texts)}")
    return out
