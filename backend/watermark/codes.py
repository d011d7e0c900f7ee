"""User watermark codes: the selection strategies of the attribution paper, bit packing, and pool statistics.

Paper: "Watermark-based Attribution of AI-Generated Content", Jiang, Guo, Hu, Wang, Gong, ICLR 2026 (arXiv 2404.04254),
Section on watermark selection. The bounds on attribution (Thm 4) and on false detection (Thm 2) improve as the largest
pairwise bitwise accuracy of the users' watermarks falls, so the service should pick watermarks that are far apart in
Hamming distance (a farthest-string-like problem). Strategies (registry: :func:`get_method`):

- ``random``: uniform unique n-bit strings (the paper's baseline; the only one that scales to 10^6 users here).
- ``nrg``: Non-Redundant Guess (the paper's Algorithm 2): start from the complement of the first watermark and flip
  exactly the surplus of agreeing positions with the closest watermark, never a position twice.
- ``absta``: approximate bounded search tree (A-BSTA, Algorithm 1 made sequential): for each new user, the match budget
  K starts at the most matches between the last-added watermark and the earlier ones (n/2 for the second user); a
  uniform candidate is searched to depth ``d``: find the existing watermark with most matches m; accept when m <= K;
  prune when m > K + d; otherwise branch on flipping one of K+1 positions (random order) where the candidate agrees
  with that watermark. When the search fails, K grows by one and a new candidate is drawn. Superlinear: offered up to
  about 10^4 users (depth 4, cached); a million users use ``random``.

Matching counts use bit-packed codes (one uint64 per user, n <= 64) with XOR and ``np.bitwise_count``.

Arrays: ``bits`` are ``(N, n)`` uint8 in {0, 1}; ``packed`` are ``(N,)`` uint64 with bit j of a code at ``1 << j``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..registry import Registry
from ..runtime import Progress, report

MAX_BITS = 64


# ------------------------------------------------------------------------------------------------------ packing
def pack_bits(bits: np.ndarray) -> np.ndarray:
    """``(N, n)`` 0/1 -> ``(N,)`` uint64 (bit j -> ``1 << j``), n <= 64; a single ``(n,)`` code gives ``(1,)``."""
    b = np.asarray(bits, dtype=np.uint64)
    if b.ndim == 1:
        b = b[None]
    n = b.shape[1]
    if n > MAX_BITS:
        raise ValueError(f"codes of {n} bits do not fit one uint64 (at most {MAX_BITS})")
    weights = np.left_shift(np.uint64(1), np.arange(n, dtype=np.uint64))
    return np.bitwise_or.reduce(b * weights, axis=1) if n else np.zeros(b.shape[0], np.uint64)


def unpack_bits(packed: np.ndarray, n: int) -> np.ndarray:
    """``(N,)`` uint64 -> ``(N, n)`` uint8."""
    p = np.asarray(packed, dtype=np.uint64).reshape(-1)
    shifts = np.arange(n, dtype=np.uint64)
    return ((p[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.uint8)


def hamming(packed_pool: np.ndarray, packed_query: np.ndarray | int) -> np.ndarray:
    """Hamming distances ``(N,)`` between every pool code and one query (uint64 XOR + popcount)."""
    return np.bitwise_count(packed_pool ^ np.uint64(packed_query)).astype(np.int64)


def full_mask(n: int) -> np.uint64:
    return np.uint64((1 << n) - 1) if n < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


# ---------------------------------------------------------------------------------------------------- selection
def _check(num_users: int, n: int, existing: np.ndarray | None) -> np.ndarray:
    if isinstance(num_users, bool) or not isinstance(num_users, (int, np.integer)) or num_users < 0:
        raise ValueError("num_users must be a non-negative integer")
    if not 1 <= n <= MAX_BITS:
        raise ValueError(f"n must be in [1, {MAX_BITS}]")
    pool = np.zeros(0, np.uint64) if existing is None else np.asarray(existing, dtype=np.uint64).reshape(-1)
    if pool.size + num_users > (1 << n):
        raise ValueError(f"{pool.size + num_users} users exceed the {1 << n} distinct {n}-bit watermarks")
    return pool


def _random_code(rng: np.random.Generator, n: int) -> np.uint64:
    return np.uint64(pack_bits(rng.integers(0, 2, n, dtype=np.uint8))[0])


def select_random(num_users: int, n: int = 64, seed: int = 0, existing: np.ndarray | None = None,
                  progress: Progress | None = None, **_: object) -> np.ndarray:
    """``num_users`` new uniform codes, unique among themselves and against ``existing``; packed ``(num_users,)``."""
    pool = _check(num_users, n, existing)
    rng = np.random.default_rng(seed)
    out = np.zeros(0, np.uint64)
    while out.size < num_users:
        need = num_users - out.size
        cand = rng.integers(0, 2**63, size=need, dtype=np.uint64, endpoint=False) << np.uint64(1)
        cand |= rng.integers(0, 2, size=need, dtype=np.uint64)  # 64 uniform bits
        cand &= full_mask(n)
        merged = np.concatenate([out, cand])
        _, first = np.unique(merged, return_index=True)
        keep = np.zeros(merged.size, bool)
        keep[first] = True
        if pool.size:
            keep &= ~np.isin(merged, pool)
        out = merged[np.sort(np.flatnonzero(keep))]
        report(progress, out.size / max(num_users, 1), f"{out.size:,}/{num_users:,} random codes")
    return out[:num_users]


class _Pool:
    """A growable packed pool for the sequential strategies."""

    def __init__(self, existing: np.ndarray, capacity: int):
        self.codes = np.zeros(max(capacity, 1), np.uint64)
        self.codes[: existing.size] = existing
        self.size = int(existing.size)

    @property
    def view(self) -> np.ndarray:
        return self.codes[: self.size]

    def add(self, code: np.uint64) -> None:
        self.codes[self.size] = code
        self.size += 1

    def starting_budget(self, n: int) -> int:
        """K: most matches between the last-added code and the earlier ones (n // 2 while there is only one)."""
        if self.size < 2:
            return n // 2
        return n - int(hamming(self.codes[: self.size - 1], self.codes[self.size - 1]).min())


def bsta(existing: np.ndarray, candidate: int, depth: int, max_matches: int, n: int,
         rng: np.random.Generator) -> np.uint64 | None:
    """The bounded search tree for one candidate (packed): a code with at most ``max_matches`` agreeing bits with every
    code of ``existing``, reached by at most ``depth`` flips, or None."""
    if depth < 0:
        return None
    matches = n - hamming(existing, candidate)
    closest = int(np.argmax(matches))
    m = int(matches[closest])
    if m > max_matches + depth:
        return None
    if m <= max_matches:
        return np.uint64(candidate)
    agree = ~(np.uint64(candidate) ^ existing[closest]) & full_mask(n)
    positions = np.flatnonzero(unpack_bits(np.array([agree]), n)[0])
    for pos in rng.permutation(positions)[: max_matches + 1]:
        found = bsta(existing, int(np.uint64(candidate) ^ (np.uint64(1) << np.uint64(pos))), depth - 1, max_matches,
                     n, rng)
        if found is not None:
            return found
    return None


def _nrg_one(existing: np.ndarray, candidate: np.uint64, max_matches: int, n: int,
             rng: np.random.Generator) -> np.uint64 | None:
    """Non-redundant guess for one candidate (packed) or None."""
    cand = np.uint64(candidate)
    forbidden = np.uint64(0)
    budget = max_matches
    while budget > 0:
        matches = n - hamming(existing, cand)
        closest = int(np.argmax(matches))
        m = int(matches[closest])
        if m > 2 * max_matches:
            return None
        if m <= max_matches:
            return cand
        need = m - max_matches
        free = ~(cand ^ existing[closest]) & ~forbidden & full_mask(n)
        positions = np.flatnonzero(unpack_bits(np.array([free]), n)[0])
        if positions.size < need:
            return None
        flip = np.uint64(0)
        for pos in rng.choice(positions, size=need, replace=False):
            flip |= np.uint64(1) << np.uint64(pos)
        cand ^= flip
        forbidden |= flip
        budget -= need
    return None


def _sequential(num_users: int, n: int, seed: int, existing: np.ndarray | None, progress: Progress | None,
                first_candidate: Callable[[_Pool, np.random.Generator], np.uint64],
                search: Callable[[np.ndarray, np.uint64, int, np.random.Generator], np.uint64 | None],
                label: str) -> np.ndarray:
    base = _check(num_users, n, existing)
    rng = np.random.default_rng(seed)
    pool = _Pool(base, base.size + num_users)
    start = pool.size
    if num_users and pool.size == 0:
        pool.add(_random_code(rng, n))
    step = max(1, num_users // 100)
    while pool.size - start < num_users:
        k = pool.starting_budget(n)
        found = None
        while found is None and k < n:
            found = search(pool.view, first_candidate(pool, rng), k, rng)
            if found is None:
                k += 1
        if found is None:
            raise RuntimeError("no further unique watermark found")
        pool.add(found)
        done = pool.size - start
        if done % step == 0:
            report(progress, done / num_users, f"{label}: {done:,}/{num_users:,} users")
    return pool.view[start:].copy()


def select_absta(num_users: int, n: int = 64, seed: int = 0, existing: np.ndarray | None = None, depth: int = 4,
                 progress: Progress | None = None, **_: object) -> np.ndarray:
    """A-BSTA codes (packed ``(num_users,)``), extending ``existing`` if given. Depth 4 is the lab's default (the
    official code's 8 stalls after about 80 users on CPU; see the spec)."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0:
        raise ValueError("depth must be a non-negative integer")
    return _sequential(num_users, n, seed, existing, progress,
                       lambda _pool, rng: _random_code(rng, n),
                       lambda pool, cand, k, rng: bsta(pool, int(cand), int(depth), k, n, rng), "A-BSTA")


def select_nrg(num_users: int, n: int = 64, seed: int = 0, existing: np.ndarray | None = None,
               progress: Progress | None = None, **_: object) -> np.ndarray:
    """NRG codes (packed ``(num_users,)``), extending ``existing`` if given."""
    return _sequential(num_users, n, seed, existing, progress,
                       lambda pool, _rng: ~pool.codes[0] & full_mask(n),
                       lambda pool, cand, k, rng: _nrg_one(pool, cand, k, n, rng), "NRG")


@dataclass(frozen=True)
class Strategy:
    """A selection strategy: ``strategy(num_users, n=, seed=, existing=, depth=, progress=)`` calls ``fn`` (packed
    codes ``(num_users,)``). ``max_users``: what the lab offers interactively (a cached job beyond a few thousand);
    ``sequential``: each code is chosen given all earlier ones (cost grows superlinearly; a longer pool's prefix is
    the shorter pool, so pools are cached)."""

    name: str
    fn: Callable[..., np.ndarray]
    description: str
    max_users: int
    sequential: bool = True

    def __call__(self, num_users: int, **kwargs: object) -> np.ndarray:
        return self.fn(num_users, **kwargs)


STRATEGIES: Registry[Strategy] = Registry("watermark selection strategy")
STRATEGIES.add("absta", Strategy("absta", select_absta, "A-BSTA (the paper's selection, maximises the bounds)", 10_000),
               label="A-BSTA", kind="ours", color="#2ca02c", about="the paper's selection, maximises the bounds")
STRATEGIES.add("random", Strategy("random", select_random, "uniform random unique codes (baseline)", 10_000_000,
                                  sequential=False),
               label="Random", kind="baseline", color="#7f7f7f", about="uniform random unique codes")
STRATEGIES.add("nrg", Strategy("nrg", select_nrg, "non-redundant guess (baseline)", 10_000),
               label="NRG", kind="baseline", color="#9467bd", about="non-redundant guess")
ALIASES = {"a-bsta": "absta", "abst": "absta", "bsta": "absta"}


def get_method(name: str) -> Strategy:
    """Selection strategy by name (case-insensitive; ``abst``/``a-bsta`` accepted); the InputError lists valid names."""
    return STRATEGIES.get(ALIASES.get(name.strip().lower(), name))


def select(strategy: str, num_users: int, n: int = 64, seed: int = 0, existing: np.ndarray | None = None,
           depth: int = 4, progress: Progress | None = None) -> np.ndarray:
    """Packed codes of ``num_users`` new users by ``strategy``."""
    return get_method(strategy)(num_users, n=n, seed=seed, existing=existing, depth=depth, progress=progress)


# --------------------------------------------------------------------------------------------- pool statistics
@dataclass(frozen=True)
class PoolStats:
    """Pairwise bitwise accuracies of a pool: the maximum (the bounds' alpha_max over users), the minimum, per-user
    alpha_min/alpha_max ``(N,)``, and a histogram over all pairs (``counts[k]`` pairs with k agreeing bits)."""

    n: int
    num_users: int
    max_ba: float
    min_ba: float
    alpha_min: np.ndarray
    alpha_max: np.ndarray
    counts: np.ndarray
    sampled_pairs: bool
    seconds: float


def pool_stats(packed: np.ndarray, n: int, max_exact: int = 20_000, sample_rows: int = 2_000,
               seed: int = 0) -> PoolStats:
    """Exact pairwise statistics up to ``max_exact`` users (chunked XOR + popcount); beyond, ``sample_rows`` users
    against everyone (then ``max_ba`` is a lower estimate and ``sampled_pairs`` is True)."""
    t = time.perf_counter()
    p = np.asarray(packed, dtype=np.uint64).reshape(-1)
    N = p.size
    if N < 2:
        raise ValueError("at least two watermarks are needed for pairwise statistics")
    rows = np.arange(N) if N <= max_exact else np.sort(np.random.default_rng(seed).choice(N, sample_rows, False))
    counts = np.zeros(n + 1, np.int64)
    amin = np.full(rows.size, n, np.int64)
    amax = np.zeros(rows.size, np.int64)
    chunk = max(1, 4_000_000 // N)
    for s in range(0, rows.size, chunk):
        r = rows[s:s + chunk]
        matches = n - np.bitwise_count(p[r][:, None] ^ p[None, :]).astype(np.int64)
        matches[np.arange(r.size), r] = -1  # exclude self
        amax[s:s + r.size] = matches.max(axis=1)
        m2 = np.where(matches < 0, n + 1, matches)
        amin[s:s + r.size] = m2.min(axis=1)
        if N <= max_exact:  # each pair once: columns after the row
            mask = np.arange(N)[None, :] > r[:, None]
            counts += np.bincount(matches[mask], minlength=n + 1)[: n + 1]
        else:
            counts += np.bincount(matches[matches >= 0], minlength=n + 1)[: n + 1]
    return PoolStats(n=n, num_users=N, max_ba=float(amax.max() / n), min_ba=float(amin.min() / n),
                     alpha_min=amin / n, alpha_max=amax / n, counts=counts, sampled_pairs=N > max_exact,
                     seconds=time.perf_counter() - t)


def max_pairwise_accuracy(bits_or_packed: np.ndarray, n: int | None = None) -> float:
    """Largest bitwise accuracy between two distinct watermarks (bits ``(N, n)`` or packed ``(N,)`` with ``n``)."""
    a = np.asarray(bits_or_packed)
    if a.ndim == 2:
        n = a.shape[1]
        a = pack_bits(a)
    if n is None:
        raise ValueError("n is needed for packed codes")
    return pool_stats(a, n).max_ba
