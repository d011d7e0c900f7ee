"""A tiny vision-language model to run token reduction on: DINOv2 ViT-S/14 -> MLP projector -> SmolLM2-135M.

Design (our CPU miniature of a LLaVA-style model; the paper is arXiv 2412.06263, iLLaVA): the frozen embedded DINOv2
ViT-S/14 encodes a 224 x 224 image into 256 patch tokens (its class token stays in the encoder); a two-layer GELU MLP
(LLaVA-1.5's ``mlp2x_gelu``, 384 -> 576 -> 576) maps them into the embedding space of the frozen embedded SmolLM2-135M;
the prompt is ``"Image:" <256 image tokens> "\\nQ: <question>\\nA:"`` and the answer is the candidate word with the
highest next-token log-likelihood among the question's closed answer set (:mod:`backend.tokens.scenes`). The
projector and LoRA adapters on SmolLM2's q/v projections are trained (``python -m backend.train illava``; one file,
``assets/illava_projector.safetensors``); the adapters are folded into a private copy of those matrices at load time
(:func:`lora_merged_lm`), so the embedded SmolLM2 shared with other pages is never modified.

Token reduction plugs into two explicit loops written here, so that a merge can sit inside a block:

- the vision encoder (:func:`run_vit`): ``x = x + ls1(Attn(LN1(x)))``; *merge*; ``x = x + ls2(MLP(LN2(x)))`` at the
  chosen layers, with the class token protected. Attention runs on PyTorch's fused ``scaled_dot_product_attention``
  except at merge layers that need the attention matrix (iLLaVA's ``S_avg``). ToMe's proportional attention adds
  ``log(size)`` to the logits of every later layer. Works for DINOv2, CLIP and SigLIP vision towers (:func:`vit_parts`).
- the language model (:class:`LlamaRunner`): Llama-family decoder layers (SmolLM2, Llama, Qwen2) on the fused attention
  path; at a merge layer ``K`` the image tokens are ranked by the head-averaged attention of the last prompt token in
  layer ``K - 1`` (FastV's and the iLLaVA code's signal, computed for that one query row only) and reduced before layer
  ``K``; kept tokens keep their original position ids.

Everything is float32 on CPU. Prefill time is measured per request (batch 1) from pixels to the answer logits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import InputError
from ..runtime import ASSETS, Progress, report
from . import merging, scenes

PROJECTOR_FILE = ASSETS / "illava_projector.safetensors"
PREFIX = "Image:"
IMAGE_SIZE = 224


# ========================================================================================================= projector
class Projector(nn.Module):
    """LLaVA-1.5's two-layer GELU MLP: vision tokens ``[B, N, 384]`` -> LM embeddings ``[B, N, 576]``."""

    def __init__(self, d_vision: int = 384, d_lm: int = 576, hidden: int = 576) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_vision, hidden)
        self.fc2 = nn.Linear(hidden, d_lm)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


LORA_TARGETS = ("q_proj", "v_proj")


class LoRA(nn.Module):
    """Low-rank adapters on the attention projections of every decoder layer of the language model (Hu et al., LoRA,
    arXiv 2106.09685): ``W x`` becomes ``W x + scale * B (A x)`` with ``A [rank, d_in]``, ``B [d_out, rank]`` (``B``
    starts at zero, so training starts from the frozen model). Used while training (forward hooks on a model that
    the training process owns) and folded into a private copy of the projections at load time
    (:func:`lora_merged_lm`), so the shared embedded SmolLM2 is never modified."""

    def __init__(self, layers: Sequence[nn.Module], rank: int = 8, alpha: float = 16.0,
                 targets: Sequence[str] = LORA_TARGETS) -> None:
        super().__init__()
        self.rank, self.targets = int(rank), tuple(targets)
        self.register_buffer("scale", torch.tensor(float(alpha) / float(rank)))
        self.A, self.B = nn.ParameterDict(), nn.ParameterDict()
        for i, layer in enumerate(layers):
            for t in self.targets:
                lin = getattr(layer.self_attn, t)
                a = torch.empty(self.rank, lin.in_features)
                nn.init.kaiming_uniform_(a, a=5**0.5)
                self.A[f"{i}_{t}"] = nn.Parameter(a)
                self.B[f"{i}_{t}"] = nn.Parameter(torch.zeros(lin.out_features, self.rank))

    def attach(self, layers: Sequence[nn.Module]) -> list[Any]:
        """Forward hooks adding the low-rank term to each target projection; returns the handles (``.remove()``)."""
        handles = []
        for i, layer in enumerate(layers):
            for t in self.targets:
                a, b = self.A[f"{i}_{t}"], self.B[f"{i}_{t}"]

                def hook(_m, inp, out, a=a, b=b):  # noqa: ANN001, ANN202
                    return out + (inp[0] @ a.T.to(inp[0].dtype)) @ b.T.to(inp[0].dtype) * self.scale

                handles.append(getattr(layer.self_attn, t).register_forward_hook(hook))
        return handles

    def tensors(self) -> dict[str, torch.Tensor]:
        out = {f"lora.A.{k}": v for k, v in self.A.items()}
        out.update({f"lora.B.{k}": v for k, v in self.B.items()})
        out["lora.scale"] = self.scale
        return out


def lora_merged_lm(model: nn.Module, lora: dict[str, torch.Tensor]) -> nn.Module:
    """A copy of the causal LM ``model`` whose LoRA target projections hold ``W + scale * B A``; every other
    parameter and buffer is shared with ``model`` (not copied), so the copy costs only the adapted matrices."""
    import copy

    scale = float(lora["lora.scale"])
    keys = {k.removeprefix("lora.A.") for k in lora if k.startswith("lora.A.")}
    targets = {k.split("_", 1)[1] for k in keys}
    adapted = {id(getattr(layer.self_attn, t).weight) for layer in model.model.layers for t in targets}
    memo: dict[int, Any] = {id(p): p for p in model.parameters() if id(p) not in adapted}
    memo.update({id(b): b for b in model.buffers()})
    new = copy.deepcopy(model, memo)
    with torch.no_grad():
        for key in keys:
            i, t = key.split("_", 1)
            w = getattr(new.model.layers[int(i)].self_attn, t).weight
            w += scale * (lora[f"lora.B.{key}"].float() @ lora[f"lora.A.{key}"].float()).to(w.dtype)
            w.requires_grad_(False)
    new.eval()
    return new


def save_projector(proj: Projector, path: str | Path, metadata: dict[str, str] | None = None,
                   extra: dict[str, torch.Tensor] | None = None) -> None:
    """Write the projector (and ``extra`` tensors such as the LoRA adapters) as one safetensors file."""
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous().float() for k, v in proj.state_dict().items()}
    state.update({k: v.detach().contiguous().float() for k, v in (extra or {}).items()})
    save_file(state, str(path), metadata={"format": "pt", **(metadata or {})})
    Path(path).chmod(0o644)  # readable by the app's non-root user


def load_projector(path: str | Path = PROJECTOR_FILE) -> Projector:
    """Load the shipped projector (safetensors only). LoRA adapters of the language model stored in the same file
    are attached as ``projector.lora`` (a dict of tensors, ``None`` if absent); :class:`TinyVLM` applies them."""
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path.name} is missing; train it with `python -m backend.train illava`.")
    state = load_file(str(path))
    lora = {k: state.pop(k) for k in list(state) if k.startswith("lora.")} or None
    d_vision, hidden = state["fc1.weight"].shape[1], state["fc1.weight"].shape[0]
    proj = Projector(d_vision=d_vision, d_lm=state["fc2.weight"].shape[0], hidden=hidden)
    proj.load_state_dict(state)
    proj.eval()
    proj.lora = lora
    return proj


# ============================================================================================================ prompt
@dataclass(frozen=True)
class PromptIds:
    """Token ids of the prompt pieces: the text prefix, one question (``"\\nQ: ...\\nA:"``) and the answers."""

    prefix: list[int]
    answers: dict[str, int]

    @classmethod
    def build(cls, tokenizer: Any) -> PromptIds:
        ids = {}
        for word in scenes.ALL_ANSWERS:
            tok = tokenizer(" " + word, add_special_tokens=False)["input_ids"]
            if len(tok) != 1:
                raise RuntimeError(f"answer ' {word}' is not a single token for this tokenizer: {tok}")
            ids[word] = tok[0]
        return cls(prefix=tokenizer(PREFIX, add_special_tokens=False)["input_ids"], answers=ids)


def question_ids(tokenizer: Any, question: str) -> list[int]:
    """Ids of ``"\\nQ: <question>\\nA:"`` (the answer token follows the last id)."""
    q = " ".join(str(question).split())
    if not q:
        raise InputError("The question is empty: type a question about the image (e.g. 'What color is the circle?').")
    if len(q) > 300:
        raise InputError(f"The question has {len(q)} characters; keep it under 300.")
    return tokenizer("\nQ: " + q + "\nA:", add_special_tokens=False)["input_ids"]


# ===================================================================================================== the plan
@dataclass(frozen=True)
class ReductionPlan:
    """Where and how much to reduce.

    ``method``: a name of :data:`merging.METHODS`. ``vit_layers``: encoder blocks (0-based) that merge between
    attention and MLP, removing ``vit_r`` tokens each (an int, or one value per layer). ``llm_layers``: decoder
    layers ``K`` (1-based count of the blocks run before the reduction, i.e. the reduction happens before 0-based
    layer ``K``, ranked by the last prompt token's attention in layer ``K - 1``), removing ``llm_r`` image tokens each.
    ``m`` and ``n_recycled``: the paper variant's neighbours per recycled token and number of recycled tokens.
    ``seed``: the random baseline's generator seed.
    """

    method: str = "none"
    vit_layers: tuple[int, ...] = ()
    vit_r: int | tuple[int, ...] = 0
    llm_layers: tuple[int, ...] = ()
    llm_r: int | tuple[int, ...] = 0
    m: int = 5
    n_recycled: int | None = None
    seed: int = 0

    @staticmethod
    def _steps(layers: Sequence[int], r: int | Sequence[int]) -> dict[int, int]:
        rs = [int(r)] * len(layers) if isinstance(r, (int, np.integer)) else [int(v) for v in r]
        if len(rs) != len(layers):
            raise InputError(f"Give one r per merge layer: {len(layers)} layers but {len(rs)} values of r.")
        if len(set(layers)) != len(layers):
            raise InputError(f"Merge layers must be distinct; got {list(layers)}.")
        out = {int(k): v for k, v in zip(layers, rs, strict=True) if v > 0}
        if any(v < 0 for v in rs):
            raise InputError("r must be >= 0 at every merge layer.")
        return dict(sorted(out.items()))

    def vit_steps(self) -> dict[int, int]:
        return self._steps(self.vit_layers, self.vit_r) if self.method != "none" else {}

    def llm_steps(self) -> dict[int, int]:
        return self._steps(self.llm_layers, self.llm_r) if self.method != "none" else {}

    def validate(self, n_vit_layers: int, n_llm_layers: int, n_tokens: int) -> None:
        """Raise :class:`InputError` for layers out of range, stages the method cannot run in, or a budget that
        removes every image token."""
        try:
            meth = merging.get_method(self.method)
        except ValueError as err:
            raise InputError(str(err)) from None
        vs, ls = self.vit_steps(), self.llm_steps()
        if vs and "vit" not in meth.stages:
            raise InputError(f"{meth.title} runs only in the language model: leave the encoder layers empty.")
        if ls and "llm" not in meth.stages:
            raise InputError(f"{meth.title} runs only in the vision encoder: leave the LLM layers empty.")
        bad = [k for k in vs if not 0 <= k < n_vit_layers]
        if bad:
            raise InputError(f"Encoder merge layers must be in 0..{n_vit_layers - 1}; got {bad}.")
        bad = [k for k in ls if not 1 <= k < n_llm_layers]
        if bad:
            raise InputError(f"LLM merge layers must be in 1..{n_llm_layers - 1}; got {bad}.")
        if self.m < 1:
            raise InputError("M (tokens absorbed per recycled token) must be at least 1.")
        kept = self.tokens_kept(n_tokens)
        removed = sum(vs.values()) + sum(ls.values())
        if kept[-1] < 1 or min(kept) < 1 or removed >= n_tokens:
            raise InputError(
                f"This plan removes {removed} of {n_tokens} image tokens: that budget removes every token. "
                "Lower r or use fewer merge layers."
            )

    def tokens_kept(self, n_tokens: int) -> list[int]:
        """Image tokens after each reduction step, in order (ToMe's per-step cap of 50% applied)."""
        n, out = int(n_tokens), [int(n_tokens)]
        for r in self.vit_steps().values():
            n -= min(r, n // 2) if self.method == "tome" else r
            out.append(n)
        for r in self.llm_steps().values():
            n -= r
            out.append(n)
        return out

    def label(self) -> str:
        if self.method == "none" or not (self.vit_steps() or self.llm_steps()):
            return "none"
        parts = [self.method]
        if self.vit_steps():
            parts.append("vit " + ",".join(f"{k}:{v}" for k, v in self.vit_steps().items()))
        if self.llm_steps():
            parts.append("llm " + ",".join(f"{k}:{v}" for k, v in self.llm_steps().items()))
        return " | ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["vit_layers"], d["llm_layers"] = list(self.vit_layers), list(self.llm_layers)
        d["vit_r"] = self.vit_r if isinstance(self.vit_r, int) else list(self.vit_r)
        d["llm_r"] = self.llm_r if isinstance(self.llm_r, int) else list(self.llm_r)
        return d


DEFAULT_VIT_LAYERS = (3, 4, 5, 6)  # our DINOv2 analogue of the code README's SigLIP layers 5-8 of 27
DEFAULT_LLM_LAYER = 2  # the paper's first LLM merge layer and FastV's K
DEFAULT_SPLIT = 0.75  # share of the removal done in the encoder (README image setting: 4 x 92 of 476 tokens)


def _spread(total: int, parts: int) -> tuple[int, ...]:
    base, extra = divmod(int(total), parts)
    return tuple(base + (1 if i < extra else 0) for i in range(parts))


def plan_for_budget(
    method: str,
    keep: float,
    n_tokens: int = 256,
    split: float = DEFAULT_SPLIT,
    vit_layers: Sequence[int] = DEFAULT_VIT_LAYERS,
    llm_layer: int = DEFAULT_LLM_LAYER,
    n_vit_layers: int = 12,
    seed: int = 0,
) -> ReductionPlan:
    """A plan that keeps about ``keep`` of ``n_tokens`` image tokens with each method's natural placement:

    - ``illava_code`` / ``illava_paper`` / ``random``: ``split`` of the removal over ``vit_layers`` (equal r), the
      rest at LLM layer ``llm_layer``;
    - ``tome``: all in the encoder, spread over every block (ToMe's constant-r schedule, capped at 50% per block);
    - ``fastv``: all at LLM layer ``llm_layer`` (FastV's K = 2);
    - ``none``: nothing.
    """
    meth = merging.get_method(method).name
    if not 0.0 <= keep <= 1.0:
        raise InputError(f"The share of image tokens to keep must be in [0, 1]; got {keep}.")
    if not 0.0 <= split <= 1.0:
        raise InputError(f"The encoder share of the reduction must be in [0, 1]; got {split}.")
    total = int(round(n_tokens * (1 - keep)))
    if meth == "none" or total == 0:
        return ReductionPlan()
    if meth == "fastv":
        return ReductionPlan("fastv", llm_layers=(llm_layer,), llm_r=total, seed=seed)
    if meth == "tome":
        layers = tuple(range(n_vit_layers))
        return ReductionPlan("tome", vit_layers=layers, vit_r=_spread(total, len(layers)), seed=seed)
    vit_total = int(round(total * split))
    llm_total = total - vit_total
    vl = tuple(vit_layers) if vit_total else ()
    return ReductionPlan(
        meth,
        vit_layers=vl,
        vit_r=_spread(vit_total, len(vl)) if vl else 0,
        llm_layers=(llm_layer,) if llm_total else (),
        llm_r=llm_total,
        seed=seed,
    )


# ================================================================================================ step records
@dataclass
class StepRecord:
    """One reduction step, mapped onto the original patch grid (batch element 0).

    ``scores [N0]``: importance of the token holding each patch (NaN where unused or dropped earlier);
    ``group [N0]``: index of the output token that now holds each patch (-1: dropped); ``own [N0]``: the patch's own
    token physically survives (the code's ``source_indice`` mask).
    """

    stage: str
    layer: int
    n_before: int
    n_after: int
    scores: np.ndarray
    group: np.ndarray
    own: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "layer": self.layer, "n_before": self.n_before, "n_after": self.n_after}


def _record(stage: str, layer: int, before: merging.TokenSet, after: merging.TokenSet, info: merging.MergeInfo,
            col0: int) -> StepRecord:
    src = before.source[0, :, col0:]  # [N, N0]
    held = src.sum(0) > 0
    holder = src.argmax(0)  # token holding each patch
    scores = info.scores[0][holder].float().clone()
    scores[~held] = float("nan")
    group = info.group[0][holder].clone()
    group[~held] = -1
    own = torch.zeros(src.shape[1], dtype=torch.bool)
    pos = after.pos[0] - col0
    own[pos[(pos >= 0) & (pos < src.shape[1])]] = True
    return StepRecord(stage, layer, before.mergeable, after.mergeable, scores.numpy(), group.numpy(), own.numpy())


# ===================================================================================================== encoder loop
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
        layers = getattr(enc, "layer", None) or getattr(enc, "layers")
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
    ``scores_override`` (diagnostics only, e.g. :func:`diagnose`'s ground-truth ranking): called with the token set
    at each merge layer, its ``[B, N]`` result replaces ``S_avg`` as the ranking; the merge rule is unchanged.
    ``probe`` (diagnostics only, e.g. :func:`diagnose`): every block then materialises its attention probabilities
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
                    records.append(_record("vit", i, before, ts, info, adapter.prefix))
            ts = merging.TokenSet(ts.x + p.ls2(p.mlp(p.norm2(ts.x))), ts.size, ts.source, ts.pos, ts.protected)
        counts.append(ts.n)
        out = adapter.final(ts.x) if n_blocks is None else ts.x
        return VitRun(tokens=out, state=ts, records=records, tokens_per_layer=counts)


# ======================================================================================================= LLM loop
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

    def _reduce(self, meth: merging.Method, plan: ReductionPlan, k_layer: int, r: int, h: torch.Tensor,
                pos: torch.Tensor, img: merging.TokenSet, start: int, scores: torch.Tensor, gen: torch.Generator,
                records: list[StepRecord] | None, col0: int):  # noqa: ANN202
        n = img.n
        img = merging.TokenSet(h[:, start : start + n], img.size, img.source, pos[:, start : start + n], 0)
        new, info = meth.fn(img, r, scores=scores[:, start : start + n], metric=img.x, generator=gen, m=plan.m,
                            n_recycled=plan.n_recycled)
        order = new.pos.sort(dim=1).indices  # keep the sequence in position order (causal mask = position order)
        new = new.gather(order)
        if records is not None:
            rec = _record("llm", k_layer, img, new, info, 0)
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
        (default ``P``); see :func:`evaluate`'s ``image_positions``."""
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


# ============================================================================================================ costs
def vit_layer_macs(n_in: int, n_out: int, d: int = 384, mlp_ratio: int = 4) -> int:
    """Multiply-adds of one ViT block whose attention sees ``n_in`` tokens and whose MLP sees ``n_out`` (a merge sits
    between them): ``4 n_in d^2`` (q, k, v, o) ``+ 2 n_in^2 d`` (scores, mixing) ``+ 2 mlp_ratio n_out d^2``.
    With no merge that is the spec's ``12 N d^2 + 2 N^2 d``."""
    return 4 * n_in * d * d + 2 * n_in * n_in * d + 2 * mlp_ratio * n_out * d * d


def llm_layer_macs(n: int, d: int = 576, d_kv: int = 192, d_ff: int = 1536) -> int:
    """Multiply-adds of one Llama decoder layer over ``n`` prompt tokens (causal prefill): ``2 n d^2`` (q, o)
    ``+ 2 n d d_kv`` (k, v) ``+ 3 n d d_ff`` (SwiGLU) ``+ d n (n + 1)`` (causal scores and mixing)."""
    return 2 * n * d * d + 2 * n * d * d_kv + 3 * n * d * d_ff + d * n * (n + 1)


@dataclass
class Costs:
    """Per-layer multiply-adds of one request: ``vit [12]``, ``llm [30]``, the projector and the last-token head."""

    vit: list[int]
    llm: list[int]
    projector: int
    head: int

    @property
    def total(self) -> int:
        return int(sum(self.vit) + sum(self.llm) + self.projector + self.head)

    def to_dict(self) -> dict[str, Any]:
        return {"vit": self.vit, "llm": self.llm, "projector": self.projector, "head": self.head, "total": self.total}


# ============================================================================================================ model
@dataclass
class Answer:
    """The answer to one question: candidate words, their probabilities (softmax over the closed set), the pick."""

    answer: str
    candidates: list[str]
    probs: list[float]


class TinyVLM:
    """DINOv2 -> projector -> SmolLM2 with token reduction (see the module docstring). Load with :meth:`load`."""

    def __init__(self, vision: Any, lm: Any, projector: Projector, image_size: int = IMAGE_SIZE) -> None:
        lora = getattr(projector, "lora", None)
        if lora:  # the trained LoRA adapters go into a private copy of the adapted projections (shared LM untouched)
            from types import SimpleNamespace

            lm = SimpleNamespace(tokenizer=lm.tokenizer, model=lora_merged_lm(lm.model, lora), base=lm)
        self.vision, self.lm, self.projector = vision, lm, projector
        self.image_size = int(image_size)
        self.adapter = VitAdapter(vision.model)
        self.runner = LlamaRunner(lm.model)
        self.ids = PromptIds.build(lm.tokenizer)
        self.answer_words = list(scenes.ALL_ANSWERS)
        self.answer_ids = torch.tensor([self.ids.answers[w] for w in self.answer_words])
        with torch.inference_mode():
            self.prefix_emb = self.runner.embed(torch.tensor(self.ids.prefix))[None].clone()
        self.patch = int(vision.patch_size)
        self.grid = self.image_size // self.patch

    @classmethod
    def load(cls, projector_path: str | Path = PROJECTOR_FILE, vision: Any = None, lm: Any = None) -> TinyVLM:
        """The shipped tiny VLM (embedded DINOv2 and SmolLM2 from :mod:`backend.models` unless given)."""
        from ..models import load

        proj = load_projector(projector_path)
        return cls(vision or load("dinov2"), lm or load("smollm2"), proj)

    # ---------------------------------------------------------------------------------------------- pieces
    @property
    def n_patches(self) -> int:
        return self.grid * self.grid

    @property
    def img_start(self) -> int:
        return self.prefix_emb.shape[1]

    def pixels(self, images: Sequence[Any]) -> torch.Tensor:
        return self.vision.preprocess(list(images), size=self.image_size)

    def encode(self, pixels: torch.Tensor, plan: ReductionPlan | None = None, record: bool = False,
               scores_override: Callable[[merging.TokenSet], torch.Tensor] | None = None
               ) -> tuple[torch.Tensor, torch.Tensor, VitRun]:
        """Pixels -> projected image tokens ``[B, N', 576]``, their sources over the ``N0`` patches, the run
        (``scores_override``: see :func:`run_vit`, diagnostics only)."""
        run = run_vit(self.adapter, pixels, plan, record=record, scores_override=scores_override)
        p = self.adapter.prefix
        with torch.inference_mode():
            emb = self.projector(run.tokens[:, p:])
        return emb, run.state.source[:, p:, p:], run

    def question_embeds(self, questions: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded question embeddings ``[B, Lq, d]`` and lengths ``[B]``."""
        ids = [question_ids(self.lm.tokenizer, q) for q in questions]
        lens = torch.tensor([len(i) for i in ids])
        pad = torch.zeros(len(ids), int(lens.max()), dtype=torch.long)
        for b, i in enumerate(ids):
            pad[b, : len(i)] = torch.tensor(i)
        with torch.inference_mode():
            return self.runner.embed(pad), lens

    def answer_logits(self, last: torch.Tensor) -> torch.Tensor:
        """Final hidden states ``[B, d]`` -> logits of the answer words ``[B, A]`` (the full-vocabulary head runs,
        as in a real prefill, and the answer columns are read from it)."""
        with torch.inference_mode():
            return self.lm.model.lm_head(last)[:, self.answer_ids]

    def pick(self, logits: torch.Tensor, candidates: Sequence[str]) -> Answer:
        idx = [self.answer_words.index(c) for c in candidates]
        probs = logits[idx].float().softmax(-1)
        return Answer(candidates[int(probs.argmax())], list(candidates), [round(float(p), 4) for p in probs])

    # ----------------------------------------------------------------------------------------- single requests
    def prefill(self, pixels: torch.Tensor, question: str, plan: ReductionPlan | None = None, record: bool = False
                ) -> tuple[torch.Tensor, VitRun, LLMRun]:
        """One request through our loops (the reduced path): answer logits ``[A]``, the encoder run, the LLM run."""
        emb, src, vit = self.encode(pixels, plan, record=record)
        q, lens = self.question_embeds([question])
        seq = torch.cat([self.prefix_emb, emb, q], 1)
        last_idx = torch.tensor([seq.shape[1] - 1])
        llm = self.runner.prefill(seq, last_idx, self.img_start, emb.shape[1], src, plan, record=record)
        return self.answer_logits(llm.last)[0], vit, llm

    def reference_prefill(self, pixels: torch.Tensor, question: str) -> torch.Tensor:
        """The unreduced model on the libraries' own fast path (transformers forward, fused SDPA attention):
        answer logits ``[A]``. This is the baseline of every speed ratio."""
        p = self.adapter.prefix
        with torch.inference_mode():
            tokens = self.vision.model(pixel_values=pixels).last_hidden_state[:, p:]
            emb = self.projector(tokens)
            q, _ = self.question_embeds([question])
            seq = torch.cat([self.prefix_emb, emb, q], 1)
            logits = self.lm.model(inputs_embeds=seq, logits_to_keep=1).logits[0, -1]
        return logits[self.answer_ids]

    def costs(self, vit_counts: Sequence[int], llm_image_counts: Sequence[int], text_len: int) -> Costs:
        """Multiply-adds of one request given the encoder token counts (entering each block, plus the output) and
        the image tokens entering each decoder layer."""
        cfg = self.lm.model.config
        d, d_kv, d_ff = cfg.hidden_size, self.runner.kv_heads * self.runner.head_dim, cfg.intermediate_size
        dv = self.vision.model.config.hidden_size
        vit = [vit_layer_macs(vit_counts[i], vit_counts[i + 1], dv) for i in range(len(vit_counts) - 1)]
        other = self.img_start + text_len
        llm = [llm_layer_macs(n + other, d, d_kv, d_ff) for n in llm_image_counts]
        n_img = vit_counts[-1] - self.adapter.prefix
        proj = n_img * sum(m.weight.numel() for m in (self.projector.fc1, self.projector.fc2))
        return Costs(vit=vit, llm=llm, projector=int(proj), head=int(d * cfg.vocab_size))

    # ------------------------------------------------------------------------------------------------- helpers
    def seeded(self, plan: ReductionPlan | None, pixels: torch.Tensor) -> ReductionPlan | None:
        """For the random baseline: a per-image seed (plan seed mixed with a hash of the pixels), so that different
        images drop different tokens while every run on the same image and seed is identical."""
        if plan is None or plan.method != "random":
            return plan
        import hashlib
        from dataclasses import replace

        salt = int(hashlib.sha1(pixels.numpy().tobytes()).hexdigest()[:8], 16)
        return replace(plan, seed=(int(plan.seed) * 1_000_003 + salt) % (2**62))


# ====================================================================================================== evaluation
@dataclass
class EvalResult:
    """Accuracy of one plan on held-out scene questions (closed answer sets, log-likelihood scoring)."""

    plan: dict[str, Any]
    label: str
    n_scenes: int
    n_questions: int
    accuracy: float
    chance: float
    per_type: dict[str, float]
    tokens_to_llm: int
    image_tokens_mean_llm: float
    macs: int
    seconds: float
    predictions: list[str] = field(default_factory=list)

    def to_dict(self, with_predictions: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_predictions:
            d.pop("predictions")
        return d


def evaluate(vlm: TinyVLM, scene_list: Sequence[scenes.Scene], plan: ReductionPlan | None = None,
             progress: Progress | None = None,
             encoder_scores: Callable[[scenes.Scene, merging.TokenSet], torch.Tensor] | None = None,
             image_positions: str = "sequence") -> EvalResult:
    """Answer every question of ``scene_list`` with ``plan``. Each image is encoded once (with the plan's encoder
    merges) and its prefix cached; the questions of a scene then run as one batch (exactly the per-request answers,
    see :meth:`LlamaRunner.questions`). ``encoder_scores(scene, tokens)`` (diagnostics only) replaces the encoder
    ranking signal (see :func:`run_vit`). ``image_positions``: the LM position ids of the image tokens that leave
    the encoder: ``"sequence"`` (consecutive, as LLaVA-style models feed them, the released code's behaviour) or
    ``"source"`` (a diagnostic: each token at the position its own patch has in the unreduced prompt, tokens in
    patch order, the question after all 256 patch positions)."""
    if image_positions not in ("sequence", "source"):
        raise InputError(f"Unknown image_positions '{image_positions}'. Valid: sequence, source.")
    plan = plan or ReductionPlan()
    plan.validate(vlm.adapter.num_layers, vlm.runner.num_layers, vlm.n_patches)
    steps = plan.llm_steps()
    first = min(steps) if steps else None
    t0 = time.perf_counter()
    correct, total, chance = 0, 0, 0.0
    by_type: dict[str, list[int]] = {}
    preds: list[str] = []
    vit_counts: list[int] = []
    llm_counts: list[int] = []
    text_lens: list[int] = []
    for si, scene in enumerate(scene_list):
        px = vlm.pixels([scene.pil()])
        p_img = vlm.seeded(plan, px)
        override = None if encoder_scores is None else (lambda ts, sc=scene: encoder_scores(sc, ts))
        emb, src, run = vlm.encode(px, p_img, scores_override=override)
        prefix = torch.cat([vlm.prefix_emb, emb], 1)
        if image_positions == "source":
            own = run.state.pos[:, vlm.adapter.prefix :] - vlm.adapter.prefix  # [1, N'] patch of each token
            order = own[0].argsort()
            emb, src, own = emb[:, order], src[:, order], own[:, order]
            prefix = torch.cat([vlm.prefix_emb, emb], 1)
            pos = torch.cat([torch.arange(vlm.img_start)[None], vlm.img_start + own], 1)
            cache = vlm.runner.prefix_cache(prefix, upto=first, pos=pos, next_pos=vlm.img_start + vlm.n_patches)
        else:
            cache = vlm.runner.prefix_cache(prefix, upto=first)
        qe, lens = vlm.question_embeds([q.text for q in scene.questions])
        out = vlm.runner.questions(cache, qe, lens, vlm.img_start, emb.shape[1], src, p_img)
        logits = vlm.answer_logits(out.last)
        for q, lg in zip(scene.questions, logits, strict=True):
            ans = vlm.pick(lg, q.candidates).answer
            ok = int(ans == q.answer)
            preds.append(ans)
            correct += ok
            total += 1
            chance += q.chance
            by_type.setdefault(q.kind, []).append(ok)
        vit_counts, llm_counts = run.tokens_per_layer, out.image_tokens_per_layer
        text_lens.extend(int(x) for x in lens)
        report(progress, (si + 1) / len(scene_list), f"{plan.label()}: scene {si + 1}/{len(scene_list)}")
    costs = vlm.costs(vit_counts, llm_counts, int(round(float(np.mean(text_lens))))) if text_lens else None
    return EvalResult(
        plan=plan.to_dict(), label=plan.label(), n_scenes=len(scene_list), n_questions=total,
        accuracy=correct / max(1, total), chance=chance / max(1, total),
        per_type={k: sum(v) / len(v) for k, v in sorted(by_type.items())},
        tokens_to_llm=int(vit_counts[-1] - vlm.adapter.prefix) if vit_counts else 0,
        image_tokens_mean_llm=float(np.mean(llm_counts)) if llm_counts else 0.0,
        macs=costs.total if costs else 0, seconds=time.perf_counter() - t0, predictions=preds,
    )


# =========================================================================================================== timing
def time_prefill(vlm: TinyVLM, image: Any, question: str, plans: dict[str, ReductionPlan | None],
                 repeats: int = 5, progress: Progress | None = None) -> dict[str, dict[str, float]]:
    """Median wall time of one request (batch 1, pixels -> answer logits) for each plan, measured interleaved
    (round-robin, after one warm-up each) so that load changes hit all plans alike. ``plans`` maps a name to a plan;
    the value ``None`` means the unreduced model on the libraries' fast path (:meth:`TinyVLM.reference_prefill`).
    Returns ``{name: {"median_s", "min_s", "runs"}}``."""
    px = vlm.pixels([image])
    names = list(plans)
    times: dict[str, list[float]] = {n: [] for n in names}

    def once(name: str) -> float:
        plan = plans[name]
        t = time.perf_counter()
        if plan is None:
            vlm.reference_prefill(px, question)
        else:
            vlm.prefill(px, question, vlm.seeded(plan, px))
        return time.perf_counter() - t

    for n in names:
        once(n)
    for rep in range(int(repeats)):
        for n in names:
            times[n].append(once(n))
        report(progress, (rep + 1) / repeats, f"timing {rep + 1}/{repeats}")
    return {n: {"median_s": float(np.median(v)), "min_s": float(np.min(v)), "runs": len(v)} for n, v in times.items()}


# ========================================================================================================= analysis
@dataclass
class Analysis:
    """Everything the page shows for one image and question: answers with and without reduction, each step's
    records on the patch grid, token counts per layer, per-layer costs and prefill times (seconds)."""

    question: str
    plan: dict[str, Any]
    label: str
    grid: int
    image: np.ndarray  # [S, S, 3] uint8, the encoder's input
    full: Answer
    reduced: Answer
    vit_records: list[StepRecord]
    llm_records: list[StepRecord]
    vit_tokens: list[int]
    llm_image_tokens: list[int]
    llm_image_tokens_full: list[int]
    costs_full: Costs
    costs_reduced: Costs
    time_full_s: float
    time_reduced_s: float

    def summary(self) -> dict[str, Any]:
        return {
            "question": self.question, "plan": self.plan, "label": self.label,
            "answer_full": asdict(self.full), "answer_reduced": asdict(self.reduced),
            "encoder_tokens_per_layer": self.vit_tokens, "llm_image_tokens_per_layer": self.llm_image_tokens,
            "tokens_to_llm": self.vit_tokens[-1] - 1,
            "steps": [r.to_dict() for r in self.vit_records + self.llm_records],
            "macs_full": self.costs_full.total, "macs_reduced": self.costs_reduced.total,
            "prefill_full_s": round(self.time_full_s, 4), "prefill_reduced_s": round(self.time_reduced_s, 4),
            "speedup": round(self.time_full_s / max(self.time_reduced_s, 1e-9), 3),
        }


def analyze(vlm: TinyVLM, image: Any, question: str, plan: ReductionPlan, repeats: int = 3,
            candidates: Sequence[str] | None = None, progress: Progress | None = None) -> Analysis:
    """Answer ``question`` about ``image`` (a PIL image) with and without ``plan`` and record every step."""
    plan.validate(vlm.adapter.num_layers, vlm.runner.num_layers, vlm.n_patches)
    cands = list(candidates or scenes.candidates_for(question))
    question_ids(vlm.lm.tokenizer, question)  # validates the question
    report(progress, 0.05, "encoding and answering (unreduced)")
    px = vlm.pixels([image])
    p_img = vlm.seeded(plan, px)
    full_logits, vit0, llm0 = vlm.prefill(px, question, None)
    report(progress, 0.25, "answering with reduction")
    red_logits, vit1, llm1 = vlm.prefill(px, question, p_img, record=True)
    report(progress, 0.4, "timing prefill")
    times = time_prefill(vlm, image, question, {"full": None, "reduced": p_img}, repeats=repeats,
                         progress=lambda f, m="": report(progress, 0.4 + 0.6 * f, m))
    text_len = len(question_ids(vlm.lm.tokenizer, question))
    img = np.asarray(image.convert("RGB").resize((vlm.image_size, vlm.image_size)))
    return Analysis(
        question=question, plan=plan.to_dict(), label=plan.label(), grid=vlm.grid, image=img,
        full=vlm.pick(full_logits, cands), reduced=vlm.pick(red_logits, cands),
        vit_records=vit1.records, llm_records=llm1.records, vit_tokens=vit1.tokens_per_layer,
        llm_image_tokens=llm1.image_tokens_per_layer, llm_image_tokens_full=llm0.image_tokens_per_layer,
        costs_full=vlm.costs(vit0.tokens_per_layer, llm0.image_tokens_per_layer, text_len),
        costs_reduced=vlm.costs(vit1.tokens_per_layer, llm1.image_tokens_per_layer, text_len),
        time_full_s=times["full"]["median_s"], time_reduced_s=times["reduced"]["median_s"],
    )


# ============================================================================================================ sweep
SWEEP_METHODS = ("illava_code", "illava_paper", "tome", "fastv", "random")
SWEEP_KEEPS = (2 / 3, 1 / 3, 2 / 9)


def sweep(vlm: TinyVLM, n_scenes: int = 40, keeps: Sequence[float] = SWEEP_KEEPS,
          methods: Sequence[str] = SWEEP_METHODS, time_repeats: int = 3, start: int = 0,
          progress: Progress | None = None) -> list[dict[str, Any]]:
    """Accuracy vs tokens kept vs prefill time for every method on ``n_scenes`` held-out scenes (all their
    questions), each at the image-token budgets ``keeps`` (fractions of 256), plus the unreduced model.

    Rows: ``method, keep, label, accuracy, chance, per_type, tokens_to_llm, image_tokens_mean_llm, macs,
    prefill_s, speedup`` (prefill of one request, median, interleaved with the unreduced reference; ``speedup`` =
    reference / method)."""
    from .scenes import scenes as make_scenes

    if n_scenes < 1:
        raise InputError("The sweep needs at least one scene.")
    data = make_scenes(int(n_scenes), "heldout", start=start)
    configs: list[tuple[str, float, ReductionPlan]] = [("none", 1.0, ReductionPlan())]
    for keep in keeps:
        for m in methods:
            configs.append((merging.get_method(m).name, float(keep), plan_for_budget(m, keep, vlm.n_patches)))
    rows = []
    for ci, (m, keep, plan) in enumerate(configs):
        sub = lambda f, msg="", ci=ci: report(progress, (ci + 0.8 * f) / len(configs), msg)  # noqa: E731
        res = evaluate(vlm, data, plan, progress=sub)
        t = time_prefill(vlm, data[0].pil(), data[0].questions[0].text, {"ref": None, "plan": plan},
                         repeats=time_repeats)
        rows.append({
            "method": m, "keep": round(keep, 4), "label": res.label, "accuracy": res.accuracy, "chance": res.chance,
            "per_type": res.per_type, "n_questions": res.n_questions, "tokens_to_llm": res.tokens_to_llm,
            "image_tokens_mean_llm": res.image_tokens_mean_llm, "macs": res.macs,
            "prefill_s": t["plan"]["median_s"], "reference_s": t["ref"]["median_s"],
            "speedup": t["ref"]["median_s"] / max(t["plan"]["median_s"], 1e-9),
        })
        report(progress, (ci + 1) / len(configs), f"{res.label}: accuracy {res.accuracy:.3f}")
    return rows


# ======================================================================================================= diagnosis
OBJECT_COVERAGE = 0.25  # a patch "shows an object" when an object covers at least a quarter of it
INTERIOR_COVERAGE = 0.999  # an object patch is "interior" when fully covered, otherwise an "edge" patch
SIZE_FACTORS = (0.7, 1.0, 1.3)  # object-radius factors of the size control (training radii: 0.09-0.13 of the image)


def _count_answers(vlm: TinyVLM, data: Sequence[scenes.Scene], plan: ReductionPlan | None,
                   encoder_scores: Callable[[scenes.Scene, merging.TokenSet], torch.Tensor] | None = None,
                   image_positions: str = "sequence") -> dict[str, Any]:
    """Accuracy on the counting questions of ``data`` and how the wrong answers miss (over / under the truth)."""
    from dataclasses import replace

    only = [replace(s, questions=[q for q in s.questions if q.kind == "count"]) for s in data]
    only = [s for s in only if s.questions]
    res = evaluate(vlm, only, plan, encoder_scores=encoder_scores, image_positions=image_positions)
    truth = [q.answer for s in only for q in s.questions]
    idx = {w: i for i, w in enumerate(scenes.COUNTS)}
    over = sum(idx[p] > idx[t] for p, t in zip(res.predictions, truth, strict=True))
    under = sum(idx[p] < idx[t] for p, t in zip(res.predictions, truth, strict=True))
    return {"plan": res.label, "questions": len(truth), "accuracy": round(res.accuracy, 4), "overcounts": int(over),
            "undercounts": int(under)}


def diagnose(vlm: TinyVLM, n_scenes: int = 36, keep: float = 1 / 3, start: int = 0,
             progress: Progress | None = None) -> dict[str, Any]:
    """Why iLLaVA's encoder stage costs the counting answers of the tiny VLM (held-out scenes ``start ...``).

    1. Ranking signal of the unreduced encoder at every block: where object patches (coverage >=
       :data:`OBJECT_COVERAGE`) rank by ``S_avg`` (0 = most attended), the object share of the 16 most attended
       tokens, and the token norms (the register-artifact check of Darcet et al., arXiv 2309.16588: artifacts are
       background tokens with norms far above the rest that absorb attention). The class token's attention row is
       reported beside it for reference (the released code averages over every query; SigLIP has no class token).
    2. iLLaVA's plan (``illava_code`` at ``keep``) vs random dropping: share of object / background patches whose
       own token survives each encoder merge (object patches also split into interior ones, fully covered, and edge
       ones, partly covered: an attention-received ranking can keep an object's outline and drop its inside; each
       share is a mean over the scenes that have such patches), the
       object share of the tokens that reach the LM relative to the image, and objects left with no token of their
       own.
    3. Counting answers (accuracy, over- and under-counts) of the unreduced model, iLLaVA, its encoder stage alone,
       random dropping, and a ground-truth control: iLLaVA's encoder merge at the same layers and r with the
       ranking replaced by the object masks (objects first), which keeps every object token.
    4. The unreduced model's counting answers on the same scenes with every object's radius scaled by
       :data:`SIZE_FACTORS` (same objects, so the same true counts): whether it reads the count from object area.
    """
    data = scenes.scenes(int(n_scenes), "heldout", start=start)
    plan = plan_for_budget("illava_code", keep, vlm.n_patches)
    rnd = plan_for_budget("random", keep, vlm.n_patches)
    ad, pre = vlm.adapter, vlm.adapter.prefix
    cov = {s.seed: torch.from_numpy(scenes.patch_coverage(s, vlm.patch)).float() for s in data}
    blocks: dict[int, dict[str, list[float]]] = {}
    kept: dict[str, dict[int, dict[str, list[float]]]] = {"illava_code": {}, "random": {}}
    share: dict[str, list[float]] = {"illava_code": [], "random": []}
    lost = {"illava_code": 0, "random": 0}
    n_obj = []
    with torch.inference_mode():
        for si, s in enumerate(data):
            obj = cov[s.seed] >= OBJECT_COVERAGE
            inside = cov[s.seed] >= INTERIOR_COVERAGE
            parts = {"object": obj, "background": ~obj, "object_interior": inside, "object_edge": obj & ~inside}
            parts = {k: m.numpy() for k, m in parts.items() if bool(m.any())}  # a part a scene lacks is not averaged
            n_obj.append(int(obj.sum()))
            px = vlm.pixels([s.pil()])

            def probe(i: int, probs: torch.Tensor, ts: merging.TokenSet, obj: torch.Tensor = obj) -> None:
                s_avg = probs.mean((1, 2))[0, pre:]
                cls_row = probs[0, :, 0, pre:].mean(0)
                norms = ts.x[0, pre:].norm(dim=-1)
                rank = torch.empty_like(s_avg)
                rank[s_avg.argsort(descending=True)] = torch.arange(len(s_avg), dtype=s_avg.dtype)
                rank_cls = torch.empty_like(s_avg)
                rank_cls[cls_row.argsort(descending=True)] = torch.arange(len(s_avg), dtype=s_avg.dtype)
                top = s_avg.argsort(descending=True)[:16]
                med = float(norms.median())
                b = blocks.setdefault(i, {})
                for key, val in (("object_rank", float(rank[obj].mean()) / len(s_avg)),
                                 ("object_rank_cls_query", float(rank_cls[obj].mean()) / len(s_avg)),
                                 ("top16_object_share", float(obj[top].float().mean())),
                                 ("top16_attention_share", float(s_avg[top].sum())),
                                 ("top16_norm_over_median", float(norms[top].mean()) / med),
                                 ("max_norm_over_median", float(norms.max()) / med)):
                    b.setdefault(key, []).append(val)

            run_vit(ad, px, None, probe=probe)  # the unreduced encoder, every block's attention probabilities
            for name, pl in (("illava_code", plan), ("random", rnd)):
                run = run_vit(ad, px, vlm.seeded(pl, px), record=True)
                for rec in run.records:
                    d = kept[name].setdefault(rec.layer, {})
                    for part, m in parts.items():
                        d.setdefault(f"{part}_kept", []).append(float(rec.own[m].mean()))
                    d.setdefault("tokens_after", []).append(rec.n_after)
                pos = run.state.pos[0, pre:] - pre
                share[name].append(float(obj[pos].float().mean()) / max(float(obj.float().mean()), 1e-9))
                lost[name] += sum(int(not (obj & torch.from_numpy(scenes.patch_coverage(
                    scenes.Scene(s.seed, s.image, [o]), vlm.patch) >= OBJECT_COVERAGE))[pos].any()) for o in s.objects)
            report(progress, 0.4 * (si + 1) / len(data), f"encoder signals: scene {si + 1}/{len(data)}")

    def mean(d: dict[str, list[float]]) -> dict[str, float]:
        return {k: round(float(np.mean(v)), 4) for k, v in d.items()}

    def oracle(scene: scenes.Scene, ts: merging.TokenSet) -> torch.Tensor:
        c = torch.cat([torch.ones(pre), cov[scene.seed]])  # protected prefix, then the patches
        return (c[ts.pos] >= OBJECT_COVERAGE).float() + 1e-3 * c[ts.pos]  # objects first, then by coverage

    enc_only = ReductionPlan("illava_code", vit_layers=plan.vit_layers, vit_r=plan.vit_r)
    counting = {}
    runs = [("unreduced", None, None), ("illava_code", plan, None), ("illava_code_encoder_only", enc_only, None),
            ("random", rnd, None), ("ground_truth_ranking_encoder_only", enc_only, oracle)]
    for j, (name, pl, scorer) in enumerate(runs):
        counting[name] = _count_answers(vlm, data, pl, scorer)
        report(progress, 0.4 + 0.5 * (j + 1) / len(runs), f"counting: {name}")
    by_size = {}  # the unreduced model on the same scenes with every object's radius scaled
    for f in SIZE_FACTORS:
        by_size[str(f)] = _count_answers(vlm, [scenes.with_object_scale(s, f) for s in data], None)
    report(progress, 1.0, "counting vs object size")
    return {
        "scenes": len(data), "start": start, "keep": keep, "plan": plan.label(), "random_plan": rnd.label(),
        "object_coverage": OBJECT_COVERAGE, "object_patches_mean": round(float(np.mean(n_obj)), 2),
        "encoder_blocks": {i: mean(b) for i, b in blocks.items()},
        "kept_per_merge_layer": {n: {i: mean(d) for i, d in v.items()} for n, v in kept.items()},
        "object_share_reaching_lm_over_image": {n: round(float(np.mean(v)), 4) for n, v in share.items()},
        "objects_without_own_token": lost,
        "counting": counting,
        "counting_unreduced_by_object_scale": by_size,
    }


def local_llava_checkpoints() -> list[str]:
    """LLaVA-family checkpoints in the local Hugging Face cache (the lab never downloads). Their CLIP/SigLIP vision
    tower and Llama/Qwen2 language model are the architectures :class:`VitAdapter` and :class:`LlamaRunner` patch."""
    import json
    import os

    roots = []
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME", os.path.join(os.path.expanduser("~"), ".cache", "huggingface")), "hub")
    if os.path.isdir(hub):
        roots = [os.path.join(hub, d) for d in os.listdir(hub) if d.startswith("models--")]
    found = []
    for root in roots:
        for cfg in Path(root).glob("snapshots/*/config.json"):
            try:
                kind = json.loads(cfg.read_text()).get("model_type", "")
            except (OSError, ValueError):
                continue
            if "llava" in str(kind) or str(kind) in ("qwen2_vl", "qwen2_5_vl", "internvl"):
                found.append(Path(root).name.removeprefix("models--").replace("--", "/"))
                break
    return sorted(set(found))


class LlavaPatched:
    """The same reduction plans on a transformers ``LlavaForConditionalGeneration`` (CLIP/SigLIP vision tower,
    Llama/Qwen2 language model): encoder merges in the tower up to its feature layer, LLM reductions over the image
    placeholder span. Only single-layer features (``vision_feature_layer`` an int) are supported."""

    def __init__(self, model: nn.Module) -> None:
        inner, cfg = model.model, model.config
        if not isinstance(cfg.vision_feature_layer, int):
            raise InputError("Only LLaVA checkpoints that read one vision feature layer are supported.")
        self.model = model
        self.vit = VitAdapter(inner.vision_tower)
        f = int(cfg.vision_feature_layer)
        self.n_blocks = self.vit.num_layers + 1 + f if f < 0 else f
        self.drop_cls = cfg.vision_feature_select_strategy == "default"
        self.projector = inner.multi_modal_projector
        self.runner = LlamaRunner(model, base=inner.language_model, config=cfg.text_config)
        self.image_token = int(cfg.image_token_index)

    def prefill(self, input_ids: torch.Tensor, pixel_values: torch.Tensor, plan: ReductionPlan | None = None,
                record: bool = False) -> tuple[torch.Tensor, VitRun, LLMRun]:
        """Next-token logits ``[V]`` of one prompt ``input_ids [1, L]`` whose image placeholders are contiguous."""
        where = torch.nonzero(input_ids[0] == self.image_token)[:, 0]
        if len(where) == 0 or int(where[-1] - where[0]) + 1 != len(where):
            raise InputError("The prompt needs one contiguous block of image placeholder tokens.")
        run = run_vit(self.vit, pixel_values, plan, record=record, n_blocks=self.n_blocks)
        p = self.vit.prefix if self.drop_cls else 0
        with torch.inference_mode():
            feats = self.projector(run.tokens[:, p:])
            start, stop = int(where[0]), int(where[-1]) + 1
            text = self.runner.embed(input_ids)
            seq = torch.cat([text[:, :start], feats, text[:, stop:]], 1)
            src = run.state.source[:, p:, p:] if self.drop_cls else run.state.source
            llm = self.runner.prefill(seq, torch.tensor([seq.shape[1] - 1]), start, feats.shape[1], src, plan,
                                      record=record)
            return self.model.lm_head(llm.last)[0], run, llm
