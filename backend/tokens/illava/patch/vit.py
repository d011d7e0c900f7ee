"""The vision-encoder patcher: an explicit loop over the blocks of a DINOv2, CLIP or SigLIP tower with token reduction
inside a block.

:func:`run_vit` runs ``x = x + ls1(Attn(LN1(x)))``; *merge*; ``x = x + ls2(MLP(LN2(x)))`` at the plan's layers, with the
class token (and registers) protected. Attention runs on PyTorch's fused ``scaled_dot_product_attention`` except at
merge layers that need the attention matrix (iLLaVA's ``S_avg``). ToMe's proportional attention adds ``log(size)`` to
the logits of every later layer. :func:`apply_patch` wraps a host vision model (the library's own modules are called,
never modified).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ....errors import InputError
from .. import merging
from ..plan import ReductionPlan, StepRecord, record_step


@dataclass
class VitParts:
    """The pieces of one pre-norm ViT block: ``x += ls1(o(Attn(q, k, v)(norm1 x)))``; ``x += ls2(mlp(norm2 x))``."""

    norm1: nn.Module
    q: nn.Linear
    k: nn.Linear
    v: nn.Linear
    o: nn.Linear
    ls1: nn.Module
    norm2: nn.Module
    mlp: nn.Module
    ls2: nn.Module
    heads: int


def vit_parts(layer: nn.Module, heads: int) -> VitParts:
    """Split a DINOv2, CLIP or SigLIP encoder layer into :class:`VitParts`."""
    if hasattr(layer, "attention") and hasattr(layer, "norm1"):  # Dinov2Layer (transformers 5)
        a = layer.attention
        return VitParts(layer.norm1, a.q_proj, a.k_proj, a.v_proj, a.o_proj, layer.layer_scale1, layer.norm2,
                        layer.mlp, layer.layer_scale2, heads)
    if hasattr(layer, "self_attn") and hasattr(layer, "layer_norm1"):  # CLIPEncoderLayer, SiglipEncoderLayer
        a = layer.self_attn
        return VitParts(layer.layer_norm1, a.q_proj, a.k_proj, a.v_proj, a.out_proj, nn.Identity(),
                        layer.layer_norm2, layer.mlp, nn.Identity(), heads)
    raise InputError(f"Unsupported vision encoder layer {type(layer).__name__}: expected DINOv2, CLIP or SigLIP.")


class VitAdapter:
    """Embeddings, blocks and final norm of a DINOv2 / CLIP / SigLIP vision model, for :func:`run_vit`."""

    def __init__(self, model: nn.Module) -> None:
        inner = getattr(model, "vision_model", model)
        cfg = inner.config
        self.model = inner
        self.heads = int(cfg.num_attention_heads)
        enc = inner.encoder
        layers = getattr(enc, "layer", None) or enc.layers
        self.parts = [vit_parts(layer, self.heads) for layer in layers]
        self.kind = type(inner).__name__
        if hasattr(inner, "layernorm"):  # DINOv2: CLS (+ registers) then patches; final layernorm
            self.prefix = 1 + int(getattr(cfg, "num_register_tokens", 0) or 0)
        elif hasattr(inner, "pre_layrnorm"):  # CLIP: CLS then patches; pre-layernorm; LLaVA reads the raw layers
            self.prefix = 1
        else:  # SigLIP: patches only; post-layernorm
            self.prefix = 0

    @property
    def num_layers(self) -> int:
        return len(self.parts)

    def embed(self, pixel_values: torch.Tensor) -> torch.Tensor:
        m = self.model
        x = m.embeddings(pixel_values)
        if hasattr(m, "pre_layrnorm"):
            x = m.pre_layrnorm(x)
        return x

    def final(self, x: torch.Tensor) -> torch.Tensor:
        m = self.model
        if hasattr(m, "layernorm"):
            return m.layernorm(x)
        if hasattr(m, "post_layernorm") and not hasattr(m, "pre_layrnorm"):
            return m.post_layernorm(x)
        return x


@dataclass
class VitRun:
    """Output of :func:`run_vit`: ``tokens [B, P + N', d]`` after the final norm, the final :class:`TokenSet`
    (sizes, sources over the ``P + N0`` original tokens), the step records and the token count entering each block
    (plus the output count)."""

    tokens: torch.Tensor
    state: merging.TokenSet
    records: list[StepRecord]
    tokens_per_layer: list[int]


def _heads(x: torch.Tensor, lin: nn.Linear, h: int) -> torch.Tensor:
    b, n, _ = x.shape
    return lin(x).view(b, n, h, -1).transpose(1, 2)


def run_vit(
    adapter: VitAdapter,
    pixel_values: torch.Tensor,
    plan: ReductionPlan | None = None,
    record: bool = False,
    n_blocks: int | None = None,
    scores_override: Callable[[merging.TokenSet], torch.Tensor] | None = None,
    probe: Callable[[int, torch.Tensor, merging.TokenSet], None] | None = None,
) -> VitRun:
    """Run the vision encoder with ``plan``'s encoder merges. ``pixel_values [B, 3, S, S]`` -> :class:`VitRun`.

    With no plan this equals the library forward (fused attention everywhere). At a merge layer the token set is
    reduced after the attention residual and before the MLP; attention probabilities are materialised only where
    the method needs ``S_avg``. ToMe's proportional attention adds ``log(size)`` to the logits once sizes differ.
    ``n_blocks``: run only the first blocks and skip the final norm (LLaVA reads the penultimate block's output).
    ``scores_override`` (diagnostics only, e.g. :func:`..diagnosis.diagnose`'s ground-truth ranking): called with the token set
    at each merge layer, its ``[B, N]`` result replaces ``S_avg`` as the ranking; the merge rule is unchanged.
    ``probe`` (diagnostics only, e.g. :func:`..diagnosis.diagnose`): every block then materialises its attention probabilities
    and calls ``probe(block, probs [B, H, N, N], tokens)`` with the token set after the attention residual (before
    that block's merge and MLP).
    """
    plan = plan or ReductionPlan()
    steps = plan.vit_steps()
    meth = merging.get_method(plan.method)
    gen = torch.Generator().manual_seed(int(plan.seed))
    with torch.inference_mode():
        x = adapter.embed(pixel_values)
        ts = merging.TokenSet.fresh(x, protected=adapter.prefix)
        records: list[StepRecord] = []
        counts: list[int] = []
        prop = meth.name == "tome"
        for i, p in enumerate(adapter.parts[:n_blocks]):
            counts.append(ts.n)
            r = steps.get(i, 0)
            h = p.norm1(ts.x)
            q, k, v = _heads(h, p.q, p.heads), _heads(h, p.k, p.heads), _heads(h, p.v, p.heads)
            bias = None
            if prop and bool((ts.size != 1).any()):
                bias = ts.size.log()[:, None, None, :].to(q.dtype)
            scores = None
            need_savg = r > 0 and meth.needs == "attention" and scores_override is None
            if need_savg or probe is not None:
                # S_avg needs every attention probability, so this layer materialises them once: the scale goes on
                # q (N x hd, not N x N), and one reduction over heads and queries gives the attention each token
                # receives (the same numbers as the head mean then query mean, up to float rounding)
                logits = (q * q.shape[-1] ** -0.5) @ k.transpose(-2, -1)
                if bias is not None:
                    logits = logits + bias
                probs = logits.softmax(-1)
                out = probs @ v
                if need_savg:
                    scores = probs.mean((1, 2))
            else:
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
            b, _, n, _ = out.shape
            out = p.o(out.transpose(1, 2).reshape(b, n, -1))
            ts = merging.TokenSet(ts.x + p.ls1(out), ts.size, ts.source, ts.pos, ts.protected)
            if probe is not None:
                probe(i, probs, ts)
            if r > 0:
                before = ts
                if scores_override is not None and meth.needs == "attention":
                    scores = scores_override(ts)
                metric = k.mean(1) if meth.needs == "keys" else None  # illava_paper compares hidden states
                ts, info = meth.fn(ts, r, scores=scores, metric=metric, generator=gen, m=plan.m,
                                   n_recycled=plan.n_recycled)
                if record:
                    records.append(record_step("vit", i, before, ts, info, adapter.prefix))
            ts = merging.TokenSet(ts.x + p.ls2(p.mlp(p.norm2(ts.x))), ts.size, ts.source, ts.pos, ts.protected)
        counts.append(ts.n)
        out = adapter.final(ts.x) if n_blocks is None else ts.x
        return VitRun(tokens=out, state=ts, records=records, tokens_per_layer=counts)


def apply_patch(vision_model: nn.Module) -> VitAdapter:
    """The encoder of a DINOv2 / CLIP / SigLIP vision model (or a model holding one as ``vision_model``) ready for
    :func:`run_vit`."""
    return VitAdapter(vision_model)
