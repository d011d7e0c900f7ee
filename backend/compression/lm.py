"""The causal LMs both compression methods work on: the Llama-family structure check and held-out perplexity.

Pruning (:mod:`backend.compression.pruning`) and STaMP (:mod:`backend.compression.stamp.hooks`) both patch the linear
layers of Llama-family decoder layers (q/k/v/o_proj, gate/up/down_proj) and both report perplexity with the pruning
paper's protocol (FLAP's ``eval_ppl``): non-overlapping windows of ``seqlen`` tokens (128), each scored independently,
exp of the mean next-token negative log-likelihood over all predicted tokens.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..runtime import Progress, report

if TYPE_CHECKING:
    import torch

SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2")


def has_submodule(module: Any, name: str) -> bool:
    try:
        module.get_submodule(name)
        return True
    except AttributeError:
        return False


def check_llama_family(model: Any) -> None:
    """Raise :class:`InputError` unless ``model`` is a Llama-family causal LM (decoder layers with q/k/v/o_proj and
    gate/up/down_proj linear layers)."""
    import torch

    cfg = getattr(model, "config", None)
    mtype = getattr(cfg, "model_type", None)
    inner = getattr(model, "model", None)
    layers = getattr(inner, "layers", None)
    if mtype not in SUPPORTED_MODEL_TYPES or layers is None or len(layers) == 0:
        raise InputError(
            f"This model (type '{mtype}') is not a Llama-family causal LM. Structured pruning here needs decoder "
            f"layers with self_attn.o_proj and mlp.down_proj (model types: {', '.join(SUPPORTED_MODEL_TYPES)})."
        )
    for name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                 "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
        mod = layers[0].get_submodule(name) if has_submodule(layers[0], name) else None
        if not isinstance(mod, torch.nn.Linear):
            raise InputError(f"This model has no linear layer '{name}' in its decoder layers; it is not Llama-like.")


def batch_nll(model: Any, x: torch.Tensor) -> list[float]:
    """Mean next-token NLL of each window of one batch ``x`` [B, T] (each window scored on its own)."""
    import torch
    import torch.nn.functional as F

    with torch.inference_mode():
        logits = model(input_ids=x, use_cache=False).logits[:, :-1].float()
        nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="none")
    return nll.view(x.shape[0], -1).double().mean(1).tolist()


def perplexity(model: Any, ids: torch.Tensor, batch_size: int = 4, progress: Progress | None = None) -> float:
    """exp(mean next-token NLL) of ``model`` over the windows ``ids`` [M, T] (each window scored on its own; the
    windows have one length, so the mean over windows is the mean over tokens)."""
    vals: list[float] = []
    for i in range(0, ids.shape[0], batch_size):
        vals += batch_nll(model, ids[i : i + batch_size])
        report(progress, min(1.0, (i + batch_size) / ids.shape[0]), "perplexity")
    return math.exp(sum(vals) / max(len(vals), 1))


__all__ = ["SUPPORTED_MODEL_TYPES", "batch_nll", "check_llama_family", "has_submodule", "perplexity"]
