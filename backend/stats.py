"""Paired comparisons for claims: the mean difference of two methods measured on the same seeds or instances, with
a confidence interval, so a claim can say whether the sample tells the two apart.

A claim test records the interval with :func:`paired_ci` as ``<name>_ci = [low, high]`` (``record_claim(**ci.numbers
("gain"))``); :mod:`backend.claims` reads every ``*_ci`` it finds and computes the verdict ``not resolved`` when an
interval contains zero. Pure numpy and scipy.
"""

from __future__ import annotations

from collections.abc import Sequence
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


__all__ = ["PairedCI", "paired_ci"]
