"""One Tactic decode-attention step computing only what the method reads (paper: Zhu et al., "Tactic", ICLR 2026,
arXiv 2502.12216), for timing against full attention; ``sparse_attention.select_tactic`` is the analysis version
(it also computes every exact score to measure the realised mass).

The keys of each KV head are stored cluster-contiguous (a permutation by cluster and offsets, built once at prefill
from :class:`~backend.tokens.tactic.sparse_attention.TacticIndex`). A step for one query per head (q (Hq, d)): centroid
scores, the sampled keys' exact scores and the a/x + b fit give the estimated total; clusters are then read in
centroid order, in rounds of tokens for all heads at once, scoring their keys exactly until P x the estimate is
reached; the output is the softmax
over the loaded tokens (sinks and the generated tokens after the prefill included) times their values.
Shapes: k, v (Hkv, T, d); returns the output (Hq, d) and the tokens loaded per query head (Hq,).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .sparse_attention import TacticConfig, TacticIndex, fit_inverse, inverse_tail


@dataclass
class ClusterLayout:
    """Per KV head: token ids sorted by cluster ``perm`` (Hkv, n) and cluster offsets ``offsets`` (Hkv, C + 1)."""

    perm: torch.Tensor
    offsets: torch.Tensor


def cluster_layout(index: TacticIndex, sinks: int) -> ClusterLayout:
    a = index.assign[:, sinks:]
    perm = a.argsort(dim=-1, stable=True) + sinks
    counts = index.sizes
    offsets = torch.cat([torch.zeros(counts.shape[0], 1, dtype=torch.long), counts.cumsum(-1)], -1)
    return ClusterLayout(perm, offsets)


def tactic_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n0: int, index: TacticIndex,
                layout: ClusterLayout, cfg: TacticConfig, chunk: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """One decode step at position T - 1 over the cache ``k``, ``v`` (Hkv, T, d) with the prefill [0, n0)
    clustered; all query heads at once. Tokens are read in centroid order, ``chunk`` per head per round, until
    every head has reached P x its estimated total; each head then keeps whole clusters up to the one where it
    crossed. Returns (output (Hq, d), tokens loaded per query head (Hq,))."""
    hq, d = q.shape
    hkv, t, _ = k.shape
    g = hq // hkv
    scale = 1.0 / math.sqrt(d)
    s0 = min(cfg.sinks, n0)
    n_c = n0 - s0
    kv_of = torch.arange(hq) // g
    fixed = torch.cat([torch.arange(s0), torch.arange(n0, t)])
    kf = k[:, fixed].repeat_interleave(g, 0)  # (Hq, F, d)
    zf = torch.einsum("hd,hfd->hf", q, kf) * scale
    shift = zf.amax(-1, keepdim=True)
    wf = torch.exp(zf - shift)
    f_mass = wf.sum(-1).double()
    cs = torch.einsum("hd,hcd->hc", q, index.centroids[kv_of]).masked_fill(index.sizes[kv_of] == 0, float("-inf"))
    order = cs.argsort(dim=-1, descending=True)  # (Hq, C)
    ks = k[kv_of[:, None], index.samples[kv_of]]  # (Hq, S, d)
    ys = torch.exp(torch.einsum("hd,hsd->hs", q, ks) * scale - shift).sort(dim=-1, descending=True).values
    n_s = ys.shape[-1]
    xs = (torch.arange(n_s, dtype=torch.float64) + 0.5) * n_c / n_s
    a, b = fit_inverse(xs, ys)
    a = a.clamp(min=0.0)
    sizes = index.sizes[kv_of].gather(-1, order)  # (Hq, C) in centroid order
    cum_s = sizes.cumsum(-1)
    # token order per head: the members of each cluster, clusters in centroid order (index metadata only)
    starts = layout.offsets[kv_of].gather(-1, order)  # (Hq, C)
    rank_of_cluster = torch.repeat_interleave(torch.arange(order.shape[1]).expand(hq, -1).reshape(-1),
                                              sizes.reshape(-1)).view(hq, n_c)
    pos_in = torch.arange(n_c)[None] - (cum_s - sizes).gather(-1, rank_of_cluster)
    tok = layout.perm[kv_of[:, None], starts.gather(-1, rank_of_cluster) + pos_in]  # (Hq, n_c)
    x0 = max(1, math.ceil(cfg.outlier_frac * n_c))
    k_out = torch.searchsorted(cum_s, torch.full((hq, 1), x0, dtype=cum_s.dtype))[:, 0].clamp(max=order.shape[1] - 1)
    m_out = cum_s.gather(-1, k_out[:, None])[:, 0]
    scores = torch.zeros(hq, n_c, dtype=torch.float64)
    read = 0
    need = torch.full((hq,), float("inf"), dtype=torch.float64)
    done = torch.zeros(hq, dtype=torch.bool)
    stop = torch.full((hq,), n_c, dtype=torch.long)  # tokens kept per head (a cluster boundary)
    while read < n_c and not bool(done.all()):
        hi = min(n_c, max(read + chunk, int(m_out.max()) if read == 0 else 0))
        idx = tok[:, read:hi]
        kk = k[kv_of[:, None], idx]  # (Hq, R, d): the keys read this round
        scores[:, read:hi] = torch.exp(torch.einsum("hd,hrd->hr", q, kk) * scale - shift).double()
        if read == 0:  # the outlier clusters are read: estimate each head's total once
            e_out = (scores * (torch.arange(n_c)[None] < m_out[:, None])).sum(-1)
            total = f_mass + e_out + inverse_tail(a, b, m_out, n_c)
            need = cfg.p * total - f_mass if cfg.p < 1.0 else torch.full_like(total, float("inf"))
        cum = scores[:, :hi].cumsum(-1)
        reached = (cum >= need[:, None]) & ~done[:, None]
        hit = reached.any(-1)
        first = reached.double().argmax(-1)
        ends = cum_s.gather(-1, rank_of_cluster.gather(-1, first[:, None]))[:, 0]
        stop = torch.where(hit, torch.maximum(ends, m_out), stop)
        done |= hit
        read = hi
        if bool(done.all()) and int(stop.max()) > read:  # finish the last clusters
            idx = tok[:, read:int(stop.max())]
            kk = k[kv_of[:, None], idx]
            scores[:, read:int(stop.max())] = torch.exp(torch.einsum("hd,hrd->hr", q, kk) * scale - shift).double()
            read = int(stop.max())
    smax = int(stop.max())
    keep = torch.arange(smax)[None] < stop[:, None]
    w_c = (scores[:, :smax] * keep).float()
    denom = wf.sum(-1) + w_c.sum(-1)
    vf = v[:, fixed].repeat_interleave(g, 0)
    vc = v[kv_of[:, None], tok[:, :smax]]  # values up to the longest kept prefix (zero weight past each head's)
    out = (torch.einsum("hf,hfd->hd", wf, vf) + torch.einsum("hn,hnd->hd", w_c, vc)) / denom[:, None]
    return out, stop + fixed.numel()


def full_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Exact decode attention of one query per head over the whole cache: q (Hq, d), k, v (Hkv, T, d) -> (Hq, d)."""
    g = q.shape[0] // k.shape[0]
    out = torch.nn.functional.scaled_dot_product_attention(q[None, :, None], k[None], v[None], enable_gqa=g > 1)
    return out[0, :, 0]
