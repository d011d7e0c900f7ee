"""Baselines of the MCD page: the most correlated observed channel, per-pixel ridge regression, a U-Net regressor
trained per target channel, and (in :mod:`.tissue`) the generator's noise-free mean as the ceiling.

- Most correlated channel (the paper's "most correlated protein" baseline): for each missing channel, the observed
  channel with the largest |Pearson r| on the training pixels, mapped affinely (on standardised data, slope = r).
- Per-pixel ridge: a linear map from the observed channels of one pixel to its missing channels, solved in closed form
  from the training pixels' covariance, so any observed subset is one small solve (ridge alpha 1e-3 on correlations).
- Multi-scale ridge: the same closed-form ridge on the observed channels at several Gaussian blur scales (the pixel
  and its neighbourhood at sigma 1, 2 and 4 pixels), fitted from the training panels' joint covariance in a second;
  the blurred maps carry the spatial context (neighbouring cells) that the per-pixel ridge cannot see.
- U-Net regressor: a small U-Net (no diffusion, MSE) from the observed channels of one fixed pattern to ONE target
  channel, trained separately for every target: the paper's single-target models. It has to be retrained for every
  (pattern, target); the shipped set covers every pattern the claims evaluate (``assets/mcd_unet.safetensors``).

Shapes: standardised panels ``z`` (N, C, H, W); predictions the same shape (observed channels copied).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


def pixel_cov(z: np.ndarray) -> np.ndarray:
    """(C, C) correlation-scale covariance of the training pixels of standardised panels (N, C, H, W)."""
    flat = z.transpose(1, 0, 2, 3).reshape(z.shape[1], -1).astype(np.float64)
    flat = flat - flat.mean(1, keepdims=True)
    return flat @ flat.T / flat.shape[1]


def _split(observed: Sequence[int], c: int) -> tuple[list[int], list[int]]:
    obs = sorted(set(int(o) for o in observed))
    return obs, [i for i in range(c) if i not in obs]


def most_correlated(z: np.ndarray, observed: Sequence[int], cov: np.ndarray) -> np.ndarray:
    """Predict every missing channel by the affinely mapped observed channel of largest |r| (training covariance)."""
    obs, mis = _split(observed, z.shape[1])
    out = z.copy()
    d = np.sqrt(np.diag(cov))
    r = cov / np.outer(d, d)
    for t in mis:
        best = obs[int(np.argmax(np.abs(r[obs, t])))]
        out[:, t] = cov[best, t] / cov[best, best] * z[:, best]
    return out


def best_channel(observed: Sequence[int], target: int, cov: np.ndarray) -> int:
    obs = sorted(set(int(o) for o in observed))
    d = np.sqrt(np.diag(cov))
    return obs[int(np.argmax(np.abs((cov / np.outer(d, d))[obs, target])))]


def ridge(z: np.ndarray, observed: Sequence[int], cov: np.ndarray, alpha: float = 1e-3) -> np.ndarray:
    """Per-pixel ridge regression from the observed to the missing channels (closed form from the covariance)."""
    obs, mis = _split(observed, z.shape[1])
    a = cov[np.ix_(obs, obs)] + alpha * np.eye(len(obs))
    beta = np.linalg.solve(a, cov[np.ix_(obs, mis)])  # (|o|, |m|)
    out = z.copy()
    out[:, mis] = np.einsum("nohw,om->nmhw", z[:, obs], beta).astype(z.dtype)
    return out


# ------------------------------------------------------------------------------------------------ multi-scale ridge
SCALES: tuple[float, ...] = (0.0, 1.0, 2.0, 4.0)


def multiscale(z: np.ndarray, scales: Sequence[float] = SCALES) -> np.ndarray:
    """(N, C * S, H, W) features: every channel at every blur scale (scale-major; sigma 0 = the channel itself)."""
    from scipy.ndimage import gaussian_filter

    return np.concatenate([z if s == 0 else gaussian_filter(z, sigma=(0, 0, s, s), mode="reflect")
                           for s in scales], 1).astype(np.float32)


@dataclass
class MultiScaleRidge:
    """Joint moments of the multi-scale features and the channels over the training pixels; any observed subset is
    one small solve (:meth:`predict`)."""

    mean_f: np.ndarray  # (C * S,)
    mean_t: np.ndarray  # (C,)
    cov_ff: np.ndarray  # (C * S, C * S)
    cov_ft: np.ndarray  # (C * S, C)
    scales: tuple[float, ...] = SCALES
    alpha: float = 1e-3

    @classmethod
    def fit(cls, z: np.ndarray, scales: Sequence[float] = SCALES, alpha: float = 1e-3) -> MultiScaleRidge:
        f = multiscale(z, scales)
        ff = f.transpose(1, 0, 2, 3).reshape(f.shape[1], -1).astype(np.float64)
        tt = z.transpose(1, 0, 2, 3).reshape(z.shape[1], -1).astype(np.float64)
        mf, mt = ff.mean(1), tt.mean(1)
        ff -= mf[:, None]
        tt -= mt[:, None]
        n = ff.shape[1]
        return cls(mf, mt, ff @ ff.T / n, ff @ tt.T / n, tuple(scales), alpha)

    def predict(self, z: np.ndarray, observed: Sequence[int]) -> np.ndarray:
        c = z.shape[1]
        obs, mis = _split(observed, c)
        cols = [k * c + o for k in range(len(self.scales)) for o in obs]
        a = self.cov_ff[np.ix_(cols, cols)] + self.alpha * np.eye(len(cols))
        beta = np.linalg.solve(a, self.cov_ft[np.ix_(cols, mis)])  # (|o| S, |m|)
        f = multiscale(z, self.scales)[:, cols] - self.mean_f[cols][None, :, None, None]
        out = z.copy()
        out[:, mis] = (np.einsum("nohw,om->nmhw", f, beta) + self.mean_t[mis][None, :, None, None]).astype(z.dtype)
        return out


# ------------------------------------------------------------------------------------------------ U-Net per target
@dataclass
class UNetConfig:
    widths: tuple[int, ...] = (16, 32)
    steps: int = 400
    batch: int = 16
    lr: float = 3e-3
    seed: int = 0


class _Block(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.n = nn.GroupNorm(min(8, cout), cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.n(self.c2(F.silu(self.c1(x)))))


class UNetRegressor(nn.Module):
    """A two-level U-Net from ``n_in`` observed channels to one target channel."""

    def __init__(self, n_in: int, widths: Sequence[int] = (16, 32)):
        super().__init__()
        w0, w1 = widths
        self.e0 = _Block(n_in, w0)
        self.e1 = _Block(w0, w1)
        self.d0 = _Block(w0 + w1, w0)
        self.out = nn.Conv2d(w0, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h0 = self.e0(x)
        h1 = self.e1(F.avg_pool2d(h0, 2) if min(h0.shape[-2:]) >= 2 else h0)
        h1 = h1 if h1.shape[-2:] == h0.shape[-2:] else F.interpolate(h1, size=h0.shape[-2:], mode="nearest")
        return self.out(self.d0(torch.cat([h0, h1], 1)))


def train_unet(z: np.ndarray, observed: Sequence[int], target: int, cfg: UNetConfig | None = None
               ) -> tuple[UNetRegressor, float]:
    """Train one regressor (MSE) for ``target`` from ``observed`` on standardised panels; returns (model, seconds)."""
    cfg = cfg or UNetConfig()
    obs = sorted(set(int(o) for o in observed))
    torch.manual_seed(cfg.seed * 1000 + target)
    gen = torch.Generator().manual_seed(cfg.seed * 1000 + target)
    model = UNetRegressor(len(obs), cfg.widths)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    data = torch.as_tensor(z)
    t0 = time.perf_counter()
    for _ in range(cfg.steps):
        idx = torch.randint(len(data), (cfg.batch,), generator=gen)
        x = data[idx]
        k = int(torch.randint(4, (), generator=gen))
        x = torch.rot90(x, k, (-2, -1))
        loss = F.mse_loss(model(x[:, obs]), x[:, target:target + 1])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    return model, time.perf_counter() - t0


@torch.no_grad()
def unet_predict(models: dict[int, UNetRegressor], z: np.ndarray, observed: Sequence[int]) -> np.ndarray:
    """Prediction of the per-target regressors ``{target: model}`` (targets without a model keep NaN)."""
    obs = sorted(set(int(o) for o in observed))
    out = z.copy()
    x = torch.as_tensor(z[:, obs])
    for t in range(z.shape[1]):
        if t in obs:
            continue
        out[:, t] = models[t](x)[:, 0].numpy() if t in models else np.nan
    return out
