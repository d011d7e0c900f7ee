"""DEPO's offline data selection: diversity x influence x suitable difficulty, and the subset baselines.

Given L2-normalised embeddings X [N, D] of N prompts:

1. Similarity graph (:func:`knn_graph`): each prompt links to its ``k`` nearest neighbours by cosine similarity,
   edge weight max(cos, 0); the graph is made symmetric.
2. Influence (:func:`pagerank`): PageRank of that weighted graph (damping 0.85, power iteration), so prompts that
   many similar prompts point to weigh more.
3. Diversity x influence (:func:`greedy_logdet`): greedy maximisation of log det(L_Y) with the weighted DPP kernel
   L = diag(w)^1/2 K diag(w)^1/2, K the RBF kernel exp(-||x_i - x_j||^2 / (2 h^2)) (h the median pairwise distance
   of a sample of the pool, full rank, so every subset has a finite log-det) and w the PageRank scores divided by
   their mean. The greedy step adds the prompt with the largest conditional variance d_i^2 = L_ii - ||c_i||^2
   (incremental Cholesky, Chen et al. 2018: O(N k^2) time, O(N k) memory; kernel rows are computed on the fly, never
   the N x N matrix); log det(L_Y) = sum of log d^2 of the chosen prompts.
4. Difficulty (:func:`difficulty_sample`): from the greedy candidates (``candidates`` x the target size), draw the
   final subset without replacement with p_i proportional to phi((Acc_i - mu) / sigma), phi the standard normal
   density and Acc_i the pass rate of G rollouts of the policy: medium difficulty dominates, some hard and easy
   prompts stay. Without pass rates (a user's prompt list without a difficulty column) the greedy order is kept.

Baselines of equal size (:data:`SUBSETS`): a uniform random subset, the top-PageRank prompts, and a greedy k-center
coreset (farthest-point traversal from the most central prompt; Sener and Savarese 2018). Measures: the log-det
volume of a subset (:func:`logdet`) and its coverage, the mean distance of every pool prompt to its nearest selected
prompt (:func:`coverage`, lower is better).

Shapes: X [N, D] float; weights, pass rates [N]; subsets are int index arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import Registry

CHUNK = 2048


def normalise(x: Any) -> np.ndarray:
    """Rows scaled to unit L2 norm (float64)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise InputError(f"Embeddings must be a [prompts, dims] array; got shape {x.shape}.")
    if not np.isfinite(x).all():
        raise InputError("Embeddings must be finite numbers.")
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def knn_graph(x: np.ndarray, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest neighbours of every row by cosine similarity: (indices [N, k], weights [N, k] = max(cos, 0)).
    Computed in chunks of rows (memory O(CHUNK N))."""
    n = x.shape[0]
    k = max(1, min(k, n - 1)) if n > 1 else 0
    idx = np.zeros((n, k), dtype=np.int64)
    w = np.zeros((n, k))
    if k == 0:
        return idx, w
    for s in range(0, n, CHUNK):
        sim = x[s:s + CHUNK] @ x.T
        rows = np.arange(sim.shape[0])
        sim[rows, s + rows] = -np.inf
        part = np.argpartition(-sim, k - 1, axis=1)[:, :k]
        idx[s:s + CHUNK] = part
        w[s:s + CHUNK] = np.maximum(np.take_along_axis(sim, part, 1), 0.0)
    return idx, w


def pagerank(idx: np.ndarray, w: np.ndarray, damping: float = 0.85, iters: int = 100, tol: float = 1e-10) -> np.ndarray:
    """PageRank [N] (sums to 1) of the symmetrised weighted kNN graph ``(idx, w)``; power iteration, dangling mass
    spread uniformly."""
    n = idx.shape[0]
    if n == 1 or idx.shape[1] == 0:
        return np.full(n, 1.0 / n)
    src = np.concatenate([np.repeat(np.arange(n), idx.shape[1]), idx.ravel()])
    dst = np.concatenate([idx.ravel(), np.repeat(np.arange(n), idx.shape[1])])
    ew = np.concatenate([w.ravel(), w.ravel()]) / 2.0
    out = np.zeros(n)
    np.add.at(out, src, ew)
    r = np.full(n, 1.0 / n)
    for _ in range(iters):
        flow = np.where(out[src] > 0, r[src] * ew / np.where(out[src] > 0, out[src], 1.0), 0.0)
        nxt = np.zeros(n)
        np.add.at(nxt, dst, flow)
        dangling = r[out <= 0].sum()
        nxt = damping * (nxt + dangling / n) + (1 - damping) / n
        if np.abs(nxt - r).sum() < tol:
            r = nxt
            break
        r = nxt
    return r / r.sum()


def bandwidth(x: np.ndarray, seed: int = 0, m: int = 500) -> float:
    """The RBF bandwidth h: the median pairwise distance among (up to) ``m`` rows drawn with ``seed``."""
    n = x.shape[0]
    if n < 2:
        return 1.0
    rng = np.random.default_rng(seed)
    s = x[rng.choice(n, size=min(n, m), replace=False)]
    d2 = np.maximum(2.0 - 2.0 * (s @ s.T), 0.0)
    iu = np.triu_indices(s.shape[0], 1)
    h = float(np.sqrt(np.median(d2[iu])))
    return h if h > 1e-6 else 1.0


def _kernel_rows(x: np.ndarray, rows: np.ndarray, h: float) -> np.ndarray:
    d2 = np.maximum(2.0 - 2.0 * (x[rows] @ x.T), 0.0)
    return np.exp(-d2 / (2.0 * h * h))


def greedy_logdet(x: np.ndarray, weights: np.ndarray | None, k: int, h: float | None = None,
                  jitter: float = 1e-9) -> tuple[np.ndarray, float]:
    """Greedy MAP of the weighted DPP: (the ``k`` chosen indices in the order chosen, log det(L_Y)).
    ``weights`` [N] > 0 (None = 1); ``h`` the RBF bandwidth (None = :func:`bandwidth`)."""
    n = x.shape[0]
    if not 1 <= k <= n:
        raise InputError(f"The subset size must be 1-{n}; got {k}.")
    h = bandwidth(x) if h is None else h
    q = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    sq = np.sqrt(q)
    d2 = q.copy() + jitter  # L_ii = w_i K_ii = w_i
    c = np.zeros((k, n))
    chosen = np.zeros(k, dtype=np.int64)
    free = np.ones(n, dtype=bool)
    total = 0.0
    for j in range(k):
        i = int(np.argmax(np.where(free, d2, -np.inf)))
        di = float(d2[i])
        if di <= 0:
            di = jitter
        chosen[j], free[i] = i, False
        total += np.log(di)
        row = _kernel_rows(x, np.array([i]), h)[0] * sq * sq[i]
        e = (row - c[:j, i] @ c[:j]) / np.sqrt(di)
        c[j] = e
        d2 = d2 - e * e
    return chosen, total


def logdet(x: np.ndarray, weights: np.ndarray | None, subset: Any, h: float) -> float:
    """log det(L_Y) of ``subset`` under the weighted RBF kernel (as :func:`greedy_logdet` builds it)."""
    s = np.asarray(subset, dtype=np.int64)
    q = np.ones(x.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    kk = _kernel_rows(x, s, h)[:, s] * np.sqrt(np.outer(q[s], q[s]))
    sign, val = np.linalg.slogdet(kk + 1e-9 * np.eye(len(s)))
    return float(val) if sign > 0 else float("-inf")


def nearest(x: np.ndarray, subset: Any) -> np.ndarray:
    """[N] Euclidean distance of every row of ``x`` to its nearest row in ``subset``."""
    s = np.asarray(subset, dtype=np.int64)
    best = np.empty(x.shape[0])
    for a in range(0, x.shape[0], CHUNK):
        sim = x[a:a + CHUNK] @ x[s].T
        best[a:a + CHUNK] = np.sqrt(np.maximum(2.0 - 2.0 * sim.max(1), 0.0))
    return best


def coverage(x: np.ndarray, subset: Any) -> float:
    """Mean Euclidean distance of every row of ``x`` to its nearest row in ``subset`` (lower covers better)."""
    return float(nearest(x, subset).mean())


def difficulty_weights(acc: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    """phi((Acc - mu) / sigma), the sampling weight of each prompt (standard normal density)."""
    z = (np.asarray(acc, dtype=np.float64) - mu) / sigma
    return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


def difficulty_sample(cands: np.ndarray, acc: np.ndarray, k: int, mu: float, sigma: float, seed: int) -> np.ndarray:
    """``k`` of ``cands`` drawn without replacement with p ~ phi((acc[cand] - mu) / sigma)."""
    p = difficulty_weights(acc[cands], mu, sigma) + 1e-12
    rng = np.random.default_rng(seed)
    return np.asarray(rng.choice(cands, size=k, replace=False, p=p / p.sum()), dtype=np.int64)


@dataclass(frozen=True)
class Context:
    """What every subset strategy reads: normalised embeddings, PageRank, the RBF bandwidth, optional pass rates,
    and DEPO's settings (``candidates`` the greedy pool as a multiple of k, ``mu``, ``sigma``)."""

    x: np.ndarray
    pagerank: np.ndarray
    h: float
    acc: np.ndarray | None = None
    candidates: float = 2.0
    mu: float = 0.5
    sigma: float = 0.25

    @property
    def weights(self) -> np.ndarray:
        return self.pagerank / self.pagerank.mean()


def context(x: Any, acc: Any = None, knn: int = 10, candidates: float = 2.0, mu: float = 0.5,
            sigma: float = 0.25) -> Context:
    """The :class:`Context` of embeddings ``x`` [N, D] (normalised here) and optional pass rates ``acc`` [N]."""
    xn = normalise(x)
    idx, w = knn_graph(xn, knn)
    a = None if acc is None else np.asarray(acc, dtype=np.float64)
    if a is not None:
        ok = np.isnan(a) | ((a >= 0) & (a <= 1))
        if a.shape != (xn.shape[0],) or not np.all(ok) or np.isnan(a).all():
            raise InputError("Pass rates (difficulty) must be one number in [0, 1] per prompt (NaN: not measured).")
    return Context(xn, pagerank(idx, w), bandwidth(xn), a, candidates, mu, sigma)


def select_depo(ctx: Context, k: int, seed: int = 0) -> np.ndarray:
    """DEPO: greedy weighted-DPP candidates, then difficulty-aware sampling of k of them (greedy order without
    pass rates)."""
    n = ctx.x.shape[0]
    m = k if ctx.acc is None else min(n, max(k, int(round(ctx.candidates * k))))
    cands, _ = greedy_logdet(ctx.x, ctx.weights, m, ctx.h)
    if ctx.acc is None or m == k or np.isnan(ctx.acc[cands]).any():
        return cands[:k]
    return difficulty_sample(cands, ctx.acc, k, ctx.mu, ctx.sigma, seed)


def select_dpp(ctx: Context, k: int, seed: int = 0) -> np.ndarray:
    """The greedy weighted-DPP stage alone (no difficulty sampling)."""
    return greedy_logdet(ctx.x, ctx.weights, k, ctx.h)[0]


def select_random(ctx: Context, k: int, seed: int = 0) -> np.ndarray:
    """A uniform random subset of size k."""
    return np.sort(np.random.default_rng(seed).choice(ctx.x.shape[0], size=k, replace=False)).astype(np.int64)


select_random.stochastic = True  # type: ignore[attr-defined]  # its numbers are averaged over several draws


def select_pagerank(ctx: Context, k: int, seed: int = 0) -> np.ndarray:
    """The k prompts of largest PageRank (ties by index)."""
    return np.argsort(-ctx.pagerank, kind="stable")[:k].astype(np.int64)


def select_kcenter(ctx: Context, k: int, seed: int = 0) -> np.ndarray:
    """Greedy k-center coreset: start at the prompt nearest the mean, add the prompt farthest from the chosen ones."""
    x = ctx.x
    first = int(np.argmax(x @ x.mean(0)))
    chosen = [first]
    dist = np.sqrt(np.maximum(2.0 - 2.0 * (x @ x[first]), 0.0))
    for _ in range(k - 1):
        i = int(np.argmax(dist))
        chosen.append(i)
        dist = np.minimum(dist, np.sqrt(np.maximum(2.0 - 2.0 * (x @ x[i]), 0.0)))
    return np.asarray(chosen, dtype=np.int64)


#: Subset strategies of equal size k: ``fn(ctx, k, seed) -> indices``.
SUBSETS: Registry[Callable[..., np.ndarray]] = Registry("subset strategy")
SUBSETS.add("depo", select_depo, label="DEPO (ours)", kind="ours",
            about="PageRank-weighted DPP greedy, then difficulty-aware sampling")
SUBSETS.add("dpp", select_dpp, label="Weighted DPP only", kind="ablation", about="the greedy log-det stage alone")
SUBSETS.add("random", select_random, label="Random", kind="baseline", about="uniform random subset")
SUBSETS.add("pagerank", select_pagerank, label="Top PageRank", kind="baseline", about="largest influence scores")
SUBSETS.add("kcenter", select_kcenter, label="k-center coreset", kind="baseline",
            about="farthest-point traversal")


def subset_size(n: int, share: float) -> int:
    """k = round(share N), at least 1."""
    if not 0.0 < share <= 1.0:
        raise InputError(f"The share must be in (0, 1]; got {share!r}.")
    return max(1, min(n, int(round(share * n))))
