"""Tactic inside a real LM: capture of post-RoPE q, k, v and sparse decode attention through transformers' attention
interface (paper: Zhu et al., "Tactic", ICLR 2026, arXiv 2502.12216; selectors in ``sparse_attention``).

One attention function is registered with ``transformers.AttentionInterface`` under ``ATTN_NAME`` (its mask with
``AttentionMaskInterface``, the sdpa mask). While a model runs with it, a context variable says what to do:

- ``capture``: store the post-RoPE query (1, Hq, T, d) and the key/value (1, Hkv, T, d) of the chosen layers, then
  run the exact sdpa attention;
- ``sparse``: the queries of a forward that extends a prefilled cache (the decode positions n0..T-1) attend through a
  selector of ``sparse_attention.SELECTORS`` (each query head over its own set, renormalised); the prefill is dense;
- otherwise plain sdpa.

:func:`sparse_perplexity` is the teacher-forced perplexity of the last ``n_last`` tokens of a text: a dense prefill of
the first tokens, then the last ``n_last`` positions in one forward over the cache, every one of them attending
through the selector in every chosen layer. Tactic clusters each layer's prefill keys once (shared by the methods,
the prefill being dense); the positions after the prefill are Tactic's "newly generated tokens" (full attention).

Any causal LM whose attention dispatches through ``AttentionInterface`` with grouped KV heads (Llama family: llama,
mistral, qwen2, qwen3, smollm3) plugs in; another architecture raises :class:`InputError` before any work.
Captured tensors are cached under ``runtime.cache_dir()/tactic`` (never in ``assets/``).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ...errors import InputError
from ...runtime import Progress, cache_dir, report
from .sparse_attention import (
    ADAPTIVE,
    OURS,
    SELECTORS,
    LayerCache,
    TacticConfig,
    TacticIndex,
    check_p,
    logits,
)

ATTN_NAME = "method_lab_tactic"
SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "smollm3")
_STATE: contextvars.ContextVar[Any] = contextvars.ContextVar("tactic_attention_state", default=None)
_REGISTERED = False


class _CaptureDone(Exception):
    """Ends a capture forward after its last chosen layer."""


@dataclass
class CaptureState:
    """Stores q (Hq, T, d), k and v (Hkv, T, d) per chosen layer (float32, CPU)."""

    layers: set[int]
    store: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)


@dataclass
class SparseState:
    """How the decode positions attend: ``method`` of SELECTORS, target ``p``, ``budget`` (int, or "match": per layer
    and query the mean per-head tokens recorded by an earlier Tactic pass in ``matched``), chosen ``layers`` (None =
    all). Collects per-layer token and byte counts."""

    method: str
    p: float
    budget: Any
    n0: int
    cfg: TacticConfig
    layers: set[int] | None = None
    indices: dict[int, TacticIndex] = field(default_factory=dict)
    matched: dict[int, torch.Tensor] = field(default_factory=dict)
    stats: dict[int, dict[str, float]] = field(default_factory=dict)


def _attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any,
               **kwargs: Any) -> tuple[torch.Tensor, None]:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    state = _STATE.get()
    layer = int(getattr(module, "layer_idx", -1))
    if isinstance(state, CaptureState) and layer in state.layers:
        state.store[layer] = {"q": query[0].detach().float().clone(), "k": key[0].detach().float().clone(),
                              "v": value[0].detach().float().clone()}
        if len(state.store) == len(state.layers):
            raise _CaptureDone  # the later layers are not needed
    if (isinstance(state, SparseState) and query.shape[2] < key.shape[2]
            and (state.layers is None or layer in state.layers)):
        return _sparse_attention(state, layer, query, key, value), None
    return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


def _sparse_attention(state: SparseState, layer: int, query: torch.Tensor, key: torch.Tensor,
                      value: torch.Tensor) -> torch.Tensor:
    """Decode positions T-N..T-1 attend through the selector. query (1, Hq, N, d), key/value (1, Hkv, T, d) ->
    (1, N, Hq, d)."""
    n, t = query.shape[2], key.shape[2]
    k, v = key[0].float(), value[0].float()
    q = query[0].transpose(0, 1).float()  # (N, Hq, d)
    pos = torch.arange(t - n, t)
    cache = LayerCache(k, state.n0, v, state.cfg, _index=state.indices.get(layer))
    budget = state.budget
    if state.method not in ADAPTIVE and budget == "match":
        if layer not in state.matched:
            raise RuntimeError("budget 'match' needs a Tactic pass first")
        budget = state.matched[layer]
    sel = SELECTORS[state.method](q, pos, cache, p=state.p, budget=budget)
    if state.method == OURS:
        state.indices[layer] = cache.index
        state.matched[layer] = sel.tokens.double().mean(-1).round().long().clamp(min=1)
    z = logits(q, k, pos).masked_fill(~sel.mask, float("-inf"))
    w = torch.softmax(z, -1)
    g = q.shape[1] // k.shape[0]
    out = torch.einsum("qht,htd->qhd", w, v.repeat_interleave(g, 0))
    d = k.shape[-1]
    dense_bytes = float(((pos + 1).double() * 2 * d * state.cfg.bytes_per_element * k.shape[0]).sum())
    st = state.stats.setdefault(layer, {"bytes": 0.0, "dense_bytes": 0.0, "tokens": 0.0, "queries": 0.0})
    st["bytes"] += float(sel.bytes.sum())
    st["dense_bytes"] += dense_bytes
    st["tokens"] += float(sel.tokens.double().mean(-1).sum())
    st["queries"] += n
    return out[None].to(query.dtype)


def register() -> None:
    """Register the attention function and its (sdpa) mask with transformers, once per process."""
    global _REGISTERED
    if _REGISTERED:
        return
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(ATTN_NAME, _attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(ATTN_NAME, sdpa_mask)
    _REGISTERED = True


def check_model(model: Any) -> dict[str, int]:
    """The attention geometry of a supported causal LM, else :class:`InputError` (another architecture)."""
    cfg = getattr(model, "config", None)
    mtype = getattr(cfg, "model_type", None)
    layers = getattr(getattr(model, "model", None), "layers", None)
    if mtype not in SUPPORTED_MODEL_TYPES or not layers or not hasattr(layers[0], "self_attn"):
        raise InputError(f"This checkpoint (model type '{mtype}') is not a Llama-family causal LM; sparse decode "
                         f"attention here needs one of: {', '.join(SUPPORTED_MODEL_TYPES)}.")
    hq = int(cfg.num_attention_heads)
    hkv = int(getattr(cfg, "num_key_value_heads", None) or hq)
    d = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // hq)
    return {"layers": len(layers), "heads": hq, "kv_heads": hkv, "head_dim": d,
            "max_positions": int(getattr(cfg, "max_position_embeddings", 0) or 0)}


@contextlib.contextmanager
def attention_mode(model: Any, state: Any) -> Iterator[None]:
    """Run ``model`` with the registered attention function and ``state`` (restores both afterwards)."""
    register()
    old = model.config._attn_implementation
    token = _STATE.set(state)
    model.config._attn_implementation = ATTN_NAME
    try:
        yield
    finally:
        model.config._attn_implementation = old
        _STATE.reset(token)


def check_layers(layers: Sequence[int], n_layers: int) -> list[int]:
    out = sorted({int(x) for x in layers})
    if not out or out[0] < 0 or out[-1] >= n_layers:
        raise InputError(f"Layers must be between 0 and {n_layers - 1}; got {list(layers)}.")
    return out


# ------------------------------------------------------------------------------------------------ capture
def _capture_key(source: str, ids: torch.Tensor, layers: Sequence[int]) -> str:
    h = hashlib.sha256()
    h.update(f"{source}|{list(layers)}|{tuple(ids.shape)}|".encode())
    h.update(ids.to(torch.int64).numpy().tobytes())
    return h.hexdigest()[:24]


def capture(lm: Any, ids: torch.Tensor, layers: Sequence[int], use_cache: bool = True,
            progress: Progress | None = None) -> dict[int, dict[str, torch.Tensor]]:
    """Post-RoPE q (Hq, T, d), k, v (Hkv, T, d) of ``layers`` for the token ids (1, T) in one dense forward; cached
    on disk under ``cache_dir()/tactic`` (keyed by model source, ids and layers; loaded with weights_only)."""
    geo = check_model(lm.model)
    layers = check_layers(layers, geo["layers"])
    folder = cache_dir() / "tactic"
    path = folder / f"capture-{_capture_key(str(lm.source), ids, layers)}.pt"
    if use_cache and path.is_file():
        try:
            got = torch.load(path, weights_only=True)
            return {int(k): v for k, v in got.items()}
        except Exception:  # noqa: BLE001 - a damaged cache file is recomputed
            path.unlink(missing_ok=True)
    report(progress, 0.05, f"prefill of {ids.shape[1]} tokens (capturing {len(layers)} layers)")
    state = CaptureState(set(layers))
    with torch.inference_mode(), attention_mode(lm.model, state), contextlib.suppress(_CaptureDone):
        lm.model(input_ids=ids, use_cache=False)
    if use_cache:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        torch.save({str(k): v for k, v in state.store.items()}, tmp)
        tmp.replace(path)
    report(progress, 1.0, "captured")
    return state.store


# ------------------------------------------------------------------------------------------------ perplexity
def _nll(logits_: torch.Tensor, targets: torch.Tensor) -> list[float]:
    """Per-token negative log-likelihood of ``targets`` (1, N) under ``logits_`` (1, N, V)."""
    return torch.nn.functional.cross_entropy(logits_[0].float(), targets[0], reduction="none").tolist()


def _crop(kv: Any, n0: int) -> None:
    """Cut the KV cache back to its first ``n0`` tokens (transformers' crop takes minus the tokens to remove)."""
    extra = int(kv.get_seq_length()) - n0
    if extra > 0:
        kv.crop(-extra)


def sparse_perplexity(lm: Any, ids: torch.Tensor, methods: Sequence[str], p: float = 0.9, budget: Any = "match",
                      n_last: int = 256, layers: Sequence[int] | None = None, cfg: TacticConfig | None = None,
                      progress: Progress | None = None) -> dict[str, Any]:
    """Teacher-forced perplexity of the last ``n_last`` tokens of ``ids`` (1, T + 1) for dense attention and each
    selector of ``methods``. Positions T - n_last .. T - 1 attend through the selector in ``layers`` (None = all);
    ``budget`` for the fixed-budget selectors: an int, or ``"match"`` (per layer and query the mean tokens per head
    Tactic used; Tactic then runs first). Returns ``{"dense": {...}, "methods": {name: {...}}, "settings": ...}``
    with perplexity, the per-token NLL (``token_nll``, for paired intervals), KV bytes (overheads included) and
    their ratio to dense, mean tokens per head, seconds."""
    import time

    p = check_p(p)
    cfg = cfg or TacticConfig(p=p)
    geo = check_model(lm.model)
    if layers is not None:
        layers = check_layers(layers, geo["layers"])
    methods = list(SELECTORS.parse_names(",".join(methods))) if not isinstance(methods, list) else methods
    for m in methods:
        SELECTORS.get(m)
    if budget == "match" and OURS not in methods and any(m not in ADAPTIVE for m in methods):
        methods = [OURS, *methods]
    methods = sorted(methods, key=lambda m: m != OURS)
    total = ids.shape[1] - 1
    n0 = total - int(n_last)
    if n0 < 64:
        raise InputError(f"The text gives {total + 1} tokens; the perplexity of the last {n_last} needs at least "
                         f"{n_last + 65}. Use a longer text or fewer positions.")
    inputs, targets = ids[:, :total], ids[:, 1:]
    model = lm.model
    register()
    steps = 2 + len(methods)
    t0 = time.perf_counter()
    report(progress, 0.02, f"dense prefill of {n0} tokens")
    with torch.inference_mode(), attention_mode(model, None):
        out = model(input_ids=inputs[:, :n0], use_cache=True)
        kv = getattr(out, "cache", None) or out.past_key_values
        prefill_s = time.perf_counter() - t0
        report(progress, 1 / steps, "dense decode positions")
        t1 = time.perf_counter()
        out = model(input_ids=inputs[:, n0:], cache=kv, use_cache=True)
        nll = _nll(out.logits, targets[:, n0:])
        dense = {"perplexity": math.exp(sum(nll) / len(nll)), "seconds": time.perf_counter() - t1, "token_nll": nll}
        _crop(kv, n0)
    d, hkv = geo["head_dim"], geo["kv_heads"]
    n_lay = len(layers) if layers is not None else geo["layers"]
    pos = torch.arange(n0, total)
    dense["bytes"] = float(((pos + 1).double() * 2 * d * cfg.bytes_per_element * hkv).sum()) * n_lay
    dense["tokens"] = float((pos + 1).double().mean())
    shared_idx: dict[int, TacticIndex] = {}
    matched: dict[int, torch.Tensor] = {}
    res: dict[str, Any] = {}
    for i, m in enumerate(methods):
        report(progress, (2 + i) / steps, f"{SELECTORS.label(m)}: {n_last} positions through the selector")
        state = SparseState(m, p, budget, n0, cfg, set(layers) if layers is not None else None, shared_idx, matched)
        t1 = time.perf_counter()
        with torch.inference_mode(), attention_mode(model, state):
            out = model(input_ids=inputs[:, n0:], cache=kv, use_cache=True)
        _crop(kv, n0)
        nbytes = sum(s["bytes"] for s in state.stats.values())
        dbytes = sum(s["dense_bytes"] for s in state.stats.values())
        nll = _nll(out.logits, targets[:, n0:])
        ppl = math.exp(sum(nll) / len(nll))
        res[m] = {"perplexity": ppl, "ppl_ratio": ppl / dense["perplexity"], "bytes": nbytes, "token_nll": nll,
                  "bytes_ratio": nbytes / dbytes if dbytes else float("nan"),
                  "tokens": sum(s["tokens"] for s in state.stats.values()) / max(1.0, sum(
                      s["queries"] for s in state.stats.values())),
                  "seconds": time.perf_counter() - t1, "label": SELECTORS.label(m),
                  "per_layer_bytes_ratio": {str(k): s["bytes"] / s["dense_bytes"] for k, s in
                                            sorted(state.stats.items())}}
    report(progress, 1.0, "done")
    return {"dense": dense, "methods": res, "prefill_s": prefill_s,
            "settings": {"p": p, "budget": budget if isinstance(budget, (int, str)) else "tensor",
                         "n_last": int(n_last), "tokens": total, "prefill_tokens": n0,
                         "layers": "all" if layers is None else list(layers), "cluster_size": cfg.cluster_size,
                         "bytes_per_element": cfg.bytes_per_element, "sinks": cfg.sinks}}
