"""The trained parts of the tiny VLM: the projector (LLaVA-1.5's two-layer GELU MLP) and LoRA adapters on the language
model's q/v projections, stored together in ``assets/illava_projector.safetensors`` through :mod:`backend.weights`
(made by ``python -m backend.train illava``).

The adapters are folded into a private copy of the adapted matrices at load time (:func:`lora_merged_lm`), so the
embedded SmolLM2 shared with other pages is never modified.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ... import weights
from ...runtime import ASSETS

PROJECTOR_FILE = ASSETS / "illava_projector.safetensors"


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


MADE_BY = "python -m backend.train illava"


def projector_config(proj: Projector, lora: LoRA | None = None, image_size: int = 224) -> dict[str, Any]:
    """The ``config`` block of the weights file: what :func:`load_projector` rebuilds (and the models it sits between)."""
    return {"vision": "dinov2", "lm": "smollm2", "image_size": int(image_size),
            "d_vision": proj.fc1.in_features, "hidden": proj.fc1.out_features, "d_lm": proj.fc2.out_features,
            "lora_rank": lora.rank if lora is not None else 0,
            "lora_alpha": float(lora.scale) * lora.rank if lora is not None else 0.0,
            "lora_targets": list(lora.targets) if lora is not None else []}


def save_projector(proj: Projector, path: str | Path, lora: LoRA | None = None, *, command: str = "",
                   data_seeds: dict[str, Any] | None = None, quality: dict[str, Any] | None = None,
                   extra: dict[str, Any] | None = None, image_size: int = 224) -> Path:
    """Write the projector and the LoRA adapters as one float32 safetensors file through :func:`backend.weights.save`
    (``command``: the project command that made it; ``extra``: the training settings)."""
    state = {k: v.detach().float() for k, v in proj.state_dict().items()}
    if lora is not None:
        state.update({k: v.detach().float() for k, v in lora.tensors().items()})
    return weights.save(path, state, config=projector_config(proj, lora, image_size), command=command,
                        data_seeds=data_seeds, quality=quality, extra=extra)


def load_projector(path: str | Path = PROJECTOR_FILE) -> Projector:
    """Load a projector file through :func:`backend.weights.load` (safetensors only; a missing or altered shipped file
    is a :class:`~backend.weights.WeightsError`). LoRA adapters of the language model stored in the same file are
    attached as ``projector.lora`` (a dict of tensors, ``None`` if absent); :class:`~.tiny_vlm.TinyVLM`
    applies them. ``projector.meta`` is the file's :class:`~backend.weights.WeightsMeta`."""
    state, meta = weights.load(path, made_by=MADE_BY)
    lora = {k: state.pop(k) for k in list(state) if k.startswith("lora.")} or None
    d_vision, hidden = state["fc1.weight"].shape[1], state["fc1.weight"].shape[0]
    proj = Projector(d_vision=d_vision, d_lm=state["fc2.weight"].shape[0], hidden=hidden)
    proj.load_state_dict(state)
    proj.eval()
    proj.lora = lora
    proj.meta = meta
    return proj


__all__ = ["LORA_TARGETS", "MADE_BY", "PROJECTOR_FILE", "LoRA", "Projector", "load_projector", "lora_merged_lm",
           "projector_config", "save_projector"]
