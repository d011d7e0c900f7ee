"""One Tactic decode-attention step computing only what the method reads (paper: Zhu et al., "Tactic", ICLR 2026,
arXiv 2502.12216), for timing against full attention; ``sparse_attention.select_tactic`` is the analysis version
(it also computes every exact score to measure the realised mass).

The keys of each KV head are stored cluster-contiguous (a permutation by cluster and offsets, built once at prefill
from :class:`~backend.tokens.sparse_attention.TacticIndex`). A step for one query per head (q (Hq, d)): centroid
scores, the sampled keys' exact scores and the a/x + b fit give the estimated total; clusters are then read in
centroid order, in batches, scoring their keys exactly until P x the estimate is reached; the output is the softmax
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
                layout: ClusterLayout, cfg: TacticConfig, batch: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    """One decode step at position T - 1 over the cache ``k``, ``v`` (Hkv, T, d) with the prefill [0, n0)
    clustered. Returns (output (Hq, d), tokens loaded per query head (Hq,))."""
    hq, d = q.shape
    hkv, t, _ = k.shape
    g = hq // hkv
    scale = 1.0 / math.sqrt(d)
    s0 = min(cfg.sinks, n0)
    n_c = n0 - s0
    fixed = torch.cat([torch.arange(s0), torch.arange(n0, t)])
    out = torch.empty(hq, d)
    loaded = torch.empty(hq, dtype=torch.long)
    x0 = max(1, math.ceil(cfg.outlier_frac * n_c))
    for h in range(hq):
        kv = h // g
        qh = q[h]
        zf = (k[kv, fixed] @ qh) * scale
        shift = zf.max()
        wf = torch.exp(zf - shift)
        cs = index.centroids[kv] @ qh
        cs = cs.masked_fill(index.sizes[kv] == 0, float("-inf"))
        order = cs.argsort(descending=True)
        ws = torch.exp((k[kv, index.samples[kv]] @ qh) * scale - shift).sort(descending=True).values
        n_s = ws.numel()
        xs = (torch.arange(n_s, dtype=torch.float64) + 0.5) * n_c / n_s
        a, b = fit_inverse(xs, ws)
        a = a.clamp(min=0.0)
        f_mass = float(wf.sum())
        offs = layout.offsets[kv]
        sizes = index.sizes[kv][order]
        cum_s = sizes.cumsum(0)
        k_out = int(torch.searchsorted(cum_s, torch.tensor([x0]))[0].clamp(max=len(order) - 1)) + 1
        toks, ws_list = [fixed], [wf]
        acc, taken, total_est = 0.0, 0, None
        while taken < len(order):
            step = k_out if taken == 0 else batch
            cl = order[taken: taken + step]
            idx = torch.cat([layout.perm[kv, offs[c]: offs[c + 1]] for c in cl.tolist()])
            w = torch.exp((k[kv, idx] @ qh) * scale - shift)
            toks.append(idx)
            ws_list.append(w)
            acc += float(w.sum())
            taken += len(cl)
            if total_est is None:  # after the outlier clusters: estimate the total once
                tail = float(inverse_tail(a, b, cum_s[taken - 1], n_c))
                total_est = f_mass + acc + tail
            if cfg.p < 1.0 and f_mass + acc >= cfg.p * total_est:  # P = 1 reads every cluster
                break
        sel = torch.cat(toks)
        w = torch.cat(ws_list)
        out[h] = (w / w.sum()) @ v[kv, sel]
        loaded[h] = sel.numel()
    return out, loaded


def full_step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Exact decode attention of one query per head over the whole cache: q (Hq, d), k, v (Hkv, T, d) -> (Hq, d)."""
    g = q.shape[0] // k.shape[0]
    out = torch.nn.functional.scaled_dot_product_attention(q[None, :, None], k[None], v[None], enable_gqa=g > 1)
    return out[0, :, 0]
