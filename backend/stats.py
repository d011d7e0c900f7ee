"""Paired comparisons for claims: the mean difference of two methods measured on the same seeds or instances, with
a confidence interval, so a claim can say whether the sample tells the two apart.

A claim test records the interval with :func:`paired_ci` as ``<name>_ci = [low, high]`` (``record_claim(**ci.numbers
("gain"))``); :mod:`backend.claims` reads every ``*_ci`` it finds and computes the verdict ``not resolved`` when an
interval contains zero. Pure numpy and scipy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairedCI:
    """Mean of ``a - b`` over ``n`` pairs and its two-sided ``confidence`` interval ``[low, high]``."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float

    @property
    def resolved(self) -> bool:
        """True when the interval excludes zero: the sample tells the two apart."""
        return self.low > 0.0 or self.high < 0.0

    def numbers(self, name: str) -> dict[str, float | list[float] | int]:
        """``{name: mean, name_ci: [low, high], name_pairs: n}``, the form :mod:`backend.claims` reads."""
        return {name: self.mean, f"{name}_ci": [self.low, self.high], f"{name}_pairs": self.n}


def paired_ci(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = 0.95) -> PairedCI:
    """Student-t interval of the mean of ``a - b`` (``a``, ``b``: ``[n]``, the same seeds / instances in order).

    With ``n < 2`` or no spread the interval is the point itself when the differences are all equal (an exact,
    deterministic comparison), and infinite when there is one pair: one pair tells nothing about the spread.
    """
    from scipy import stats

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"paired_ci needs two 1-D sequences of equal length >= 1, got shape {d.shape}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n, mean = int(d.size), float(d.mean())
    if n == 1:
        return PairedCI(mean, -np.inf, np.inf, n, confidence)
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return PairedCI(mean, mean, mean, n, confidence)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / np.sqrt(n)
    return PairedCI(mean, mean - half, mean + half, n, confidence)


def paired_bootstrap(statistic: Callable[..., float], *arrays: Sequence[float] | np.ndarray, n_boot: int = 2000,
                     confidence: float = 0.95, seed: int = 0) -> PairedCI:
    """Percentile bootstrap interval of ``statistic(*arrays)`` when the instances are resampled together (the same
    indices in every array: paired), for statistics that are not a mean of differences (a ratio of means, a gain
    of ratios). ``mean`` is the statistic on the full sample."""
    data = [np.asarray(a, dtype=float) for a in arrays]
    n = int(data[0].size)
    if n == 0 or any(d.shape != (n,) for d in data):
        raise ValueError("paired_bootstrap needs 1-D arrays of one length >= 1")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    stats_ = np.array([statistic(*(d[i] for d in data)) for i in idx], dtype=float)
    stats_ = stats_[np.isfinite(stats_)]
    point = float(statistic(*data))
    if stats_.size == 0:
        return PairedCI(point, -np.inf, np.inf, n, confidence)
    tail = 100 * (1 - confidence) / 2
    return PairedCI(point, float(np.percentile(stats_, tail)), float(np.percentile(stats_, 100 - tail)), n, confidence)


def block_bootstrap_mean(series: Sequence[float] | np.ndarray, block: int, n_boot: int = 2000,
                         confidence: float = 0.95, seed: int = 0) -> PairedCI:
    """Moving-block bootstrap interval of the mean of a time-ordered ``series`` whose neighbours are dependent
    (overlapping forecast windows, autocorrelated errors): resamples of ``ceil(n / block)`` blocks of ``block``
    consecutive values, cut to length ``n`` (Kunsch 1989). ``block`` = 1 is the ordinary bootstrap, which is too
    narrow when values are dependent."""
    x = np.asarray(series, dtype=float)
    n = x.size
    if n == 0 or x.ndim != 1:
        raise ValueError("block_bootstrap_mean needs a 1-D series of length >= 1")
    b = int(min(max(1, block), n))
    rng = np.random.default_rng(seed)
    k = -(-n // b)
    starts = rng.integers(0, n - b + 1, size=(n_boot, k))
    idx = (starts[:, :, None] + np.arange(b)[None, None, :]).reshape(n_boot, k * b)[:, :n]
    means = x[idx].mean(axis=1)
    tail = 100 * (1 - confidence) / 2
    return PairedCI(float(x.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail)), n,
                    confidence)


__all__ = ["PairedCI", "block_bootstrap_mean", "paired_bootstrap", "paired_ci"]
