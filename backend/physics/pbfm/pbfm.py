"""Physics-based flow matching (PBFM): flow matching whose samples must also satisfy a PDE.

Paper: G. Baldan, Q. Liu, A. Guardone, N. Thuerey, "Physics vs Distributions: Pareto Optimal Flow Matching with
Physics Constraints" (first title "Flow Matching Meets PDEs: A Unified Framework for Physics-Constrained
Generation"), ICLR 2026; ConFIG: Q. Liu et al., "ConFIG: Towards Conflict-free Training of Physics Informed Neural
Networks", ICLR 2025 (the ``conflictfree`` package). Data and residuals: :mod:`backend.physics.pbfm.pdes`.

Training (one function, :func:`train`, for every method of :data:`METHODS`; a method's record fixes its arguments):

- flow matching on the linear path ``x_t = (1 - t) x_0 + t x_1`` (``x_0 ~ N(0, I)``, target ``v = x_1 - x_0``), MSE;
- the residual loss on the *unrolled* estimate: from ``x_t`` the learned field is integrated to ``t = 1`` in ``n``
  Euler steps (gradients flow through them), ``n`` growing 1 -> 4 over four equal stages of training; the loss is the
  batch mean of ``t * mean|R(x1_hat)|`` on de-normalised fields (late times weigh more);
- ``pbfm`` combines the two gradients by ConFIG (``conflictfree.grad_operator.ConFIG_update``: the direction with
  equal positive cosine to both unit gradients, its length the sum of the projections), falling back to the FM
  gradient when the residual gradient is not finite (``conflict_free=True``); ``weighted`` adds ``lambda x`` the
  residual loss to the FM loss (one model per lambda); ``fm`` is plain flow matching (``residual=False``);
  ``guidance`` is plain FM sampled with residual guidance (each Euler step also descends ``mean|R|`` of the one-step
  estimate ``x + (1 - t) v``).
- AdamW with cosine decay, an exponential moving average of the weights (0.999) used for sampling.

The velocity model is an MLP on the flattened field with learned-frequency sinusoidal time features (``Size:`` of a
miniature: 3 hidden layers of 256; the paper uses U-Nets and transformers on 2-D fields). Sampling: Euler in
``steps`` steps from ``N(0, I)``.

Shapes: fields ``[n, C, ...]`` as in :mod:`backend.physics.pbfm.pdes`; the model works on ``[n, D]`` flattened,
normalised fields.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from ...errors import InputError, JobCancelled
from ...registry import Registry
from ...runtime import CancelToken, Progress, report
from .pdes import Case, get_case


@dataclass
class PBFMConfig:
    case: str = "darcy"
    hidden: int = 256
    layers: int = 3
    time_features: int = 16
    steps: int = 2000
    batch: int = 128
    lr: float = 1e-3
    ema: float = 0.999
    n_train: int = 2000
    max_unroll: int = 4
    data_seed: int = 0
    per_node_norm: bool = False


class Velocity(nn.Module):
    """``v(x_t, t)``: an MLP on ``[x_t, sin/cos(2 pi w t)]`` with learned frequencies ``w``."""

    def __init__(self, dim: int, cfg: PBFMConfig):
        super().__init__()
        self.freq = nn.Parameter(torch.randn(cfg.time_features) * 2.0)
        layers: list[nn.Module] = []
        width = dim + 2 * cfg.time_features
        for _ in range(cfg.layers):
            layers += [nn.Linear(width, cfg.hidden), nn.SiLU()]
            width = cfg.hidden
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        ang = 2 * math.pi * t[:, None] * self.freq[None, :]
        return self.net(torch.cat([x, torch.sin(ang), torch.cos(ang)], 1))


@dataclass
class Normaliser:
    """Mean and standard deviation, per channel (scalars ``[C]``, the default) or per node (arrays of the field's
    shape); fields are de-normalised before every residual."""

    mean: np.ndarray  # [C] or the field's shape
    std: np.ndarray  # [C] or the field's shape
    shape: tuple[int, ...]

    def _stats(self) -> tuple[np.ndarray, np.ndarray]:
        if np.shape(self.mean) == tuple(self.shape):
            return np.asarray(self.mean), np.asarray(self.std)
        ext = [1] * (len(self.shape) - 1)
        return np.asarray(self.mean).reshape(-1, *ext), np.asarray(self.std).reshape(-1, *ext)

    def encode(self, fields: np.ndarray) -> np.ndarray:
        m, s = self._stats()
        return ((fields - m) / s).reshape(len(fields), -1)

    def decode_t(self, x: torch.Tensor) -> torch.Tensor:
        m, s = self._stats()
        return x.reshape((len(x), *self.shape)) * torch.as_tensor(s, dtype=x.dtype)[None] + torch.as_tensor(
            m, dtype=x.dtype)[None]


def normaliser_for(case: Case, fields: np.ndarray, per_node: bool = False) -> Normaliser:
    """Per-channel statistics of ``fields`` ``[n, C, ...]``, or per node (``per_node``: every value of the field its
    own mean and standard deviation; a node that is constant in the data, such as a Dirichlet boundary, decodes to
    its constant whatever the model outputs there)."""
    axes = (0,) if per_node else tuple(i for i in range(fields.ndim) if i != 1)
    return Normaliser(fields.mean(axis=axes), fields.std(axis=axes) + 1e-8, case.shape)


# ------------------------------------------------------------------------------------------------ ConFIG
def config_direction(g1: torch.Tensor, g2: torch.Tensor) -> torch.Tensor:
    """ConFIG for two gradients, written out: ``g_u = normalise(pinv([u1, u2]^T) 1)``,
    ``g = (g1 . g_u + g2 . g_u) g_u`` (``u_i`` the unit gradients). The training uses the package; this is the
    reference its tests compare with."""
    U = torch.stack([g1 / g1.norm(), g2 / g2.norm()])
    d = torch.linalg.pinv(U) @ torch.ones(2, dtype=g1.dtype)
    gu = d / d.norm()
    return (g1 @ gu + g2 @ gu) * gu


def config_update(g1: torch.Tensor, g2: torch.Tensor) -> torch.Tensor:
    """The conflict-free update of the ``conflictfree`` package; the FM gradient alone when ``g2`` is not finite."""
    if not torch.isfinite(g2).all() or float(g2.norm()) == 0.0:
        return g1
    from conflictfree.grad_operator import ConFIG_update
    from conflictfree.weight_model import EqualWeight

    class _Equal(EqualWeight):  # the package's equal weights, in the gradients' dtype (float64 in the tests)
        def get_weights(self, gradients: torch.Tensor, losses=None, device=None) -> torch.Tensor:  # noqa: ANN001
            return super().get_weights(gradients=gradients, losses=losses, device=device).to(gradients.dtype)

    return ConFIG_update([g1, g2], weight_model=_Equal())


# ------------------------------------------------------------------------------------------------ training
@dataclass
class TrainLog:
    fm_loss: list[float]
    res_loss: list[float]
    cos_fm_res: list[float]
    seconds: float


def _unroll(model: nn.Module, x: torch.Tensor, t: torch.Tensor, n: int) -> torch.Tensor:
    """Integrate from ``t`` to 1 in ``n`` Euler steps (per-sample step sizes)."""
    dt = (1.0 - t) / n
    for _ in range(n):
        x = x + dt[:, None] * model(x, t)
        t = t + dt
    return x


def grad_vector(model: nn.Module) -> torch.Tensor:
    """All parameter gradients as one vector (``conflictfree.utils.get_gradient_vector``; missing ones as zeros)."""
    from conflictfree.utils import get_gradient_vector

    return get_gradient_vector(model, none_grad_mode="zero")


def train(cfg: PBFMConfig, *, residual: bool = False, lam: float = 0.0, conflict_free: bool = False, seed: int = 0,
          progress: Progress | None = None, cancel: CancelToken | None = None,
          label: str = "training") -> tuple[Velocity, Normaliser, TrainLog]:
    """Train one velocity model: plain flow matching (``residual=False``), FM plus ``lam`` x the residual loss, or
    the two gradients combined by ConFIG (``residual=True, conflict_free=True``)."""
    case = get_case(cfg.case)
    fields = case.fields(cfg.n_train, cfg.data_seed)
    norm = normaliser_for(case, fields, cfg.per_node_norm)
    X = torch.as_tensor(norm.encode(fields), dtype=torch.float32)
    torch.manual_seed(seed)
    model = Velocity(X.shape[1], cfg)
    ema = Velocity(X.shape[1], cfg)
    ema.load_state_dict(model.state_dict())
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    gen = torch.Generator().manual_seed(seed)
    log = TrainLog([], [], [], 0.0)
    clock = time.perf_counter()
    for step in range(cfg.steps):
        if cancel is not None and cancel.cancelled:
            raise JobCancelled("cancelled")
        idx = torch.randint(0, len(X), (cfg.batch,), generator=gen)
        x1 = X[idx]
        x0 = torch.randn(x1.shape, generator=gen)
        t = torch.rand(cfg.batch, generator=gen)
        xt = (1 - t[:, None]) * x0 + t[:, None] * x1
        fm = ((model(xt, t) - (x1 - x0)) ** 2).mean()
        opt.zero_grad()
        if not residual:
            fm.backward()
            res_val = float("nan")
        else:
            n_unroll = 1 + min(cfg.max_unroll - 1, step * cfg.max_unroll // cfg.steps)
            x1_hat = _unroll(model, xt, t, n_unroll)
            R = case.residual(norm.decode_t(x1_hat))
            res = (t * R.abs().reshape(cfg.batch, -1).mean(1)).mean()
            res_val = float(res.detach())
            if not conflict_free:
                (fm + lam * res).backward()
            else:
                fm.backward(retain_graph=True)
                g_fm = grad_vector(model)
                opt.zero_grad()
                res.backward()
                g_res = grad_vector(model)
                from conflictfree.utils import apply_gradient_vector

                apply_gradient_vector(model, config_update(g_fm, g_res))
                if step % 50 == 0:
                    log.cos_fm_res.append(float(torch.nn.functional.cosine_similarity(g_fm, g_res, 0)))
        opt.step()
        sched.step()
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.mul_(cfg.ema).add_(pm, alpha=1 - cfg.ema)
        if step % 50 == 0:
            log.fm_loss.append(float(fm.detach()))
            log.res_loss.append(res_val)
            report(progress, step / cfg.steps, f"{label}: step {step} of {cfg.steps}")
    log.seconds = time.perf_counter() - clock
    ema.eval()
    return ema, norm, log


# ------------------------------------------------------------------------------------------------ sampling
def sample(model: Velocity, norm: Normaliser, case: Case, n: int, *, steps: int = 50, seed: int = 0,
           guidance: float = 0.0) -> np.ndarray:
    """``n`` fields ``[n, C, ...]`` by Euler integration; ``guidance > 0`` adds residual-guided steps."""
    if not 1 <= steps <= 1000:
        raise InputError(f"Sampling steps must be 1 to 1,000 (got {steps}).")
    if not 1 <= n <= 4096:
        raise InputError(f"Draw 1 to 4,096 samples (got {n}).")
    gen = torch.Generator().manual_seed(seed)
    dim = int(np.prod(case.shape))
    x = torch.randn((n, dim), generator=gen)
    dt = 1.0 / steps
    for k in range(steps):
        t = torch.full((n,), k * dt)
        if guidance > 0:
            x = x.detach().requires_grad_(True)
            v = model(x, t)
            x1_hat = x + (1 - t[:, None]) * v
            r = case.residual(norm.decode_t(x1_hat)).abs().reshape(n, -1).mean(1).sum()
            (gx,) = torch.autograd.grad(r, x)
            with torch.no_grad():
                x = x + dt * v - guidance * dt * gx / (gx.reshape(n, -1).norm(dim=1, keepdim=True) + 1e-12) * \
                    math.sqrt(dim)
        else:
            with torch.no_grad():
                x = x + dt * model(x, t)
    with torch.no_grad():
        return norm.decode_t(x.detach()).numpy().astype(np.float64)


def energy_distance(a: np.ndarray, b: np.ndarray) -> float:
    """``2 E|X - Y| - E|X - X'| - E|Y - Y'|`` between two sets of flattened fields (unbiased within-set terms)."""
    A = torch.as_tensor(a.reshape(len(a), -1), dtype=torch.float64)
    B = torch.as_tensor(b.reshape(len(b), -1), dtype=torch.float64)
    ab = torch.cdist(A, B).mean()
    aa = torch.cdist(A, A).sum() / (len(A) * (len(A) - 1))
    bb = torch.cdist(B, B).sum() / (len(B) * (len(B) - 1))
    return float(2 * ab - aa - bb)


# ------------------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class Method:
    """One method of the comparison: how its model trains (``residual``, ``lam``, ``conflict_free``, and
    ``overrides`` of :class:`PBFMConfig` fields such as ``max_unroll``), how it samples (``guidance``), the stem of
    its shipped weights and the PDE ``cases`` it has models for. Called as ``method(model, norm, case, n, steps=,
    seed=)`` it draws ``n`` fields ``[n, C, ...]`` from a trained model the way the method samples."""

    residual: bool = False
    lam: float = 0.0
    conflict_free: bool = False
    guidance: float = 0.0
    weights: str = ""  # the asset stem
    overrides: tuple[tuple[str, object], ...] = ()
    cases: tuple[str, ...] = ("darcy", "heat")

    @property
    def trained(self) -> bool:
        """Whether the method trains its own models (residual guidance samples the plain FM ones)."""
        return self.guidance == 0

    def config(self, cfg: PBFMConfig) -> PBFMConfig:
        """``cfg`` with this method's overrides."""
        from dataclasses import replace

        return replace(cfg, **dict(self.overrides))

    def fit(self, cfg: PBFMConfig, *, seed: int = 0, progress: Progress | None = None,
            cancel: CancelToken | None = None) -> tuple[Velocity, Normaliser, TrainLog]:
        """Train this method's model (:func:`train` with the method's arguments)."""
        return train(self.config(cfg), residual=self.residual, lam=self.lam, conflict_free=self.conflict_free,
                     seed=seed, progress=progress, cancel=cancel, label=self.weights)

    def __call__(self, model: Velocity, norm: Normaliser, case: Case, n: int, *, steps: int = 50,
                 seed: int = 0) -> np.ndarray:
        return sample(model, norm, case, n, steps=steps, seed=seed, guidance=self.guidance)


LAMBDAS = (0.1, 0.3, 1.0, 3.0, 10.0)  # both cases
LAMBDAS_DARCY = (30.0, 100.0, 300.0)  # the sweep continued on Darcy until the distribution error gives way
GUIDANCE = (0.05, 0.2)

METHODS: Registry[Method] = Registry("PBFM method")
METHODS.add("pbfm", Method(residual=True, conflict_free=True, weights="pbfm"),
            label="PBFM (FM + ConFIG + unrolling, ours)", kind="ours")
METHODS.add("fm", Method(weights="fm"), label="Flow matching", kind="baseline")
for _lam in LAMBDAS + LAMBDAS_DARCY:
    METHODS.add(f"weighted-{_lam:g}", Method(residual=True, lam=_lam, weights=f"weighted{_lam:g}",
                                             cases=("darcy",) if _lam in LAMBDAS_DARCY else ("darcy", "heat")),
                label=f"FM + {_lam:g} x residual", kind="baseline")
for _g in GUIDANCE:
    METHODS.add(f"guidance-{_g:g}", Method(guidance=_g, weights="fm"), label=f"FM + residual guidance {_g:g}",
                kind="baseline")
METHODS.add("pbfm-1step", Method(residual=True, conflict_free=True, weights="pbfm1step",
                                 overrides=(("max_unroll", 1),), cases=("darcy",)),
            label="PBFM without unrolling (one-step estimate)", kind="ablation")

DIAGNOSTICS: Registry[Method] = Registry("PBFM diagnostic model")
"""Flow-matching models that ask why the miniature's samples are not physical (Darcy, seed 0): more capacity, more
steps, per-node normalisation (each node its own mean and scale, so the residual's second differences see the
model's error at the scale of that node)."""
DIAGNOSTICS.add("fm-wide", Method(weights="diag_fm_wide", overrides=(("hidden", 512),), cases=("darcy",)),
                label="FM, 3 x 512 hidden", kind="reference")
DIAGNOSTICS.add("fm-long", Method(weights="diag_fm_long", overrides=(("steps", 8000),), cases=("darcy",)),
                label="FM, 8,000 steps", kind="reference")
DIAGNOSTICS.add("fm-node", Method(weights="diag_fm_node", overrides=(("per_node_norm", True),), cases=("darcy",)),
                label="FM, per-node normalisation", kind="reference")


def config_dict(cfg: PBFMConfig) -> dict[str, object]:
    return asdict(cfg)


GenerateFn = Callable[..., np.ndarray]
