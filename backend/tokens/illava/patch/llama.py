"""The language-model patcher: an explicit loop over the decoder layers of a Llama-family causal LM (SmolLM2, Llama,
Qwen2) with image-token reduction between layers.

Layers run on the fused attention path; at a merge layer ``K`` the image tokens are ranked by the head-averaged
attention of the last prompt token in layer ``K - 1`` (FastV's and the iLLaVA code's signal, computed for that one
query row only) and reduced before layer ``K``; kept tokens keep their original position ids. A question-independent
prefix (text prefix and image tokens) can be cached so that several questions about one image reuse it
(:meth:`LlamaRunner.prefix_cache`, :meth:`LlamaRunner.questions`). :func:`apply_patch` wraps a host causal LM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .. import merging
from ..plan import ReductionPlan, StepRecord, record_step


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return x * cos[:, None] + _rotate_half(x) * sin[:, None]


@dataclass
class PrefixCache:
    """Keys/values of a question-independent prompt prefix (text prefix + image tokens) for every layer, and the
    hidden state entering every layer (``hidden[i] [1, P, d]``), so that several questions about one image reuse it."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    hidden: list[torch.Tensor]
    length: int
    pos: torch.Tensor | None = None  # [1, P] position ids of the prefix (None: 0..P-1)
    next_pos: int | None = None  # position id of the first question token (None: P)


@dataclass
class LLMRun:
    """Output of the language model: ``last [B, d]`` final-norm hidden state of each request's last prompt token,
    the image-token step records, and the number of image tokens entering each decoder layer."""

    last: torch.Tensor
    records: list[StepRecord]
    image_tokens_per_layer: list[int]


class LlamaRunner:
    """An explicit loop over the decoder layers of a Llama-family causal LM (SmolLM2, Llama, Qwen2) on PyTorch's
    fused attention, with image-token reduction between layers and last-token attention where it is needed.

    Sequences are ``[text prefix | image tokens | question]`` with right padding (causal attention makes the padding
    invisible to real tokens); ``last_idx [B]`` is each request's last prompt token.
    """

    def __init__(self, causal_lm: nn.Module, base: nn.Module | None = None, config: Any = None) -> None:
        base = base if base is not None else causal_lm.model
        self.lm = causal_lm
        self.layers = list(base.layers)
        self.norm = base.norm
        self.rotary = base.rotary_emb
        self.embed = base.embed_tokens
        cfg = config if config is not None else causal_lm.config
        self.heads = int(cfg.num_attention_heads)
        self.kv_heads = int(getattr(cfg, "num_key_value_heads", None) or self.heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // self.heads)

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def _qkv(self, i: int, h: torch.Tensor, pos: torch.Tensor,
             rope: tuple[torch.Tensor, torch.Tensor] | None = None):  # noqa: ANN202
        """q, k (rotated), v of layer ``i``; ``rope``: the ``(cos, sin)`` of ``pos`` when the caller already has
        them (they change only where the token set changes, as the library computes them once per forward)."""
        a = self.layers[i].self_attn
        x = self.layers[i].input_layernorm(h)
        b, n, _ = x.shape
        q = a.q_proj(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = a.k_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        v = a.v_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = rope if rope is not None else self.rotary(x, pos)
        return _rope(q, cos, sin), _rope(k, cos, sin), v

    def _finish(self, i: int, h: torch.Tensor, attn: torch.Tensor) -> torch.Tensor:
        layer = self.layers[i]
        b, _, n, _ = attn.shape
        h = h + layer.self_attn.o_proj(attn.transpose(1, 2).reshape(b, n, -1))
        return h + layer.mlp(layer.post_attention_layernorm(h))

    def _last_attention(self, q: torch.Tensor, k: torch.Tensor, q_row: torch.Tensor, key_len: torch.Tensor
                        ) -> torch.Tensor:
        """Head-averaged attention of query row ``q_row[b]`` over keys ``0..key_len[b]-1`` -> ``[B, Lk]``."""
        b = q.shape[0]
        ql = q[torch.arange(b), :, q_row]  # [B, H, hd]
        kk = k.repeat_interleave(self.heads // self.kv_heads, dim=1)  # [B, H, Lk, hd]
        logits = torch.einsum("bhd,bhkd->bhk", ql, kk) * (self.head_dim**-0.5)
        mask = torch.arange(kk.shape[2])[None, :] >= key_len[:, None]
        logits = logits.masked_fill(mask[:, None, :], float("-inf"))
        return logits.softmax(-1).mean(1)

    def _reduce(self, meth: merging.Reducer, plan: ReductionPlan, k_layer: int, r: int, h: torch.Tensor,
                pos: torch.Tensor, img: merging.TokenSet, start: int, scores: torch.Tensor, gen: torch.Generator,
                records: list[StepRecord] | None, col0: int):  # noqa: ANN202
        n = img.n
        img = merging.TokenSet(h[:, start : start + n], img.size, img.source, pos[:, start : start + n], 0)
        new, info = meth.fn(img, r, scores=scores[:, start : start + n], metric=img.x, generator=gen, m=plan.m,
                            n_recycled=plan.n_recycled)
        order = new.pos.sort(dim=1).indices  # keep the sequence in position order (causal mask = position order)
        new = new.gather(order)
        if records is not None:
            rec = record_step("llm", k_layer, img, new, info, 0)
            rec.own = np.zeros_like(rec.own)  # positions here are sequence positions, not patches
            records.append(rec)
        h = torch.cat([h[:, :start], new.x, h[:, start + n :]], 1)
        pos = torch.cat([pos[:, :start], new.pos, pos[:, start + n :]], 1)
        return h, pos, new

    def _full(self, h: torch.Tensor, pos: torch.Tensor, last_idx: torch.Tensor, first: int, img: merging.TokenSet,
              start: int, plan: ReductionPlan, pending: torch.Tensor | None, records: list[StepRecord] | None,
              counts: list[int]) -> torch.Tensor:
        """Run layers ``first..`` on full sequences, reducing image tokens before each plan layer."""
        steps = plan.llm_steps()
        meth = merging.get_method(plan.method)
        gen = torch.Generator().manual_seed(int(plan.seed))
        rope = None
        for i in range(first, self.num_layers):
            if i in steps:
                h, pos, img = self._reduce(meth, plan, i, steps[i], h, pos, img, start, pending, gen, records, 0)
                last_idx = last_idx - steps[i]
                rope = None
            counts.append(img.n)
            if rope is None:
                rope = self.rotary(h, pos)
            q, k, v = self._qkv(i, h, pos, rope)
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv_heads != self.heads)
            if (i + 1) in steps and meth.needs == "attention":
                pending = self._last_attention(q, k, last_idx, last_idx + 1)
            elif (i + 1) in steps:
                pending = torch.zeros(h.shape[:2])
            h = self._finish(i, h, attn)
        return self.norm(h[torch.arange(h.shape[0]), last_idx])

    def prefill(self, embeds: torch.Tensor, last_idx: torch.Tensor, img_start: int, n_img: int,
                img_source: torch.Tensor, plan: ReductionPlan | None = None, record: bool = False) -> LLMRun:
        """Whole-prompt prefill. ``embeds [B, L, d]`` (right-padded), ``img_source [B, n_img, N0]``."""
        plan = plan or ReductionPlan()
        with torch.inference_mode():
            b, n, _ = embeds.shape
            pos = torch.arange(n).expand(b, n)
            img = merging.TokenSet(embeds[:, img_start : img_start + n_img], torch.ones(b, n_img), img_source,
                                   pos[:, img_start : img_start + n_img], 0)
            records: list[StepRecord] | None = [] if record else None
            counts: list[int] = []
            last = self._full(embeds, pos, last_idx, 0, img, img_start, plan, None, records, counts)
        return LLMRun(last=last, records=records or [], image_tokens_per_layer=counts)

    def prefix_cache(self, embeds: torch.Tensor, upto: int | None = None, pos: torch.Tensor | None = None,
                     next_pos: int | None = None) -> PrefixCache:
        """Run the question-independent prefix ``embeds [1, P, d]`` through layers ``0..upto-1`` (all by default).
        ``pos [1, P]``: its position ids (default ``0..P-1``) and ``next_pos`` that of the first question token
        (default ``P``); see :func:`..evaluation.evaluate`'s ``image_positions``."""
        upto = self.num_layers if upto is None else upto
        with torch.inference_mode():
            h = embeds
            pos = torch.arange(h.shape[1])[None] if pos is None else pos
            rope = self.rotary(h, pos)
            keys, values, hidden = [], [], []
            for i in range(upto):
                hidden.append(h)
                q, k, v = self._qkv(i, h, pos, rope)
                keys.append(k)
                values.append(v)
                attn = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                      enable_gqa=self.kv_heads != self.heads)
                h = self._finish(i, h, attn)
            hidden.append(h)
        return PrefixCache(keys, values, hidden, embeds.shape[1], pos, next_pos)

    def questions(self, cache: PrefixCache, q_embeds: torch.Tensor, q_lens: torch.Tensor, img_start: int,
                  n_img: int, img_source: torch.Tensor, plan: ReductionPlan | None = None) -> LLMRun:
        """Several questions about one cached image. ``q_embeds [B, Lq, d]`` right-padded with lengths ``q_lens``.
        Identical (up to float rounding) to :meth:`prefill` on ``[prefix | question]`` for each question: layers
        before the first LLM reduction attend to the cached prefix; from the reduction on, full sequences run."""
        plan = plan or ReductionPlan()
        steps = plan.llm_steps()
        first = min(steps) if steps else self.num_layers
        meth = merging.get_method(plan.method)
        if len(cache.keys) < first:
            raise ValueError("the prefix cache does not reach the first reduction layer")
        with torch.inference_mode():
            b, lq, _ = q_embeds.shape
            p = cache.length
            q0 = p if cache.next_pos is None else int(cache.next_pos)
            pos_p = torch.arange(p)[None] if cache.pos is None else cache.pos
            pos_q = (q0 + torch.arange(lq)).expand(b, lq)
            allowed = torch.cat([torch.ones(lq, p, dtype=torch.bool), torch.ones(lq, lq, dtype=torch.bool).tril()], 1)
            h = q_embeds
            pending = None
            counts: list[int] = []
            rope = self.rotary(h, pos_q)
            for i in range(first):
                counts.append(n_img)
                q, k, v = self._qkv(i, h, pos_q, rope)
                kk = torch.cat([cache.keys[i].expand(b, -1, -1, -1), k], 2)
                vv = torch.cat([cache.values[i].expand(b, -1, -1, -1), v], 2)
                attn = F.scaled_dot_product_attention(q, kk, vv, attn_mask=allowed,
                                                      enable_gqa=self.kv_heads != self.heads)
                if i + 1 == first and meth.needs == "attention":
                    qfull = torch.cat([torch.zeros(b, self.heads, p, self.head_dim), q], 2)
                    pending = self._last_attention(qfull, kk, p + q_lens - 1, p + q_lens)
                elif i + 1 == first:
                    pending = torch.zeros(b, p + lq)
                h = self._finish(i, h, attn)
            last_idx = p + q_lens - 1
            if first >= self.num_layers:
                last = self.norm(h[torch.arange(b), q_lens - 1])
                return LLMRun(last=last, records=[], image_tokens_per_layer=counts)
            full = torch.cat([cache.hidden[first].expand(b, -1, -1), h], 1)
            pos = torch.cat([pos_p.expand(b, p), pos_q], 1)
            img = merging.TokenSet(full[:, img_start : img_start + n_img], torch.ones(b, n_img),
                                   img_source.expand(b, -1, -1), pos[:, img_start : img_start + n_img], 0)
            last = self._full(full, pos, last_idx, first, img, img_start, plan, pending, None, counts)
        return LLMRun(last=last, records=[], image_tokens_per_layer=counts)


def apply_patch(causal_lm: nn.Module, base: nn.Module | None = None, config: Any = None) -> LlamaRunner:
    """The decoder layers of a Llama-family causal LM ready for :class:`LlamaRunner`'s loops (``base``/``config``:
    the inner model and text config when the LM sits inside a multimodal model)."""
    return LlamaRunner(causal_lm, base=base, config=config)
