"""Watermark-based detection and user-level attribution: the bounds, the matching, the rates.

Paper: "Watermark-based Attribution of AI-Generated Content" (earlier: "Watermark-based Detection and Attribution of
AI-Generated Content"), Jiang, Guo, Hu, Wang, Gong, ICLR 2026, arXiv 2404.04254.

A service gives every user i an n-bit watermark w_i and embeds it in everything the user generates. For a suspect image
the decoder returns a bit string w'. Bitwise accuracy BA(a, b) = fraction of equal bits.

- Detection: AI-generated iff max_i BA(w', w_i) >= tau (inclusive, 0.5 < tau <= 1).
- Attribution: user = argmax_i BA(w', w_i) (ties to the lowest index).
- Rates: TDR (detected, on content of user i), TAR (detected and attributed to i), FDR (detected, on non-AI content).

Bounds (X ~ Binom(n, beta) for a beta-accurate watermark; B ~ Binom(n, 1/2); alpha_min/alpha_max are the smallest and
largest BA between w_i and the other users' watermarks; integer cut-offs use ceil(x - 1e-12) and floor(x + 1e-12)):

- Thm 1: TDR_i >= P[X >= ceil(tau n)] + P[X <= floor(n (1 - tau - alpha_min))]   (requires 0.5 < tau < beta)
- Thm 2: FDR <= P[B >= ceil(tau n)] + P[B <= floor(n (1 - tau + alpha_max))]    (reference watermark uniform)
- Thm 3: FDR <= 1 - P[Binom(n, 1/2 + gamma) < ceil(tau n)]^s                    (s independent watermarks,
  gamma-random decoder; evaluated as -expm1(s log p) so s = 10^8 stays accurate)
- Thm 4: TAR_i >= P[X >= max(floor((1 + alpha_max) n / 2) + 1, ceil(tau n))]

Matching is vectorised over bit-packed codes (uint64 XOR + popcount, :mod:`backend.watermark.codes`): 10^6 users in
a few milliseconds per query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from backend.watermark import codes as _codes

TABLE5 = {"s": 100_000_000, "n": 64, "beta": 0.99, "gamma": 0.05, "tau": 0.9, "alpha_min": 0.2, "alpha_max": 0.8}


def _ceil(x: float) -> int:
    return math.ceil(x - 1e-12)


def _floor(x: float) -> int:
    return math.floor(x + 1e-12)


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise ValueError("n must be a positive integer")
    return int(n)


def _check_p(name: str, v: float) -> float:
    v = float(v)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]")
    return v


def _check_tau(tau: float) -> float:
    tau = _check_p("tau", tau)
    if tau <= 0.5:
        raise ValueError("the detection threshold tau must be greater than 0.5")
    return tau


# -------------------------------------------------------------------------------------------------------- bounds
def detection_threshold(n: int, tau: float) -> int:
    """Bits that must match: ceil(tau n)."""
    return _ceil(tau * n)


def attribution_threshold(n: int, tau: float, alpha_max: float) -> int:
    """Thm 4's bit count: max(floor((1 + alpha_max) n / 2) + 1, ceil(tau n))."""
    return max(_floor((1.0 + alpha_max) * n / 2.0) + 1, _ceil(tau * n))


def tdr_lower_bound(n: int, beta: float, tau: float, alpha_min: float) -> float:
    """Theorem 1: lower bound on user i's true detection rate."""
    n, beta, alpha_min = _check_n(n), _check_p("beta", beta), _check_p("alpha_min", alpha_min)
    tau = _check_tau(tau)
    if not tau < beta:
        raise ValueError("Theorem 1 assumes 0.5 < tau < beta")
    direct = binom.sf(detection_threshold(n, tau) - 1, n, beta)
    indirect = binom.cdf(_floor(n * (1.0 - tau - alpha_min)), n, beta)
    return float(min(1.0, direct + indirect))


def fdr_upper_bound_random(n: int, tau: float, alpha_max: float) -> float:
    """Theorem 2: FDR upper bound when the reference watermark is drawn uniformly at random."""
    n, alpha_max = _check_n(n), _check_p("alpha_max", alpha_max)
    tau = _check_tau(tau)
    upper = binom.sf(detection_threshold(n, tau) - 1, n, 0.5)
    lower = binom.cdf(_floor(n * (1.0 - tau + alpha_max)), n, 0.5)
    return float(min(1.0, upper + lower))


def fdr_upper_bound_independent(s: int, n: int, tau: float, gamma: float = 0.0) -> float:
    """Theorem 3: FDR upper bound for ``s`` independently drawn watermarks and a gamma-random decoder."""
    s, n = _check_n(s), _check_n(n)
    tau = _check_tau(tau)
    gamma = _check_p("gamma", gamma)
    if gamma > 0.5:
        raise ValueError("gamma must be in [0, 0.5]")
    below = float(binom.cdf(detection_threshold(n, tau) - 1, n, 0.5 + gamma))
    if below <= 0.0:
        return 1.0
    if below >= 1.0:
        return 0.0
    return float(-math.expm1(s * math.log(below)))


def tar_lower_bound(n: int, beta: float, tau: float, alpha_max: float) -> float:
    """Theorem 4: lower bound on user i's true attribution rate."""
    n, beta, alpha_max = _check_n(n), _check_p("beta", beta), _check_p("alpha_max", alpha_max)
    tau = _check_tau(tau)
    return float(binom.sf(attribution_threshold(n, tau, alpha_max) - 1, n, beta))


def paper_table5() -> dict[str, float]:
    """The three bounds of the paper's Table 5 (s = 10^8 users, n = 64, beta = 0.99, gamma = 0.05, tau = 0.9)."""
    t = TABLE5
    return {
        "tdr_lower": tdr_lower_bound(t["n"], t["beta"], t["tau"], t["alpha_min"]),
        "fdr_upper_thm3": fdr_upper_bound_independent(t["s"], t["n"], t["tau"], t["gamma"]),
        "tar_lower": tar_lower_bound(t["n"], t["beta"], t["tau"], t["alpha_max"]),
        "fdr_upper_thm2": fdr_upper_bound_random(t["n"], t["tau"], t["alpha_max"]),
    }


def tau_for_fpr(n: int, num_users: int, target_fpr: float, gamma: float = 0.0) -> float:
    """Smallest tau = k/n whose Thm 3 bound (s = ``num_users``) is <= ``target_fpr`` (1.0 if none is)."""
    if not 0.0 < target_fpr < 1.0:
        raise ValueError("target_fpr must be in (0, 1)")
    for k in range(n // 2 + 1, n + 1):
        if fdr_upper_bound_independent(max(1, num_users), n, k / n, gamma) <= target_fpr:
            return k / n
    return 1.0


def detection_p_value(matches: int, n: int, num_users: int) -> float:
    """P[a uniformly random n-bit string agrees with at least one of ``num_users`` watermarks in >= ``matches`` bits]:
    the chance that non-watermarked content scores this well (Thm 3's form with gamma = 0 and tau n = matches)."""
    p_one = float(binom.sf(matches - 1, n, 0.5))
    if p_one >= 1.0:
        return 1.0
    return float(-math.expm1(num_users * math.log1p(-p_one)))


# ------------------------------------------------------------------------------------------------------ matching
@dataclass
class MatchResult:
    """Per decoded string: ``detected`` (B,), ``user_index`` (B,) into the pool (argmax BA, ties to the lowest index),
    ``score`` (B,) = that BA, ``top_index``/``top_score`` (B, k) best k users, best first."""

    detected: np.ndarray
    user_index: np.ndarray
    score: np.ndarray
    top_index: np.ndarray
    top_score: np.ndarray
    tau: float
    n: int


class UserPool:
    """The users' watermarks, bit-packed in memory: ``codes`` (N,) uint64 of ``n`` bits and the users' ``ids`` (N,).

    Load once (e.g. from the SQLite registry, :mod:`backend.watermark.attribution.users`) and match many decodes against it."""

    def __init__(self, packed: np.ndarray, n: int, ids: np.ndarray | None = None):
        self.codes = np.ascontiguousarray(np.asarray(packed, dtype=np.uint64).reshape(-1))
        self.n = _check_n(n)
        if self.n > _codes.MAX_BITS:
            raise ValueError("at most 64-bit codes")
        self.ids = np.arange(self.codes.size, dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)
        if self.ids.shape != self.codes.shape:
            raise ValueError("ids and codes differ in length")
        if self.codes.size == 0:
            raise ValueError("the pool is empty")

    @classmethod
    def from_bits(cls, bits: np.ndarray, ids: np.ndarray | None = None) -> UserPool:
        b = np.asarray(bits)
        return cls(_codes.pack_bits(b), b.shape[1], ids)

    def __len__(self) -> int:
        return int(self.codes.size)

    def bits(self, index: int | np.ndarray) -> np.ndarray:
        """Unpacked codes: ``(n,)`` for one index, ``(k, n)`` for an index array."""
        out = _codes.unpack_bits(self.codes[index], self.n)
        return out[0] if np.ndim(index) == 0 else out

    def match(self, decoded: np.ndarray, tau: float, k: int = 5, chunk_bytes: int = 64 << 20) -> MatchResult:
        """Detect and attribute decoded strings ``(B, n)`` (or ``(n,)``) 0/1 against every user (vectorised)."""
        d = np.asarray(decoded)
        if d.ndim == 1:
            d = d[None]
        if d.shape[1] != self.n:
            raise ValueError(f"decoded strings have {d.shape[1]} bits; the pool has {self.n}")
        if not np.all((d == 0) | (d == 1)):
            raise ValueError("decoded strings must contain only 0 and 1")
        tau = _check_tau(tau)
        q = _codes.pack_bits(d.astype(np.uint8))
        B, N = q.size, self.codes.size
        k = max(1, min(k, N))
        best = np.empty(B, np.int64)
        best_d = np.empty(B, np.int64)
        top_i = np.empty((B, k), np.int64)
        top_d = np.empty((B, k), np.int64)
        rows = max(1, chunk_bytes // (8 * N))
        for s in range(0, B, rows):
            dist = np.bitwise_count(q[s:s + rows, None] ^ self.codes[None, :])  # (b, N) uint8
            best[s:s + rows] = np.argmin(dist, axis=1)  # first minimum = lowest index
            best_d[s:s + rows] = dist[np.arange(dist.shape[0]), best[s:s + rows]]
            for j in range(dist.shape[0]):  # top-k by a rising distance threshold (argpartition is slow at 10^6)
                row = dist[j]
                thr = int(best_d[s + j])
                cand = np.flatnonzero(row <= thr)
                while cand.size < k:
                    thr += 1
                    cand = np.flatnonzero(row <= thr)
                order = np.lexsort((cand, row[cand]))[:k]  # by distance, then index
                top_i[s + j] = cand[order]
                top_d[s + j] = row[cand[order]]
        score = (self.n - best_d) / self.n
        return MatchResult(detected=score >= tau - 1e-12, user_index=best, score=score, top_index=top_i,
                           top_score=(self.n - top_d) / self.n, tau=tau, n=self.n)


def match_reference(decoded: np.ndarray, pool_bits: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray,
                                                                                      np.ndarray]:
    """Unpacked reference implementation (a Python loop over decodes), for tests: (detected, index, score)."""
    d = np.atleast_2d(np.asarray(decoded, dtype=np.uint8))
    pool = np.asarray(pool_bits, dtype=np.uint8)
    idx = np.empty(d.shape[0], np.int64)
    score = np.empty(d.shape[0])
    for i, w in enumerate(d):
        acc = np.mean(pool == w, axis=1)
        idx[i] = int(np.argmax(acc))
        score[i] = acc[idx[i]]
    return score >= tau, idx, score


# --------------------------------------------------------------------------------------------------------- rates
@dataclass(frozen=True)
class Rates:
    tdr: float
    tar: float
    attribution_accuracy: float  # argmax correct, regardless of tau
    count: int


def detection_attribution_rates(decoded: np.ndarray, targets: np.ndarray, pool: UserPool, tau: float) -> Rates:
    """Empirical TDR, TAR (detected and attributed to the right user) and plain attribution accuracy."""
    t = np.asarray(targets, dtype=np.int64)
    m = pool.match(decoded, tau, k=1)
    if t.shape != m.detected.shape:
        raise ValueError("one target user index per decoded string")
    correct = m.user_index == t
    return Rates(float(m.detected.mean()), float((m.detected & correct).mean()), float(correct.mean()), int(t.size))


def false_detection_rate(decoded: np.ndarray, pool: UserPool, tau: float) -> float:
    """Fraction of decodes of non-AI content that are detected."""
    return float(pool.match(decoded, tau, k=1).detected.mean())


def simulate_decodes(pool: UserPool, targets: np.ndarray, beta: float, seed: int = 0) -> np.ndarray:
    """Decoded strings of a beta-accurate watermark: each bit of w_target kept with probability beta, independently.
    Returns ``(len(targets), n)`` uint8."""
    rng = np.random.default_rng(seed)
    bits = pool.bits(np.asarray(targets))
    flips = rng.random(bits.shape) >= beta
    return (bits ^ flips).astype(np.uint8)


def binomial_pmf(n: int, beta: float) -> np.ndarray:
    """P[X = k] for k = 0..n, X ~ Binom(n, beta) (for plotting the thresholds on it)."""
    return binom.pmf(np.arange(n + 1), n, beta)
