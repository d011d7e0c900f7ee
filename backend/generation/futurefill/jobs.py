"""FutureFill as pure jobs: what the page, the CLI and the benchmark call.

- :func:`run_generate`: fit the small spectral model to a series and continue it with every method; their
  disagreement with naive, their costs and the continuation (``futurefill generate``).
- :func:`run_bench`: decode time and multiply-adds vs length for the chosen methods, fitted log-log slopes and MAC
  ratios per doubling (``futurefill bench``).
- :func:`run_page`: the page's run: :func:`run_generate`, a cost-vs-length bench on a random model, and the recorded
  FutureFill calls of a short generation per FutureFill method (the animation).

Configs are frozen dataclasses validated on construction (InputError saying what to change); results are small
JSON-able summaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, sub_progress
from .futurefill import (
    FILTER_KINDS,
    METHODS,
    REFERENCE,
    BenchResult,
    bench,
    compare_methods,
    decode_prompted,
    fit_model,
    generate,
    make_model,
)

HEADLINE = "continuous"  # the method the page's animation opens on and the CLI's speedups are measured against


def _whole(value: object, what: str, lo: int, hi: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < lo or (hi is not None
                                                                                             and value > hi):
        limit = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        raise InputError(f"{what} must be a whole number {limit}; got {value!r}.")


@dataclass(frozen=True)
class GenerateConfig:
    """Continue a series by ``n_new`` values with a model of ``n_filters`` filters of family ``kind`` (spectral or
    random); ``epoch`` the epoch length K of the epoched method (None or 0: sqrt(L log L)); ``seed`` the generation
    noise. The defaults are the CLI's."""

    n_new: int = 1024
    n_filters: int = 16
    kind: str = "spectral"
    epoch: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        _whole(self.n_new, "The number of values to generate", 1)
        _whole(self.n_filters, "The number of filters", 1, 64)
        object.__setattr__(self, "kind", choose(self.kind, FILTER_KINDS, "filter kind"))
        if self.epoch is not None:
            _whole(self.epoch, "The epoch length K (0: sqrt(L log L))", 0)
        _whole(self.seed, "The seed", 0)


@dataclass(frozen=True)
class GenerateResult:
    """``methods``: per method ``seconds``, ``macs``, ``setup_macs``, ``fft_calls``, ``cache_floats``, ``epoch``,
    ``max_abs_err_u``, ``max_abs_err_y`` (against naive); ``u``: per method the prompt then the generated values, in
    the series' units; ``fit``: one-step ``train_rmse``, ``r2``, ``ridge``."""

    prompt_len: int
    generated: int
    fit: dict[str, float]
    methods: dict[str, dict[str, object]]
    u: dict[str, list[float]] = field(repr=False)

    @property
    def continuation(self) -> list[float]:
        """The generated values (naive's; every method's agree to float rounding), in the series' units."""
        return self.u[REFERENCE][self.prompt_len:]


def run_generate(series: np.ndarray, config: GenerateConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> GenerateResult:
    """Fit the model to ``series`` (``[P]``, at least 8 values) and generate ``config.n_new`` values with every
    method."""
    if not isinstance(config, GenerateConfig):
        raise InputError("run_generate takes a GenerateConfig.")
    progress = checked(progress, token)
    series = np.asarray(series, dtype=np.float64).ravel()
    total = len(series) + config.n_new
    model, fit = fit_model(series, total, config.n_filters, config.kind, seed=config.seed)
    prompt = (series - model.mean) / model.std
    cmp = compare_methods(model, prompt, config.n_new, epoch=config.epoch, seed=config.seed, progress=progress)
    methods = {
        m: {"seconds": r.seconds, "macs": r.macs, "setup_macs": r.setup_macs, "fft_calls": r.fft_calls,
            "cache_floats": r.cache_floats, "epoch": r.epoch, "max_abs_err_u": cmp.max_err_u[m],
            "max_abs_err_y": cmp.max_err_y[m]}
        for m, r in cmp.results.items()
    }
    u = {m: (np.asarray(r.u) * model.std + model.mean).tolist() for m, r in cmp.results.items()}
    return GenerateResult(len(series), config.n_new, fit, methods, u)


@dataclass(frozen=True)
class BenchConfig:
    """Total lengths ``lengths`` (each above ``prompt_len``), the methods to time, a model of ``n_filters`` filters of
    family ``kind``; ``naive_max`` skips naive above that length; timing is the median of ``repeats``; carry blocks
    of size <= ``direct_below`` are done directly. The defaults are the CLI's."""

    lengths: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192, 16384)
    methods: tuple[str, ...] = tuple(METHODS)
    n_filters: int = 8
    kind: str = "random"
    prompt_len: int = 16
    naive_max: int | None = None
    repeats: int = 1
    direct_below: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        for n in self.lengths:
            _whole(n, "Every length", 2)
        if not self.methods:
            raise InputError(f"Name at least one method of: {', '.join(METHODS)}.")
        object.__setattr__(self, "lengths", tuple(int(n) for n in self.lengths))
        object.__setattr__(self, "methods", tuple(METHODS.key(m) for m in self.methods))
        _whole(self.n_filters, "The number of filters", 1, 64)
        object.__setattr__(self, "kind", choose(self.kind, FILTER_KINDS, "filter kind"))
        _whole(self.prompt_len, "The prompt length", 1)
        if self.naive_max is not None:
            _whole(self.naive_max, "naive_max", 0)
        _whole(self.repeats, "The number of repeats", 1)
        _whole(self.direct_below, "direct_below", 0)
        _whole(self.seed, "The seed", 0)


def run_bench(config: BenchConfig, progress: Progress | None = None,
              token: CancelToken | None = None) -> BenchResult:
    """Generate ``L - prompt_len`` tokens for each length with each method; rows, slopes and MAC ratios."""
    if not isinstance(config, BenchConfig):
        raise InputError("run_bench takes a BenchConfig.")
    progress = checked(progress, token)
    return bench(list(config.lengths), config.methods, n_filters=config.n_filters, kind=config.kind,
                 prompt_len=config.prompt_len, naive_max=config.naive_max, repeats=config.repeats,
                 direct_below=config.direct_below, seed=config.seed, progress=progress)


@dataclass(frozen=True)
class PageConfig:
    """The page's run: ``generate`` on the user's series, a cost chart over powers of two from 256 to ``max_len``
    (a random model of the same number of filters), an animation of ``anim_len`` tokens."""

    generate: GenerateConfig = GenerateConfig(n_new=2048)
    max_len: int = 8192
    anim_len: int = 32

    def __post_init__(self) -> None:
        if not isinstance(self.generate, GenerateConfig):
            raise InputError("PageConfig takes a GenerateConfig.")
        _whole(self.max_len, "The longest length of the cost chart", 512, 1 << 16)
        _whole(self.anim_len, "The animation length", 8, 256)

    @property
    def bench_lengths(self) -> list[int]:
        return [2**k for k in range(8, int(np.log2(self.max_len)) + 1)]


def run_page(series: np.ndarray, config: PageConfig, progress: Progress | None = None,
             token: CancelToken | None = None) -> dict[str, object]:
    """The page's run as one JSON-able dict: ``u`` (per method, series units), ``prompt_len``, ``n_new``, ``metrics``
    (a table row per method), ``fit``, ``bench`` (rows, slopes, mac_ratios), ``anim`` (per FutureFill method: the
    recorded calls of a short generation) and ``params``."""
    if not isinstance(config, PageConfig):
        raise InputError("run_page takes a PageConfig.")
    progress = checked(progress, token)
    g = config.generate
    gen = run_generate(series, g, progress=sub_progress(progress, 0.0, 0.55))
    lengths = config.bench_lengths
    bres = run_bench(BenchConfig(tuple(lengths), n_filters=g.n_filters, kind="random", seed=g.seed),
                     progress=sub_progress(progress, 0.55, 0.95))
    anim = {}
    small = make_model(config.anim_len, 2, "random", seed=g.seed)
    for m in METHODS.names(kind="ours"):  # the FutureFill methods (naive fills no cache)
        prefills = METHODS[m] is decode_prompted
        p_len = config.anim_len // 4 if prefills else 1
        r = generate(small, np.ones(p_len), config.anim_len - p_len, m, record=True)
        anim[m] = {"events": [{"step": e.step, "src": e.src, "dst": e.dst, "fft_size": e.fft_size} for e in r.events],
                   "length": config.anim_len, "prompt_len": p_len, "epoch": r.epoch,
                   "shaded": p_len if prefills else 0}
    rows = [{"method": m, "seconds": round(float(r["seconds"]), 4), "MACs": r["macs"], "setup MACs": r["setup_macs"],
             "FFT calls": r["fft_calls"], "state floats / filter": r["cache_floats"], "epoch K": r["epoch"],
             f"max |u - {REFERENCE}|": r["max_abs_err_u"], f"max |y - {REFERENCE}|": r["max_abs_err_y"]}
            for m, r in gen.methods.items()]
    return {"u": gen.u, "prompt_len": gen.prompt_len, "n_new": g.n_new, "metrics": rows, "fit": gen.fit,
            "bench": {"rows": bres.rows, "slopes": bres.slopes, "mac_ratios": bres.mac_ratios}, "anim": anim,
            "params": {"n_new": g.n_new, "filters": g.n_filters, "kind": g.kind, "epoch": g.epoch, "seed": g.seed,
                       "bench_lengths": lengths}}
