"""The online-convolution engines of FutureFill, their cost model and the method table.

For every filter ``phi`` the online convolution ``y_t = sum_{j=0}^{t} u_{t-j} phi_j`` is computed token by token
(``u_{t+1}`` may depend on ``y_t``). The four methods (the engines of the first three are the registry
:data:`ENGINES`; all four are ``futurefill.METHODS``):

- ``naive``: every step takes the inner product of the whole history with the filter: ``O(L^2)`` multiply-adds.
- ``epoched`` (paper: Epoched-FutureFill): a cache ``C`` of the next ``K`` outputs; ``y_t = C_t + (direct sum over the
  <= K inputs of the current epoch)``; every ``K`` steps one FutureFill over all inputs so far refills ``C``.
  ``O(L^2 log L / K + K L)``; default ``K = ceil(sqrt(L log2 L))`` (the paper's order; any K is exact).
- ``continuous`` (paper: Continuous-FutureFill): at step ``t`` (``t`` inputs seen, 1-based), with ``2^k`` the largest
  power of two dividing ``t``, one FutureFill adds the contribution of the last ``2^k`` inputs to the next ``2^k``
  cache slots (a binary carry); ``y_t = C_t + u_t phi_0``. ``O(L log^2 L)`` total.
- ``prompted``: one FutureFill of the whole prompt (length P) fills the next ``K`` slots (K = tokens to generate), then
  continuous FutureFill runs over the generated tokens only. The cache holds ``O(K)`` numbers, whatever P is.

The primitive ``FutureFill(v, w)``: the contribution of a finished segment ``v`` (length m) to the next ``n`` outputs,
i.e. entries ``m .. m+n-1`` of the linear convolution ``v * w`` (0-indexed), by one real FFT of size
``>= m + n - 1`` rounded up to a power of two (entries past the needed range may wrap around; they never land on the
needed range, see :func:`futurefill`).

Cost model (what ``macs`` counts; deterministic, unlike wall time). One "multiply-add" (MAC) is one real
multiply-accumulate. A real FFT or inverse real FFT of size ``n`` (a power of two) counts ``n log2 n`` MACs (a radix-2
complex transform of size n/2 has (n/4) log2(n/2) butterflies of about 4 real MACs, plus the real-split pass; we round
to ``n log2 n``). A pointwise product of two half spectra counts ``4 (n/2 + 1)``; accumulating an output into the cache
counts 1 per entry; a direct inner product counts 1 per term. Each FutureFill call with ``F`` filters costs one forward
FFT of the input segment, ``F`` products, ``F`` inverse FFTs and the cache additions. Filter spectra are computed once
per FFT size and counted once (``setup_macs``). Small blocks may be done directly instead of by FFT
(``direct_below``); their cost is then ``F m^2`` MACs.

The model that generates with these engines, the comparison and the benchmark are in
:mod:`backend.generation.futurefill.futurefill`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...errors import InputError
from ...registry import Registry

MAX_TOTAL_LENGTH = 1 << 17  # prompt + generated tokens

# ------------------------------------------------------------------------------------------------------ cost model
def fft_macs(n: int) -> int:
    """MACs of one real FFT (or inverse) of size ``n`` (power of two) in the cost model: ``n log2 n``."""
    return 0 if n < 2 else n * int(math.log2(n))


def fftconv_macs(n: int, n_filters: int, n_out: int) -> int:
    """MACs of one FutureFill call: forward FFT of the segment, per filter a spectrum product (4 (n/2+1)), an inverse
    FFT and ``n_out`` cache additions. Filter spectra are precomputed (see ``setup_macs``)."""
    return fft_macs(n) + n_filters * (4 * (n // 2 + 1) + fft_macs(n) + n_out)


def next_pow2(n: int) -> int:
    return 1 << max(0, int(n - 1).bit_length())


# ------------------------------------------------------------------------------------------------------ primitive
def futurefill(v: np.ndarray, w: np.ndarray, n_future: int) -> np.ndarray:
    """The FutureFill primitive: the contribution of a finished segment ``v`` (length m, the inputs at positions
    ``s .. s+m-1``) to the outputs at positions ``s+m .. s+m+n_future-1``, for every filter in ``w``.

    Args:
        v: ``[m]`` input segment.
        w: ``[F, >= m + n_future]`` filters (``w[:, j]`` multiplies an input ``j`` steps back).
        n_future: number of future outputs wanted.
    Returns:
        ``[F, n_future]``: entries ``m .. m + n_future - 1`` of the linear convolution ``v * w``.

    One real FFT of size ``N = next_pow2(m + n_future)``. The linear convolution has ``2m + n_future - 1`` entries;
    with a cyclic convolution of size N >= m + n_future - 1, entry ``n >= N`` wraps onto ``n - N <= m - 2``, which is
    outside the wanted range ``[m, m + n_future)``.
    """
    v = np.asarray(v, dtype=np.float64)
    w = np.atleast_2d(np.asarray(w, dtype=np.float64))
    m = v.shape[0]
    n = next_pow2(m + n_future)
    spec = np.fft.rfft(v, n) * np.fft.rfft(w[:, : m + n_future], n)
    return np.fft.irfft(spec, n)[:, m : m + n_future]


# -------------------------------------------------------------------------------------------------------- engines
@dataclass
class FillEvent:
    """One cache refill: inputs ``src`` = [start, stop) were FutureFilled into the slots ``dst`` = [start, stop) at the
    step when ``step`` inputs had been seen (1-based), by an FFT of size ``fft_size`` (0 = done directly)."""

    step: int
    src: tuple[int, int]
    dst: tuple[int, int]
    fft_size: int


class OnlineConv:
    """Base class of the online-convolution engines. ``push(u_t)`` -> ``y_t`` (``[F]``), in order t = 0, 1, ...

    Attributes: ``macs`` (per the cost model), ``setup_macs`` (filter spectra), ``fft_calls``, ``events`` (if
    ``record``), ``peak_cache`` (state the engine holds, in floats per filter: the stored inputs plus the cache slots;
    naive ``T``, epoched ``T + K``, continuous ``2T`` where T is the horizon of the engine).
    """

    name = "base"

    def __init__(self, filters: np.ndarray, record: bool = False):
        self.phi = np.ascontiguousarray(np.atleast_2d(np.asarray(filters, dtype=np.float64)))
        self.n_filters, self.length = self.phi.shape
        self.t = 0  # inputs seen so far
        self.macs = 0
        self.setup_macs = 0
        self.fft_calls = 0
        self.record = record
        self.events: list[FillEvent] = []
        self._spec: dict[int, np.ndarray] = {}
        self.peak_cache = 0

    def _filter_spectrum(self, n: int, width: int) -> np.ndarray:
        """rfft of ``phi[:, :width]`` at size n, cached by (n, width) (counted once in ``setup_macs``)."""
        key = n * (MAX_TOTAL_LENGTH * 4) + width
        spec = self._spec.get(key)
        if spec is None:
            spec = np.fft.rfft(self.phi[:, :width], n)
            self._spec[key] = spec
            self.setup_macs += self.n_filters * fft_macs(n)
        return spec

    def _fill(self, seg: np.ndarray, n_future: int, width: int, direct_ok: bool) -> np.ndarray:
        """FutureFill of ``seg`` into the next ``n_future`` slots, counting MACs. ``width`` = filter taps needed."""
        m = seg.shape[0]
        if direct_ok:
            idx = _toeplitz_index(m, n_future)  # idx[q, p] = m + q - p
            self.macs += self.n_filters * m * n_future
            return self.phi[:, idx] @ seg
        n = next_pow2(m + n_future)
        spec = self._filter_spectrum(n, width)
        self.fft_calls += 1
        self.macs += fftconv_macs(n, self.n_filters, n_future)
        return np.fft.irfft(np.fft.rfft(seg, n) * spec, n)[:, m : m + n_future]

    def push(self, u: float) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


@lru_cache(maxsize=64)
def _toeplitz_index(m: int, n_future: int) -> np.ndarray:
    q = np.arange(n_future)[:, None]
    p = np.arange(m)[None, :]
    return m + q - p


class NaiveConv(OnlineConv):
    """``y_t = sum_{i<=t} u_i phi_{t-i}`` by one inner product over the whole history per step (``F (t+1)`` MACs)."""

    name = "naive"

    def __init__(self, filters: np.ndarray, record: bool = False):
        super().__init__(filters, record)
        self.rev = np.ascontiguousarray(self.phi[:, ::-1])
        self.u = np.zeros(self.length)

    def push(self, u: float) -> np.ndarray:
        t = self.t
        self.u[t] = u
        self.t += 1
        self.macs += self.n_filters * (t + 1)
        self.peak_cache = self.t
        return self.rev[:, self.length - 1 - t :] @ self.u[: t + 1]


class ContinuousConv(OnlineConv):
    """Continuous FutureFill (binary carry). After the ``t``-th input (1-based), with ``m`` the largest power of two
    dividing t, the last m inputs are FutureFilled into the next m cache slots. ``direct_below``: blocks with
    ``m <= direct_below`` are added directly (``F m^2`` MACs) instead of by FFT; 0 = always FFT."""

    name = "continuous"

    def __init__(self, filters: np.ndarray, record: bool = False, direct_below: int = 0, horizon: int | None = None):
        super().__init__(filters, record)
        self.horizon = self.length if horizon is None else int(horizon)
        self.u = np.zeros(self.horizon)
        self.cache = np.zeros((self.n_filters, self.horizon))
        self.direct_below = int(direct_below)
        self.phi0 = self.phi[:, 0].copy()

    def push(self, u: float) -> np.ndarray:
        t = self.t
        self.u[t] = u
        y = self.cache[:, t] + u * self.phi0
        self.macs += self.n_filters
        self.t = t + 1
        n_seen = self.t
        if n_seen < self.horizon:
            m = n_seen & -n_seen
            n_future = min(m, self.horizon - n_seen)
            seg = self.u[n_seen - m : n_seen]
            out = self._fill(seg, n_future, 2 * m, direct_ok=m <= self.direct_below)
            self.cache[:, n_seen : n_seen + n_future] += out
            if self.record:
                n = 0 if m <= self.direct_below else next_pow2(m + n_future)
                self.events.append(FillEvent(n_seen, (n_seen - m, n_seen), (n_seen, n_seen + n_future), n))
        # state: the inputs (the pending carries need them) and the cache slots, both ``horizon`` long
        self.peak_cache = 2 * self.horizon
        return y


class EpochedConv(OnlineConv):
    """Epoched FutureFill with epoch length ``K``: ``y_t = C_t + sum_{i = epoch start}^{t} u_i phi_{t-i}``; when an
    epoch ends, one FutureFill over all inputs so far refills the K-slot cache."""

    name = "epoched"

    def __init__(self, filters: np.ndarray, epoch: int | None = None, record: bool = False):
        super().__init__(filters, record)
        self.K = int(epoch) if epoch else default_epoch(self.length)
        if self.K < 1:
            raise InputError(f"The epoch length must be at least 1 (got {self.K}).")
        self.u = np.zeros(self.length)
        self.cache = np.zeros((self.n_filters, self.K))
        self.rev = np.ascontiguousarray(self.phi[:, ::-1])

    def push(self, u: float) -> np.ndarray:
        t = self.t
        self.u[t] = u
        e = (t // self.K) * self.K  # start of the current epoch
        y = self.cache[:, t - e] + self.rev[:, self.length - 1 - (t - e) :] @ self.u[e : t + 1]
        self.macs += self.n_filters * (t - e + 2)
        self.t = t + 1
        if self.t % self.K == 0 and self.t < self.length:
            n_future = min(self.K, self.length - self.t)
            self.cache[:, :n_future] = self._fill(self.u[: self.t], n_future, self.t + n_future, direct_ok=False)
            self.cache[:, n_future:] = 0.0
            if self.record:
                n = next_pow2(self.t + n_future)
                self.events.append(FillEvent(self.t, (0, self.t), (self.t, self.t + n_future), n))
        self.peak_cache = max(self.peak_cache, self.t + self.K)
        return y


def default_epoch(length: int) -> int:
    """The paper's epoch length order ``K = sqrt(L log2 L)`` (rounded up)."""
    return max(1, math.ceil(math.sqrt(length * max(1.0, math.log2(max(length, 2))))))


def continuous_macs(length: int, n_filters: int = 1, direct_below: int = 0) -> int:
    """Closed-form MAC count of continuous FutureFill over ``length`` tokens (no model needed; equals the engine's
    count). Used for the growth claim at any length."""
    total = n_filters * length
    for n_seen in range(1, length):
        m = n_seen & -n_seen
        n_future = min(m, length - n_seen)
        if m <= direct_below:
            total += n_filters * m * n_future
        else:
            total += fftconv_macs(next_pow2(m + n_future), n_filters, n_future)
    return total


def naive_macs(length: int, n_filters: int = 1) -> int:
    """``F * L (L + 1) / 2``: the naive engine's count."""
    return n_filters * length * (length + 1) // 2


# ------------------------------------------------------------------------------------------------------- registry
def naive_engine(filters: np.ndarray, *, epoch: int | None = None, direct_below: int = 0,
                 record: bool = False) -> NaiveConv:
    """The naive engine over ``filters`` ``[F, T]`` (``epoch`` and ``direct_below`` do not apply)."""
    return NaiveConv(filters, record=record)


def epoched_engine(filters: np.ndarray, *, epoch: int | None = None, direct_below: int = 0,
                   record: bool = False) -> EpochedConv:
    """Epoched FutureFill over ``filters`` ``[F, T]`` with epoch length ``epoch`` (None: :func:`default_epoch`)."""
    return EpochedConv(filters, epoch=epoch, record=record)


def continuous_engine(filters: np.ndarray, *, epoch: int | None = None, direct_below: int = 0,
                      record: bool = False) -> ContinuousConv:
    """Continuous FutureFill over ``filters`` ``[F, T]``; carry blocks of size <= ``direct_below`` done directly."""
    return ContinuousConv(filters, record=record, direct_below=direct_below)


# the methods that are one engine run over every token
ENGINES: Registry[Callable[..., OnlineConv]] = Registry("FutureFill engine")
ENGINES.add("naive", naive_engine, label="Naive online conv.", kind="baseline", color="#7f7f7f",
            about="one inner product over the whole history per token: O(L^2)")
ENGINES.add("epoched", epoched_engine, label="Epoched FutureFill", kind="ours", color="#1f77b4",
            about="a K-slot cache refilled by one FutureFill every K tokens: O(L^2 log L / K + K L)")
ENGINES.add("continuous", continuous_engine, label="Continuous FutureFill", kind="ours", color="#d62728",
            about="binary-carry FutureFills of the last 2^k inputs: O(L log^2 L)")


def make_engine(method: str, filters: np.ndarray, *, epoch: int | None = None, direct_below: int = 0,
                record: bool = False) -> OnlineConv:
    """A fresh engine of one of :data:`ENGINES` over ``filters`` ``[F, T]``."""
    return ENGINES.get(method)(filters, epoch=epoch, direct_below=direct_below, record=record)


def online_convolve(u: np.ndarray, filters: np.ndarray, method: str, *, epoch: int | None = None,
                    direct_below: int = 0, record: bool = False) -> tuple[np.ndarray, OnlineConv]:
    """Run one engine over a fixed input sequence (no model in the loop): returns ``[F, T]`` outputs and the engine
    (for its counters). ``method`` in naive / epoched / continuous."""
    u = np.asarray(u, dtype=np.float64).ravel()
    phi = np.atleast_2d(np.asarray(filters, dtype=np.float64))[:, : u.shape[0]]
    eng = make_engine(method, phi, epoch=epoch, direct_below=direct_below, record=record)
    out = np.empty((phi.shape[0], u.shape[0]))
    for t in range(u.shape[0]):
        out[:, t] = eng.push(u[t])
    return out, eng


__all__ = [
    "ENGINES", "MAX_TOTAL_LENGTH", "ContinuousConv", "EpochedConv", "FillEvent", "NaiveConv", "OnlineConv",
    "continuous_engine", "continuous_macs", "default_epoch", "epoched_engine", "fft_macs", "fftconv_macs",
    "futurefill", "make_engine", "naive_engine", "naive_macs", "next_pow2", "online_convolve",
]
