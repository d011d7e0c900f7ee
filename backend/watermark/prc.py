"""Pseudorandom error-correcting codes (PRC) for distortion-free latent watermarks.

Paper: "An undetectable watermark for generative image models", Gunn, Zhao, Song, ICLR 2025 (arXiv 2410.07369), on the
Christ-Gunn LDPC-style pseudorandom codes. This is the building block of SIGMark's GF-PRC (arXiv 2603.02882).

- :func:`keygen` (n, m, FPR, t = 3): b = ceil(log2 1/FPR) test bits, secpar = floor(log2 C(n, t)), g = secpar,
  noise rate eta = 1 - 2^(-secpar/g^2), payload k = m + g + b, r = n - k - secpar parity checks of weight t. The
  generator G (n x k over GF(2)) has its last r rows each the XOR of t - 1 earlier rows, so each check holds on a clean
  codeword; then a secret permutation of positions, a one-time pad and random test bits.
- :func:`encode`: bits = G [test | g random | message | 0] + pad + Bernoulli(eta); signs c = 1 - 2 bits.
- :func:`sample_latent`: z = c * |N(0, I)| (exact Gaussian marginals: distortion-free).
- :func:`posterior`: p = erf(z_hat / sqrt(2 v (1 + v))), E[sign z | z_hat] for z_hat = z + N(0, v).
- :func:`detect_score` / :func:`detect`: S = sum_j log((1 + P_j)/2) over checks, P_j = product of the (pad-corrected)
  posteriors on check j; threshold 0.5 sum log((1 - P^2)/4) + sqrt(2 C ln(1/FPR)): P(S >= thr) <= FPR for content
  made without this key.
- :func:`decode`: sum-product belief propagation on the checks, order positions by BP confidence, take the first k
  linearly independent rows of G (GF(2) elimination), solve for the payload, accept iff the test bits match.

At the lab's n = 1024 the security parameter is only ~27 bits: this shows the mechanics, not cryptographic strength.
Everything is numpy; bits are uint8 arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import erf, gammaln


@dataclass
class PRCKey:
    """One PRC key. ``G`` [n, k] uint8 (already permuted), ``checks`` [r, t] position indices, ``pad`` [n] uint8."""

    n: int
    m: int
    fpr: float
    t: int
    g: int
    b: int
    eta: float
    G: np.ndarray
    checks: np.ndarray
    pad: np.ndarray
    test_bits: np.ndarray
    bp_iters: int

    @property
    def k(self) -> int:
        return self.G.shape[1]

    @property
    def r(self) -> int:
        return self.checks.shape[0]

    def nbytes(self) -> int:
        """Storage of the key (bit-packed G, checks as int16, pad and test bits)."""
        return int(math.ceil(self.G.size / 8) + self.checks.size * 2 + math.ceil(self.n / 8) + self.b)


@dataclass
class DecodeResult:
    """``message`` [m] bits (always the solved payload's message part, None if G had no full-rank subset);
    ``ok`` = the test bits matched (the decoder's accept); ``bp_llr`` [n] final BP log-likelihood ratios."""

    message: np.ndarray | None
    ok: bool
    bp_llr: np.ndarray


def params(n: int, m: int, fpr: float, t: int = 3, noise_rate: float | None = None) -> dict:
    """The KeyGen parameters (b, secpar, g, eta, k, r) without sampling a key."""
    b = int(math.ceil(math.log2(1.0 / fpr)))
    log2_binom = (gammaln(n + 1) - gammaln(t + 1) - gammaln(n - t + 1)) / math.log(2)
    secpar = int(math.floor(log2_binom + 1e-9))
    g = secpar
    eta = 1 - 2 ** (-secpar / g**2) if noise_rate is None else float(noise_rate)
    k = m + g + b
    r = n - k - secpar
    if r <= 0:
        raise ValueError(f"n = {n} is too short for m = {m} message bits at FPR {fpr} (needs n > k + secpar = "
                         f"{k + secpar})")
    return {"b": b, "secpar": secpar, "g": g, "eta": eta, "k": k, "r": r}


def keygen(n: int, m: int, fpr: float = 1e-5, t: int = 3, noise_rate: float | None = None,
           bp_iters: int | None = None, seed: int | np.random.Generator = 0) -> PRCKey:
    """Sample a PRC key (PRC KeyGen). ``bp_iters`` defaults to PRC's floor(ln n / ln t)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    p = params(n, m, fpr, t, noise_rate)
    k, r = p["k"], p["r"]
    G = rng.integers(0, 2, (n, k), dtype=np.uint8)
    checks = np.empty((r, t), dtype=np.int64)
    for row in range(r):
        pos = n - r + row
        chosen = rng.choice(pos, t - 1, replace=False)
        checks[row, : t - 1] = chosen
        checks[row, t - 1] = pos
        G[pos] = np.bitwise_xor.reduce(G[chosen], axis=0)
    pad = rng.integers(0, 2, n, dtype=np.uint8)
    test_bits = rng.integers(0, 2, p["b"], dtype=np.uint8)
    perm = rng.permutation(n)  # new position i holds old position perm[i]
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    G, pad = G[perm], pad[perm]
    checks = inv[checks]
    iters = int(math.log(n) / math.log(t)) if bp_iters is None else int(bp_iters)
    return PRCKey(n=n, m=m, fpr=fpr, t=t, g=p["g"], b=p["b"], eta=p["eta"], G=G, checks=checks, pad=pad,
                  test_bits=test_bits, bp_iters=iters)


def encode(key: PRCKey, message: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """PRC Encode: ``message`` [<= m] bits (None: a zero-bit codeword) -> signs [n] in {+1, -1} (float32)."""
    k = key.k
    if message is None:
        payload = np.concatenate([key.test_bits, rng.integers(0, 2, k - key.b, dtype=np.uint8)])
    else:
        msg = np.asarray(message, dtype=np.uint8).reshape(-1)
        if msg.size > key.m or np.any(msg > 1):
            raise ValueError(f"message must be at most {key.m} bits in {{0, 1}}")
        payload = np.concatenate([key.test_bits, rng.integers(0, 2, key.g, dtype=np.uint8), msg,
                                  np.zeros(k - key.b - key.g - msg.size, dtype=np.uint8)])
    bits = (key.G.astype(np.int64) @ payload.astype(np.int64)) % 2
    error = (rng.random(key.n) < key.eta).astype(np.int64)
    bits = (bits + key.pad + error) % 2
    return (1 - 2 * bits).astype(np.float32)


def sample_latent(signs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """z = signs * |N(0, I)|: Gaussian marginals whatever the signs (float32, same shape)."""
    return (np.asarray(signs) * np.abs(rng.standard_normal(np.shape(signs)))).astype(np.float32)


def posterior(z_hat: np.ndarray, variance: float = 1.5) -> np.ndarray:
    """E[sign z | z_hat] under z_hat = z + N(0, variance) (PRC's recovery posterior), in (-1, 1)."""
    return erf(np.asarray(z_hat, np.float64) / math.sqrt(2 * variance * (1 + variance)))


def _corrected(key: PRCKey, post: np.ndarray) -> np.ndarray:
    """Posterior of the pad-free codeword's signs, shrunk by the noise rate."""
    return (1 - 2 * key.eta) * (1 - 2 * key.pad.astype(np.float64)) * np.asarray(post, np.float64).reshape(-1)


def detect_terms(key: PRCKey, post: np.ndarray) -> tuple[float, float, float]:
    """The sums Detect is made of: (S = sum_j log((1 + P_j)/2), C, B = 0.5 sum_j log((1 - P_j^2)/4)); the threshold
    at ``fpr`` is ``B + sqrt(2 C ln(1/fpr))``. Sums over several (key, posterior) pairs give the same test on their
    concatenated checks (a joint Detect)."""
    q = _corrected(key, post)
    P = np.prod(q[key.checks], axis=1)
    P = np.clip(P, -1 + 1e-12, 1 - 1e-12)
    log_plus = np.log((1 + P) / 2)
    log_minus = np.log((1 - P) / 2)
    log_prod = log_plus + log_minus
    const = 0.5 * np.sum(log_plus**2 + log_minus**2 - 0.5 * log_prod**2)
    return float(log_plus.sum()), float(const), float(0.5 * log_prod.sum())


def threshold(const: float, base: float, fpr: float) -> float:
    """Detect threshold ``base + sqrt(2 C ln(1/fpr))`` (concentration bound: P(S >= threshold) <= fpr without key)."""
    return base + math.sqrt(2 * const * math.log(1 / fpr))


def detect_stats(key: PRCKey, post: np.ndarray, fpr: float | None = None) -> tuple[float, float]:
    """(score S, threshold) of PRC Detect at ``fpr`` (default: the key's)."""
    score, const, base = detect_terms(key, post)
    return score, threshold(const, base, fpr or key.fpr)


def detect_score(key: PRCKey, post: np.ndarray) -> float:
    """Raw Detect score S = sum_j log((1 + P_j)/2) (higher = more likely this key's codeword)."""
    return detect_stats(key, post)[0]


def detect(key: PRCKey, post: np.ndarray, fpr: float | None = None) -> bool:
    """PRC Detect (zero-bit): True iff S >= threshold; false-positive rate <= fpr for content without the key."""
    s, thr = detect_stats(key, post, fpr)
    return s >= thr


def belief_propagation(checks: np.ndarray, n: int, llr: np.ndarray, iters: int) -> np.ndarray:
    """Sum-product BP on weight-t checks (all with syndrome 0). ``llr`` [n] (positive = bit 0) -> posterior LLRs [n].

    Stops early once the hard decisions satisfy every check."""
    llr = np.asarray(llr, np.float64)
    flat = checks.reshape(-1)
    msg_vc = llr[checks]  # variable -> check messages [r, t]
    total = llr.copy()
    for _ in range(max(1, iters)):
        th = np.tanh(np.clip(msg_vc, -40, 40) / 2)
        th = np.where(np.abs(th) < 1e-15, 1e-15, th)
        prod = np.prod(th, axis=1, keepdims=True)
        ext = np.clip(prod / th, -1 + 1e-15, 1 - 1e-15)
        msg_cv = 2 * np.arctanh(ext)
        total = llr + np.bincount(flat, weights=msg_cv.reshape(-1), minlength=n)
        hard = (total < 0).astype(np.int64)
        if not np.any(hard[checks].sum(axis=1) % 2):
            break
        msg_vc = total[checks] - msg_cv
    return total


def _solve_first_independent(G: np.ndarray, y: np.ndarray, order: np.ndarray) -> np.ndarray | None:
    """Payload x with G[i] x = y[i] on the first k linearly independent rows of G taken in ``order`` (GF(2))."""
    n, k = G.shape
    basis = np.zeros((k, k + 1), dtype=np.uint8)  # reduced rows [coeffs | rhs], indexed by pivot column
    have = np.zeros(k, dtype=bool)
    count = 0
    for i in order:
        v = np.concatenate([G[i], y[i:i + 1]]).astype(np.uint8)
        hits = have & (v[:k] == 1)
        if hits.any():
            v ^= np.bitwise_xor.reduce(basis[hits], axis=0)
        nz = np.flatnonzero(v[:k])
        if nz.size == 0:
            continue
        p = nz[0]
        clear = have & (basis[:, p] == 1)
        basis[clear] ^= v
        basis[p] = v
        have[p] = True
        count += 1
        if count == k:
            return basis[:, k].copy()
    return None


def decode(key: PRCKey, post: np.ndarray, bp_iters: int | None = None) -> DecodeResult:
    """PRC Decode: BP, confidence-ordered GF(2) solve, test-bit check. ``post`` [n] posteriors of the signs."""
    q = np.clip(_corrected(key, post), -1 + 1e-12, 1 - 1e-12)
    llr = np.log1p(q) - np.log1p(-q)  # log P(bit 0)/P(bit 1)
    total = belief_propagation(key.checks, key.n, llr, key.bp_iters if bp_iters is None else bp_iters)
    hard = (total < 0).astype(np.uint8)
    order = np.argsort(-np.abs(total), kind="stable")
    x = _solve_first_independent(key.G, hard, order)
    if x is None:
        return DecodeResult(None, False, total)
    ok = bool(np.array_equal(x[: key.b], key.test_bits))
    return DecodeResult(x[key.b + key.g: key.b + key.g + key.m].copy(), ok, total)


def syndrome_ok(key: PRCKey, signs: np.ndarray) -> bool:
    """Whether pad-free hard bits of ``signs`` meet every parity check (clean codewords with eta = 0 do)."""
    bits = ((1 - np.sign(np.asarray(signs).reshape(-1))) // 2).astype(np.int64)
    bits = (bits + key.pad) % 2
    return not np.any(bits[key.checks].sum(axis=1) % 2)
