"""FutureFill: exact fast autoregressive generation from convolutional sequence models.

Paper: Agarwal, Chen, Dogariu, Shah, Strauss, Feinberg, Suo, Bartlett, Hazan, "FutureFill: Fast Generation from
Convolutional Sequence Models" (ICLR 2026; arXiv 2410.03766; project page dshah.io/futurefill).

A convolutional sequence model (STU, Hyena-style long convolutions) computes, for every filter ``phi`` of the model,
the online convolution ``y_t = sum_{j=0}^{t} u_{t-j} phi_j`` (0-indexed here; the paper writes it 1-indexed). During
generation ``u_{t+1}`` depends on ``y_t``, so the whole convolution cannot be done by one FFT. This module implements,
exactly, four ways to run that online convolution (engines) and a small model to generate from:

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

The model (:class:`ConvSeqModel`): ``F`` filters (spectral STU filters, i.e. the top eigenvectors of the Hankel matrix
``Z_ij = 2 / ((i+j)^3 - (i+j))`` scaled by their eigenvalue to the 1/4, as in the STU paper; or random decaying
filters), a readout ``u_{t+1} = s tanh((w . y_t + a u_t + b) / s) + noise * eps_{t+1}`` with a fixed, seeded noise
sequence (so every engine sees the same draws). The readout can be fitted by ridge regression to a user's series
(teacher forcing; one FFT convolution gives all features). What the paper has and this module leaves out: deep
multi-layer STU/Hyena stacks, MLP blocks and GPU kernels; the online-convolution engines are exactly those of the paper.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..errors import InputError
from ..runtime import Progress, report

METHODS: tuple[str, ...] = ("naive", "epoched", "continuous", "prompted")
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


# ------------------------------------------------------------------------------------------------------- filters
def _hankel_entry(s: np.ndarray) -> np.ndarray:
    """``Z_ij`` as a function of ``s = i + j`` (1-based i, j, so s >= 2): ``2 / (s^3 - s)``."""
    s = s.astype(np.float64)
    return 2.0 / (s**3 - s)


@lru_cache(maxsize=8)
def _spectral_filters_cached(length: int, n_filters: int) -> np.ndarray:
    if length <= 1024:
        idx = np.arange(1, length + 1)
        z = _hankel_entry(idx[:, None] + idx[None, :])
        vals, vecs = np.linalg.eigh(z)
        vals, vecs = vals[::-1][:n_filters], vecs[:, ::-1][:, :n_filters]
    else:  # Lanczos with an FFT Hankel matvec: O(L log L) per product instead of an O(L^3) dense eigensolve
        from scipy.sparse.linalg import LinearOperator, eigsh

        h = _hankel_entry(np.arange(2, 2 * length + 1))  # h[s-2] = Z entry for i + j = s
        nfft = next_pow2(3 * length)
        h_spec = np.fft.rfft(h, nfft)

        def matvec(v: np.ndarray) -> np.ndarray:
            v = np.asarray(v, dtype=np.float64).ravel()
            # (Z v)_i = sum_j h[i + j] v_j = (h * reversed v)[i + L - 1]
            full = np.fft.irfft(h_spec * np.fft.rfft(v[::-1], nfft), nfft)
            return full[length - 1 : 2 * length - 1]

        op = LinearOperator((length, length), matvec=matvec, dtype=np.float64)
        v0 = np.ones(length) / math.sqrt(length)
        vals, vecs = eigsh(op, k=n_filters, which="LA", tol=1e-13, v0=v0, ncv=min(length, max(4 * n_filters, 40)))
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
    vals = np.clip(vals, 0.0, None)
    # a fixed sign convention (first nonzero entry positive) so filters are reproducible across solvers
    signs = np.sign(vecs[np.argmax(np.abs(vecs) > 1e-12 * np.abs(vecs).max(axis=0), axis=0), np.arange(vecs.shape[1])])
    signs[signs == 0] = 1.0
    filt = (vecs * signs * vals**0.25).T.copy()
    filt.setflags(write=False)
    return filt


def spectral_filters(length: int, n_filters: int = 8) -> np.ndarray:
    """STU spectral filters: the top ``n_filters`` eigenvectors of the ``length x length`` Hankel matrix
    ``Z_ij = 2 / ((i+j)^3 - (i+j))``, each scaled by its eigenvalue ** 0.25. Returns ``[n_filters, length]`` float64."""
    if not 1 <= n_filters <= 64:
        raise InputError(f"The number of filters must be between 1 and 64 (got {n_filters}).")
    if not 2 <= length <= MAX_TOTAL_LENGTH:
        raise InputError(f"The filter length must be between 2 and {MAX_TOTAL_LENGTH} (got {length}).")
    return np.array(_spectral_filters_cached(int(length), int(n_filters)))


def random_filters(length: int, n_filters: int = 8, seed: int = 0, decay: float = 0.75) -> np.ndarray:
    """Random long filters ``phi_k[j] = N(0, 1) / (1 + j) ** decay``: ``[n_filters, length]`` float64."""
    if not 1 <= n_filters <= 64:
        raise InputError(f"The number of filters must be between 1 and 64 (got {n_filters}).")
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_filters, length)) / (1.0 + np.arange(length)) ** decay


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


# ---------------------------------------------------------------------------------------------------------- model
@dataclass
class ConvSeqModel:
    """A one-layer convolutional sequence model over a real 1-D series.

    ``filters``: ``[F, L_max]``; ``w``: ``[F]`` readout weights; next value
    ``u_{t+1} = scale * tanh((w . y_t + a * u_t + b) / scale) + noise * eps_{t+1}`` with ``y_t = (u * filters)_t``.
    """

    filters: np.ndarray
    w: np.ndarray
    a: float = 0.0
    b: float = 0.0
    scale: float = 1.0
    noise: float = 0.1
    kind: str = "spectral"
    mean: float = 0.0  # the series is modelled after subtracting ``mean`` and dividing by ``std``
    std: float = 1.0

    @property
    def n_filters(self) -> int:
        return int(self.filters.shape[0])

    @property
    def max_length(self) -> int:
        return int(self.filters.shape[1])

    def next_value(self, y: np.ndarray, u: float, eps: float) -> float:
        z = float(self.w @ y) + self.a * u + self.b
        return self.scale * math.tanh(z / self.scale) + self.noise * eps


def make_model(
    length: int,
    n_filters: int = 8,
    kind: str = "spectral",
    seed: int = 0,
    gain: float = 0.9,
    noise: float = 0.3,
) -> ConvSeqModel:
    """A random model whose total gain ``sum_k |w_k| ||phi_k||_1 + |a|`` equals ``gain`` (< 1 keeps the generation
    contractive, so rounding differences between engines cannot grow along the sequence)."""
    if kind == "spectral":
        filt = spectral_filters(length, n_filters)
    elif kind == "random":
        filt = random_filters(length, n_filters, seed=seed + 1)
    else:
        raise InputError(f"Unknown filter kind {kind!r}; valid kinds: spectral, random.")
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(n_filters)
    a = 0.5
    l1 = np.abs(w) @ np.abs(filt).sum(axis=1) + abs(a)
    w, a = w * gain / l1, a * gain / l1
    return ConvSeqModel(filters=filt, w=w, a=float(a), b=0.0, scale=1.0, noise=noise, kind=kind)


def fit_model(
    series: np.ndarray,
    length: int,
    n_filters: int = 8,
    kind: str = "spectral",
    ridge: float = 1e-3,
    seed: int = 0,
) -> tuple[ConvSeqModel, dict[str, float]]:
    """Fit the readout to a user's series by ridge regression with teacher forcing (one FFT convolution computes all
    features ``y_t``; target ``u_{t+1}``, on the standardised series). Returns the model (filters of length
    ``length``) and fit statistics (train RMSE of the one-step prediction, in the series' units, and R^2)."""
    x = np.asarray(series, dtype=np.float64)
    if x.shape[0] < 8:
        raise InputError("The series needs at least 8 values to fit the model.")
    mean, std = float(x.mean()), float(x.std())
    z = (x - mean) / std
    base = make_model(length, n_filters, kind, seed=seed, noise=0.0)
    n = z.shape[0]
    feats = full_convolution(z, base.filters[:, :n])  # [F, n]
    design = np.column_stack([feats[:, :-1].T, z[:-1], np.ones(n - 1)])
    target = z[1:]
    gram = design.T @ design + ridge * (n - 1) * np.eye(design.shape[1])
    coef = np.linalg.solve(gram, design.T @ target)
    resid = target - design @ coef
    rmse = float(np.sqrt(np.mean(resid**2)))
    r2 = float(1.0 - np.mean(resid**2) / max(np.var(target), 1e-300))
    scale = float(max(3.0, 1.5 * np.abs(z).max()))
    model = ConvSeqModel(
        filters=base.filters,
        w=coef[:n_filters],
        a=float(coef[n_filters]),
        b=float(coef[n_filters + 1]),
        scale=scale,
        noise=rmse,
        kind=kind,
        mean=mean,
        std=std,
    )
    return model, {"train_rmse": rmse * std, "r2": r2, "ridge": ridge}


def full_convolution(u: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """Offline causal convolution (one FFT): ``[F, T]`` with ``y_t = sum_{i<=t} u_i phi_{t-i}``."""
    u = np.asarray(u, dtype=np.float64)
    T = u.shape[0]
    n = next_pow2(2 * T)
    return np.fft.irfft(np.fft.rfft(u, n) * np.fft.rfft(np.atleast_2d(filters)[:, :T], n), n)[:, :T]


# ----------------------------------------------------------------------------------------------------- generation
@dataclass
class GenerationResult:
    """Output of :func:`generate`. ``u``: ``[P + n_new]`` the prompt then the generated values (model units);
    ``y``: ``[F, P + n_new]`` the convolution outputs; ``macs``: decode multiply-adds (cost model) including the
    prompt; ``setup_macs``: filter spectra; ``cache_floats``: peak floats of state the engine holds per filter."""

    method: str
    u: np.ndarray
    y: np.ndarray
    macs: int
    setup_macs: int
    fft_calls: int
    seconds: float
    cache_floats: int
    prompt_len: int
    events: list[FillEvent] = field(default_factory=list)
    epoch: int | None = None


def _check_lengths(prompt_len: int, n_new: int, model: ConvSeqModel) -> None:
    if prompt_len < 1:
        raise InputError("The prompt needs at least one value.")
    if n_new < 1:
        raise InputError("Generate at least one token.")
    total = prompt_len + n_new
    if total > MAX_TOTAL_LENGTH:
        raise InputError(f"Prompt + generated length is {total}; the limit is {MAX_TOTAL_LENGTH}.")
    if total > model.max_length:
        raise InputError(f"The model's filters have length {model.max_length}; prompt + generated = {total}.")


def generate(
    model: ConvSeqModel,
    prompt: np.ndarray,
    n_new: int,
    method: str = "continuous",
    *,
    epoch: int | None = None,
    direct_below: int = 0,
    seed: int = 0,
    record: bool = False,
    progress: Progress | None = None,
) -> GenerationResult:
    """Generate ``n_new`` values after ``prompt`` (in model units) with one of :data:`METHODS`.

    Every method computes the same numbers (up to float rounding): the prompt is fed as given (teacher forcing), then
    ``u_{t+1} = model.next_value(y_t, u_t, eps_{t+1})`` with ``eps`` drawn from ``seed`` once for all methods.
    ``naive``/``epoched``/``continuous`` push the prompt through the online engine token by token; ``prompted``
    prefills the prompt with one FFT (outputs on the prompt plus its contribution to the next ``n_new`` slots) and
    runs continuous FutureFill on the generated tokens only.
    """
    if method not in METHODS:
        raise InputError(f"Unknown method {method!r}; valid methods: {', '.join(METHODS)}.")
    prompt = np.asarray(prompt, dtype=np.float64).ravel()
    P = int(prompt.shape[0])
    _check_lengths(P, n_new, model)
    T = P + n_new
    phi = model.filters[:, :T]
    eps = np.random.default_rng(seed).standard_normal(n_new)
    u = np.empty(T)
    u[:P] = prompt
    y = np.empty((model.n_filters, T))
    every = max(1, T // 50)
    start = time.perf_counter()
    events: list[FillEvent] = []

    if method == "prompted":
        # prefill: y on the prompt and the prompt's contribution to the n_new future slots, one FFT
        n = next_pow2(2 * P + n_new - 1)
        spec_phi = np.fft.rfft(phi, n)
        full = np.fft.irfft(np.fft.rfft(prompt, n) * spec_phi, n)
        y[:, :P] = full[:, :P]
        macs = fftconv_macs(n, model.n_filters, T)
        setup = model.n_filters * fft_macs(n)
        if record:
            events.append(FillEvent(P, (0, P), (P, T), n))
        engine = ContinuousConv(phi[:, :n_new], record=record, direct_below=direct_below)
        engine.cache[:] = full[:, P:T]  # the prompt's contribution to the n_new future slots: all we keep of it
        del full
        for s in range(n_new):
            prev = P - 1 + s
            u[P + s] = model.next_value(y[:, prev], u[prev], eps[s])
            y[:, P + s] = engine.push(u[P + s])
            if progress is not None and s % every == 0:
                report(progress, (s + 1) / n_new, f"prompted: token {s + 1}/{n_new}")
        if record:
            events.extend(FillEvent(e.step + P, (e.src[0] + P, e.src[1] + P), (e.dst[0] + P, e.dst[1] + P),
                                    e.fft_size) for e in engine.events)
        macs += engine.macs
        setup += engine.setup_macs
        fft_calls = 1 + engine.fft_calls
        cache_floats = engine.peak_cache  # 2 n_new: cache slots + generated inputs; independent of P
    else:
        if method == "naive":
            eng: OnlineConv = NaiveConv(phi, record=record)
        elif method == "epoched":
            eng = EpochedConv(phi, epoch=epoch, record=record)
        else:
            eng = ContinuousConv(phi, record=record, direct_below=direct_below)
        for t in range(T):
            if t >= P:
                u[t] = model.next_value(y[:, t - 1], u[t - 1], eps[t - P])
            y[:, t] = eng.push(u[t])
            if progress is not None and t % every == 0:
                report(progress, (t + 1) / T, f"{method}: token {t + 1}/{T}")
        macs, setup, fft_calls = eng.macs, eng.setup_macs, eng.fft_calls
        cache_floats = eng.peak_cache
        events = eng.events
        epoch = getattr(eng, "K", None)
    seconds = time.perf_counter() - start
    report(progress, 1.0, f"{method}: done")
    return GenerationResult(
        method=method,
        u=u,
        y=y,
        macs=int(macs),
        setup_macs=int(setup),
        fft_calls=int(fft_calls),
        seconds=seconds,
        cache_floats=int(cache_floats),
        prompt_len=P,
        events=events,
        epoch=epoch if method == "epoched" else None,
    )


def online_convolve(u: np.ndarray, filters: np.ndarray, method: str, *, epoch: int | None = None,
                    direct_below: int = 0, record: bool = False) -> tuple[np.ndarray, OnlineConv]:
    """Run one engine over a fixed input sequence (no model in the loop): returns ``[F, T]`` outputs and the engine
    (for its counters). ``method`` in naive / epoched / continuous."""
    u = np.asarray(u, dtype=np.float64).ravel()
    phi = np.atleast_2d(np.asarray(filters, dtype=np.float64))[:, : u.shape[0]]
    if method == "naive":
        eng: OnlineConv = NaiveConv(phi, record=record)
    elif method == "epoched":
        eng = EpochedConv(phi, epoch=epoch, record=record)
    elif method == "continuous":
        eng = ContinuousConv(phi, record=record, direct_below=direct_below)
    else:
        raise InputError(f"Unknown engine {method!r}; valid engines: naive, epoched, continuous.")
    out = np.empty((phi.shape[0], u.shape[0]))
    for t in range(u.shape[0]):
        out[:, t] = eng.push(u[t])
    return out, eng


# ------------------------------------------------------------------------------------------------------ comparison
@dataclass
class CompareResult:
    """All methods on one model and prompt: results by method, max abs deviation of ``u`` and ``y`` from naive."""

    results: dict[str, GenerationResult]
    max_err_u: dict[str, float]
    max_err_y: dict[str, float]
    scale_y: float


def compare_methods(
    model: ConvSeqModel,
    prompt: np.ndarray,
    n_new: int,
    methods: tuple[str, ...] = METHODS,
    *,
    epoch: int | None = None,
    direct_below: int = 0,
    seed: int = 0,
    record: bool = False,
    progress: Progress | None = None,
) -> CompareResult:
    """Run every method in ``methods`` (naive first, the reference) and measure their disagreement."""
    methods = tuple(dict.fromkeys(("naive", *methods)))
    res: dict[str, GenerationResult] = {}
    for i, meth in enumerate(methods):
        sub = None if progress is None else (lambda f, msg="", i=i: report(progress, (i + f) / len(methods), msg))
        res[meth] = generate(model, prompt, n_new, meth, epoch=epoch, direct_below=direct_below, seed=seed,
                             record=record, progress=sub)
    ref = res["naive"]
    err_u = {m: float(np.max(np.abs(r.u - ref.u))) for m, r in res.items()}
    err_y = {m: float(np.max(np.abs(r.y - ref.y))) for m, r in res.items()}
    return CompareResult(res, err_u, err_y, float(np.max(np.abs(ref.y))))


# ---------------------------------------------------------------------------------------------------------- bench
@dataclass
class BenchResult:
    """Decode cost vs length. ``rows``: one dict per (method, length) with seconds, macs, setup_macs, fft_calls,
    cache_floats, max_err (vs naive, when naive ran at that length). ``slopes``: fitted log-log slopes of seconds and
    macs vs length per method. ``mac_ratios``: macs(2L) / macs(L) per method."""

    rows: list[dict[str, object]]
    slopes: dict[str, dict[str, float]]
    mac_ratios: dict[str, list[float]]
    lengths: list[int]
    params: dict[str, object]


def loglog_slope(x: list[float] | np.ndarray, y: list[float] | np.ndarray) -> float:
    """Least-squares slope of log y against log x."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    return float(np.polyfit(lx, ly, 1)[0])


def bench(
    lengths: list[int],
    methods: tuple[str, ...] = ("naive", "epoched", "continuous", "prompted"),
    *,
    n_filters: int = 8,
    kind: str = "random",
    prompt_len: int = 16,
    naive_max: int | None = None,
    repeats: int = 1,
    direct_below: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> BenchResult:
    """Generate ``L - prompt_len`` tokens for each total length ``L`` in ``lengths`` with each method; count MACs and
    time (median of ``repeats``). ``naive_max`` skips naive above that length (its time grows as L^2)."""
    lengths = sorted(int(n) for n in lengths)
    if not lengths or lengths[0] <= prompt_len:
        raise InputError(f"Every length must exceed the prompt length {prompt_len}.")
    if lengths[-1] > MAX_TOTAL_LENGTH:
        raise InputError(f"The longest length is {lengths[-1]}; the limit is {MAX_TOTAL_LENGTH}.")
    model = make_model(lengths[-1], n_filters, kind, seed=seed)
    prompt = np.random.default_rng(seed + 7).standard_normal(prompt_len)
    rows: list[dict[str, object]] = []
    jobs = [(L, m) for L in lengths for m in methods if not (m == "naive" and naive_max and L > naive_max)]
    for j, (L, meth) in enumerate(jobs):
        sub_model = ConvSeqModel(model.filters[:, :L], model.w, model.a, model.b, model.scale, model.noise, kind)
        times, res = [], None
        for _ in range(max(1, repeats)):
            res = generate(sub_model, prompt, L - prompt_len, meth, direct_below=direct_below, seed=seed)
            times.append(res.seconds)
        assert res is not None
        rows.append({
            "method": meth, "length": L, "seconds": float(np.median(times)), "macs": res.macs,
            "setup_macs": res.setup_macs, "fft_calls": res.fft_calls, "cache_floats": res.cache_floats,
            "epoch": res.epoch, "_u": res.u,
        })
        report(progress, (j + 1) / len(jobs), f"{meth} at L={L}")
    # errors against naive at the same length
    ref = {r["length"]: r["_u"] for r in rows if r["method"] == "naive"}
    for r in rows:
        u_ref = ref.get(r["length"])
        r["max_err"] = None if u_ref is None else float(np.max(np.abs(r["_u"] - u_ref)))  # type: ignore[operator]
    for r in rows:
        del r["_u"]
    slopes: dict[str, dict[str, float]] = {}
    ratios: dict[str, list[float]] = {}
    for meth in methods:
        sel = [r for r in rows if r["method"] == meth]
        if len(sel) >= 2:
            xs = [r["length"] for r in sel]
            slopes[meth] = {
                "seconds": loglog_slope(xs, [max(float(r["seconds"]), 1e-9) for r in sel]),  # type: ignore[arg-type]
                "macs": loglog_slope(xs, [r["macs"] for r in sel]),  # type: ignore[misc]
            }
            ratios[meth] = [float(b["macs"]) / float(a["macs"]) for a, b in zip(sel, sel[1:])  # type: ignore[arg-type]
                            if b["length"] == 2 * a["length"]]  # type: ignore[operator]
    params = {"n_filters": n_filters, "kind": kind, "prompt_len": prompt_len, "repeats": repeats,
              "direct_below": direct_below, "naive_max": naive_max, "seed": seed}
    return BenchResult(rows, slopes, ratios, lengths, params)


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


# ----------------------------------------------------------------------------------------------------------- series
PRESETS: dict[str, Callable[[int, int], np.ndarray]] = {
    "sines": lambda n, s: (np.sin(2 * np.pi * np.arange(n) / 50) + 0.5 * np.sin(2 * np.pi * np.arange(n) / 13)
                           + 0.1 * np.random.default_rng(s).standard_normal(n)),
    "ar2": lambda n, s: _ar2(n, s),
    "random walk": lambda n, s: np.cumsum(np.random.default_rng(s).standard_normal(n)) * 0.1,
    "random tokens": lambda n, s: np.random.default_rng(s).choice([-1.0, 1.0], size=n),
}


def _ar2(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros(n)
    e = rng.standard_normal(n)
    for t in range(2, n):
        x[t] = 1.6 * x[t - 1] - 0.8 * x[t - 2] + 0.3 * e[t]
    return x


def preset_series(name: str, n: int = 512, seed: int = 0) -> np.ndarray:
    """A named synthetic series of length ``n`` (see :data:`PRESETS`)."""
    try:
        fn = PRESETS[name]
    except KeyError:
        raise InputError(f"Unknown preset {name!r}; valid presets: {', '.join(PRESETS)}.") from None
    return np.asarray(fn(n, seed), dtype=np.float64)


def load_series(data: bytes, max_bytes: int = 5 * 2**20, max_len: int = 1 << 16, min_len: int = 16) -> np.ndarray:
    """Parse an uploaded 1-D series: UTF-8 text, numbers separated by newlines, commas, semicolons or spaces; a CSV with
    a header is accepted if exactly one column is numeric (or the last numeric column is used, with a header row).
    Raises InputError with an actionable message on empty, binary, non-numeric, non-finite, too short/long or constant
    input."""
    if not data:
        raise InputError("The file is empty (0 bytes). Upload a text or CSV file with one number per line.")
    if len(data) > max_bytes:
        raise InputError(f"The file is {len(data) / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.0f} MB.")
    if b"\x00" in data[:4096]:
        raise InputError("The file looks binary. Upload a text or CSV file with one number per line.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("The file is not UTF-8 text. Save it as a UTF-8 .csv or .txt file.") from None
    import pandas as pd

    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise InputError("The file has no numbers. Put one number per line (or one numeric CSV column).")
    sep = "," if "," in lines[0] else (";" if ";" in lines[0] else None)
    if sep is None and len(lines[0].split()) > 1 and len(lines) == 1:
        values = lines[0].split()
        frame = pd.DataFrame({"x": values})
    else:
        try:
            frame = pd.read_csv(io.StringIO("\n".join(lines)), sep=sep if sep else r"\s+", header=None,
                                engine="python")
        except Exception as err:  # pandas raises several parser errors
            raise InputError(f"Could not parse the file as CSV: {err}. Use one number per line.") from None
    numeric = frame.apply(pd.to_numeric, errors="coerce")
    # drop a header row if the first row is non-numeric and the rest is numeric
    if numeric.shape[0] > 1 and numeric.iloc[0].isna().all() and not numeric.iloc[1:].isna().all().all():
        numeric = numeric.iloc[1:]
    cols = [c for c in numeric.columns if numeric[c].notna().mean() > 0.5]
    if not cols:
        raise InputError("No numeric column found. The file must contain numbers, one per line or one CSV column.")
    col = numeric[cols[-1]]
    bad = int(col.isna().sum())
    if bad:
        first = int(np.flatnonzero(col.isna().to_numpy())[0]) + 1
        raise InputError(f"{bad} value(s) in the series are not numbers (first at data row {first}). Fix or remove "
                         "them.")
    x = col.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise InputError("The series contains inf or NaN values. Remove them and upload again.")
    if x.shape[0] < min_len:
        raise InputError(f"The series has {x.shape[0]} values; at least {min_len} are needed.")
    if x.shape[0] > max_len:
        raise InputError(f"The series has {x.shape[0]} values; the limit is {max_len}. Upload a shorter excerpt.")
    if float(np.std(x)) == 0.0:
        raise InputError("The series is constant; the model needs a series that varies.")
    return x
