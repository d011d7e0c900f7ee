"""The adaptation baselines the field compares delta-Adapter with, all seeing the same post-shift data as the adapters
(the ``adapt`` split to train, ``val`` to stop, ``test`` to score).

* :func:`finetune`: every backbone parameter trained on the adaptation split (a copy; the frozen model is untouched).
* :func:`lora`: a LoRA-style low-rank update ``W + (alpha / r) B A`` (Hu et al., ICLR 2022) of every linear weight of
  a copy (attention in-projections included), ``B`` zero-initialised, rank 4, alpha 8; only ``A, B`` train.
  :func:`lora_params` counts its trainable parameters at a rank, :func:`matched_rank` finds the rank whose count comes
  closest to another method's (the equal-parameter comparison).
* :class:`RevIN`: RevIN-style re-normalisation (Kim et al., ICLR 2022) around the frozen backbone: each window is
  standardised per channel by its own mean and std, the forecast mapped back with the target's. No training.
* :func:`last_layer_refit`: the backbone's last linear layer refitted online on the adaptation windows by recursive
  least squares started at the frozen weights with prior precision ``lam`` (its closed form is ridge regression towards
  the frozen weights; we compute that form).
* :func:`ewma_correction`: residual bias correction: the forecast plus an exponentially weighted mean of past residuals
  per horizon step (weight 0.05), started on the adaptation split and updated online through the test split with the
  residuals that are observed by then (a window's residual is known ``H`` steps after its start).
"""

from __future__ import annotations

import copy
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize

from .training import FitConfig, FitLog, count, fit

FT_FIT = FitConfig(epochs=10, lr=1e-4, batch=64, patience=3)
LORA_FIT = FitConfig(epochs=10, lr=1e-3, batch=64, patience=3)


def finetune(backbone: nn.Module, x, y, xv, yv, cfg: FitConfig = FT_FIT, seed: int = 0) -> tuple[nn.Module, FitLog]:
    torch.manual_seed(seed)
    model = copy.deepcopy(backbone)
    params = list(model.parameters())
    for p in params:
        p.requires_grad_(True)

    def loss(xb, yb):
        return F.mse_loss(model(xb), yb)

    log = fit(params, loss, [model], x, y, xv, yv, cfg, seed)
    return model.eval(), log


class _LowRank(nn.Module):
    def __init__(self, out_f: int, in_f: int, rank: int, alpha: float):
        super().__init__()
        self.a = nn.Parameter(torch.randn(rank, in_f) / np.sqrt(in_f))
        self.b = nn.Parameter(torch.zeros(out_f, rank))
        self.scale = alpha / rank

    def forward(self, w: torch.Tensor) -> torch.Tensor:
        return w + self.scale * self.b @ self.a


def lora(backbone: nn.Module, x, y, xv, yv, rank: int = 4, alpha: float = 8.0, cfg: FitConfig = LORA_FIT,
         seed: int = 0) -> tuple[nn.Module, FitLog, int]:
    """Returns ``(adapted copy, log, trainable parameters)``."""
    torch.manual_seed(seed)
    model = copy.deepcopy(backbone)
    targets = [(m, "weight") for m in model.modules() if isinstance(m, nn.Linear)]
    targets += [(m, "in_proj_weight") for m in model.modules() if isinstance(m, nn.MultiheadAttention)]
    lows = []
    for mod, name in targets:
        w = getattr(mod, name)
        low = _LowRank(w.shape[0], w.shape[1], min(rank, *w.shape), alpha)
        parametrize.register_parametrization(mod, name, low)
        lows.append(low)
    params = [p for low in lows for p in low.parameters()]

    def loss(xb, yb):
        return F.mse_loss(model(xb), yb)

    log = fit(params, loss, lows, x, y, xv, yv, cfg, seed)
    return model.eval(), log, count(params)


def _lora_targets(model: nn.Module) -> list[tuple[int, int]]:
    """``(out, in)`` of every weight :func:`lora` updates."""
    shapes = [tuple(m.weight.shape) for m in model.modules() if isinstance(m, nn.Linear)]
    shapes += [tuple(m.in_proj_weight.shape) for m in model.modules() if isinstance(m, nn.MultiheadAttention)]
    return shapes


def lora_params(backbone: nn.Module, rank: int) -> int:
    """Trainable parameters of :func:`lora` at ``rank``: ``min(rank, out, in) (out + in)`` per updated weight."""
    return int(sum(min(rank, o, i) * (o + i) for o, i in _lora_targets(backbone)))


def matched_rank(backbone: nn.Module, n_params: int) -> int:
    """The rank whose :func:`lora_params` is closest to ``n_params`` (ties to the smaller rank); capped at the largest
    rank any updated weight admits, so on a small backbone the count may stay below ``n_params``."""
    top = max(min(o, i) for o, i in _lora_targets(backbone))
    return min(range(1, top + 1), key=lambda r: (abs(lora_params(backbone, r) - n_params), r))


class RevIN(nn.Module):
    """Per-window re-normalisation around a frozen backbone trained on globally standardised data."""

    def __init__(self, backbone: nn.Module, eps: float = 1e-5):
        super().__init__()
        self.backbone, self.eps = backbone, eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mu = x.mean(1, keepdim=True)
        sd = x.std(1, keepdim=True) + self.eps
        y = self.backbone((x - mu) / sd)
        return y * sd[..., : y.shape[-1]] + mu[..., : y.shape[-1]]  # the targets are the first channels


def _last_linear(model: nn.Module) -> tuple[str, nn.Linear]:
    name, last = "", None
    for n, m in model.named_modules():
        if isinstance(m, nn.Linear):
            name, last = n, m
    if last is None:
        raise ValueError("the backbone has no linear layer")
    return name, last


def last_layer_refit(backbone: nn.Module, x: torch.Tensor, y: torch.Tensor, lam: float = 10.0
                     ) -> tuple[nn.Module, float, int]:
    """Ridge-towards-frozen refit of the last linear layer on the adaptation split; returns ``(copy, seconds,
    refitted parameters)``. For DLinear the last layer is its trend map (the seasonal map stays), for the others the
    output head."""
    t0 = time.perf_counter()
    model = copy.deepcopy(backbone)
    _, last = _last_linear(model)
    feats: list[torch.Tensor] = []
    hook = last.register_forward_hook(lambda mod, inp, out: feats.append(inp[0].detach()))
    with torch.no_grad():
        full = model(x)
    hook.remove()
    h = feats[0]  # (N, n_in)
    own = h @ last.weight.T + last.bias
    rest = full.flatten(1) - own  # what the other paths contribute (DLinear: the seasonal map)
    target = y.flatten(1) - rest
    ha = torch.cat([h, torch.ones(len(h), 1)], 1).double()
    w0 = torch.cat([last.weight, last.bias[:, None]], 1).double()  # (n_out, n_in + 1)
    a = ha.T @ ha + lam * torch.eye(ha.shape[1], dtype=torch.float64)
    b = ha.T @ target.double() + lam * w0.T
    w = torch.linalg.solve(a, b).T.float()
    with torch.no_grad():
        last.weight.copy_(w[:, :-1])
        last.bias.copy_(w[:, -1])
    return model.eval(), time.perf_counter() - t0, int(w.numel())


def ewma_correction(pred_adapt: np.ndarray, y_adapt: np.ndarray, pred_test: np.ndarray, y_test: np.ndarray,
                    weight: float = 0.05) -> np.ndarray:
    """Corrected test forecasts ``(N, H, m)``: ``pred + b``, ``b`` the EWMA of the residuals observed so far."""
    horizon = pred_test.shape[1]
    b = np.zeros(pred_test.shape[1:])
    for r in y_adapt - pred_adapt:
        b = (1 - weight) * b + weight * r
    res = y_test - pred_test
    out = np.empty_like(pred_test)
    for i in range(len(pred_test)):
        j = i - horizon  # the newest test window whose whole horizon has been observed
        if j >= 0:
            b = (1 - weight) * b + weight * res[j]
        out[i] = pred_test[i] + b
    return out
