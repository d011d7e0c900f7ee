"""Sparse decode attention by cumulative attention mass: Tactic and its baselines, as one selector registry.

Paper: Kan Zhu et al., "Tactic: Adaptive Sparse Attention with Clustering and Distribution Fitting for Long-Context
LLMs", ICLR 2026 (arXiv 2502.12216). Baseline: Quest (Tang et al., arXiv 2406.10774), StreamingLLM-style window
(Xiao et al., arXiv 2309.17453).

A decode query q attends over a KV cache with weights s_i = softmax_i(q . k_i / sqrt(d)). For a set I of tokens the
sparse output is o_I = sum_{i in I} s_i v_i / p(I) with p(I) = sum_{i in I} s_i, and
||o_I - o|| <= 2 (1 - p(I)) max_i ||v_i|| for any I. Tactic targets p(I) >= P instead of a fixed token count.

| name | what | kind |
|------|------|------|
| ``oracle_top_p`` | smallest set in descending exact-score order with mass >= P (needs every score) | reference |
| ``tactic`` | K-means of each KV head's keys (clusters of 16), clusters ranked by q . centroid, total mass estimated from max(256, 2.5 %) sampled scores fitted with y = a/x + b, clusters taken until P x the estimate | ours |
| ``top_k`` | exact top-B scores per head, a fixed uniform budget B (needs every score) | reference |
| ``quest`` | pages of 16 keys with elementwise min/max; pages ranked by sum_d max(q_d min_d, q_d max_d); top pages under B tokens | baseline |
| ``window`` | the first 4 sink tokens plus the most recent B - 4 tokens | baseline |
| ``tactic_no_sink`` | Tactic without the sink rule (the paper's algorithm as written) | ablation |
| ``tactic_exact_total`` | Tactic's clusters and order, stopped at P x the exact total (needs every score) | ablation |
| ``sink_only`` | the sink rule alone: the first token and the tokens after the prefill | ablation |

Setting (the decode situation, simulated on a captured prompt): keys ``k`` of one layer, shape (Hkv, T, d); the first
``n0`` tokens are the prefill (Tactic clusters them once, Quest pages them); queries at positions ``pos >= n0`` each
see their causal prefix [0, pos]. Tokens generated after the prefill (positions n0..pos) always get full attention in
Tactic (the paper's rule until the next re-clustering). Tactic also always loads the first ``sinks`` tokens (default
1) exactly: in SmolLM2 the first token holds about half of the attention mass in later layers, and a selector that
could drop it fails there (a named choice of this module, see ``TacticConfig.sinks``).

Every selector takes ``(q, pos, cache, p=..., budget=...)`` with q of shape (Q, Hq, d) (Q queries, Hq query heads,
Hq a multiple of Hkv, query head h reads KV head h // (Hq / Hkv)) and returns a :class:`Selection`: the per-head
token masks (Q, Hq, T), their GQA union per KV head (Q, Hkv, T) (what is loaded once for the group), and the tokens and
bytes touched, overheads included (Tactic: centroids and sampled keys; Quest: page min/max metadata). Bytes count the
K and V rows of the union at ``bytes_per_element`` (2: an fp16 cache) plus one key row per overhead vector.

The exact scores of every token are computed here for the analysis (realised mass, error); a selector's decisions
only use the scores a real kernel would compute (Tactic: sinks, recent tokens, centroids, samples and the clusters it
loads; Quest: page bounds). Scores are shifted by a constant before the exponential, which changes no decision
(every rule is scale-invariant).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from ...errors import InputError
from ...registry import Registry

PAGE_SIZE = 16  # Quest's page
WINDOW_SINKS = 4  # StreamingLLM keeps four initial tokens


@dataclass
class TacticConfig:
    """Tactic's settings; defaults follow the paper (P = 0.9, clusters of 16 keys, 10 K-means iterations with one
    random init, ~2.5 % sampled tokens, outliers = the top 1-2 %, fit segments near the 10 % and 60 % ranks).

    ``min_samples``: the sample holds at least this many keys (the paper's 2.5 % of 16K-96K tokens is 400-2,400 keys;
    2.5 % of a 2K prompt would be 51, too few for the two fit segments). ``kmeans_segment``: K-means runs on
    consecutive segments of this many prefill tokens (clusters never span two segments), so the prefill clustering
    costs O(T) instead of O(T^2 / 16); 0 clusters the whole prefill at once. ``sinks``: the first tokens always loaded
    exactly (1: SmolLM2's attention sink; 0: the paper's algorithm)."""

    p: float = 0.9
    cluster_size: int = 16
    kmeans_iters: int = 10
    sample_frac: float = 0.025
    min_samples: int = 256
    kmeans_segment: int = 4096
    outlier_frac: float = 0.015
    segments: tuple[float, float] = (0.1, 0.6)
    segment_width: float = 0.1
    sinks: int = 1
    bytes_per_element: int = 2
    seed: int = 0

    def validate(self) -> None:
        check_p(self.p)
        if self.cluster_size < 1:
            raise InputError("The cluster size must be at least 1.")
        if not 0 < self.sample_frac <= 1:
            raise InputError("The sampled fraction must be in (0, 1].")
        if self.sinks < 0 or self.min_samples < 1 or self.kmeans_segment < 0:
            raise InputError("sinks and kmeans_segment must be >= 0 and min_samples >= 1.")


def check_p(p: float) -> float:
    """``p`` as a float in (0, 1], else :class:`InputError`."""
    if not isinstance(p, (int, float)) or not (0.0 < float(p) <= 1.0) or math.isnan(float(p)):
        raise InputError(f"The target attention mass P must be in (0, 1]; got {p}.")
    return float(p)


# ------------------------------------------------------------------------------------------------ the layer cache
@dataclass
class TacticIndex:
    """Per KV head: K-means of the prefill keys [sinks, n0). ``centroids`` (Hkv, C, d); ``assign`` (Hkv, n0) cluster
    id of each token (-1 for sinks); ``sizes`` (Hkv, C); ``samples`` (Hkv, S) token indices sampled uniformly from the
    clustered tokens; ``wcss`` within-cluster sum of squares per KV head (Hkv,)."""

    centroids: torch.Tensor
    assign: torch.Tensor
    sizes: torch.Tensor
    samples: torch.Tensor
    wcss: torch.Tensor


@dataclass
class LayerCache:
    """One layer's decode situation: keys ``k`` (Hkv, T, d), values ``v`` (Hkv, T, d) or None, prefill length
    ``n0``; the Tactic index (per number of sink tokens: the ablations cluster from token 0) and the Quest page
    bounds are built on first use and kept."""

    k: torch.Tensor
    n0: int
    v: torch.Tensor | None = None
    cfg: TacticConfig = field(default_factory=TacticConfig)
    _index: TacticIndex | None = None
    _pages: tuple[torch.Tensor, torch.Tensor] | None = None
    _other: dict[int, TacticIndex] = field(default_factory=dict)

    @property
    def index(self) -> TacticIndex:
        if self._index is None:
            self._index = build_index(self.k, self.n0, self.cfg)
        return self._index

    def index_for(self, sinks: int) -> TacticIndex:
        """The index clustering [sinks, n0) (``cfg.sinks``: :attr:`index`)."""
        if sinks == self.cfg.sinks:
            return self.index
        if sinks not in self._other:
            self._other[sinks] = build_index(self.k, self.n0, replace(self.cfg, sinks=sinks))
        return self._other[sinks]

    @property
    def pages(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Quest's page metadata: elementwise (min, max) of the keys of each page of 16, shapes (Hkv, n_pages, d)."""
        if self._pages is None:
            self._pages = page_bounds(self.k)
        return self._pages


def kmeans(x: torch.Tensor, n_clusters: int, iters: int = 10, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Lloyd's K-means of ``x`` (n, d) with one random init (``n_clusters`` distinct rows drawn with ``seed``).
    Returns (centroids (C, d), assignment (n,)); an emptied cluster keeps its previous centroid."""
    n = x.shape[0]
    c = max(1, min(int(n_clusters), n))
    g = torch.Generator().manual_seed(int(seed))
    cent = x[torch.randperm(n, generator=g)[:c]].clone()
    x2 = (x * x).sum(1, keepdim=True)
    assign = torch.zeros(n, dtype=torch.long)
    for _ in range(max(1, int(iters))):
        d2 = x2 - 2 * x @ cent.T + (cent * cent).sum(1)[None]
        assign = d2.argmin(1)
        sums = torch.zeros_like(cent).index_add_(0, assign, x)
        counts = torch.bincount(assign, minlength=c).to(x.dtype)
        nz = counts > 0
        cent[nz] = sums[nz] / counts[nz, None]
    d2 = x2 - 2 * x @ cent.T + (cent * cent).sum(1)[None]
    return cent, d2.argmin(1)


def segmented_kmeans(x: torch.Tensor, cluster_size: int, segment: int, iters: int, seed: int
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """K-means of ``x`` (n, d) on consecutive segments of ``segment`` rows (0: one segment), about
    len / ``cluster_size`` clusters each. Returns (centroids (C, d), assignment (n,) into the concatenated list)."""
    n = x.shape[0]
    seg = n if segment <= 0 else int(segment)
    cents, assigns, base = [], [], 0
    for i, s in enumerate(range(0, n, seg)):
        xs = x[s: s + seg]
        cent, a = kmeans(xs, max(1, round(xs.shape[0] / cluster_size)), iters, seed + 104729 * i)
        cents.append(cent)
        assigns.append(a + base)
        base += cent.shape[0]
    return torch.cat(cents), torch.cat(assigns)


def n_samples(n: int, cfg: TacticConfig) -> int:
    """Keys in the fixed sample of ``n`` clustered tokens: max(min_samples, ceil(sample_frac n)), at most n."""
    return max(1, min(n, max(int(cfg.min_samples), math.ceil(cfg.sample_frac * n))))


def build_index(k: torch.Tensor, n0: int, cfg: TacticConfig) -> TacticIndex:
    """K-means per KV head on the keys of [sinks, n0) (``k`` (Hkv, T, d)), about n/cluster_size clusters (per
    segment of ``cfg.kmeans_segment`` tokens), and the uniform token sample used by the distribution fit."""
    hkv, _, d = k.shape
    s0 = min(cfg.sinks, n0)
    n = n0 - s0
    if n < 1:
        raise InputError(f"The prefill ({n0} tokens) leaves no tokens to cluster after {cfg.sinks} sink token(s).")
    cents, assigns, sizes, wcss = [], [], [], []
    for h in range(hkv):
        x = k[h, s0:n0].float()
        cent, a = segmented_kmeans(x, cfg.cluster_size, cfg.kmeans_segment, cfg.kmeans_iters, cfg.seed + h)
        cents.append(cent)
        assigns.append(a)
        sizes.append(torch.bincount(a, minlength=cent.shape[0]))
        wcss.append(((x - cent[a]) ** 2).sum())
    cmax = max(ct.shape[0] for ct in cents)
    centroids = torch.zeros(hkv, cmax, d)
    size_t = torch.zeros(hkv, cmax, dtype=torch.long)
    assign = torch.full((hkv, n0), -1, dtype=torch.long)
    for h in range(hkv):
        centroids[h, : cents[h].shape[0]] = cents[h]
        size_t[h, : sizes[h].shape[0]] = sizes[h]
        assign[h, s0:] = assigns[h]
    n_s = n_samples(n, cfg)
    g = torch.Generator().manual_seed(int(cfg.seed) + 7919)
    samples = torch.stack([torch.randperm(n, generator=g)[:n_s] + s0 for _ in range(hkv)])
    return TacticIndex(centroids, assign, size_t, samples, torch.stack(wcss))


def page_bounds(k: torch.Tensor, page: int = PAGE_SIZE) -> tuple[torch.Tensor, torch.Tensor]:
    """Elementwise min and max of the keys of each page (``k`` (Hkv, T, d) -> two (Hkv, ceil(T/page), d))."""
    hkv, t, d = k.shape
    n_pages = math.ceil(t / page)
    pad = n_pages * page - t
    kp = torch.nn.functional.pad(k.float(), (0, 0, 0, pad))
    lo = kp.clone()
    hi = kp.clone()
    if pad:
        lo[:, t:] = float("inf")
        hi[:, t:] = float("-inf")
    return lo.view(hkv, n_pages, page, d).amin(2), hi.view(hkv, n_pages, page, d).amax(2)


# ------------------------------------------------------------------------------------------------ the selection
@dataclass
class Selection:
    """What one selector chose for Q queries. ``mask`` (Q, Hq, T) bool: each query head's own set; ``union``
    (Q, Hkv, T) bool: the GQA union loaded once per KV head; ``tokens`` (Q, Hq) own-set sizes; ``union_tokens``
    (Q, Hkv); ``overhead`` (Q, Hkv) extra key-sized vectors read (centroids, samples, page min/max); ``bytes`` (Q,)
    KV bytes touched by all heads of the layer, overheads included; ``extras``: selector-specific tensors."""

    mask: torch.Tensor
    union: torch.Tensor
    tokens: torch.Tensor
    union_tokens: torch.Tensor
    overhead: torch.Tensor
    bytes: torch.Tensor
    extras: dict[str, Any] = field(default_factory=dict)


def _groups(q: torch.Tensor, k: torch.Tensor) -> int:
    hq, hkv = q.shape[1], k.shape[0]
    if hq % hkv:
        raise ValueError(f"{hq} query heads are not a multiple of {hkv} KV heads")
    return hq // hkv


def causal_mask(pos: torch.Tensor, t: int) -> torch.Tensor:
    """(Q, 1, T) bool: token j is visible to the query at ``pos`` iff j <= pos."""
    return (torch.arange(t)[None, :] <= pos[:, None])[:, None, :]


def logits(q: torch.Tensor, k: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Exact scaled scores (Q, Hq, T) float32, -inf beyond each query's causal prefix. q (Q, Hq, d), k (Hkv, T, d)."""
    g = _groups(q, k)
    d = q.shape[-1]
    kk = k.float().repeat_interleave(g, 0)  # (Hq, T, d)
    z = torch.einsum("qhd,htd->qht", q.float(), kk) / math.sqrt(d)
    return z.masked_fill(~causal_mask(pos, k.shape[1]), float("-inf"))


def _finish(mask: torch.Tensor, g: int, overhead: torch.Tensor, d: int, bpe: int, extras: dict | None = None
            ) -> Selection:
    q_, hq, t = mask.shape
    union = mask.view(q_, hq // g, g, t).any(2)
    ut = union.sum(-1)
    nbytes = (ut * 2 * d * bpe).sum(-1).double() + (overhead * d * bpe).sum(-1).double()
    return Selection(mask, union, mask.sum(-1), ut, overhead, nbytes, extras or {})


def _rank_mask(z: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """Mask of the ``count`` (Q, Hq) highest entries of ``z`` (Q, Hq, T) along T."""
    order = z.argsort(dim=-1, descending=True, stable=True)
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(z.shape[-1]).expand_as(order).contiguous())
    return rank < count[..., None]


def _budget(budget: Any, shape: tuple[int, int]) -> torch.Tensor:
    if budget is None:
        raise InputError("This selector needs a token budget.")
    b = torch.as_tensor(budget, dtype=torch.long)
    if b.ndim == 1:
        b = b[:, None]
    if (b < 1).any():
        raise InputError("The token budget must be at least 1.")
    return b.expand(shape).clone()


def select_oracle_top_p(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,
                        budget: Any = None) -> Selection:  # noqa: ARG001
    """Exact top-P: the shortest prefix of the descending exact-score order with mass >= ``p`` (per query head)."""
    p = check_p(p)
    z = logits(q, cache.k, pos)
    w = torch.softmax(z.double(), -1)
    ws, order = w.sort(dim=-1, descending=True, stable=True)
    cum = ws.cumsum(-1)
    n_vis = (pos + 1)[:, None].expand(w.shape[:2])
    count = (torch.searchsorted(cum, torch.full((*w.shape[:2], 1), p, dtype=cum.dtype))[..., 0] + 1)
    count = torch.minimum(count, n_vis)
    if p >= 1.0:
        count = n_vis
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(w.shape[-1]).expand_as(order).contiguous())
    mask = rank < count[..., None]
    return _finish(mask, _groups(q, cache.k), torch.zeros(q.shape[0], cache.k.shape[0]), q.shape[-1],
                   cache.cfg.bytes_per_element)


def segment_ranges(s: int, segments: tuple[float, ...], width: float) -> list[tuple[int, int]]:
    """Index ranges ``[lo, hi)`` of the fit segments over ``s`` sorted points: the points whose index fraction lies
    within ``width``/2 of each of ``segments`` (at least two points each)."""
    out = []
    for f in segments:
        lo = int(round((f - width / 2) * s))
        hi = int(round((f + width / 2) * s))
        lo, hi = max(0, min(lo, s - 2)), max(lo + 2, min(hi, s))
        out.append((lo, min(hi, s)))
    return out


def fit_inverse(x: torch.Tensor, y: torch.Tensor, segments: tuple[float, float] = (0.1, 0.6),
                width: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Fit y = a / x + b from two segment means of a sorted curve. ``x`` (S,) ranks (ascending), ``y`` (..., S)
    values at those ranks. Segment j holds the points of :func:`segment_ranges`. Returns (a, b) of shape (...). Two
    means give the line through (mean 1/x, mean y) of both segments, exact on exact curves."""
    idx = [torch.arange(lo, hi) for lo, hi in segment_ranges(x.shape[0], segments, width)]
    u1, u2 = ((1.0 / x[i].double()).mean() for i in idx)
    y1, y2 = (y[..., i].double().mean(-1) for i in idx)
    a = (y1 - y2) / (u1 - u2)
    b = y1 - a * u1
    return a, b


def inverse_tail(a: torch.Tensor, b: torch.Tensor, m: torch.Tensor, n: int) -> torch.Tensor:
    """sum_{x=m+1}^{n} max(a/x + b, 0) for a >= 0, with the harmonic sum H(u) - H(m) ~ ln((u + 1/2) / (m + 1/2));
    a negative b ends the curve where it reaches zero (x = -a/b; scores are positive)."""
    m = m.double()
    a, b = a.double(), b.double()
    upper = torch.where(b < 0, (-a / b.clamp(max=-1e-300)).clamp(max=float(n)), torch.full_like(b, float(n)))
    upper = torch.maximum(upper, m)
    return (a * torch.log((upper + 0.5) / (m + 0.5)) + b * (upper - m)).clamp(min=0.0)


def cluster_order(q: torch.Tensor, centroids: torch.Tensor, sizes: torch.Tensor) -> torch.Tensor:
    """Clusters in descending q . centroid order (empty clusters last). q (Q, Hq, d), centroids (Hkv, C, d), sizes
    (Hkv, C) -> order (Q, Hq, C)."""
    g = q.shape[1] // centroids.shape[0]
    cs = torch.einsum("qhd,hcd->qhc", q.float(), centroids.repeat_interleave(g, 0))
    cs = cs.masked_fill((sizes == 0).repeat_interleave(g, 0)[None], float("-inf"))
    return cs.argsort(dim=-1, descending=True, stable=True)


def select_tactic(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,
                  budget: Any = None) -> Selection:  # noqa: ARG001
    """Tactic (paper section 4): clusters ranked by q . centroid; the total mass estimated as the sinks' and recent
    tokens' exact mass + the exact mass of the first clusters covering the top ``outlier_frac`` of tokens + the
    fitted a/x + b tail over the remaining ranks; then whole clusters in order until P x the estimate is reached.
    The first ``cache.cfg.sinks`` tokens are always loaded (this module's sink rule)."""
    return tactic_selection(q, pos, cache, p, cache.cfg.sinks, exact_total=False)


def select_tactic_no_sink(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,
                          budget: Any = None) -> Selection:  # noqa: ARG001
    """The paper's algorithm as written: Tactic without the sink rule (every prefill token is clustered)."""
    return tactic_selection(q, pos, cache, p, 0, exact_total=False)


def select_tactic_exact_total(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,
                              budget: Any = None) -> Selection:  # noqa: ARG001
    """Tactic's clusters in the same centroid order (sink rule included), stopped at P x the exact total mass:
    what the selection would load with a perfect estimate (needs every score; an ablation, not a method)."""
    return tactic_selection(q, pos, cache, p, cache.cfg.sinks, exact_total=True)


def select_sink_only(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,  # noqa: ARG001
                     budget: Any = None) -> Selection:  # noqa: ARG001
    """The sink rule alone: the first ``cache.cfg.sinks`` tokens and the tokens after the prefill, nothing else."""
    k, n0 = cache.k, cache.n0
    t = k.shape[1]
    ar = torch.arange(t)
    s0 = min(max(cache.cfg.sinks, 1), n0)
    mask = (((ar < s0) | (ar >= n0))[None, None] & causal_mask(pos, t)).expand(q.shape[0], q.shape[1], t).clone()
    return _finish(mask, _groups(q, k), torch.zeros(q.shape[0], k.shape[0]), q.shape[-1],
                   cache.cfg.bytes_per_element)


def tactic_selection(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float, sinks: int,
                     exact_total: bool = False) -> Selection:
    """Tactic's selection with ``sinks`` first tokens always loaded; ``exact_total``: stop at P x the exact total
    instead of the sampled estimate (the ablation that isolates the estimator)."""
    p = check_p(p)
    cfg, k, n0 = cache.cfg, cache.k, cache.n0
    if (pos < n0 - 1).any():
        raise ValueError("Tactic queries must come after the prefill (pos >= n0 - 1)")
    idx = cache.index_for(sinks)
    g = _groups(q, k)
    qn, hq, t = q.shape[0], q.shape[1], k.shape[1]
    s0 = min(sinks, n0)
    z = logits(q, k, pos)
    ar = torch.arange(t)
    fixed = ((ar < s0)[None, None] | (ar >= n0)[None, None]) & causal_mask(pos, t)  # sinks + generated tokens
    shift = z.masked_fill(~fixed, float("-inf")).amax(-1, keepdim=True)
    if s0 == 0:  # no sink: shift by the largest visible score (any constant leaves every rule unchanged)
        shift = z.amax(-1, keepdim=True)
    w = torch.exp((z - shift).double()).masked_fill(~causal_mask(pos, t), 0.0)  # unnormalised, shifted
    f_mass = (w * fixed).sum(-1)
    # exact mass per cluster, in centroid order
    assign = idx.assign.repeat_interleave(g, 0)  # (Hq, n0)
    c = idx.centroids.shape[1]
    wc = w[:, :, s0:n0]
    cm = torch.zeros(qn, hq, c, dtype=w.dtype).scatter_add_(-1, assign[None, :, s0:].expand(qn, -1, -1), wc)
    order = cluster_order(q, idx.centroids, idx.sizes)
    sizes = idx.sizes.repeat_interleave(g, 0)[None].expand(qn, -1, -1)
    cum_m = cm.gather(-1, order).cumsum(-1)
    cum_s = sizes.gather(-1, order).cumsum(-1)
    n_c = n0 - s0
    # outliers: the first clusters covering the top outlier_frac of the clustered tokens, scored exactly
    x0 = max(1, math.ceil(cfg.outlier_frac * n_c))
    k_out = torch.searchsorted(cum_s, torch.full((qn, hq, 1), x0, dtype=cum_s.dtype))[..., 0].clamp(max=c - 1)
    e_out = cum_m.gather(-1, k_out[..., None])[..., 0]
    m_out = cum_s.gather(-1, k_out[..., None])[..., 0]
    # distribution fit on the uniform sample: sample rank r -> full rank (r + 1/2) n / S
    samp = idx.samples.repeat_interleave(g, 0)[None].expand(qn, -1, -1)
    ys = w.gather(-1, samp).sort(-1, descending=True).values
    n_s = ys.shape[-1]
    xs = (torch.arange(n_s, dtype=torch.float64) + 0.5) * n_c / n_s
    a, b = fit_inverse(xs, ys, cfg.segments, cfg.segment_width)
    a = a.clamp(min=0.0)
    tail = inverse_tail(a, b, m_out, n_c)
    total_est = f_mass + e_out + tail
    true_total = w.sum(-1)
    need = p * (true_total if exact_total else total_est) - f_mass
    k_take = torch.searchsorted(cum_m, need[..., None].clamp(min=0.0))[..., 0]
    k_take = torch.maximum(k_take, k_out).clamp(max=c - 1) + 1  # number of clusters taken (outlier clusters kept)
    if p >= 1.0:
        k_take = torch.full_like(k_take, c)
    crank = torch.empty_like(order)
    crank.scatter_(-1, order, torch.arange(c).expand_as(order).contiguous())
    tok_rank = crank.gather(-1, assign[None].clamp(min=0).expand(qn, -1, -1))  # (Q, Hq, n0)
    taken = (tok_rank < k_take[..., None]) & (assign[None] >= 0)
    mask = fixed.expand(qn, hq, t).clone()
    mask[:, :, :n0] |= taken
    mask &= causal_mask(pos, t)
    overhead = torch.full((qn, k.shape[0]), float(c + n_s))
    return _finish(mask, g, overhead, q.shape[-1], cfg.bytes_per_element, {
        "a": a, "b": b, "total_est_ratio": total_est / true_total, "clusters_taken": k_take,
        "clusters": c, "samples": n_s})


def select_top_k(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,  # noqa: ARG001
                 budget: Any = 256) -> Selection:
    """Exact top-``budget`` scores per query head (an int, or a (Q,) / (Q, Hq) tensor of budgets)."""
    z = logits(q, cache.k, pos)
    b = torch.minimum(_budget(budget, z.shape[:2]), (pos + 1)[:, None])
    mask = _rank_mask(z, b) & causal_mask(pos, z.shape[-1])
    return _finish(mask, _groups(q, cache.k), torch.zeros(q.shape[0], cache.k.shape[0]), q.shape[-1],
                   cache.cfg.bytes_per_element)


def quest_upper_bound(q: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """Quest's page bound U = sum_d max(q_d min_d, q_d max_d) / sqrt(d) >= max logit in the page.
    q (Q, Hq, d), lo/hi (Hkv, n_pages, d) -> (Q, Hq, n_pages)."""
    g = q.shape[1] // lo.shape[0]
    qf = q.float()[:, :, None, :]
    lo_, hi_ = lo.repeat_interleave(g, 0)[None], hi.repeat_interleave(g, 0)[None]
    return torch.maximum(qf * lo_, qf * hi_).sum(-1) / math.sqrt(q.shape[-1])


def select_quest(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,  # noqa: ARG001
                 budget: Any = 256) -> Selection:
    """Quest: the page holding the query position always, then the pages with the highest bound until
    ``budget`` // 16 pages; exact attention on their tokens. Overhead: min and max of every visible page."""
    k = cache.k
    lo, hi = cache.pages
    t, n_pages = k.shape[1], lo.shape[1]
    u = quest_upper_bound(q, lo, hi)
    page_of_pos = pos // PAGE_SIZE
    pidx = torch.arange(n_pages)
    visible = pidx[None, :] <= page_of_pos[:, None]  # (Q, P)
    u = u.masked_fill(~visible[:, None], float("-inf"))
    u = u.masked_fill(pidx[None, None] == page_of_pos[:, None, None], float("inf"))  # the current page first
    n_take = (_budget(budget, u.shape[:2]) // PAGE_SIZE).clamp(min=1)
    pmask = _rank_mask(u, n_take) & visible[:, None]
    mask = pmask.repeat_interleave(PAGE_SIZE, -1)[..., :t] & causal_mask(pos, t)
    overhead = (2.0 * visible.sum(-1).double())[:, None].expand(-1, k.shape[0]).clone()
    return _finish(mask, _groups(q, k), overhead, q.shape[-1], cache.cfg.bytes_per_element)


def select_window(q: torch.Tensor, pos: torch.Tensor, cache: LayerCache, p: float = 0.9,  # noqa: ARG001
                  budget: Any = 256) -> Selection:
    """StreamingLLM window: the first 4 sink tokens and the last ``budget - 4`` tokens of each query's prefix."""
    k = cache.k
    t = k.shape[1]
    b = _budget(budget, (q.shape[0], q.shape[1]))
    recent = (b - WINDOW_SINKS).clamp(min=1)
    ar = torch.arange(t)[None, None]
    mask = ((ar < WINDOW_SINKS) | (ar > pos[:, None, None] - recent[..., None])) & causal_mask(pos, t)
    return _finish(mask, _groups(q, k), torch.zeros(q.shape[0], k.shape[0]), q.shape[-1],
                   cache.cfg.bytes_per_element)


Selector = Callable[..., Selection]
SELECTORS: Registry[Selector] = Registry("sparse-attention selector")
SELECTORS.add("tactic", select_tactic, label="Tactic (ours)", kind="ours", about="clusters + a/x+b fit, target P")
SELECTORS.add("oracle_top_p", select_oracle_top_p, label="Exact top-P (oracle)", kind="reference", color="#000000",
              about="every score, smallest set with mass >= P")
SELECTORS.add("top_k", select_top_k, label="Exact top-k (fixed budget)", kind="reference", color="#7f7f7f",
              about="every score, fixed budget per head")
SELECTORS.add("quest", select_quest, label="Quest (pages of 16)", kind="baseline",
              about="page min/max bounds, fixed budget")
SELECTORS.add("window", select_window, label="Sinks + window", kind="baseline", about="4 sinks + recent tokens")
SELECTORS.add("tactic_no_sink", select_tactic_no_sink, label="Tactic without the sink rule", kind="ablation",
              color="#9467bd", about="the paper's algorithm: no token loaded by rule")
SELECTORS.add("tactic_exact_total", select_tactic_exact_total, label="Tactic order, exact total", kind="ablation",
              color="#17becf", about="same clusters and order, stopped at P x the exact total")
SELECTORS.add("sink_only", select_sink_only, label="Sink rule alone", kind="ablation", color="#bcbd22",
              about="the first token (and the tokens after the prefill) only")
for _f in (select_tactic, select_oracle_top_p, select_tactic_no_sink, select_tactic_exact_total, select_sink_only):
    _f.by_mass = True  # type: ignore[attr-defined]
ADAPTIVE = tuple(n for n, f in SELECTORS.items() if getattr(f, "by_mass", False))  # driven by P; others by a budget
OURS = SELECTORS.names("ours")[0]  # Tactic: under budget "match" its mean tokens per head set the fixed budgets
ORACLE = next(n for n in ADAPTIVE if SELECTORS.kind(n) == "reference")  # exact top-P: the oracle need
get_selector = SELECTORS.get


# ------------------------------------------------------------------------------------------------ quality of a set
@dataclass
class Quality:
    """Per (query, query head): realised mass ``mass`` p(I), output error ``err`` ||o_I - o||, its bound
    ``bound`` 2 (1 - p(I)) max ||v||, relative error ``rel_err`` = err / ||o||, KL(sparse || full) ``kl`` = -log p(I)."""

    mass: torch.Tensor
    err: torch.Tensor
    bound: torch.Tensor
    rel_err: torch.Tensor
    kl: torch.Tensor


def attention_weights(q: torch.Tensor, k: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Full causal softmax weights (Q, Hq, T) float64."""
    return torch.softmax(logits(q, k, pos).double(), -1)


def sparse_output(w: torch.Tensor, mask: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """o_I = sum_{i in I} s_i v_i / p(I): w (Q, Hq, T) full weights, mask (Q, Hq, T), v (Hkv, T, d) -> (Q, Hq, d)."""
    g = w.shape[1] // v.shape[0]
    ws = w * mask
    ws = ws / ws.sum(-1, keepdim=True).clamp(min=1e-300)
    return torch.einsum("qht,htd->qhd", ws, v.double().repeat_interleave(g, 0))


def quality(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor,
            w: torch.Tensor | None = None) -> Quality:
    """Realised mass, output error and its bound for per-head sets ``mask`` (Q, Hq, T)."""
    if w is None:
        w = attention_weights(q, k, pos)
    g = w.shape[1] // v.shape[0]
    full = torch.einsum("qht,htd->qhd", w, v.double().repeat_interleave(g, 0))
    sparse = sparse_output(w, mask, v)
    mass = (w * mask).sum(-1)
    err = (sparse - full).norm(dim=-1)
    vn = v.double().norm(dim=-1).repeat_interleave(g, 0)[None].expand_as(w).masked_fill(w == 0, 0.0)
    bound = 2 * (1 - mass).clamp(min=0) * vn.amax(-1)
    kl = -torch.log(mass.clamp(min=1e-300))  # KL(renormalised sparse || full)
    return Quality(mass, err, bound, err / full.norm(dim=-1).clamp(min=1e-12), kl)
