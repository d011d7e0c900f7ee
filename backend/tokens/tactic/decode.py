"""One Tactic decode-attention step that reads only what it selects (paper: Zhu et al., "Tactic", ICLR 2026,
arXiv 2502.12216), for timing against the fused full attention; ``sparse_attention.select_tactic`` is the analysis
version (it also computes every exact score to measure the realised mass).

At prefill (:func:`build_layout`) each KV head's clustered keys and values are physically permuted so that every
cluster is one contiguous slice of rows (``kc``, ``vc``), and the fixed sample's keys are copied into one contiguous
block (``ks``). A step (:func:`decode_step`, one query per head, all heads at once) reads:

1. the centroids and the sampled keys (one batched product per KV head group), the sink tokens and the tokens
   generated after the prefill (``k_new``, ``v_new``: full attention);
2. the clusters of each query head in descending q . centroid order, as slices of the permuted rows: first the
   clusters covering the top ``outlier_frac`` of tokens, whose exact mass plus the fitted a/x + b tail of the sample
   estimates the head's total; then further clusters in rounds (each round extends every unfinished head by
   ``growth`` x what it has read, at least ``chunk`` tokens: at most twice what a head needs) until the head's exact read mass reaches P x the
   estimate.

The output is the softmax over every token read times its values (a token read is used). Heads are vectorised:
each round's slices of all heads form one row index, one gather of K rows, one of V rows, and scatter-adds per
head. Bytes count what is read: centroids and sampled keys once per KV head, the K and V rows of each query head's
clusters (the paper's per-head sub-requests), the sinks and generated tokens.

Shapes: k, v (Hkv, T, d) at prefill; q (Hq, d); k_new, v_new (Hkv, N, d) or None; the output (Hq, d).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .sparse_attention import TacticConfig, TacticIndex, build_index, inverse_tail, segment_ranges


@dataclass
class DecodeLayout:
    """One layer's prefill as Tactic stores it. ``kvc`` (Hkv * n, 2d): the key and value rows of the clustered tokens
    of every KV head side by side, head after head, each cluster contiguous (one gather reads both); cluster j of KV head h is rows ``starts[h, j]`` ..
    ``starts[h, j] + sizes[h, j] - 1``; ``centroids`` (Hkv, C, d) with ``cbias`` (Hkv, C) 0 or -inf (empty
    padding clusters); ``ks`` (Hkv, S, d) the sampled keys; ``kf``, ``vf`` (Hkv, s0, d) the sink tokens; ``n``
    clustered tokens per head; ``perm`` (Hkv, n) the original position of each stored row; ``sample_ranks`` (S,) the
    full rank each sorted sample stands for; ``fit_segments`` the fit's two index ranges and their mean 1/rank
    (``sparse_attention.fit_inverse`` computed once)."""

    kvc: torch.Tensor
    starts: torch.Tensor
    sizes: torch.Tensor
    centroids: torch.Tensor
    cbias: torch.Tensor
    ks: torch.Tensor
    kf: torch.Tensor
    vf: torch.Tensor
    n: int
    perm: torch.Tensor
    cfg: TacticConfig
    sample_ranks: torch.Tensor
    fit_segments: tuple[tuple[tuple[int, int], tuple[int, int]], tuple[float, float]]

    @property
    def kv_heads(self) -> int:
        return int(self.centroids.shape[0])


def build_layout(k: torch.Tensor, v: torch.Tensor, n0: int, cfg: TacticConfig,
                 index: TacticIndex | None = None) -> DecodeLayout:
    """Cluster the prefill [sinks, n0) of ``k``, ``v`` (Hkv, T, d) (or take ``index``) and store it permuted."""
    index = index if index is not None else build_index(k, n0, cfg)
    hkv, _, d = k.shape
    s0 = min(cfg.sinks, n0)
    n = n0 - s0
    perm = index.assign[:, s0:n0].argsort(dim=-1, stable=True) + s0  # (Hkv, n): rows sorted by cluster
    heads = torch.arange(hkv)[:, None]
    kvc = torch.cat([k[heads, perm], v[heads, perm]], -1).reshape(hkv * n, 2 * d).contiguous()
    sizes = index.sizes
    starts = torch.cat([torch.zeros(hkv, 1, dtype=torch.long), sizes.cumsum(-1)[:, :-1]], -1) + heads * n
    cbias = torch.zeros(sizes.shape).masked_fill(sizes == 0, float("-inf"))
    ks = k[heads, index.samples].contiguous()
    n_s = ks.shape[1]
    ranks = (torch.arange(n_s, dtype=torch.float64) + 0.5) * n / n_s  # sample rank r stands for full rank (r + 1/2) n / S
    return DecodeLayout(kvc, starts, sizes, index.centroids.contiguous(), cbias, ks,
                        k[:, :s0].contiguous(), v[:, :s0].contiguous(), n, perm, cfg, ranks,
                        fit_segments(ranks, cfg))


def fit_segments(ranks: torch.Tensor, cfg: TacticConfig
                 ) -> tuple[tuple[tuple[int, int], tuple[int, int]], tuple[float, float]]:
    """The index ranges of the two fit segments of ``fit_inverse`` over S sorted samples and their mean 1/rank."""
    idx = segment_ranges(ranks.shape[0], cfg.segments, cfg.segment_width)
    us = [float((1.0 / ranks[lo:hi]).mean()) for lo, hi in idx]
    return (idx[0], idx[1]), (us[0], us[1])


@dataclass
class StepResult:
    """``out`` (Hq, d); ``tokens`` (Hq,) tokens read per query head (sinks and generated tokens included);
    ``bytes`` bytes read at the storage dtype (centroids, sampled keys, K and V rows); ``rounds`` the
    cluster-reading rounds; ``mass`` (Hq,) sum of exp(score - ``shift``) over the tokens read (divided by the same
    sum over every token it is the realised attention mass)."""

    out: torch.Tensor
    tokens: torch.Tensor
    bytes: int
    rounds: int
    mass: torch.Tensor
    shift: torch.Tensor


def _slices(lo: torch.Tensor, hi: torch.Tensor, order: torch.Tensor, lay: DecodeLayout, kv_of: torch.Tensor
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows and their query head for the clusters of rank lo[h] .. hi[h] - 1 of every query head h."""
    counts = (hi - lo).clamp(min=0)
    npairs = int(counts.sum())
    if npairs == 0:
        return torch.empty(0, dtype=torch.long), torch.empty(0, dtype=torch.long)
    h = torch.repeat_interleave(torch.arange(counts.shape[0]), counts)
    r = torch.arange(npairs) + torch.repeat_interleave(lo - (counts.cumsum(0) - counts), counts)
    cl = order[h, r]
    kv = kv_of[h]
    sz = lay.sizes[kv, cl]
    cs = sz.cumsum(0)
    rows = torch.repeat_interleave(lay.starts[kv, cl] - (cs - sz), sz) + torch.arange(int(cs[-1]))
    return rows, torch.repeat_interleave(h, sz)


def _ranked(zc: torch.Tensor, sizes: torch.Tensor, kk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``kk`` best clusters of each query head in descending centroid score (a partial sort) and their
    cumulative sizes: zc (Hq, C), sizes (Hq, C) -> order, cum_s (Hq, kk)."""
    order = zc.topk(kk, dim=-1, sorted=True).indices
    return order, sizes.gather(-1, order).cumsum(-1)


def decode_step(q: torch.Tensor, lay: DecodeLayout, k_new: torch.Tensor | None = None,
                v_new: torch.Tensor | None = None, p: float | None = None, chunk: int = 64,
                growth: float = 1.0) -> StepResult:
    """One decode step of every query head over the stored prefill and the generated tokens (see the module).
    Clusters are ranked by a partial sort of the centroid scores, extended (4x) when a head needs more."""
    cfg = lay.cfg
    p = cfg.p if p is None else float(p)
    hq, d = q.shape
    hkv = lay.kv_heads
    g = hq // hkv
    esize = lay.kvc.element_size()
    kv_of = torch.arange(hq) // g
    qg = (q * (1.0 / math.sqrt(d))).view(hkv, g, d)
    qh = qg.view(hq, d)
    kf, vf = lay.kf, lay.vf
    if k_new is not None and k_new.shape[1]:
        kf, vf = torch.cat([kf, k_new], 1), torch.cat([vf, v_new], 1)
    zf = torch.bmm(qg, kf.transpose(1, 2)).view(hq, -1)
    zc = (torch.bmm(qg, lay.centroids.transpose(1, 2)) + lay.cbias[:, None]).view(hq, -1)
    zs = torch.bmm(qg, lay.ks.transpose(1, 2)).view(hq, -1)
    shift = torch.maximum(zs.amax(-1), zc.amax(-1))
    if zf.shape[1]:
        shift = torch.maximum(shift, zf.amax(-1))
    wf = torch.exp(zf - shift[:, None])
    f_mass = wf.sum(-1)
    num = torch.bmm(wf.view(hkv, g, -1), vf).view(hq, d)
    n = lay.n
    c = zc.shape[1]
    csize = lay.sizes[kv_of]  # (Hq, C)
    x0 = max(1, math.ceil(cfg.outlier_frac * n))  # the outliers: the first clusters covering the top outlier_frac
    kk = c if p >= 1.0 else min(c, max(64, 4 * math.ceil(x0 / cfg.cluster_size)))
    order, cum_s = _ranked(zc, csize, kk)
    width = torch.full((hq,), kk, dtype=torch.long)  # clusters ranked so far per head
    k_out = torch.searchsorted(cum_s, torch.full((hq, 1), x0, dtype=cum_s.dtype))[:, 0].clamp(max=kk - 1) + 1
    mass = torch.zeros(hq)
    read_rows = 0
    lo = torch.zeros(hq, dtype=torch.long)
    hi = torch.full((hq,), c, dtype=torch.long) if p >= 1.0 else k_out
    rounds = 0
    need = torch.full((hq,), float("inf"))
    while True:
        rows, hrow = _slices(lo, hi, order, lay, kv_of)
        if rows.numel():
            kv = lay.kvc.index_select(0, rows)  # (R, 2d): the K and V rows of the clusters read this round
            w = torch.exp((kv[:, :d] * qh.index_select(0, hrow)).sum(-1) - shift[hrow])
            num.index_add_(0, hrow, w[:, None] * kv[:, d:])
            mass.index_add_(0, hrow, w)
            read_rows += int(rows.numel())
        rounds += 1
        if rounds == 1 and p < 1.0:  # the outliers are read: estimate each head's total once
            ys = torch.exp(zs - shift[:, None]).sort(dim=-1, descending=True).values
            (i1, i2), (u1, u2) = lay.fit_segments
            y1, y2 = ys[:, i1[0]:i1[1]].mean(-1), ys[:, i2[0]:i2[1]].mean(-1)
            a = (y1 - y2) / (u1 - u2)  # fit_inverse with the segments of the layout
            b = y1 - a * u1
            m_out = cum_s.gather(-1, (k_out - 1)[:, None])[:, 0]
            total = f_mass + mass + inverse_tail(a.clamp(min=0.0), b, m_out, n).float()
            need = p * total - f_mass
        lo = hi
        active = (mass < need) & (lo < c)
        if not bool(active.any()):
            break
        read = cum_s.gather(-1, (lo - 1).clamp(min=0)[:, None])[:, 0]
        target = read + torch.clamp((read.double() * growth).long(), min=chunk)
        nxt = torch.searchsorted(cum_s, target[:, None])[:, 0] + 1
        ext = active & (nxt > width) & (width < c)
        if bool(ext.any()):  # those heads need clusters beyond their partial sort: rank 4x more (only theirs)
            kk = min(c, 4 * int(width[ext].max()))
            if kk > order.shape[1]:
                pad = kk - order.shape[1]
                order = torch.nn.functional.pad(order, (0, pad))
                cum_s = torch.cat([cum_s, cum_s[:, -1:].expand(-1, pad)], 1)
            o2, c2 = _ranked(zc[ext], csize[ext], kk)
            order[ext], cum_s[ext], width[ext] = o2, c2, kk
            nxt = torch.searchsorted(cum_s, target[:, None])[:, 0] + 1
        hi = torch.where(active, torch.minimum(nxt, width), lo)
    out = num / (f_mass + mass)[:, None]
    tokens_read = cum_s.gather(-1, (lo - 1).clamp(min=0)[:, None])[:, 0] + kf.shape[1]
    nbytes = esize * d * (hkv * (c + lay.ks.shape[1]) + 2 * read_rows + 2 * hkv * kf.shape[1])
    return StepResult(out, tokens_read, int(nbytes), rounds, f_mass + mass, shift)


def full_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Exact decode attention of one query per head over the whole cache with torch's fused
    ``scaled_dot_product_attention``: q (Hq, d), k, v (Hkv, T, d) -> (Hq, d). The query heads of a GQA group are
    the group's rows of one call (every K and V row read once; faster on CPU than ``enable_gqa``, which expands the
    cache)."""
    hkv, d = k.shape[0], q.shape[-1]
    out = torch.nn.functional.scaled_dot_product_attention(q.reshape(1, hkv, -1, d), k[None], v[None])
    return out[0].reshape(q.shape)


def full_bytes(k: torch.Tensor) -> int:
    """Bytes full attention reads: every K and V row of every KV head, at the storage dtype."""
    return int(2 * k.numel() * k.element_size())
