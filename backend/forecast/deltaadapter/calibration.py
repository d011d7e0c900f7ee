"""Uncertainty post-processors of delta-Adapter (Liang et al., ICLR 2026, arXiv 2601.20280) and the conformal
baselines, all on a frozen forecaster's point forecasts ``y_hat (N, H, m)`` with inputs ``x (N, L, d)``.

* :class:`QuantileCalibrator` (QC): per horizon step a trunk MLP over ``(y_hat_h, mean-pooled x)`` plus a horizon
  embedding; the median is ``y_hat_h + 0.1 tanh(.)``, the other quantiles add (above) or subtract (below) cumulative
  softplus increments, so quantiles are monotone in tau by construction. Loss: pinball + 0.01 soft-coverage penalty
  (``mean sigmoid((q - y) / 0.5)`` against tau) + 1e-4 ||theta||^2; AdamW lr 1e-3, weight decay 1e-4, clip 1, at most
  10 epochs, patience 5, hidden 64 (the official settings).
* :class:`ConformalScaleNet` + :func:`conformal_kappa` (CC): a scale ``w(x, y_hat) > 0`` (3-layer GELU MLP, horizon
  embedding, softplus + 1e-3, zero-initialised head so ``w`` starts at about 0.69) trained on the adaptation split with
  ``mean |y - y_hat| / w + 1e-3 mean (w - 1)^2``; on a held-out calibration split the scores ``|y - y_hat| / w`` give
  ``kappa``, the interval is ``y_hat +- kappa w``. ``rule="rank"`` takes the ``ceil((n + 1)(1 - alpha))``-th smallest
  score (the finite-sample guarantee under exchangeability); ``rule="plain"`` the empirical ``1 - alpha`` quantile
  with linear interpolation, as the official code does.
* Baselines: constant-width split conformal (the same rank on ``|y - y_hat|``; mapie's ``SplitConformalRegressor`` is
  the reference, see ``mapie_split_conformal``), empirical residual quantiles per horizon step, conformalised quantile
  regression (CQR, Romano et al. 2019) on QC's ``alpha/2`` and ``1 - alpha/2`` quantiles, and adaptive conformal
  inference (ACI, Gibbs & Candes 2021) on the absolute residuals, updated online through the test split with each
  window's misses once its horizon has been observed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .training import FitConfig, FitLog, fit

TAUS = (0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975)
QC_FIT = FitConfig(epochs=10, lr=1e-3, batch=64, patience=5, weight_decay=1e-4, optimizer="adamw", clip=1.0)
CC_FIT = FitConfig(epochs=10, lr=1e-3, batch=64, patience=5, weight_decay=1e-4, optimizer="adamw", clip=1.0)


class QuantileCalibrator(nn.Module):
    """``(x (B, L, d), y_hat (B, H, m)) -> q (B, H, m, J)``, quantiles at ``taus`` (ascending), monotone in tau."""

    def __init__(self, d: int, horizon: int, m: int = 1, taus: Sequence[float] = TAUS, hidden: int = 64,
                 eps_add: float = 0.1):
        super().__init__()
        self.register_buffer("taus", torch.tensor(sorted(taus), dtype=torch.float32))
        self.anchor = int(torch.argmin((self.taus - 0.5).abs()))
        self.m, self.eps_add = m, eps_add
        j = len(taus)
        self.trunk = nn.Sequential(nn.Linear(m + d, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.h_emb = nn.Embedding(horizon, hidden)
        self.head_anchor = nn.Linear(hidden, m)
        self.head_up = nn.Linear(hidden, m * (j - self.anchor - 1))
        self.head_down = nn.Linear(hidden, m * self.anchor)
        for lin in (self.head_anchor, self.head_up, self.head_down):
            nn.init.zeros_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, x: torch.Tensor, y_hat: torch.Tensor) -> torch.Tensor:
        b, h, m = y_hat.shape
        pool = x.mean(1)[:, None].expand(b, h, -1)
        z = self.trunk(torch.cat([y_hat, pool], -1)) + self.h_emb.weight[None, :h]
        med = y_hat + self.eps_add * torch.tanh(self.head_anchor(z))
        up = F.softplus(self.head_up(z)).view(b, h, m, -1).cumsum(-1)
        down = F.softplus(self.head_down(z)).view(b, h, m, -1).cumsum(-1)
        return torch.cat([med[..., None] - down.flip(-1), med[..., None], med[..., None] + up], -1)


def pinball(y: torch.Tensor, q: torch.Tensor, taus: torch.Tensor) -> torch.Tensor:
    diff = y[..., None] - q
    return torch.maximum(taus * diff, (taus - 1) * diff).mean()


def soft_coverage_penalty(y: torch.Tensor, q: torch.Tensor, taus: torch.Tensor, temp: float = 0.5) -> torch.Tensor:
    cov = torch.sigmoid((q - y[..., None]) / temp).mean(dim=(0, 1, 2))
    return ((cov - taus) ** 2).mean()


def train_qc(x, yhat, y, xv, yhatv, yv, taus: Sequence[float] = TAUS, hidden: int = 64, cfg: FitConfig = QC_FIT,
             seed: int = 0) -> tuple[QuantileCalibrator, FitLog]:
    torch.manual_seed(seed)
    qc = QuantileCalibrator(x.shape[2], y.shape[1], y.shape[2], taus, hidden)
    data = {"train": (x, yhat, y), "val": (xv, yhatv, yv)}

    def loss(idx, _y, split="train"):
        xb, hb, yb = (t[idx] for t in data[split])
        q = qc(xb, hb)
        reg = sum((p**2).sum() for p in qc.parameters())
        return pinball(yb, q, qc.taus) + 0.01 * soft_coverage_penalty(yb, q, qc.taus) + 1e-4 * reg

    def val(idx, _y):
        xb, hb, yb = (t[idx] for t in data["val"])
        return pinball(yb, qc(xb, hb), qc.taus)

    n, nv = len(x), len(xv)
    log = fit(list(qc.parameters()), loss, [qc], torch.arange(n), torch.zeros(n), torch.arange(nv),
              torch.zeros(nv), cfg, seed, val_fn=val)
    return qc, log


class ConformalScaleNet(nn.Module):
    """``(x (B, L, d), y_hat (B, H, m)) -> w (B, H, m) > 0``."""

    def __init__(self, d: int, horizon: int, m: int = 1, hidden: int = 64):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(m + d, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                                   nn.Linear(hidden, hidden), nn.GELU())
        self.h_emb = nn.Embedding(horizon, hidden)
        self.head = nn.Linear(hidden, m)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor, y_hat: torch.Tensor) -> torch.Tensor:
        b, h, _ = y_hat.shape
        pool = x.mean(1)[:, None].expand(b, h, -1)
        z = self.trunk(torch.cat([y_hat, pool], -1)) + self.h_emb.weight[None, :h]
        return F.softplus(self.head(z)) + 1e-3


def train_cc(x, yhat, y, xv, yhatv, yv, hidden: int = 64, cfg: FitConfig = CC_FIT, seed: int = 0
             ) -> tuple[ConformalScaleNet, FitLog]:
    torch.manual_seed(seed)
    net = ConformalScaleNet(x.shape[2], y.shape[1], y.shape[2], hidden)
    data = {"train": (x, yhat, y), "val": (xv, yhatv, yv)}

    def objective(idx, split):
        xb, hb, yb = (t[idx] for t in data[split])
        w = net(xb, hb)
        return ((yb - hb).abs() / w).mean() + 1e-3 * ((w - 1) ** 2).mean()

    n, nv = len(x), len(xv)
    log = fit(list(net.parameters()), lambda i, _y: objective(i, "train"), [net], torch.arange(n), torch.zeros(n),
              torch.arange(nv), torch.zeros(nv), cfg, seed, val_fn=lambda i, _y: objective(i, "val"))
    return net, log


# ------------------------------------------------------------------------------------------------- conformal maths
def conformal_kappa(scores: np.ndarray, alpha: float, rule: str = "rank") -> float:
    """The calibration threshold of ``scores`` (any shape, flattened). ``rank``: the ``ceil((n + 1)(1 - alpha))``-th
    smallest (inf when that exceeds n); ``plain``: ``numpy.quantile(scores, 1 - alpha)`` (linear)."""
    s = np.sort(np.asarray(scores, np.float64).ravel())
    n = len(s)
    if rule == "plain":
        return float(np.quantile(s, 1 - alpha))
    k = math.ceil((n + 1) * (1 - alpha))
    return float(s[k - 1]) if k <= n else math.inf


@dataclass
class Interval:
    lo: np.ndarray
    hi: np.ndarray

    def coverage(self, y: np.ndarray) -> float:
        return float(((y >= self.lo) & (y <= self.hi)).mean())

    def width(self) -> float:
        return float(np.mean(self.hi - self.lo))

    def per_horizon(self, y: np.ndarray) -> list[float]:
        return [float(v) for v in ((y >= self.lo) & (y <= self.hi)).mean(axis=(0, 2))]


def split_conformal(res_cal: np.ndarray, pred: np.ndarray, alpha: float) -> Interval:
    """Constant width: ``pred +- kappa``, kappa the finite-sample rank of ``|residuals|`` of the calibration split."""
    k = conformal_kappa(np.abs(res_cal), alpha)
    return Interval(pred - k, pred + k)


def cc_interval(w_cal: np.ndarray, res_cal: np.ndarray, pred: np.ndarray, w: np.ndarray, alpha: float,
                rule: str = "rank") -> tuple[Interval, float]:
    k = conformal_kappa(np.abs(res_cal) / w_cal, alpha, rule)
    return Interval(pred - k * w, pred + k * w), k


def residual_quantiles(res_cal: np.ndarray, pred: np.ndarray, alpha: float) -> Interval:
    """``pred + [q_{alpha/2}, q_{1-alpha/2}]`` of the signed calibration residuals, per horizon step and target."""
    lo = np.quantile(res_cal, alpha / 2, axis=0)
    hi = np.quantile(res_cal, 1 - alpha / 2, axis=0)
    return Interval(pred + lo[None], pred + hi[None])


def cqr(q_lo_cal: np.ndarray, q_hi_cal: np.ndarray, y_cal: np.ndarray, q_lo: np.ndarray, q_hi: np.ndarray,
        alpha: float) -> Interval:
    e = np.maximum(q_lo_cal - y_cal, y_cal - q_hi_cal)
    k = conformal_kappa(e, alpha)
    return Interval(q_lo - k, q_hi + k)


def aci(res_cal: np.ndarray, pred: np.ndarray, y: np.ndarray, alpha: float, gamma: float = 0.005
        ) -> tuple[Interval, list[float]]:
    """Online constant-width intervals whose level ``alpha_t`` follows ``alpha_{t+1} = alpha_t + gamma (alpha -
    err_t)``; ``err_t`` is the miss rate of the newest window whose horizon is observed (H windows back)."""
    scores = np.sort(np.abs(res_cal).ravel())
    n, horizon = len(scores), pred.shape[1]
    a_t = alpha
    lo, hi, levels = np.empty_like(pred), np.empty_like(pred), []
    for i in range(len(pred)):
        j = i - horizon
        if j >= 0:
            err = float(((y[j] < lo[j]) | (y[j] > hi[j])).mean())
            a_t = a_t + gamma * (alpha - err)
        a_c = min(max(a_t, 1.0 / (n + 1)), 1.0 - 1e-9)
        k = scores[min(math.ceil((n + 1) * (1 - a_c)), n) - 1]
        lo[i], hi[i] = pred[i] - k, pred[i] + k
        levels.append(a_t)
    return Interval(lo, hi), levels


def random_split_coverage(scores: np.ndarray, alpha: float, n_splits: int = 50, frac: float = 0.5, seed: int = 0,
                          rule: str = "rank") -> np.ndarray:
    """Coverage of ``kappa``-thresholded scores over random window-level splits of a pooled set ``scores (N, H, m)``
    into calibration (``frac``) and test: the exchangeable setting of the guarantee. No refit is needed: the scale
    net is trained on another split, so only ``kappa`` changes per split."""
    rng = np.random.default_rng(seed)
    n = len(scores)
    n_cal = int(frac * n)
    out = np.empty(n_splits)
    for s in range(n_splits):
        p = rng.permutation(n)
        k = conformal_kappa(scores[p[:n_cal]], alpha, rule)
        out[s] = float((scores[p[n_cal:]] <= k).mean())
    return out


def time_ordered_coverage(covered: np.ndarray, horizon: int, confidence: float = 0.95, seed: int = 0) -> dict:
    """Coverage on a time-ordered test block: ``covered (N, H, m)`` bool, the test windows in time order (stride 1,
    calibrated on earlier windows only). Consecutive windows share ``H - 1`` target steps and errors are
    autocorrelated, so the interval of the mean is a moving-block bootstrap over the per-window coverage with blocks
    of ``max(2 H, 24)`` windows (:func:`backend.stats.block_bootstrap_mean`); the i.i.d. binomial band is reported
    beside it. Returns ``coverage``, ``ci`` [low, high], ``block``, ``windows``, ``iid_tolerance``."""
    from backend.stats import block_bootstrap_mean

    per_window = covered.reshape(len(covered), -1).mean(axis=1)
    block = max(2 * int(horizon), 24)
    ci = block_bootstrap_mean(per_window, block, confidence=confidence, seed=seed)
    n_el = int(covered.size)
    return {"coverage": ci.mean, "ci": [ci.low, ci.high], "block": block, "windows": int(len(covered)),
            "iid_tolerance": 1.96 * math.sqrt(max(ci.mean * (1 - ci.mean), 1e-12) / n_el)}


def binomial_tolerance(alpha: float, n: int) -> float:
    return 3.0 * math.sqrt(alpha * (1 - alpha) / n)


def mapie_split_conformal(pred_cal: np.ndarray, y_cal: np.ndarray, pred_test: np.ndarray, alpha: float
                          ) -> tuple[np.ndarray, np.ndarray]:
    """mapie 1.x ``SplitConformalRegressor`` (absolute score, prefit) on precomputed forecasts (flattened), as the
    reference for :func:`split_conformal`. Returns ``(lo, hi)`` of the test points."""
    from mapie.regression import SplitConformalRegressor
    from sklearn.base import BaseEstimator, RegressorMixin

    class Lookup(RegressorMixin, BaseEstimator):
        """Prefit 'regressor' whose prediction of row ``[v]`` is ``v`` (the frozen forecast)."""

        def fit(self, x, y):
            self.n_features_in_ = 1
            return self

        def predict(self, x):
            return np.asarray(x)[:, 0]

    est = Lookup().fit(np.zeros((1, 1)), np.zeros(1))
    scr = SplitConformalRegressor(est, confidence_level=1 - alpha, conformity_score="absolute", prefit=True)
    scr.conformalize(pred_cal.reshape(-1, 1).astype(np.float64), y_cal.reshape(-1).astype(np.float64))
    _, pis = scr.predict_interval(pred_test.reshape(-1, 1).astype(np.float64))
    return pis[:, 0, 0].reshape(pred_test.shape), pis[:, 1, 0].reshape(pred_test.shape)
