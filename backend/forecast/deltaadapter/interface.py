"""The registries of delta-Adapter (the pysteps ``interface`` pattern): every entry is the callable that runs it.

Adaptation methods (``METHODS``): ``method(ctx: AdaptContext) -> Fit`` trains on the adaptation split (early
stopping on ``val``) and predicts the ``val`` and ``test`` windows.

| name     | kind     | method                                                                                  |
|----------|----------|-----------------------------------------------------------------------------------------|
| ada_xy   | ours     | Ada-X+Y: input nudge and output correction, bounded by delta (Liang et al., ICLR 2026)  |
| ada_x    | ablation | Ada-X only (input nudge)                                                                |
| ada_y    | ablation | Ada-Y only (output correction seeing the forecast)                                      |
| frozen   | reference| the frozen backbone (every gain is measured against it)                                 |
| finetune | baseline | full fine-tuning of the backbone                                                        |
| lora     | baseline | LoRA-style low-rank update of its linear weights (Hu et al., ICLR 2022)                 |
| revin    | baseline | RevIN-style per-window re-normalisation (Kim et al., ICLR 2022)                         |
| refit    | baseline | online (recursive least squares) refit of the last linear layer                         |
| ewma     | baseline | residual EWMA bias correction                                                           |

Calibrators (``CALIBRATORS``, each a :class:`Calibrator`: ``calibrator(alpha, scored, cal_split, test_split) ->
calibration.Interval``): ``cc`` Conformal Corrector with the finite-sample rank (ours), ``cc_plain`` with the paper's
plain quantile (ablation), ``qc`` Quantile Calibrator (ours), ``split`` constant-width split conformal, ``residual``
empirical residual quantiles, ``cqr`` conformalised quantile regression on QC (Romano et al. 2019), ``aci`` adaptive
conformal inference (Gibbs & Candes 2021), ``mapie`` mapie's split conformal (reference).

Backbones (``BACKBONES``: ``backbone(lookback, horizon, channels)`` builds the untrained architecture): ``dlinear``,
``patchtst``, ``mlp``. Presets (``PRESETS``: ``preset()`` loads the series): ``synthetic``, ``co2``, ``macro``.

This module imports no torch: the entries import their modules when called.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from backend.registry import Registry

from . import data as dt

if TYPE_CHECKING:
    from .calibration import Interval


# ------------------------------------------------------------------------------------------- adaptation methods
@dataclass
class AdaptContext:
    """What every adaptation method sees: the frozen ``backbone``, the ``windows`` of the series, the backbone's
    forecasts ``frozen[split]`` (``adapt``, ``val``, ``test``), the edit (``kind`` ``add`` or ``mul``, ``delta``,
    ``zero_init``), the training ``seed`` and ``epochs`` (a cap on every trained method's epochs, or None)."""

    backbone: Any
    windows: dt.Windows
    frozen: dict[str, np.ndarray]
    kind: str = "add"
    delta: float = 0.1
    zero_init: bool = False
    seed: int = 0
    epochs: int | None = None

    def split(self, name: str) -> tuple[Any, Any]:
        """``(x, y)`` tensors of a split."""
        return self.windows.torch(name)

    def capped(self, cfg: Any) -> Any:
        """A training config with its epochs capped by :attr:`epochs`."""
        return cfg if self.epochs is None else replace(cfg, epochs=min(cfg.epochs, int(self.epochs)))


@dataclass
class Fit:
    """A method's forecasts of the ``test`` and ``val`` windows ``(N, H, m)``, its trainable parameters, training
    seconds and extra fields of its row (epochs, loss curves)."""

    test: np.ndarray
    val: np.ndarray | None
    params: int
    seconds: float
    extra: dict = field(default_factory=dict)


def _curves(log: Any) -> dict:
    return {"epochs": log.epochs_run, "curve": {"train": log.train, "val": log.val}}


def _adapter(mode: str, ctx: AdaptContext) -> Fit:
    from . import adapters as ad
    from .backbones import predict

    cfg = ad.AdapterConfig(mode=mode, kind=ctx.kind, delta=ctx.delta, zero_init=ctx.zero_init)
    cfg.fit = ctx.capped(cfg.fit)
    (xa, ya), (xv, yv), (xt, _) = ctx.split("adapt"), ctx.split("val"), ctx.split("test")
    model, log = ad.train_adapter(ctx.backbone, xa, ya, xv, yv, cfg, ctx.seed)
    return Fit(predict(model, xt), predict(model, xv), ad.adapter_params(model), log.seconds, _curves(log))


def ada_xy(ctx: AdaptContext) -> Fit:
    """Ada-X+Y: the bounded input nudge and output correction."""
    return _adapter("xy", ctx)


def ada_x(ctx: AdaptContext) -> Fit:
    """Ada-X: the bounded input nudge alone."""
    return _adapter("x", ctx)


def ada_y(ctx: AdaptContext) -> Fit:
    """Ada-Y: the bounded output correction alone."""
    return _adapter("y", ctx)


def frozen(ctx: AdaptContext) -> Fit:
    """The deployed backbone, untouched."""
    return Fit(ctx.frozen["test"], ctx.frozen["val"], 0, 0.0)


def finetune(ctx: AdaptContext) -> Fit:
    """Every backbone weight trained on the adaptation split (a copy)."""
    from . import baselines as bl
    from .backbones import n_params, predict

    (xa, ya), (xv, yv), (xt, _) = ctx.split("adapt"), ctx.split("val"), ctx.split("test")
    model, log = bl.finetune(ctx.backbone, xa, ya, xv, yv, ctx.capped(bl.FT_FIT), seed=ctx.seed)
    return Fit(predict(model, xt), predict(model, xv), n_params(model), log.seconds, _curves(log))


def lora(ctx: AdaptContext) -> Fit:
    """A rank-4 update of every linear weight of a copy."""
    from . import baselines as bl
    from .backbones import predict

    (xa, ya), (xv, yv), (xt, _) = ctx.split("adapt"), ctx.split("val"), ctx.split("test")
    model, log, k = bl.lora(ctx.backbone, xa, ya, xv, yv, cfg=ctx.capped(bl.LORA_FIT), seed=ctx.seed)
    return Fit(predict(model, xt), predict(model, xv), k, log.seconds, _curves(log))


def revin(ctx: AdaptContext) -> Fit:
    """Per-window re-normalisation around the frozen backbone (no training)."""
    from . import baselines as bl
    from .backbones import predict

    model = bl.RevIN(ctx.backbone)
    return Fit(predict(model, ctx.split("test")[0]), predict(model, ctx.split("val")[0]), 0, 0.0)


def refit(ctx: AdaptContext) -> Fit:
    """The last linear layer refitted by ridge towards the frozen weights (online RLS in closed form)."""
    from . import baselines as bl
    from .backbones import predict

    xa, ya = ctx.split("adapt")
    model, secs, k = bl.last_layer_refit(ctx.backbone, xa, ya)
    return Fit(predict(model, ctx.split("test")[0]), predict(model, ctx.split("val")[0]), k, secs)


def ewma(ctx: AdaptContext) -> Fit:
    """The forecast plus an exponentially weighted mean of the residuals observed so far."""
    from . import baselines as bl

    y, f = ctx.windows.y, ctx.frozen
    t0 = time.perf_counter()
    pt = bl.ewma_correction(f["adapt"], y["adapt"], f["test"], y["test"])
    pv = bl.ewma_correction(f["adapt"], y["adapt"], f["val"], y["val"])
    return Fit(pt, pv, int(np.prod(f["test"].shape[1:])), time.perf_counter() - t0)


METHODS: Registry[Callable[[AdaptContext], Fit]] = Registry("adaptation method")
METHODS.add("ada_xy", ada_xy, label="Ada-X+Y (ours)", kind="ours", color="#d62728",
            about="input nudge + output correction, each bounded by delta")
METHODS.add("ada_x", ada_x, label="Ada-X (input nudge)", kind="ablation", color="#ff7f0e",
            about="input nudge only")
METHODS.add("ada_y", ada_y, label="Ada-Y (output correction)", kind="ablation", color="#e377c2",
            about="output correction only")
METHODS.add("frozen", frozen, label="Frozen backbone", kind="reference", color="#7f7f7f",
            about="the deployed model, untouched")
METHODS.add("finetune", finetune, label="Full fine-tuning", kind="baseline", color="#1f77b4",
            about="every backbone weight trained on the post-shift data")
METHODS.add("lora", lora, label="LoRA (rank 4)", kind="baseline", color="#17becf",
            about="low-rank update of every linear weight")
METHODS.add("revin", revin, label="RevIN re-normalisation", kind="baseline", color="#2ca02c",
            about="per-window standardisation around the frozen model")
METHODS.add("refit", refit, label="Last-layer refit (online RLS)", kind="baseline", color="#9467bd",
            about="ridge towards the frozen weights, the closed form of recursive least squares")
METHODS.add("ewma", ewma, label="Residual EWMA", kind="baseline", color="#8c564b",
            about="forecast + exponentially weighted mean of observed residuals")


# --------------------------------------------------------------------------------------------------- calibrators
@dataclass
class Scored:
    """What every calibrator sees, per split: the frozen forecasts ``pred``, the truth ``y``, QC's quantiles ``q``
    (``(N, H, m, len(taus))``), CC's scales ``w``; ``tau_index(alpha)`` the indices of QC's ``alpha / 2`` and
    ``1 - alpha / 2`` quantiles."""

    pred: dict[str, np.ndarray]
    y: dict[str, np.ndarray]
    q: dict[str, np.ndarray]
    w: dict[str, np.ndarray]
    tau_index: Callable[[float], tuple[int, int]]


@dataclass(frozen=True)
class Calibrator:
    """One interval method: ``interval(alpha, scored, cal_split, test_split)`` calibrates on ``cal_split`` and
    returns the intervals of ``test_split``. ``curve``: drawn in the coverage-vs-nominal curves; ``scores``: the
    conformal scores it thresholds over exchangeable random splits (``scaled`` = ``|y - y_hat| / w``, ``absolute`` =
    ``|y - y_hat|``; None: not a split-conformal method) with the quantile ``rule``."""

    interval: Callable[[float, Scored, str, str], Interval]
    curve: bool = True
    scores: str | None = None
    rule: str = "rank"

    def __call__(self, alpha: float, scored: Scored, cal_split: str, test_split: str) -> Interval:
        return self.interval(alpha, scored, cal_split, test_split)


def _residuals(s: Scored, cal_split: str) -> np.ndarray:
    return s.y[cal_split] - s.pred[cal_split]


def cc(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """Conformal Corrector: ``y_hat +- kappa w``, kappa the finite-sample rank of the scaled scores."""
    from .calibration import cc_interval

    return cc_interval(s.w[cal_split], _residuals(s, cal_split), s.pred[test_split], s.w[test_split], alpha)[0]


def cc_plain(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """Conformal Corrector with the plain empirical quantile of the scaled scores."""
    from .calibration import cc_interval

    return cc_interval(s.w[cal_split], _residuals(s, cal_split), s.pred[test_split], s.w[test_split], alpha,
                       "plain")[0]


def qc(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """Quantile Calibrator: its ``alpha / 2`` and ``1 - alpha / 2`` quantiles (trained on the adaptation split, it
    takes nothing from ``cal_split``)."""
    from .calibration import Interval

    lo, hi = s.tau_index(alpha)
    return Interval(s.q[test_split][..., lo], s.q[test_split][..., hi])


def split(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """Constant-width split conformal."""
    from .calibration import split_conformal

    return split_conformal(_residuals(s, cal_split), s.pred[test_split], alpha)


def residual(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """Empirical quantiles of the signed residuals per horizon step."""
    from .calibration import residual_quantiles

    return residual_quantiles(_residuals(s, cal_split), s.pred[test_split], alpha)


def cqr(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """Conformalised quantile regression on QC's quantiles."""
    from .calibration import cqr as conformalised

    lo, hi = s.tau_index(alpha)
    qc_, qt = s.q[cal_split], s.q[test_split]
    return conformalised(qc_[..., lo], qc_[..., hi], s.y[cal_split], qt[..., lo], qt[..., hi], alpha)


def aci(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """Adaptive conformal inference, updated online through the test split."""
    from .calibration import aci as adaptive

    return adaptive(_residuals(s, cal_split), s.pred[test_split], s.y[test_split], alpha)[0]


def mapie(alpha: float, s: Scored, cal_split: str, test_split: str) -> Interval:
    """mapie's ``SplitConformalRegressor`` on the frozen forecasts (the reference for ``split``)."""
    from .calibration import Interval, mapie_split_conformal

    lo, hi = mapie_split_conformal(s.pred[cal_split], s.y[cal_split], s.pred[test_split], alpha)
    return Interval(lo.astype(np.float64), hi.astype(np.float64))


CALIBRATORS: Registry[Calibrator] = Registry("calibrator")
CALIBRATORS.add("cc", Calibrator(cc, scores="scaled"), label="Conformal Corrector (ours)", kind="ours",
                color="#d62728", about="scale net + finite-sample rank ceil((n+1)(1-alpha))")
CALIBRATORS.add("qc", Calibrator(qc), label="Quantile Calibrator (ours)", kind="ours", color="#ff7f0e",
                about="monotone quantile heads on the frozen forecast")
CALIBRATORS.add("cc_plain", Calibrator(cc_plain, curve=False, scores="scaled", rule="plain"),
                label="CC, plain quantile (paper's code)", kind="ablation", color="#e377c2",
                about="empirical 1-alpha quantile of the scores")
CALIBRATORS.add("split", Calibrator(split, scores="absolute"), label="Split conformal (constant width)",
                kind="baseline", color="#1f77b4", about="|y - y_hat| scores, finite-sample rank")
CALIBRATORS.add("residual", Calibrator(residual, curve=False), label="Empirical residual quantiles", kind="baseline",
                color="#2ca02c", about="signed residual quantiles per horizon step")
CALIBRATORS.add("cqr", Calibrator(cqr), label="CQR on QC", kind="baseline", color="#9467bd",
                about="conformalised quantile regression")
CALIBRATORS.add("aci", Calibrator(aci), label="ACI (online)", kind="baseline", color="#8c564b",
                about="adaptive conformal inference, gamma 0.005")
CALIBRATORS.add("mapie", Calibrator(mapie, curve=False), label="mapie split conformal", kind="reference",
                color="#bcbd22", about="mapie 1.6 SplitConformalRegressor, prefit")


# ----------------------------------------------------------------------------------------- backbones and presets
class Backbone:
    """The factory of one frozen-forecaster architecture: ``backbone(lookback, horizon, channels)`` builds it
    untrained (:func:`backend.forecast.deltaadapter.backbones.build`)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __call__(self, lookback: int, horizon: int, channels: int) -> Any:
        from .backbones import build, config_for

        return build(config_for(self.kind, lookback, horizon, channels))


BACKBONES: Registry[Backbone] = Registry("backbone")
BACKBONES.add("dlinear", Backbone("dlinear"), label="DLinear", kind="reference", color="#7f7f7f")
BACKBONES.add("patchtst", Backbone("patchtst"), label="PatchTST-style transformer", kind="reference",
              color="#393b79")
BACKBONES.add("mlp", Backbone("mlp"), label="MLP", kind="reference", color="#637939")

PRESETS: Registry[Callable[[], dt.Series]] = Registry("series preset")
PRESETS.add("synthetic", dt.synthetic, label="Synthetic: 6 channels, documented shift", kind="reference")
PRESETS.add("co2", dt.co2, label="Mauna Loa CO2, weekly (statsmodels)", kind="reference")
PRESETS.add("macro", dt.macro, label="US macro growth, quarterly (statsmodels)", kind="reference")

get_method = METHODS.get
get_calibrator = CALIBRATORS.get

__all__ = ["BACKBONES", "CALIBRATORS", "METHODS", "PRESETS", "AdaptContext", "Backbone", "Calibrator", "Fit", "Scored",
           "get_calibrator", "get_method"]
