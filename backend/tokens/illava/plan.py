"""Where and how much to reduce, and what each step did: the pure part of token reduction in the tiny VLM.

:class:`ReductionPlan` names a method of :data:`.merging.METHODS` and the encoder blocks and LLM layers
it reduces at; :func:`plan_for_budget` builds each method's natural placement for a share of image tokens kept;
:class:`StepRecord` maps one reduction step onto the original patch grid. Nothing here touches a model: the loops that
carry a plan out are in :mod:`.patch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from ...errors import InputError
from . import merging


# ======================================================================================================== the plan
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
        return self._steps(self.vit_layers, self.vit_r) if merging.get_method(self.method).reduces else {}

    def llm_steps(self) -> dict[int, int]:
        return self._steps(self.llm_layers, self.llm_r) if merging.get_method(self.method).reduces else {}

    def reduces(self) -> bool:
        """Whether the plan has a reduction step (otherwise it is the unreduced model)."""
        return bool(self.vit_steps() or self.llm_steps())

    def validate(self, n_vit_layers: int, n_llm_layers: int, n_tokens: int) -> None:
        """Raise :class:`InputError` for layers out of range, stages the method cannot run in, or a budget that
        removes every image token."""
        meth = merging.get_method(self.method)
        title = merging.METHODS.entry(meth.name).about
        vs, ls = self.vit_steps(), self.llm_steps()
        if vs and "vit" not in meth.stages:
            raise InputError(f"{title} runs only in the language model: leave the encoder layers empty.")
        if ls and "llm" not in meth.stages:
            raise InputError(f"{title} runs only in the vision encoder: leave the LLM layers empty.")
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
            n -= min(r, n // 2) if merging.get_method(self.method).halves else r
            out.append(n)
        for r in self.llm_steps().values():
            n -= r
            out.append(n)
        return out

    def label(self) -> str:
        if not self.reduces():
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
    reducer = merging.get_method(method)
    meth = reducer.name
    if not 0.0 <= keep <= 1.0:
        raise InputError(f"The share of image tokens to keep must be in [0, 1]; got {keep}.")
    if not 0.0 <= split <= 1.0:
        raise InputError(f"The encoder share of the reduction must be in [0, 1]; got {split}.")
    total = int(round(n_tokens * (1 - keep)))
    if not reducer.reduces or total == 0:
        return ReductionPlan()
    if reducer.placement == merging.LLM_LAYER:
        return ReductionPlan(meth, llm_layers=(llm_layer,), llm_r=total, seed=seed)
    if reducer.placement == merging.EVERY_BLOCK:
        layers = tuple(range(n_vit_layers))
        return ReductionPlan(meth, vit_layers=layers, vit_r=_spread(total, len(layers)), seed=seed)
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


# ===================================================================================================== step records
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


def record_step(stage: str, layer: int, before: merging.TokenSet, after: merging.TokenSet, info: merging.MergeInfo,
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
