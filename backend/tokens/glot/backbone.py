"""Frozen backbones for GLOT and the cached token states they produce.

:func:`load_backbone` wraps MiniLM (encoder), SmolLM2 (decoder) or any local transformers model as a
:class:`Backbone`; :func:`encode` runs it once over a list of texts and keeps the last hidden states
(:class:`HiddenStates`, float16), cached in-process and optionally on disk, so that training touches only the pooling
and the head.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch

from ...errors import InputError
from ...runtime import Progress, report

DECODER_TYPES = {"gpt2", "gptj", "gpt_neo", "gpt_neox", "llama", "mistral", "qwen2", "qwen3", "phi", "phi3", "gemma",
                 "gemma2", "gemma3", "falcon", "mpt", "olmo", "smollm3", "opt", "bloom"}
BACKBONES = ("minilm", "smollm2")


@dataclass
class Backbone:
    """A frozen model that turns texts into token states. ``is_decoder``: CLS pooling takes the last valid token."""

    key: str
    tokenizer: Any
    model: Any  # the base transformer (no LM head)
    is_decoder: bool
    source: str

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def num_parameters(self) -> int:
        return int(sum(p.numel() for p in self.model.parameters()))


def is_decoder_config(config: Any) -> bool:
    if getattr(config, "is_decoder", False) or getattr(config, "model_type", "") in DECODER_TYPES:
        return True
    return any("CausalLM" in a for a in (getattr(config, "architectures", None) or []))


def wrap_backbone(obj: Any, key: str, is_decoder: bool | None = None) -> Backbone:
    """Wrap a loaded ``TextEncoder`` / ``CausalLM`` of :mod:`backend.models` (or anything with ``.tokenizer`` and
    ``.model``) as a frozen :class:`Backbone`. The tokenizer gets a pad token (EOS) and right padding if it lacks them."""
    model = getattr(obj.model, "base_model", obj.model)
    dec = is_decoder_config(obj.model.config) if is_decoder is None else is_decoder
    tok = obj.tokenizer
    if tok.pad_token is None:
        if tok.eos_token is None:
            raise InputError(f"The tokenizer of {key} has neither a pad nor an end-of-text token; it cannot batch texts.")
        tok.pad_token = tok.eos_token
    tok.padding_side = "right"
    model.eval()  # frozen: states are computed under inference_mode; LoRA works on a copy
    return Backbone(key=key, tokenizer=tok, model=model, is_decoder=dec, source=str(getattr(obj, "source", key)))


def backbone_kind(name: str | None) -> str:
    """Which loader of :mod:`backend.models` serves ``name``: ``minilm`` (encoders) or ``smollm2`` (decoders).
    Reads only the config (``InputError`` when the model is not found offline)."""
    name = (name or "minilm").strip()
    if name in BACKBONES:
        return name
    from ...models._common import resolve_source

    folder = resolve_source(name, "backbone")
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(str(folder), trust_remote_code=False)
    except Exception as err:  # noqa: BLE001
        raise InputError(f"Could not read the config of '{name}': {str(err).splitlines()[0][:200]}") from err
    return "smollm2" if is_decoder_config(config) else "minilm"


_LOADED: OrderedDict[str, Backbone] = OrderedDict()


def load_backbone(name: str | None = "minilm") -> Backbone:
    """``minilm`` (default, encoder), ``smollm2`` (decoder) or a local folder / cached hub name of any transformers
    model (encoder or decoder, detected from its config). Raises :class:`InputError` when it cannot be loaded.
    The last two backbones stay loaded in-process (CLI runs, tests); pages pass their cached models instead."""
    from ... import models

    name = (name or "minilm").strip()
    if name in _LOADED:
        _LOADED.move_to_end(name)
        return _LOADED[name]
    kind = backbone_kind(name)
    if name in BACKBONES:
        bb = wrap_backbone(models.load(name), name)
    else:
        bb = wrap_backbone(models.load(kind, name), name, is_decoder=kind == "smollm2")
    _LOADED[name] = bb
    while len(_LOADED) > 2:
        _LOADED.popitem(last=False)
    return bb


@dataclass
class HiddenStates:
    """Cached token states of a list of texts: ``hidden [N, L, d]`` (float16), ``mask [N, L]`` (bool),
    ``input_ids [N, L]`` (int32), ``seconds`` spent in the backbone."""

    hidden: torch.Tensor
    mask: torch.Tensor
    input_ids: torch.Tensor
    seconds: float
    backbone: str
    truncated: int = 0  # texts longer than max_tokens (cut)

    def __len__(self) -> int:
        return int(self.hidden.shape[0])

    def batch(self, idx: torch.Tensor | slice) -> tuple[torch.Tensor, torch.Tensor]:
        """Float32 states and mask of the rows ``idx``, cropped to their longest text."""
        mask = self.mask[idx]
        length = max(1, int(mask.sum(1).max()))
        return self.hidden[idx, :length].float(), mask[:, :length]

    @property
    def nbytes(self) -> int:
        return int(self.hidden.numel() * 2 + self.mask.numel() + self.input_ids.numel() * 4)


_CACHE: OrderedDict[tuple, HiddenStates] = OrderedDict()


def cache_limit_bytes() -> int:
    """The bound of the in-process hidden-state cache (``$METHOD_LAB_GLOT_CACHE_MB``, default 1500 MB)."""
    try:
        return int(float(os.environ.get("METHOD_LAB_GLOT_CACHE_MB", "1500")) * 2**20)
    except ValueError:
        return 1500 * 2**20


def clear_cache() -> None:
    _CACHE.clear()


def _texts_key(texts: list[str]) -> str:
    h = hashlib.sha1()
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _disk_path(states_dir: str, backbone: Backbone, max_tokens: int, texts_key: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in backbone.key)[-60:]
    return os.path.join(states_dir, f"{safe}_{int(max_tokens)}_{texts_key[:20]}.pt")


def _save_states(states: HiddenStates, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"hidden": states.hidden, "mask": states.mask, "input_ids": states.input_ids,
                "seconds": torch.tensor(states.seconds), "truncated": torch.tensor(states.truncated)}, tmp)
    os.replace(tmp, path)


def _load_states(path: str, backbone: Backbone) -> HiddenStates:
    d = torch.load(path, map_location="cpu", weights_only=True)
    return HiddenStates(d["hidden"], d["mask"], d["input_ids"], float(d["seconds"]), backbone.key, int(d["truncated"]))


def encode(backbone: Backbone, texts: list[str], max_tokens: int = 160, batch_size: int = 32,
           progress: Progress | None = None, use_cache: bool = True, states_dir: str | None = None) -> HiddenStates:
    """Run the frozen backbone once over ``texts`` (sorted by length into batches) and keep the last hidden states.

    Results are cached in-process by (backbone, max_tokens, texts), least recently used first out, within
    :func:`cache_limit_bytes`. ``max_tokens`` includes special tokens (160 keeps every 128-word stress text whole).
    ``states_dir`` (training scripts only) also keeps them on disk, keyed by backbone, max_tokens and the texts' sha1;
    they are read back with ``torch.load(weights_only=True)``.
    """
    if not texts:
        raise InputError("No texts to encode.")
    tkey = _texts_key(texts)
    key = (backbone.key, id(backbone.model), int(max_tokens), tkey)
    if use_cache and key in _CACHE:
        _CACHE.move_to_end(key)
        report(progress, 1.0, "hidden states from the cache")
        return _CACHE[key]
    disk = _disk_path(states_dir, backbone, max_tokens, tkey) if states_dir else None
    if disk and os.path.isfile(disk):
        states = _load_states(disk, backbone)
        report(progress, 1.0, "hidden states from disk")
        if use_cache:
            _CACHE[key] = states
        return states
    tok = backbone.tokenizer
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    chunks: list[tuple[list[int], torch.Tensor, torch.Tensor]] = []
    truncated = 0
    start = time.perf_counter()
    with torch.inference_mode():
        for b in range(0, len(order), batch_size):
            rows = order[b:b + batch_size]
            enc = tok([texts[i] for i in rows], padding=True, truncation=True, max_length=int(max_tokens),
                      return_tensors="pt", return_overflowing_tokens=False)
            full = tok([texts[i] for i in rows], truncation=False, add_special_tokens=True)["input_ids"]
            truncated += sum(len(x) > max_tokens for x in full)
            out = backbone.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])
            chunks.append((rows, out.last_hidden_state.to(torch.float16), enc["attention_mask"].bool(),
                           enc["input_ids"].to(torch.int32)))
            report(progress, (b + len(rows)) / len(order), f"{backbone.key}: {b + len(rows)}/{len(order)} texts")
    seconds = time.perf_counter() - start
    length = max(c[1].shape[1] for c in chunks)
    n, d = len(texts), chunks[0][1].shape[-1]
    hidden = torch.zeros(n, length, d, dtype=torch.float16)
    mask = torch.zeros(n, length, dtype=torch.bool)
    ids = torch.full((n, length), int(tok.pad_token_id or 0), dtype=torch.int32)
    for rows, h, m, i in chunks:
        idx = torch.tensor(rows)
        hidden[idx, : h.shape[1]] = h
        mask[idx, : m.shape[1]] = m
        ids[idx, : i.shape[1]] = i
    states = HiddenStates(hidden, mask, ids, seconds, backbone.key, truncated)
    if disk:
        _save_states(states, disk)
    if use_cache:
        _CACHE[key] = states
        while _CACHE and sum(s.nbytes for s in _CACHE.values()) > cache_limit_bytes() and len(_CACHE) > 1:
            _CACHE.popitem(last=False)
    return states
