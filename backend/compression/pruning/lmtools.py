"""Measuring and exporting pruned causal LMs: perplexity at a fixed context (:func:`backend.compression.lm.perplexity`,
the paper's protocol), throughput, stored vs effective parameter counts, and writing a pruned model as a standard
Hugging Face folder (fp16 safetensors) that plain ``AutoModelForCausalLM.from_pretrained`` loads.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import InputError

if TYPE_CHECKING:
    import torch

    from .pruning import PruneResult


def prefill_tokens_per_second(model: Any, ids: torch.Tensor, repeats: int = 1) -> float:
    """Tokens per second of a full forward over ``ids`` [B, T] (best of ``repeats``)."""
    import torch

    best = float("inf")
    with torch.inference_mode():
        for _ in range(max(1, repeats)):
            t = time.perf_counter()
            model(input_ids=ids, use_cache=False)
            best = min(best, time.perf_counter() - t)
    return ids.numel() / best


def decode_tokens_per_second(model: Any, prompt_ids: torch.Tensor, new_tokens: int = 32) -> float:
    """Greedy decoding speed (new tokens per second, KV cache on, batch 1), with EOS disabled so every run decodes
    exactly ``new_tokens``."""
    import torch

    with torch.inference_mode():
        t = time.perf_counter()
        model.generate(input_ids=prompt_ids, attention_mask=torch.ones_like(prompt_ids), max_new_tokens=new_tokens,
                       min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
        return new_tokens / (time.perf_counter() - t)


def stored_parameters(model: Any) -> int:
    """Parameters held in memory (tied weights once)."""
    return int(sum(p.numel() for p in model.parameters()))


def effective_parameters(model: Any) -> int:
    """Stored parameters minus those in all-zero rows of q/k/v/gate/up and all-zero columns of o_proj/down_proj
    (the zeroed, i.e. logically removed, heads and channels)."""
    n = stored_parameters(model)
    for layer in model.model.layers:
        attn, mlp = layer.self_attn, layer.mlp
        for lin in (attn.q_proj, attn.k_proj, attn.v_proj, mlp.gate_proj, mlp.up_proj):
            zero_rows = (lin.weight == 0).all(1)
            if lin.bias is not None:
                zero_rows &= lin.bias == 0
            n -= int(zero_rows.sum()) * (lin.in_features + (1 if lin.bias is not None else 0))
        for lin in (attn.o_proj, mlp.down_proj):
            n -= int((lin.weight == 0).all(0).sum()) * lin.out_features
    return max(0, n)


def weight_bytes(model: Any) -> int:
    return int(sum(p.numel() * p.element_size() for p in model.parameters()))


# ---------------------------------------------------------------------------------------------------------- export
def _full_attention_tensor(key: str, t: torch.Tensor, group_keep: list[bool], head_dim: int, group: int,
                           dense_rows: int) -> torch.Tensor:
    """Re-insert zero heads for KV groups removed physically so the tensor has the dense shape again."""
    import torch

    gk = torch.tensor(group_keep)
    if key.endswith("o_proj.weight"):
        rows = gk.repeat_interleave(group * head_dim)
        out = torch.zeros(t.shape[0], rows.numel(), dtype=t.dtype)
        out[:, rows] = t
        return out
    per = group * head_dim if ".q_proj." in key else head_dim
    rows = gk.repeat_interleave(per)
    out = torch.zeros((rows.numel(), *t.shape[1:]), dtype=t.dtype)
    out[rows] = t
    assert out.shape[0] == dense_rows
    return out


def standard_state_dict(model: Any, result: PruneResult, dtype: Any = None) -> tuple[dict[str, torch.Tensor], dict]:
    """A state dict with the dense attention shapes (zero heads where KV groups were removed), the pruned MLP shape,
    zero biases where the config's bias flags need them, in ``dtype``; plus config overrides."""
    import torch

    from .pruning import geometry

    cfg = model.config
    geo = geometry(model)
    # geometry() reads the config, which still has the dense head counts
    dense_rows = {"q_proj": geo.num_heads * geo.head_dim, "k_proj": geo.num_kv_heads * geo.head_dim,
                  "v_proj": geo.num_kv_heads * geo.head_dim}
    state = {k: v.detach() for k, v in model.state_dict().items()}
    if getattr(cfg, "tie_word_embeddings", False):
        state.pop("lm_head.weight", None)
    has_o_bias = any(k.endswith("self_attn.o_proj.bias") for k in state)
    has_down_bias = any(k.endswith("mlp.down_proj.bias") for k in state)
    mtype = getattr(cfg, "model_type", "llama")
    if (has_o_bias or has_down_bias) and mtype != "llama":
        raise InputError(f"Bias compensation (FLAP) cannot be saved as a standard '{mtype}' checkpoint; "
                         "choose another compensation for export.")
    out: dict[str, torch.Tensor] = {}
    for key, t in state.items():
        parts = key.split(".")
        if "self_attn" in parts and parts[-2] in ("q_proj", "k_proj", "v_proj", "o_proj"):
            li = int(parts[parts.index("layers") + 1])
            gk = [any(result.head_keep[li][g * geo.group : (g + 1) * geo.group]) for g in range(geo.num_kv_heads)]
            full = dense_rows.get(parts[-2], geo.num_heads * geo.head_dim)
            size = t.shape[1] if key.endswith("o_proj.weight") else t.shape[0]
            if key.endswith(".o_proj.bias"):
                pass
            elif size != full:
                t = _full_attention_tensor(key, t, gk, geo.head_dim, geo.group, full)
        out[key] = t
    overrides: dict[str, Any] = {"intermediate_size": int(result.intermediate_size)}
    if has_o_bias or has_down_bias:  # Llama's bias flags cover q/k/v/o and gate/up/down: add zero biases
        overrides.update(attention_bias=True, mlp_bias=True)
        for li, layer in enumerate(model.model.layers):
            pre = f"model.layers.{li}."
            for name, size in (("self_attn.q_proj", geo.num_heads * geo.head_dim),
                               ("self_attn.k_proj", geo.num_kv_heads * geo.head_dim),
                               ("self_attn.v_proj", geo.num_kv_heads * geo.head_dim),
                               ("self_attn.o_proj", geo.hidden),
                               ("mlp.gate_proj", layer.mlp.gate_proj.out_features),
                               ("mlp.up_proj", layer.mlp.up_proj.out_features),
                               ("mlp.down_proj", geo.hidden)):
                out.setdefault(pre + name + ".bias", torch.zeros(size))
    if dtype is not None:
        out = {k: v.to(dtype).contiguous() if v.is_floating_point() else v.contiguous() for k, v in out.items()}
    return out, overrides


def save_pruned(model: Any, tokenizer: Any, result: PruneResult, out_dir: str | Path, recipe: dict[str, Any],
                dtype: str = "float16") -> dict[str, Any]:
    """Write the pruned ``model`` as a standard Hugging Face folder at ``out_dir`` (safetensors in ``dtype``,
    config, generation config, tokenizer, ``pruning_recipe.json``).

    Everything is written into a temporary folder beside ``out_dir`` and renamed into place at the end, so a failure
    leaves nothing half-written. ``out_dir`` must not exist or be an empty folder. Returns the file list and sizes.
    """
    import torch
    from safetensors.torch import save_file

    out = Path(out_dir).expanduser().resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"The output folder {out} exists and is not empty; choose a new folder.")
    if not out.parent.is_dir():
        raise InputError(f"The parent folder {out.parent} does not exist.")
    torch_dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    state, overrides = standard_state_dict(model, result, torch_dtype)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        config = copy.deepcopy(model.config)
        for k, v in overrides.items():
            setattr(config, k, v)
        config.dtype = dtype
        config.save_pretrained(str(tmp))
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.save_pretrained(str(tmp))
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        if tokenizer is not None:
            tokenizer.save_pretrained(str(tmp))
        (tmp / "pruning_recipe.json").write_text(json.dumps(recipe, indent=2, default=str))
        for f in tmp.iterdir():  # safetensors writes its file owner-only; the folder is meant to be shared
            f.chmod(0o644)
        tmp.chmod(0o755)
        if out.exists():
            out.rmdir()
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    files = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
    return {"folder": str(out), "files": files, "bytes": sum(files.values()), "dtype": dtype}
