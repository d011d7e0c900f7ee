"""FutureFill: exact fast autoregressive generation from convolutional sequence models.

Paper: Agarwal, Chen, Dogariu, Shah, Strauss, Feinberg, Suo, Bartlett, Hazan, "FutureFill: Fast Generation from
Convolutional Sequence Models" (ICLR 2026; arXiv 2410.03766; project page dshah.io/futurefill).

A convolutional sequence model (STU, Hyena-style long convolutions) computes, for every filter ``phi`` of the model,
the online convolution ``y_t = sum_{j=0}^{t} u_{t-j} phi_j`` (0-indexed here; the paper writes it 1-indexed). During
generation ``u_{t+1}`` depends on ``y_t``, so the whole convolution cannot be done by one FFT. Four exact ways to run
that online convolution (naive, epoched, continuous, prompted), the FutureFill primitive and the cost model (what
``macs`` counts) are in :mod:`backend.generation.futurefill.engines`; this module holds a small model to generate
from, generation with every method (the registry :data:`METHODS`), their comparison, the benchmark and the series
parser.

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

from ...errors import InputError
from ...registry import Registry, choose
from ...runtime import Progress, report
from .engines import (  # noqa: F401 - the engine API, re-exported for callers of this module
    ENGINES,
    MAX_TOTAL_LENGTH,
    ContinuousConv,
    EpochedConv,
    FillEvent,
    NaiveConv,
    OnlineConv,
    continuous_macs,
    default_epoch,
    fft_macs,
    fftconv_macs,
    futurefill,
    make_engine,
    naive_macs,
    next_pow2,
    online_convolve,
)
from .inputs import PRESETS

FILTER_KINDS = ("spectral", "random")
REFERENCE = "naive"  # the method every other one is checked against


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
    kind = choose(kind, FILTER_KINDS, "filter kind")
    if kind == "spectral":
        filt = spectral_filters(length, n_filters)
    else:
        filt = random_filters(length, n_filters, seed=seed + 1)
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


@dataclass
class Decoded:
    """The counters of one decode (:func:`decode_online`, :func:`decode_prompted`); the values are written into the
    ``u`` and ``y`` arrays they were given."""

    macs: int
    setup_macs: int
    fft_calls: int
    cache_floats: int
    events: list[FillEvent]
    epoch: int | None


def decode_online(model: ConvSeqModel, u: np.ndarray, y: np.ndarray, eps: np.ndarray, *, method: str,
                  epoch: int | None = None, direct_below: int = 0, record: bool = False,
                  progress: Progress | None = None) -> Decoded:
    """Push the prompt ``u[:P]`` (``P = len(u) - len(eps)``) and then each generated value through one engine of
    :data:`ENGINES` (``method``), filling ``u[P:]`` and ``y`` ``[F, T]`` in place."""
    T = u.shape[0]
    P = T - eps.shape[0]
    every = max(1, T // 50)
    eng = make_engine(method, model.filters[:, :T], epoch=epoch, direct_below=direct_below, record=record)
    for t in range(T):
        if t >= P:
            u[t] = model.next_value(y[:, t - 1], u[t - 1], eps[t - P])
        y[:, t] = eng.push(u[t])
        if progress is not None and t % every == 0:
            report(progress, (t + 1) / T, f"{method}: token {t + 1}/{T}")
    return Decoded(eng.macs, eng.setup_macs, eng.fft_calls, eng.peak_cache, eng.events, getattr(eng, "K", None))


def decode_prompted(model: ConvSeqModel, u: np.ndarray, y: np.ndarray, eps: np.ndarray, *, method: str,
                    epoch: int | None = None, direct_below: int = 0, record: bool = False,
                    progress: Progress | None = None) -> Decoded:
    """Prefill the prompt ``u[:P]`` with one FFT (outputs on the prompt plus its contribution to the ``n_new`` future
    slots), then run continuous FutureFill over the generated tokens only (``epoch`` does not apply)."""
    T = u.shape[0]
    n_new = eps.shape[0]
    P = T - n_new
    every = max(1, T // 50)
    phi = model.filters[:, :T]
    prompt = u[:P]
    events: list[FillEvent] = []
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
            report(progress, (s + 1) / n_new, f"{method}: token {s + 1}/{n_new}")
    if record:
        events.extend(FillEvent(e.step + P, (e.src[0] + P, e.src[1] + P), (e.dst[0] + P, e.dst[1] + P),
                                e.fft_size) for e in engine.events)
    # state: 2 n_new (cache slots + generated inputs), independent of P
    return Decoded(macs + engine.macs, setup + engine.setup_macs, 1 + engine.fft_calls, engine.peak_cache, events,
                   None)


METHODS: Registry[Callable[..., Decoded]] = Registry("FutureFill method")
METHODS.add("naive", decode_online, label="Naive online conv.", kind="baseline", color="#7f7f7f",
            about="one inner product over the whole history per token: O(L^2)")
METHODS.add("epoched", decode_online, label="Epoched FutureFill", kind="ours", color="#1f77b4",
            about="a K-slot cache refilled by one FutureFill every K tokens: O(L^2 log L / K + K L)")
METHODS.add("continuous", decode_online, label="Continuous FutureFill", kind="ours", color="#d62728",
            about="binary-carry FutureFills of the last 2^k inputs: O(L log^2 L)")
METHODS.add("prompted", decode_prompted, label="Prompted (prefill + continuous)", kind="ours", color="#2ca02c",
            about="one FutureFill of the prompt, then continuous FutureFill over the generated tokens: O(K) cache")


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
    method = METHODS.key(method)
    prompt = np.asarray(prompt, dtype=np.float64).ravel()
    P = int(prompt.shape[0])
    _check_lengths(P, n_new, model)
    T = P + n_new
    eps = np.random.default_rng(seed).standard_normal(n_new)
    u = np.empty(T)
    u[:P] = prompt
    y = np.empty((model.n_filters, T))
    start = time.perf_counter()
    run = METHODS[method](model, u, y, eps, method=method, epoch=epoch, direct_below=direct_below, record=record,
                          progress=progress)
    seconds = time.perf_counter() - start
    report(progress, 1.0, f"{method}: done")
    return GenerationResult(
        method=method,
        u=u,
        y=y,
        macs=int(run.macs),
        setup_macs=int(run.setup_macs),
        fft_calls=int(run.fft_calls),
        seconds=seconds,
        cache_floats=int(run.cache_floats),
        prompt_len=P,
        events=run.events,
        epoch=run.epoch,
    )


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
    methods: tuple[str, ...] = tuple(METHODS),
    *,
    epoch: int | None = None,
    direct_below: int = 0,
    seed: int = 0,
    record: bool = False,
    progress: Progress | None = None,
) -> CompareResult:
    """Run every method in ``methods`` (naive first, the reference) and measure their disagreement."""
    methods = tuple(dict.fromkeys((REFERENCE, *methods)))
    res: dict[str, GenerationResult] = {}
    for i, meth in enumerate(methods):
        sub = None if progress is None else (lambda f, msg="", i=i: report(progress, (i + f) / len(methods), msg))
        res[meth] = generate(model, prompt, n_new, meth, epoch=epoch, direct_below=direct_below, seed=seed,
                             record=record, progress=sub)
    ref = res[REFERENCE]
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
    methods: tuple[str, ...] = tuple(METHODS),
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
    jobs = [(L, m) for L in lengths for m in methods if not (m == REFERENCE and naive_max and L > naive_max)]
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
    ref = {r["length"]: r["_u"] for r in rows if r["method"] == REFERENCE}
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


# ----------------------------------------------------------------------------------------------------------- series
def preset_series(name: str, n: int = 512, seed: int = 0) -> np.ndarray:
    """A named synthetic series of length ``n`` (see :data:`PRESETS`)."""
    return np.asarray(PRESETS[choose(name, PRESETS, "preset")](n, seed), dtype=np.float64)


def load_series(data: bytes, max_bytes: int = 5 * 2**20, max_len: int = 1 << 16, min_len: int = 16,
                name: str = "The file") -> np.ndarray:
    """Parse an uploaded 1-D series: UTF-8 text, numbers separated by newlines, commas, semicolons or spaces; a CSV with
    a header is accepted if exactly one column is numeric (or the last numeric column is used, with a header row).
    Raises InputError with an actionable message on empty, binary, non-numeric, non-finite, too short/long or constant
    input."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes). Upload a text or CSV file with one number per line.")
    if len(data) > max_bytes:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.0f} MB.")
    if b"\x00" in data[:4096]:
        raise InputError(f"{name} looks binary. Upload a text or CSV file with one number per line.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text. Save it as a UTF-8 .csv or .txt file.") from None
    import pandas as pd

    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise InputError(f"{name} has no numbers. Put one number per line (or one numeric CSV column).")
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
    if np.abs(x).max() > 1e150:  # its standard deviation (a sum of squares) would overflow float64
        raise InputError(f"The series reaches {np.abs(x).max():.3g}; rescale it below 1e150.")
    if x.shape[0] < min_len:
        raise InputError(f"The series has {x.shape[0]} values; at least {min_len} are needed.")
    if x.shape[0] > max_len:
        raise InputError(f"The series has {x.shape[0]} values; the limit is {max_len}. Upload a shorter excerpt.")
    if float(np.std(x)) == 0.0:
        raise InputError("The series is constant; the model needs a series that varies.")
    return x
