"""Verification of precipitation nowcasts by lead time, for deterministic, probabilistic and ensemble forecasts.

Every method is scored on the same threshold ladder (``THRESHOLDS_MMH``): a deterministic forecast becomes 0/1
exceedance "probabilities", an ensemble the fraction of members above each threshold (pysteps
``postprocessing.ensemblestats.excprob``), the network its predicted P(R >= t_k). Then, per lead:

- CRPS (threshold-integrated Brier score, mm/h): sum_k Brier(P(R >= t_k)) x width_k, the widths of
  ``bin_widths`` (the construction of the RainAI/RainPro line of work, arXiv 2311.18398). It tends to the CRPS as
  the ladder gets finer (checked against pysteps ``probscores.CRPS`` in the tests);
- Brier score per threshold;
- CSI (pysteps ``det_cat_fct``) at ``CSI_THRESHOLDS`` of a binary forecast: deterministic forecasts as they are,
  probability maps thresholded at a per-lead, per-threshold probability cut-off chosen on validation cases (the network)
  or at 0.5 (ensembles: the ensemble median);
- FSS (pysteps ``fss``) of the same binary forecasts at ``FSS_SCALES``;
- reliability diagram (pysteps ``reldiag``) at 1 mm/h, pooled over leads, for probabilistic methods;
- rank histogram (pysteps ``rankhist``) for ensembles.

Scores are accumulated over cases (contingency tables and sums, not averages of ratios), as pysteps' ``*_accum``
functions do.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field

import numpy as np

THRESHOLDS_MMH: tuple[float, ...] = (0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
CSI_THRESHOLDS: tuple[float, ...] = (0.2, 1.0, 4.0, 8.0)
FSS_THRESHOLDS: tuple[float, ...] = (1.0, 4.0)
FSS_SCALES: tuple[int, ...] = (1, 5, 15)
REL_THRESHOLD: float = 1.0


def bin_widths(thresholds=THRESHOLDS_MMH) -> np.ndarray:
    """Width of the rain-rate interval each threshold stands for in the threshold-integrated CRPS: [t_k, t_{k+1}),
    the last one as wide as the one before it."""
    t = np.asarray(thresholds, np.float64)
    d = np.diff(t)
    return np.append(d, d[-1]) if len(t) > 1 else np.ones(1)


def pysteps_quiet():
    """Import pysteps without its banner on stdout (CLI output must stay JSON); returns the module."""
    with contextlib.redirect_stdout(io.StringIO()):
        import pysteps
        import pysteps.postprocessing.ensemblestats
        import pysteps.verification
    return pysteps


def exceedance_indicators(x: np.ndarray, thresholds=THRESHOLDS_MMH) -> np.ndarray:
    """(..., H, W) rain -> (..., K, H, W) float32 indicators 1[x >= t_k]."""
    t = np.asarray(thresholds, np.float32).reshape((-1, 1, 1))
    return (x[..., None, :, :] >= t).astype(np.float32)


def ensemble_exceedance(ens: np.ndarray, thresholds=THRESHOLDS_MMH) -> np.ndarray:
    """(M, T, H, W) members -> (T, K, H, W) fraction of members >= t_k (pysteps ``excprob`` per lead)."""
    excprob = pysteps_quiet().postprocessing.ensemblestats.excprob
    out = np.stack([np.asarray(excprob(np.nan_to_num(ens[:, t]), list(thresholds))) for t in range(ens.shape[1])])
    return out.astype(np.float32)


def crps_exceedance(probs: np.ndarray, obs: np.ndarray, thresholds=THRESHOLDS_MMH, axis=None) -> np.ndarray:
    """Threshold-integrated Brier CRPS. probs: (..., K, H, W) P(R >= t_k); obs: (..., H, W) mm/h.

    Returns the mean over ``axis`` of the (..., H, W) CRPS map (all axes when None).
    """
    o = exceedance_indicators(obs, thresholds)
    w = bin_widths(thresholds).astype(np.float32).reshape((-1, 1, 1))
    return np.mean(((probs - o) ** 2 * w).sum(axis=-3), axis=axis)


def brier(probs: np.ndarray, obs: np.ndarray, thresholds=THRESHOLDS_MMH, axis=None) -> np.ndarray:
    """Brier score per threshold: mean over ``axis`` of (..., K, H, W) squared errors (keep K by excluding it)."""
    return np.mean((probs - exceedance_indicators(obs, thresholds)) ** 2, axis=axis)


@dataclass
class Forecast:
    """What a method returns for one case. Exactly one of ``rain`` / ``probs`` is the primary output.

    rain: (T, H, W) mm/h deterministic forecast, or the ensemble mean / median for display;
    probs: (T, K, H, W) exceedance probabilities on ``thresholds``; ensemble: (M, T, H, W) members (STEPS);
    cutoffs: (T, K) probability cut-offs used to binarise ``probs`` for CSI/FSS (None = 0.5);
    motion: (2, H, W) the advection field, if the method estimated one; seconds: wall time of the forecast;
    costs: anything the method can count (parameters, MACs, passes, members).
    """

    name: str
    rain: np.ndarray | None = None
    probs: np.ndarray | None = None
    ensemble: np.ndarray | None = None
    cutoffs: np.ndarray | None = None
    motion: np.ndarray | None = None
    seconds: float = 0.0
    costs: dict = field(default_factory=dict)
    thresholds: tuple[float, ...] = THRESHOLDS_MMH
    note: str = ""

    @property
    def kind(self) -> str:
        return "ensemble" if self.ensemble is not None else "probabilistic" if self.probs is not None else \
            "deterministic"

    def exceedance(self) -> np.ndarray:
        """(T, K, H, W) P(R >= t_k) for every method (0/1 for deterministic forecasts)."""
        if self.probs is not None:
            return self.probs
        return exceedance_indicators(np.nan_to_num(self.rain), self.thresholds)

    def binary(self, thr: float) -> np.ndarray:
        """(T, H, W) bool binary forecast of R >= thr (see the module docstring)."""
        if self.probs is None:
            return np.nan_to_num(self.rain) >= thr
        k = list(self.thresholds).index(thr)
        cut = 0.5 if self.cutoffs is None else np.asarray(self.cutoffs)[:, k, None, None]
        return self.probs[:, k] >= cut


class Scores:
    """Accumulates a method's scores over cases. ``add(forecast, obs)``; ``summary()`` -> dict of per-lead lists."""

    def __init__(self, n_leads: int, thresholds=THRESHOLDS_MMH) -> None:
        v = pysteps_quiet().verification
        self._v = v
        self.n_leads, self.thresholds = n_leads, tuple(thresholds)
        self.n = 0
        self.crps = np.zeros(n_leads)
        self.brier = np.zeros((n_leads, len(self.thresholds)))
        self.contab = [[v.det_cat_fct_init(0.5) for _ in CSI_THRESHOLDS] for _ in range(n_leads)]
        self.fss = [[[v.fss_init(0.5, s) for s in FSS_SCALES] for _ in FSS_THRESHOLDS] for _ in range(n_leads)]
        self.rel = None
        self.rank = None
        self.seconds: list[float] = []
        self.costs: dict = {}

    def add(self, fc: Forecast, obs: np.ndarray) -> None:
        """obs: (T, H, W) mm/h, the truth at the forecast's leads."""
        v = self._v
        obs = np.nan_to_num(obs[: self.n_leads]).astype(np.float32)
        probs = fc.exceedance()[: self.n_leads]
        self.crps += crps_exceedance(probs, obs, self.thresholds, axis=(1, 2))
        self.brier += brier(probs, obs, self.thresholds, axis=(2, 3))
        for j, thr in enumerate(CSI_THRESHOLDS):
            b = fc.binary(thr)
            o = obs >= thr
            for t in range(self.n_leads):
                v.det_cat_fct_accum(self.contab[t][j], b[t].astype(np.float32), o[t].astype(np.float32))
        for j, thr in enumerate(FSS_THRESHOLDS):
            b = fc.binary(thr).astype(np.float32)
            o = (obs >= thr).astype(np.float32)
            for t in range(self.n_leads):
                for s in range(len(FSS_SCALES)):
                    v.fss_accum(self.fss[t][j][s], b[t], o[t])
        if fc.kind != "deterministic":
            k = list(self.thresholds).index(REL_THRESHOLD)
            if self.rel is None:
                self.rel = v.reldiag_init(REL_THRESHOLD, n_bins=10, min_count=10)
            v.reldiag_accum(self.rel, probs[:, k].reshape(-1), obs.reshape(-1))
        if fc.ensemble is not None:
            ens = np.nan_to_num(fc.ensemble[:, : self.n_leads])
            if self.rank is None:
                self.rank = v.rankhist_init(ens.shape[0], X_min=0.1)
            for t in range(0, self.n_leads, 4):
                v.rankhist_accum(self.rank, ens[:, t], obs[t])
        self.seconds.append(fc.seconds)
        self.costs = fc.costs
        self.n += 1

    def summary(self) -> dict:
        """Per-lead curves and aggregates (lists, JSON-ready)."""
        v = self._v
        n = max(self.n, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            csi = [[float(v.det_cat_fct_compute(self.contab[t][j], ["CSI"])["CSI"]) for t in range(self.n_leads)]
                   for j in range(len(CSI_THRESHOLDS))]
            fss = [[[float(v.fss_compute(self.fss[t][j][s])) for t in range(self.n_leads)]
                    for s in range(len(FSS_SCALES))] for j in range(len(FSS_THRESHOLDS))]
        out = {
            "cases": self.n,
            "crps": (self.crps / n).round(5).tolist(),
            "brier": (self.brier / n).T.round(6).tolist(),  # (K, T)
            "csi": {str(t): np.round(np.nan_to_num(c), 4).tolist() for t, c in zip(CSI_THRESHOLDS, csi)},
            "fss": {str(t): {str(s): np.round(np.nan_to_num(f), 4).tolist() for s, f in zip(FSS_SCALES, fs)}
                    for t, fs in zip(FSS_THRESHOLDS, fss)},
            "seconds_median": float(np.median(self.seconds)) if self.seconds else None,
            "costs": self.costs,
        }
        if self.rel is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                r = v.reldiag_compute(self.rel)
            out["reliability"] = {"threshold": REL_THRESHOLD, "forecast": np.nan_to_num(r[1], nan=-1).round(4).tolist(),
                                  "observed": np.nan_to_num(r[0], nan=-1).round(4).tolist(),
                                  "counts": np.asarray(self.rel["sample_size"]).tolist()}
        if self.rank is not None:
            out["rank_histogram"] = np.round(v.rankhist_compute(self.rank), 4).tolist()
        return out


def perfect_scores_check(obs: np.ndarray) -> dict:
    """Scores of the observation used as its own forecast (all CSI/FSS 1, CRPS/Brier 0): a self-test."""
    s = Scores(obs.shape[0])
    s.add(Forecast("truth", rain=obs), obs)
    return s.summary()
