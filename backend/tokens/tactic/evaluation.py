"""Tactic analysis on captured attention (paper: Zhu et al., "Tactic", ICLR 2026, arXiv 2502.12216): texts and
presets, the needle task, and the comparison of every selector of ``sparse_attention.SELECTORS`` on the same queries.

Decode queries without decoding: the queries of the last ``n_queries`` positions of a prompt, each over its causal
prefix; the tokens before them are the prefill (clustered by Tactic, paged by Quest). Texts:

- ``pydoc``: Python's reference documentation shipped with CPython (``pydoc_data.topics``), the first T tokens;
- ``license``: the GNU GPL v3 as Debian ships it (English legal prose, another kind of text), the first T tokens;
- ``needle``: the same text with one planted sentence (a passphrase) at ``depth`` of the context and a question about
  it at the end; the needle positions are the passphrase's tokens;
- the user's own UTF-8 text (the ``text_corpus`` input kind);
- ``synthetic``: seeded stand-ins of SmolLM2's shapes (:func:`synthetic_capture`; no model).

For every (layer, query head, query) the analysis reports the realised mass p(I), the output error
||o_I - o|| and its bound, the tokens of the head's own set and of the GQA union, and the KV bytes touched with
overheads. Fixed-budget selectors get, per layer and query, the mean per-head token count of Tactic (``"match"``: the
paper's equal-tokens comparison) or a given budget. Shapes: captured q (Hq, T, d), k and v (Hkv, T, d) per layer.
The drawings of one case (:func:`score_curve`, :func:`positions`) are plain lists; ``jobs.run_compare`` assembles
all of it for the page and the CLI.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ...errors import InputError
from ...registry import choose
from ...runtime import Progress, report
from .inputs import MODEL_FREE, PRESETS
from .sparse_attention import (
    ADAPTIVE,
    ORACLE,
    OURS,
    SELECTORS,
    LayerCache,
    TacticConfig,
    attention_weights,
    check_p,
    fit_inverse,
    quality,
)

TEXT_PRESETS = tuple(p for p in PRESETS if p not in MODEL_FREE)  # the presets that are texts
NEEDLE = "The secret passphrase of the archive is violet-harbor-4721."
QUESTION = "\n\nQuestion: what is the secret passphrase of the archive? Answer: the secret passphrase is"
NEEDLE_VALUE = "violet-harbor-4721"
MIN_PREFILL = 64
EXACT_TOTAL = "tactic_exact_total"  # the ablation that stops Tactic's order at the exact total


def builtin_text() -> str:
    """Python's bundled reference topics joined in sorted order (the same text as the pruning corpus)."""
    from pydoc_data import topics

    return "\n\n".join(topics.topics[k].strip() for k in sorted(topics.topics))


LICENSE_PATH = "/usr/share/common-licenses/GPL-3"  # Debian's base-files: English legal prose, offline


def license_text() -> str:
    """The GNU GPL version 3 as Debian installs it (``base-files``): a text of another kind than the reference
    docs (legal English prose); :class:`InputError` where the file is absent."""
    from pathlib import Path

    path = Path(LICENSE_PATH)
    if not path.is_file():
        raise InputError(f"The licence preset reads {LICENSE_PATH} (Debian's base-files), which this system lacks; "
                         "upload a text instead.")
    return path.read_text(encoding="utf-8", errors="replace")


@dataclass
class Prompt:
    """Token ids (1, T), where they came from, and the needle's token positions (empty without a needle)."""

    ids: torch.Tensor
    source: str
    needle: list[int] = field(default_factory=list)


def text_prompt(tokenizer: Any, text: str, n_tokens: int, source: str, min_tokens: int) -> Prompt:
    """The first ``n_tokens`` tokens of ``text``; :class:`InputError` when it gives fewer than ``min_tokens``."""
    if not text or not text.strip():
        raise InputError(f"{source} is empty; give a UTF-8 text of at least {min_tokens} tokens.")
    ids = tokenizer(text, return_tensors="pt")["input_ids"][:, : int(n_tokens)]
    if ids.shape[1] < min_tokens:
        raise InputError(f"{source} gives {ids.shape[1]} tokens; this setting needs at least {min_tokens} "
                         f"(about {min_tokens * 4:,} characters). Use a longer text or a shorter context.")
    return Prompt(ids, source)


def needle_prompt(tokenizer: Any, n_tokens: int, depth: float = 0.4) -> Prompt:
    """The built-in text cut to about ``n_tokens`` tokens with :data:`NEEDLE` at ``depth`` and :data:`QUESTION` at
    the end; the needle positions are the tokens of the passphrase value."""
    base = tokenizer(builtin_text(), return_tensors="pt")["input_ids"][0]
    q_ids = tokenizer(QUESTION, return_tensors="pt")["input_ids"][0]
    n_ids = tokenizer(" " + NEEDLE + " ", return_tensors="pt")["input_ids"][0]
    room = int(n_tokens) - len(q_ids) - len(n_ids)
    if room < MIN_PREFILL:
        raise InputError(f"The needle task needs a context of at least {MIN_PREFILL + len(q_ids) + len(n_ids)} "
                         "tokens.")
    at = int(room * min(max(depth, 0.0), 1.0))
    ids = torch.cat([base[:at], n_ids, base[at:room], q_ids])
    value = tokenizer(NEEDLE_VALUE, add_special_tokens=False)["input_ids"]
    value_alt = tokenizer(" " + NEEDLE_VALUE, add_special_tokens=False)["input_ids"]
    seq = n_ids.tolist()
    pos: list[int] = []
    for cand in (value_alt, value, value[1:], value_alt[1:]):
        for s in range(len(seq) - len(cand) + 1):
            if cand and seq[s: s + len(cand)] == cand:
                pos = [at + s + i for i in range(len(cand))]
                break
        if pos:
            break
    if not pos:  # tokenisation merged the value with its neighbours: mark the whole planted sentence
        pos = list(range(at, at + len(n_ids)))
    return Prompt(ids[None], f"needle task ({len(ids)} tokens, needle at depth {depth:.0%})", pos)


def preset_prompt(tokenizer: Any, preset: str, n_tokens: int, min_tokens: int, depth: float = 0.4) -> Prompt:
    if preset == "needle":
        return needle_prompt(tokenizer, n_tokens, depth)
    if preset == "pydoc":
        return text_prompt(tokenizer, builtin_text(), n_tokens, "the built-in Python reference text", min_tokens)
    if preset == "license":
        return text_prompt(tokenizer, license_text(), n_tokens, "the GNU GPL v3 text", min_tokens)
    raise InputError(f"No text for the preset {choose(preset, TEXT_PRESETS, 'preset')!r}.")


# ------------------------------------------------------------------------------------------------ analysis
@dataclass
class Analysis:
    """Per selector, tensors over (layer, query, query head): ``mass``, ``err``, ``rel_err``, ``bound``,
    ``tokens``; per (layer, query, KV head): ``union`` (token count); per (layer, query): ``bytes``. ``need``
    (L, Q, Hq): oracle tokens for P; ``dense_bytes`` (L, Q); ``layers``; ``masks``: per selector the union masks
    (L, Q, Hkv, T) when kept; ``fit``: Tactic's (a, b) per case."""

    layers: list[int]
    p: float
    cases: dict[str, dict[str, torch.Tensor]]
    need: torch.Tensor
    dense_bytes: torch.Tensor
    seconds: dict[str, float]
    masks: dict[str, torch.Tensor] = field(default_factory=dict)
    head_masks: dict[str, torch.Tensor] = field(default_factory=dict)
    budget: Any = "match"
    n_prefill: int = 0


def _check_captured(captured: dict[int, dict[str, torch.Tensor]], n_queries: int) -> int:
    if not captured:
        raise InputError("No layer was captured.")
    t = next(iter(captured.values()))["k"].shape[1]
    if n_queries < 1 or t - n_queries < MIN_PREFILL:
        raise InputError(f"{n_queries} decode queries over a {t}-token context leave fewer than {MIN_PREFILL} prefill "
                         "tokens; use fewer queries or a longer text.")
    return t


def analyse(captured: dict[int, dict[str, torch.Tensor]], n_queries: int = 16, p: float = 0.9,
            budget: Any = "match", methods: Sequence[str] | None = None, cfg: TacticConfig | None = None,
            keep_masks: bool = False, progress: Progress | None = None) -> Analysis:
    """Run every selector of ``methods`` (default: all) on the last ``n_queries`` queries of each captured layer."""
    p = check_p(p)
    cfg = cfg or TacticConfig(p=p)
    t = _check_captured(captured, n_queries)
    methods = list(methods or SELECTORS)
    for m in methods:
        SELECTORS.get(m)
    if budget == "match" and OURS not in methods:
        methods = [OURS, *methods]
    methods = sorted(methods, key=lambda m: m != OURS)
    n0 = t - n_queries
    pos = torch.arange(n0, t)
    layers = sorted(captured)
    cases: dict[str, dict[str, list[torch.Tensor]]] = {m: {} for m in methods + ["oracle_need"]}
    seconds = dict.fromkeys(methods, 0.0)
    masks: dict[str, list[torch.Tensor]] = {m: [] for m in methods}
    head_masks: dict[str, list[torch.Tensor]] = {m: [] for m in methods}
    need, dense = [], []
    for li, layer in enumerate(layers):
        report(progress, li / len(layers), f"layer {layer}: {len(methods)} selectors x {n_queries} queries")
        c = captured[layer]
        k, v = c["k"], c["v"]
        q = c["q"][:, n0:t].transpose(0, 1).contiguous()
        cache = LayerCache(k, n0, v, cfg)
        w = attention_weights(q, k, pos)
        need.append(SELECTORS[ORACLE](q, pos, cache, p=p).tokens)
        dense.append((pos + 1).double() * 2 * k.shape[-1] * cfg.bytes_per_element * k.shape[0])
        matched = None
        for m in methods:
            b = budget
            if m not in ADAPTIVE and budget == "match":
                b = matched
            t0 = time.perf_counter()
            sel = SELECTORS[m](q, pos, cache, p=p, budget=b)
            seconds[m] += time.perf_counter() - t0
            if m == OURS:
                matched = sel.tokens.double().mean(-1).round().long().clamp(min=1)
            qu = quality(q, k, v, pos, sel.mask, w)
            got = {"mass": qu.mass, "err": qu.err, "rel_err": qu.rel_err, "bound": qu.bound, "kl": qu.kl,
                   "tokens": sel.tokens, "union": sel.union_tokens, "bytes": sel.bytes}
            if m == OURS:
                got["est_ratio"] = sel.extras["total_est_ratio"]
            for key, val in got.items():
                cases[m].setdefault(key, []).append(val)
            if keep_masks:
                masks[m].append(sel.union)
                head_masks[m].append(sel.mask)
    report(progress, 1.0, "analysed")
    out = {m: {key: torch.stack(vals) for key, vals in d.items()} for m, d in cases.items() if d}
    return Analysis(layers, p, out, torch.stack(need), torch.stack(dense), seconds,
                    {m: torch.stack(v) for m, v in masks.items() if v},
                    {m: torch.stack(v) for m, v in head_masks.items() if v}, budget, n0)


def fixed_median_budget(captured: dict[int, dict[str, torch.Tensor]], an: Analysis, threshold: float = 0.85
                        ) -> dict[str, float]:
    """Exact top-k with one uniform budget B = the median oracle need over all cases of ``an``: the share of
    (layer, head, query) cases whose realised mass stays below ``threshold`` (a fixed budget with exact scores)."""
    budget = max(1, int(an.need.double().median().round()))
    t = next(iter(captured.values()))["k"].shape[1]
    pos = torch.arange(an.n_prefill, t)
    masses = []
    for layer in an.layers:
        c = captured[layer]
        q = c["q"][:, an.n_prefill:t].transpose(0, 1).contiguous()
        cache = LayerCache(c["k"], an.n_prefill, c["v"])
        sel = SELECTORS["top_k"](q, pos, cache, budget=budget)
        masses.append(quality(q, c["k"], c["v"], pos, sel.mask).mass)
    mass = torch.stack(masses).double()
    return {"budget": budget, "share_below_threshold": float((mass < threshold).double().mean()),
            "mass_mean": float(mass.mean())}


def summary(an: Analysis, threshold: float = 0.85) -> dict[str, Any]:
    """JSON-ready means per selector (mass, success shares, error, tokens, bytes and their ratio to full attention,
    seconds) and the oracle need statistics."""
    rows = {}
    dense = an.dense_bytes.double().mean()
    for m, d in an.cases.items():
        mass = d["mass"].double()
        rows[m] = {
            "label": SELECTORS.label(m), "kind": SELECTORS.kind(m),
            "mass_mean": float(mass.mean()), "mass_p10": float(mass.flatten().quantile(0.1)),
            "share_mass_ge_threshold": float((mass >= threshold).double().mean()),
            "share_mass_ge_p": float((mass >= an.p - 1e-9).double().mean()),
            "rel_err_mean": float(d["rel_err"].double().mean()), "err_mean": float(d["err"].double().mean()),
            "bound_holds": float((d["err"] <= d["bound"] + 1e-6).double().mean()),
            "kl_mean": float(d["kl"].double().mean()),
            "tokens_per_head": float(d["tokens"].double().mean()),
            "union_tokens_per_kv_head": float(d["union"].double().mean()),
            "bytes_per_query_layer": float(d["bytes"].double().mean()),
            "bytes_ratio": float(d["bytes"].double().mean() / dense),
            "seconds": an.seconds.get(m, 0.0),
        }
        if "est_ratio" in d:
            rows[m]["total_estimate_ratio_median"] = float(d["est_ratio"].double().median())
    need = an.need.double()
    out: dict[str, Any] = {
        "p": an.p, "threshold": threshold, "layers": an.layers, "queries": int(an.need.shape[1]),
        "heads": int(an.need.shape[2]), "cases": int(an.need.numel()), "prefill_tokens": an.n_prefill,
        "budget": an.budget if isinstance(an.budget, (int, str)) else "tensor",
        "methods": rows,
        "need": {"min": float(need.min()), "median": float(need.median()), "max": float(need.max()),
                 "per_layer_head_median": need.median(1).values.tolist()},
        "dense_bytes_per_query_layer": float(dense),
    }
    if OURS in an.cases and ORACLE in an.cases:
        tt, ot = an.cases[OURS]["tokens"].double(), an.cases[ORACLE]["tokens"].double()
        out["tactic_vs_oracle_tokens"] = {"ratio_of_means": float(tt.mean() / ot.mean()),
                                          "median_ratio": float((tt / ot).median())}
        if EXACT_TOTAL in an.cases:
            et = an.cases[EXACT_TOTAL]["tokens"].double()
            out["tactic_vs_exact_total_tokens"] = {"ratio_of_means": float(tt.mean() / et.mean()),
                                                   "median_ratio": float((tt / et).median())}
    return out


def per_head(an: Analysis, method: str, key: str, threshold: float | None = None) -> list[float]:
    """The units of the claims' paired intervals: per (layer, head), the mean over the decode queries of
    ``an.cases[method][key]`` ((L, Q, Hq); ``method="oracle_need"``: the exact top-P tokens), or with ``threshold``
    the share of those queries whose value reaches it; L x Hq values, layer-major. Neighbouring queries of one
    head are strongly dependent, so the queries are averaged, not counted as instances."""
    x = (an.need if method == "oracle_need" else an.cases[method][key]).double()
    if threshold is not None:
        x = (x >= threshold).double()
    return x.mean(1).flatten().tolist()


def needle_recall(an: Analysis, needle: Sequence[int], method: str = OURS) -> dict[str, Any]:
    """Over (layer, query, KV head) cases where the oracle's GQA union holds a needle position: the share where
    ``method``'s union holds it too (needs ``keep_masks``)."""
    if not needle or ORACLE not in an.masks or method not in an.masks:
        return {"positions": list(needle), "cases": 0, "found": 0, "recall": float("nan")}
    idx = torch.as_tensor(list(needle))
    o = an.masks[ORACLE][..., idx]
    s = an.masks[method][..., idx]
    cases = int(o.sum())
    found = int((o & s).sum())
    return {"positions": list(needle), "cases": cases, "found": found,
            "recall": found / cases if cases else float("nan")}


# ------------------------------------------------------------------------------------------------ one case, drawn
def score_curve(captured: dict[int, dict[str, torch.Tensor]], layer: int, head: int, n_queries: int,
                query: int = -1, cfg: TacticConfig | None = None, max_points: int = 400,
                cache: LayerCache | None = None) -> dict[str, Any]:
    """The sorted unnormalised scores exp(q . k / sqrt(d)) of one (layer, head, query) over the clustered prefill
    tokens against rank, Tactic's sampled points at their full ranks, the fitted a/x + b, and the fit segments."""
    cfg = cfg or TacticConfig()
    c = captured[layer]
    k = c["k"]
    t = k.shape[1]
    n0 = t - n_queries
    qi = n0 + (query % n_queries)
    cache = cache or LayerCache(k, n0, c["v"], cfg)
    idx = cache.index
    g = c["q"].shape[0] // k.shape[0]
    kv = head // g
    qv = c["q"][head, qi].float()
    s0 = min(cfg.sinks, n0)
    z = (k[kv, :n0].float() @ qv) / math.sqrt(k.shape[-1])
    shift = float(z[:s0].max()) if s0 else float(z.max())
    y = torch.exp((z - shift).double())
    ys = y[s0:].sort(descending=True).values
    n_c = ys.numel()
    samp = y[idx.samples[kv]].sort(descending=True).values
    n_s = samp.numel()
    xs = (torch.arange(n_s, dtype=torch.float64) + 0.5) * n_c / n_s
    a, b = fit_inverse(xs, samp, cfg.segments, cfg.segment_width)
    a, b = max(float(a), 0.0), float(b)  # the selector's clamp: a >= 0; a negative b ends the curve at zero
    step = max(1, n_c // max_points)
    ranks = torch.arange(1, n_c + 1)[::step]
    seg = [[max(1.0, (f - cfg.segment_width / 2) * n_c), (f + cfg.segment_width / 2) * n_c] for f in cfg.segments]
    return {"ranks": ranks.tolist(), "scores": ys[::step].tolist(), "sample_ranks": xs.tolist(),
            "sample_scores": samp.tolist(), "a": a, "b": b,
            "fit": (a / ranks.double() + b).clamp(min=0.0).tolist(),
            "segments": seg, "sink_score": float(y[:s0].sum()) if s0 else 0.0, "layer": layer, "head": head,
            "query_position": int(qi), "clustered_tokens": int(n_c)}


def positions(an: Analysis, layer: int, head: int, query: int = -1) -> dict[str, list[int]]:
    """Token positions each selector loads for one query head (needs ``keep_masks``)."""
    li = an.layers.index(layer)
    qn = an.need.shape[1]
    return {m: torch.nonzero(mk[li, query % qn, head]).flatten().tolist() for m, mk in an.head_masks.items()}


def synthetic_layer(n_tokens: int = 1024, heads: int = 9, kv_heads: int = 3, head_dim: int = 64,
                    seed: int = 0) -> dict[str, torch.Tensor]:
    """Seeded stand-in for a captured layer with SmolLM2's shapes: q (heads, T, d), k and v (kv_heads, T, d).
    Keys are Gaussian with a slow drift (local structure) plus a sink key at position 0 that every query matches,
    and queries lean towards a few random earlier keys (peaked heads) or nothing (flat heads)."""
    g = torch.Generator().manual_seed(int(seed))
    t, d = int(n_tokens), head_dim
    drift = torch.randn(kv_heads, t // 64 + 1, d, generator=g).repeat_interleave(64, 1)[:, :t]
    k = torch.randn(kv_heads, t, d, generator=g) + 0.7 * drift
    sink = torch.randn(kv_heads, d, generator=g)
    k[:, 0] = 4.0 * sink
    v = torch.randn(kv_heads, t, d, generator=g)
    grp = heads // kv_heads
    q = 0.3 * torch.randn(heads, t, d, generator=g)
    for h in range(heads):
        kv = h // grp
        q[h] += 0.25 * sink[kv]
        sharp = 0.5 * (h % grp + 1)
        tgt = torch.randint(0, t, (t,), generator=g)
        tgt = torch.minimum(tgt, torch.arange(t))
        q[h] += sharp * k[kv, tgt]
    return {"q": q, "k": k, "v": v}


def synthetic_capture(n_tokens: int, layers: Sequence[int], seed: int = 0) -> dict[int, dict[str, torch.Tensor]]:
    """A stand-in capture: one :func:`synthetic_layer` per layer index ``l``, drawn with seed ``seed + l``."""
    return {int(layer): synthetic_layer(n_tokens, seed=int(seed) + int(layer)) for layer in sorted(set(layers))}
