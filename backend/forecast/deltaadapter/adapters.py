"""delta-Adapter: Ada-X (input nudge), Ada-Y (output correction), Ada-X+Y, and the Gumbel-sigmoid feature mask
(Liang et al., ICLR 2026, arXiv 2601.20280; the structure follows the paper's official code, reimplemented).

A frozen forecaster F (``x (B, L, d) -> y (B, H, m)``) stays untouched; gradients flow through it to the adapters only.

* Ada-X: ``x~ = x + delta A_in(x)`` (additive) or ``x~ = x (1 + delta A_in(x))`` (multiplicative).
* Ada-Y: ``y~ = F(x~) + delta A_out(F(x~))`` or ``y~ = F(x~) (1 + delta A_out(F(x~)))``: A_out sees the forecast.
* Ada-X+Y: both, trained jointly with one MSE loss.
* Each adapter is a 3-layer MLP on the flattened window (in -> hidden -> hidden -> out) with ReLU and a per-sample
  normalisation over the hidden units between layers (the official ``InstanceNorm1d`` applied to a ``(batch,
  hidden)`` tensor normalises each sample over its hidden units) and a final tanh, so every edit is bounded by delta
  elementwise. The official code does not zero-initialise; ``zero_init=True`` (our option, labelled so on the page)
  zeroes the last layer, so the adapted forecast equals the frozen one before training.
* Feature mask (AdaIntpX): ``M = GumbelSigmoid(MLP(x))`` over all ``L x d`` inputs, ``x~ = x * M``, loss ``MSE +
  relu(mean(M) - kappa)``; at test time the noiseless mask is thresholded at 0.5.

Trained with Adam (lr 1e-3), about 10 epochs, early stopping on the validation split (:mod:`.training`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from backend.errors import InputError

from .training import FitConfig, FitLog, count, fit

MODES = ("x", "y", "xy")
KINDS = ("add", "mul")


@dataclass
class AdapterConfig:
    """Paper defaults: delta 0.1 (high-drift data), additive, hidden as d_model of the adapters, no zero-init."""

    mode: str = "xy"
    kind: str = "add"
    delta: float = 0.1
    hidden: int = 32
    zero_init: bool = False
    fit: FitConfig = field(default_factory=lambda: FitConfig(epochs=10, lr=1e-3, batch=64, patience=3))

    def check(self) -> None:
        if self.mode not in MODES or self.kind not in KINDS:
            raise InputError(f"Adapter mode must be one of {MODES} and kind one of {KINDS}.")
        if not 0.0 < self.delta <= 1.0:
            raise InputError(f"delta must be in (0, 1]; got {self.delta}.")


def _sample_norm(h: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(h, h.shape[-1:])


class BoundedMLP(nn.Module):
    """``(B, n_in) -> (B, n_out)`` in [-1, 1]: Linear, ReLU, norm, Linear, ReLU, norm, Linear, tanh."""

    def __init__(self, n_in: int, hidden: int, n_out: int, zero_init: bool = False, squash: bool = True):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(n_in, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, n_out)
        self.squash = squash
        if zero_init:
            nn.init.zeros_(self.fc3.weight)
            nn.init.zeros_(self.fc3.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = _sample_norm(F.relu(self.fc1(x)))
        h = _sample_norm(F.relu(self.fc2(h)))
        out = self.fc3(h)
        return torch.tanh(out) if self.squash else out


def bounded_edit(v: torch.Tensor, a: torch.Tensor, delta: float, kind: str) -> torch.Tensor:
    """``v + delta a`` or ``v (1 + delta a)`` with ``a`` in [-1, 1]."""
    return v + delta * a if kind == "add" else v * (1 + delta * a)


class DeltaAdapter(nn.Module):
    """Ada-X / Ada-Y / Ada-X+Y around a frozen ``backbone``. Only the adapters' parameters are trainable."""

    def __init__(self, backbone: nn.Module, lookback: int, channels: int, horizon: int, targets: int = 1,
                 cfg: AdapterConfig | None = None):
        super().__init__()
        self.cfg = cfg or AdapterConfig()
        self.cfg.check()
        self.backbone = backbone  # frozen: requires_grad False (see backbones.freeze)
        self.shape_x, self.shape_y = (lookback, channels), (horizon, targets)
        n_x, n_y = lookback * channels, horizon * targets
        z = self.cfg.zero_init
        self.a_in = BoundedMLP(n_x, self.cfg.hidden, n_x, z) if self.cfg.mode in ("x", "xy") else None
        self.a_out = BoundedMLP(n_y, self.cfg.hidden, n_y, z) if self.cfg.mode in ("y", "xy") else None

    def adapters(self) -> list[nn.Module]:
        return [m for m in (self.a_in, self.a_out) if m is not None]

    def trainable(self) -> list[nn.Parameter]:
        return [p for m in self.adapters() for p in m.parameters()]

    def nudge(self, x: torch.Tensor) -> torch.Tensor:
        """``x~`` of ``x (B, L, d)``."""
        if self.a_in is None:
            return x
        return bounded_edit(x, self.a_in(x.flatten(1)).view_as(x), self.cfg.delta, self.cfg.kind)

    def correct(self, y: torch.Tensor) -> torch.Tensor:
        """``y~`` of a backbone forecast ``y (B, H, m)``."""
        if self.a_out is None:
            return y
        return bounded_edit(y, self.a_out(y.flatten(1)).view_as(y), self.cfg.delta, self.cfg.kind)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.correct(self.backbone(self.nudge(x)))


def train_adapter(backbone: nn.Module, x: torch.Tensor, y: torch.Tensor, xv: torch.Tensor, yv: torch.Tensor,
                  cfg: AdapterConfig | None = None, seed: int = 0, progress=None, cancel=None
                  ) -> tuple[DeltaAdapter, FitLog]:
    """Fit an adapter on ``(x (N, L, d), y (N, H, m))`` with MSE, early stopping on ``(xv, yv)``."""
    cfg = cfg or AdapterConfig()
    torch.manual_seed(seed)
    _, L, d = x.shape
    _, H, m = y.shape
    model = DeltaAdapter(backbone, L, d, H, m, cfg)

    def loss(xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(model(xb), yb)

    log = fit(model.trainable(), loss, model.adapters(), x, y, xv, yv, cfg.fit, seed, progress=progress,
              cancel=cancel)
    return model, log


def _jacobian_norm(f, x: torch.Tensor, iters: int = 20) -> torch.Tensor:
    """Per-sample spectral norm of the Jacobian of ``f`` at ``x (B, ...)``: power iteration on ``J^T J`` with
    reverse-mode products only (``J v`` as the derivative of ``J^T u`` in ``u``), so fused kernels without
    forward-mode support still work (attention runs on the math kernel, which has a double backward); ``f`` treats
    samples independently."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return _power_iteration(f, x, iters)


def _power_iteration(f, x: torch.Tensor, iters: int) -> torch.Tensor:
    x = x.detach().requires_grad_(True)
    y = f(x)
    u = torch.zeros_like(y, requires_grad=True)
    (jt_u,) = torch.autograd.grad(y, x, u, create_graph=True)  # J^T u, linear in u
    v = torch.randn(x.shape, generator=torch.Generator().manual_seed(0), dtype=x.dtype)
    shape = (-1, *[1] * (x.dim() - 1))
    v = v / v.flatten(1).norm(dim=1).view(shape)
    sigma = torch.zeros(x.shape[0], dtype=x.dtype)
    for _ in range(iters):
        (jv,) = torch.autograd.grad(jt_u, u, v, retain_graph=True)
        (jtjv,) = torch.autograd.grad(y, x, jv, retain_graph=True)
        sigma = jv.flatten(1).norm(dim=1)
        v = jtjv / jtjv.flatten(1).norm(dim=1).clamp_min(1e-30).view(shape)
    return sigma.detach()


@torch.no_grad()
def drift_bound(model: DeltaAdapter, x: torch.Tensor, points: int = 8) -> dict[str, np.ndarray]:
    """How far the adapted forecast moves from the frozen one, against the paper's O(delta) bound, per window of
    ``x (B, L, d)`` (Euclidean norms over the whole forecast):

    ``||F~(x) - F(x)|| <= Lip * ||x~ - x|| + ||y~ - F(x~)||``, with ``||x~ - x|| <= delta sqrt(L d)`` (additive; ``delta
    ||x||`` multiplicative) and ``||y~ - F(x~)|| <= delta sqrt(H m)`` (additive; ``delta ||F(x~)||`` multiplicative),
    because every adapter output lies in [-1, 1]. ``Lip`` is the largest Jacobian spectral norm of the frozen
    backbone at ``points`` points of the segment from ``x`` to ``x~`` (the mean-value bound; power iteration).

    Returns ``drift`` [B], ``bound`` (with the measured ``||x~ - x||`` and ``||y~ - F(x~)||``) [B], ``apriori`` (with
    the worst-case edit sizes) [B], ``lipschitz`` [B]."""
    f = model.backbone
    y0 = f(x)
    xt = model.nudge(x)
    ft = f(xt)
    yt = model.correct(ft)
    drift = (yt - y0).flatten(1).norm(dim=1)
    dx = (xt - x).flatten(1).norm(dim=1)
    dy = (yt - ft).flatten(1).norm(dim=1)
    lip = torch.zeros(x.shape[0], dtype=x.dtype)
    if model.a_in is not None:
        with torch.enable_grad():
            for t in torch.linspace(0.0, 1.0, points):
                lip = torch.maximum(lip, _jacobian_norm(f, (x + t * (xt - x)).detach()))
    delta, add = model.cfg.delta, model.cfg.kind == "add"
    L, d = model.shape_x
    H, m = model.shape_y
    dx_max = delta * (np.sqrt(L * d) if add else x.flatten(1).norm(dim=1)) if model.a_in is not None else 0.0
    dy_max = delta * (np.sqrt(H * m) if add else ft.flatten(1).norm(dim=1)) if model.a_out is not None else 0.0
    return {"drift": drift.numpy(), "bound": (lip * dx + dy).numpy(),
            "apriori": (lip * dx_max + dy_max).numpy() if torch.is_tensor(lip * dx_max + dy_max)
            else np.full(x.shape[0], float(dy_max)), "lipschitz": lip.numpy()}


# ---------------------------------------------------------------------------------------------------------- mask
def gumbel_sigmoid(logits: torch.Tensor, tau: float = 1.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """Relaxed Bernoulli sample ``sigmoid((logits + g1 - g2) / tau)``; the difference of two Gumbel(0, 1) draws is a
    logistic draw, which is what adding one Gumbel to the logit of a two-class softmax amounts to."""
    u = torch.rand(logits.shape, generator=generator).clamp(1e-6, 1 - 1e-6)
    return torch.sigmoid((logits + torch.log(u) - torch.log1p(-u)) / tau)


@dataclass
class MaskConfig:
    kappa: float = 0.3
    hidden: int = 64
    tau: float = 1.0
    threshold: float = 0.5
    # The official script runs 10 epochs at lr 1e-4 over tens of thousands of windows (thousands of Adam steps); the
    # miniature's ~700 adaptation windows give 11 steps an epoch, so 60 epochs at lr 1e-2 (about 660 steps) let the
    # budget term bite: with 20 epochs at 1e-3 the logits stay near 0 and the thresholded mask is a coin flip.
    fit: FitConfig = field(default_factory=lambda: FitConfig(epochs=60, lr=1e-2, batch=64, patience=10))


class FeatureMask(nn.Module):
    """Input-dependent mask over the ``L x d`` inputs of a frozen backbone."""

    def __init__(self, backbone: nn.Module, lookback: int, channels: int, cfg: MaskConfig | None = None):
        super().__init__()
        self.cfg = cfg or MaskConfig()
        if not 0.0 < self.cfg.kappa < 1.0:
            raise InputError(f"The mask budget kappa must be in (0, 1); got {self.cfg.kappa}.")
        self.backbone = backbone
        self.net = BoundedMLP(lookback * channels, self.cfg.hidden, lookback * channels, squash=False)
        self.generator = torch.Generator().manual_seed(0)

    def mask(self, x: torch.Tensor, hard: bool | None = None) -> torch.Tensor:
        """``M (B, L, d)``: relaxed Gumbel-sigmoid in training, the thresholded noiseless mask in eval mode."""
        logits = self.net(x.flatten(1)).view_as(x)
        hard = (not self.training) if hard is None else hard
        if hard:
            return (torch.sigmoid(logits) > self.cfg.threshold).float()
        return gumbel_sigmoid(logits, self.cfg.tau, self.generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.backbone(x * self.mask(x))


def train_mask(backbone: nn.Module, x: torch.Tensor, y: torch.Tensor, xv: torch.Tensor, yv: torch.Tensor,
               cfg: MaskConfig | None = None, seed: int = 0) -> tuple[FeatureMask, FitLog]:
    cfg = cfg or MaskConfig()
    torch.manual_seed(seed)
    _, L, d = x.shape
    model = FeatureMask(backbone, L, d, cfg)
    model.generator.manual_seed(seed)

    def loss(xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        m = model.mask(xb)
        return F.mse_loss(model.backbone(xb * m), yb) + F.relu(m.mean() - cfg.kappa)

    def val(xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        m = model.mask(xb, hard=True)
        return F.mse_loss(model.backbone(xb * m), yb) + F.relu(m.mean() - cfg.kappa)

    log = fit(list(model.net.parameters()), loss, [model.net], x, y, xv, yv, cfg.fit, seed, val_fn=val)
    model.eval()
    return model, log


def mask_summary(model: FeatureMask, x: torch.Tensor, planted: np.ndarray | None = None) -> dict:
    """Mean hard mask ``(L, d)`` over ``x``, the kept fraction, and (given ``planted (L, d)``) the share of the
    retained mass on the planted inputs."""
    with torch.no_grad():
        m = model.mask(x, hard=True).mean(0).numpy()
    out = {"mask": m, "kept": float(m.mean())}
    if planted is not None:
        out["planted_share"] = float(m[planted].sum() / max(m.sum(), 1e-12))
        out["planted_fraction_of_inputs"] = float(planted.mean())
    return out


def adapter_params(model: DeltaAdapter) -> int:
    return count(model.trainable())
