"""One Tactic decode-attention step that reads only what it selects (paper: Zhu et al., "Tactic", ICLR 2026,
arXiv 2502.12216), for timing against the fused full attention; ``sparse_attention.select_tactic`` is the analysis
version (it also computes every exact score to measure the realised mass).

At prefill (:func:`build_layout`) each KV head's clustered keys and values are physically permuted so that every
cluster is one contiguous slice of rows (``kc``, ``vc``), and the fixed sample's keys and the centroids are stored
transposed once (``kst``, ``ct``). A step (:func:`decode_step`, one query per head, all heads at once) reads:

1. the centroids and the sampled keys (one batched product each over the KV head groups), the sink tokens and the
   tokens generated after the prefill (``k_new``, ``v_new``: full attention);
2. the clusters of each query head in descending q . centroid order: first the clusters covering the top
   ``outlier_frac`` of tokens, whose exact mass plus the fitted a/x + b tail of the sample estimates the head's
   total; then further clusters in rounds until the head's exact read mass reaches P x the estimate. The second
   round reads up to the rank at which the fitted curve adds the missing mass (:func:`fitted_tokens`, Newton from
   below; at most ``jump`` x what the head has read) or ``growth`` x what it has read, whichever is
   more; each later round extends an unfinished head by ``growth`` x its tokens (at least ``chunk``). On SmolLM2's
   profile a step takes two or three rounds.

No step sorts all C centroid scores: a round's clusters are the best few of the remaining ones (a threshold from
every 8th score, then a sort of the few hundred kept), cut where their sizes reach the round's tokens; the fit's two
segment means come from one partial partition of the sample scores; this per-head bookkeeping runs in numpy. The
output is the softmax over every token read times its values (a token read is used). Heads are vectorised: each
round is one gather of the key rows of all its heads' clusters into a (heads, L, d) block and one batched product
for their scores, and one ``embedding_bag`` that sums the weighted value rows where they lie. Bytes count what is
read: centroids and sampled keys once per KV head, the K and V rows of each query head's clusters (the paper's
per-head sub-requests), the sinks and generated tokens.

Shapes: k, v (Hkv, T, d) at prefill; q (Hq, d); k_new, v_new (Hkv, N, d) or None; the output (Hq, d).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .sparse_attention import TacticConfig, TacticIndex, build_index, inverse_tail, segment_ranges

NEG = -1e30  # the score of an empty or already read cluster (finite: top-k over -inf is slow on CPU)


@dataclass
class DecodeLayout:
    """One layer's prefill as Tactic stores it. ``kc``, ``vc`` (Hkv * n, d): the key and value rows of the clustered
    tokens of every KV head, head after head, each cluster contiguous; cluster j of KV head h is rows ``starts[h, j]``
    .. ``starts[h, j] + sizes[h, j] - 1``; ``centroids`` (Hkv, C, d) and ``ct`` (Hkv, d, C) (the same, transposed
    once) with ``cbias`` (Hkv, C) 0 or ``NEG`` (empty padding clusters); ``ks`` (Hkv, S, d) the sampled keys and
    ``kst`` (Hkv, d, S); ``kf``, ``vf`` (Hkv, s0, d) the sink tokens; ``n`` clustered tokens per head; ``perm``
    (Hkv, n) the original position of each stored row; ``sample_ranks`` (S,) the full rank each sorted sample stands
    for; ``fit_segments`` the fit's two index ranges and their mean 1/rank (``sparse_attention.fit_inverse``
    computed once)."""

    kc: torch.Tensor
    vc: torch.Tensor
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
    ct: torch.Tensor
    kst: torch.Tensor
    starts_np: np.ndarray = field(repr=False, default=None)
    _sizes: dict[int, torch.Tensor] = field(repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.starts_np = self.starts.numpy()

    def query_sizes(self, g: int) -> torch.Tensor:
        """(Hkv * g, C) cluster sizes of the query heads of ``g``-head groups (kept)."""
        if g not in self._sizes:
            self._sizes[g] = self.sizes.repeat_interleave(g, 0).contiguous()
        return self._sizes[g]

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
    kc = k[heads, perm].reshape(hkv * n, d).contiguous()
    vc = v[heads, perm].reshape(hkv * n, d).contiguous()
    sizes = index.sizes
    starts = torch.cat([torch.zeros(hkv, 1, dtype=torch.long), sizes.cumsum(-1)[:, :-1]], -1) + heads * n
    cbias = torch.zeros(sizes.shape).masked_fill(sizes == 0, NEG)
    ks = k[heads, index.samples].contiguous()
    n_s = ks.shape[1]
    ranks = (torch.arange(n_s, dtype=torch.float64) + 0.5) * n / n_s  # sample rank r stands for full rank (r + 1/2) n / S
    return DecodeLayout(kc, vc, starts, sizes, index.centroids.contiguous(), cbias, ks,
                        k[:, :s0].contiguous(), v[:, :s0].contiguous(), n, perm, cfg, ranks,
                        fit_segments(ranks, cfg), index.centroids.transpose(1, 2).contiguous(),
                        ks.transpose(1, 2).contiguous())


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


def _best(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """At least the ``k`` largest entries of each row of ``x`` (R, C), unsorted, as (values, indices) (R, m), rows
    shorter than m padded with ``NEG``. For k << C a threshold from every 8th entry (a partition of C/8) keeps about
    1.5 k + 32 entries per row in a few branch-free numpy passes; if a row keeps fewer than k, a plain top-k."""
    r, c = x.shape
    if 4 * k > c or c < 1024:
        vals, idx = torch.from_numpy(x).topk(k, dim=-1, sorted=False)
        return vals.numpy(), idx.numpy()
    sub = np.ascontiguousarray(x[:, ::8])
    j = sub.shape[1] - min(sub.shape[1], math.ceil(1.5 * k / 8) + 4)
    keep = x >= np.partition(sub, j, axis=-1)[:, j:j + 1]
    cnt = keep.sum(-1)
    if int(cnt.min()) < k:
        vals, idx = torch.from_numpy(x).topk(k, dim=-1, sorted=False)
        return vals.numpy(), idx.numpy()
    rows, cols = np.nonzero(keep)
    at = np.arange(rows.size) - (np.cumsum(cnt) - cnt)[rows]  # each kept entry's place in its row
    idx = np.zeros((r, int(cnt.max())), dtype=np.int64)
    vals = np.full(idx.shape, NEG, dtype=x.dtype)
    idx[rows, at] = cols
    vals[rows, at] = x[rows, cols]
    return vals, idx


def _next_clusters(za: np.ndarray, done: np.ndarray | None, sizes: np.ndarray, want: np.ndarray, n: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The next clusters of each head in descending centroid score: the shortest run after the clusters already read
    (those scoring >= ``done`` (Ha,); None: none read) that holds ``want`` (Ha,) tokens. ``za`` (Ha, C) centroid
    scores, ``sizes`` (Ha, C), ``n`` tokens per head. Candidates are at least the best ``kc`` remaining clusters
    (:func:`_best`, ``kc`` about four times the mean number needed); only they are sorted. Returns the candidates
    (Ha, m) in order, their sizes where taken (0 where not) and the score of each head's last cluster taken
    (``done`` where none). All numpy (small per-head work, no dispatch)."""
    c = za.shape[1]
    rest = za if done is None else np.where(za >= done[:, None], np.float32(NEG), za)
    vals, idx = _best(rest, min(c, 16 + math.ceil(4 * int(want.max()) * c / n)))
    o = np.argsort(-vals, axis=-1)
    vals = np.take_along_axis(vals, o, -1)
    idx = np.take_along_axis(idx, o, -1)
    sz = np.take_along_axis(sizes, idx, -1)
    take = ((np.cumsum(sz, -1) - sz) < want[:, None]) & (vals > 0.5 * NEG)  # while the run holds < want tokens
    nt = take.sum(-1)
    last = vals[np.arange(len(nt)), np.maximum(nt - 1, 0)]
    if done is not None:
        last = np.where(nt > 0, last, done)
    return idx, sz * take, last


def _read(heads: np.ndarray | None, cl: np.ndarray, sz: np.ndarray, qs: torch.Tensor, shift: torch.Tensor,
          lay: DecodeLayout, kv_of: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """Read the clusters ``cl`` (Ha, m) of the query heads ``heads`` (Ha,; None: all), ``sz`` (Ha, m) tokens each
    (0: not read): one gather of their key rows into (Ha, L, d) (each head's rows, padded to the longest with rows
    of weight 0; heads of very unequal lengths are read one by one) and one batched product for the scores; the
    weighted sum of their value rows by ``embedding_bag`` (one bag of L rows per head, summed where they lie, no
    copy). The row index is built in numpy. Returns the
    heads' softmax numerators (Ha, d), masses (Ha,) and tokens (Ha,)."""
    qs_all, shift_all, kv_all = qs, shift, kv_of
    if heads is not None:
        ht = torch.from_numpy(heads)
        qs, shift, kv_of = qs.index_select(0, ht), shift.index_select(0, ht), kv_of[heads]
    ha, d = qs.shape
    cnt = sz.sum(-1)
    total = int(cnt.sum())
    if total == 0:
        return torch.zeros(ha, d), torch.zeros(ha), cnt
    width = int(cnt.max())
    if heads is not None and ha > 1 and ha * width > 1.5 * total:  # unequal heads: one read each, no padding
        parts = [_read(heads[i:i + 1], cl[i:i + 1], sz[i:i + 1], qs_all, shift_all, lay, kv_all) for i in range(ha)]
        return torch.cat([x[0] for x in parts]), torch.cat([x[1] for x in parts]), cnt
    sz = sz.ravel()
    cs = np.cumsum(sz)
    rows = np.repeat(lay.starts_np[kv_of[:, None], cl].ravel() - cs + sz, sz) + np.arange(total)
    at = np.minimum(np.arange(width)[None] + (np.cumsum(cnt) - cnt)[:, None], total - 1)  # then the next head's
    idx = torch.from_numpy(rows[at.ravel()])
    z = torch.bmm(qs[:, None], lay.kc.index_select(0, idx).view(ha, width, d).transpose(1, 2))  # q as a row: fast
    w = torch.exp(z.view(ha, width) - shift[:, None])
    if int(cnt.min()) < width:
        w.masked_fill_(torch.from_numpy(np.arange(width)[None] >= cnt[:, None]), 0.0)
    num = torch.nn.functional.embedding_bag(idx.view(ha, width), lay.vc, mode="sum", per_sample_weights=w)
    return num, w.sum(-1), cnt


def fitted_tokens(a: np.ndarray, b: np.ndarray, m: np.ndarray, r: np.ndarray, n: int, iters: int = 4) -> np.ndarray:
    """The rank x (exact score order) by which the fitted scores a/x + b (a >= 0) add the mass ``r`` after rank
    ``m``: the root of F(x) = a ln((x + 1/2) / (m + 1/2)) + b (x - m) = r (``inverse_tail``'s sum) by Newton from
    x = m. F is concave, so the iterates stay below the root; at most n, or where a negative b ends the curve.
    All (H,) float64."""
    end = np.minimum(np.where(b < 0, -a / np.minimum(b, -1e-300) - 0.5, float(n)), float(n))
    x = m.astype(np.float64)
    for _ in range(iters):
        f = a * np.log((x + 0.5) / (m + 0.5)) + b * (x - m) - r
        x = np.maximum(np.minimum(x - f / np.maximum(a / (x + 0.5) + b, 1e-300), end), m)
    return x


def _segment_means(zs: torch.Tensor, shift: torch.Tensor, lay: DecodeLayout) -> tuple[torch.Tensor, torch.Tensor]:
    """The means of exp(score - shift) over the two fit segments of the descending sample order, (Hq,) each: one
    partial partition of the sample scores at the segments' bounds (exp is monotone), no full sort."""
    s = zs.shape[1]
    (i1, i2), _ = lay.fit_segments
    kth = sorted({s - i for lo_hi in (i1, i2) for i in lo_hi if 0 <= s - i < s})
    part = np.partition(zs.numpy(), kth, axis=-1)
    sh = shift.numpy()[:, None].astype(np.float64)
    return tuple(torch.from_numpy(np.exp(part[:, s - hi:s - lo] - sh).mean(-1)) for lo, hi in (i1, i2))


def decode_step(q: torch.Tensor, lay: DecodeLayout, k_new: torch.Tensor | None = None,
                v_new: torch.Tensor | None = None, p: float | None = None, chunk: int = 64,
                growth: float = 2.0, jump: int = 8) -> StepResult:
    """One decode step of every query head over the stored prefill and the generated tokens (see the module).
    Round 1 reads the outlier clusters of every head; round 2 jumps to the fitted curve's need (at most ``jump`` x
    the tokens read); every further round extends the unfinished heads by ``growth`` x the tokens they have read
    (at least ``chunk``)."""
    cfg = lay.cfg
    p = cfg.p if p is None else float(p)
    hq, d = q.shape
    hkv = lay.kv_heads
    g = hq // hkv
    kv_of = np.arange(hq) // g
    qg = (q * (1.0 / math.sqrt(d))).view(hkv, g, d)
    qs = qg.reshape(hq, d)
    kf, vf = lay.kf, lay.vf
    if k_new is not None and k_new.shape[1]:
        kf, vf = torch.cat([kf, k_new], 1), torch.cat([vf, v_new], 1)
    zf = torch.bmm(qg, kf.transpose(1, 2)).view(hq, -1)
    zc = torch.baddbmm(lay.cbias[:, None], qg, lay.ct).view(hq, -1)
    zs = torch.bmm(qg, lay.kst).view(hq, -1)
    shift = torch.maximum(zs.amax(-1), zc.amax(-1))
    if zf.shape[1]:
        shift = torch.maximum(shift, zf.amax(-1))
    wf = torch.exp(zf - shift[:, None])
    f_mass = wf.sum(-1)
    num = torch.bmm(wf.view(hkv, g, -1), vf).view(hq, d)
    n, c = lay.n, zc.shape[1]
    csize = lay.query_sizes(g).numpy()  # (Hq, C)
    if p >= 1.0:  # every cluster
        nm, mass, tokens = _read(None, np.broadcast_to(np.arange(c), (hq, c)), csize, qs, shift, lay, kv_of)
        num += nm
        rounds = 1
    else:
        # the outliers: the first clusters in centroid order that cover the top outlier_frac of the tokens
        x0 = max(1, math.ceil(cfg.outlier_frac * n))
        zc_np = zc.numpy()
        cl, sz, done = _next_clusters(zc_np, None, csize, np.full(hq, x0), n)
        nm, mass, tokens = _read(None, cl, sz, qs, shift, lay, kv_of)
        num += nm
        # the estimated total: exact sinks, generated tokens and outliers + the fitted a/x + b tail of the sample
        y1, y2 = _segment_means(zs, shift, lay)
        (u1, u2) = lay.fit_segments[1]
        a = (y1 - y2) / (u1 - u2)
        b = y1 - a * u1
        total = f_mass + mass + inverse_tail(a.clamp(min=0.0), b, torch.from_numpy(tokens), n).float()
        need = (p * total - f_mass).numpy()
        a_np, b_np = a.clamp(min=0.0).numpy(), b.numpy()
        mass = mass.numpy().copy()
        num_np = num.numpy()  # the same memory: the rounds add into it in numpy (a few rows, no dispatch)
        rounds = 1
        while True:
            active = np.flatnonzero((mass < need) & (tokens < n))
            if not active.size:
                break
            ta = tokens[active]
            want = np.maximum((ta * growth).astype(np.int64), chunk)
            if rounds == 1:  # jump to the tokens the fitted curve asks for, at most ``jump`` x what was read
                x = fitted_tokens(a_np[active], b_np[active], ta, (need - mass)[active], n)
                want = np.maximum(want, np.minimum(x.astype(np.int64) - ta, ta * jump))
            cl, sz, dn = _next_clusters(zc_np[active], done[active], csize[active], want, n)
            nm, ms, tk = _read(active, cl, sz, qs, shift, lay, kv_of)
            num_np[active] += nm.numpy()
            mass[active] += ms.numpy()
            tokens[active] += tk
            done[active] = dn
            rounds += 1
        mass = torch.from_numpy(mass)
    tokens = torch.from_numpy(tokens)
    read_rows = int(tokens.sum())
    out = num / (f_mass + mass)[:, None]
    nbytes = lay.kc.element_size() * d * (hkv * (c + lay.ks.shape[1]) + 2 * read_rows + 2 * hkv * kf.shape[1])
    return StepResult(out, tokens + kf.shape[1], int(nbytes), rounds, f_mass + mass, shift)


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
