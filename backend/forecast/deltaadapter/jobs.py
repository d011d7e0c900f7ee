"""delta-Adapter as pure jobs: what the page and the CLI call.

Every job takes the series, a preset name of :data:`~backend.forecast.deltaadapter.interface.PRESETS` or the user's
decoded ``multiseries`` CSV (a :class:`~backend.forecast.deltaadapter.data.Series`), and optionally the user's
backbone state ``(name, tensors)`` (a decoded ``backbone_state``); the frozen backbone is the preset's shipped one,
the user's state, or one trained here on the early regime of the user's series.

- :func:`run_adapt`: the adapters and every baseline on the post-shift data (test MSE, trainable parameters, seconds),
  optionally the test MSE of Ada-X+Y against delta.
- :func:`run_select`: the Gumbel-sigmoid feature mask at a budget.
- :func:`run_calibrate`: QC, CC and the conformal baselines (coverage and width, coverage over random exchangeable
  splits, before and after the shift).

Configs are frozen dataclasses validated on construction (InputError saying what to change); results hold small
JSON-able summaries.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from backend.errors import InputError
from backend.registry import choose
from backend.runtime import CancelToken, Progress, checked, report, sub_progress

from .data import Series
from .interface import BACKBONES, CALIBRATORS, METHODS, PRESETS

EDITS = ("add", "mul")  # additive or multiplicative bounded edits
MAX_SPLITS = 1000


@dataclass(frozen=True)
class AdaptConfig:
    """The ``backbone`` (a name of ``BACKBONES``), the edit bound ``delta`` in (0, 1], the edit ``kind`` (``add`` or
    ``mul``), ``zero_init`` (adapters start at the identity), the ``methods`` (names of ``METHODS``; default all),
    the ``seed`` and ``sweep`` (also the test MSE of Ada-X+Y for delta 0.01-0.3). The defaults are the CLI's."""

    backbone: str = "dlinear"
    delta: float = 0.1
    kind: str = "add"
    zero_init: bool = False
    methods: tuple[str, ...] = tuple(METHODS)
    seed: int = 0
    sweep: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "backbone", BACKBONES.key(self.backbone))
        if not 0.0 < float(self.delta) <= 1.0:
            raise InputError(f"--delta must be in (0, 1]; got {self.delta}.")
        object.__setattr__(self, "delta", float(self.delta))
        object.__setattr__(self, "kind", choose(self.kind, EDITS, "edit kind"))
        object.__setattr__(self, "zero_init", bool(self.zero_init))
        if not self.methods:
            raise InputError(f"Choose at least one method of: {', '.join(METHODS)}.")
        object.__setattr__(self, "methods", tuple(METHODS.key(m) for m in self.methods))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "sweep", bool(self.sweep))


@dataclass(frozen=True)
class SelectConfig:
    """The ``backbone``, the mask's budget ``kappa`` in (0, 1) (the share of inputs kept) and the ``seed``."""

    backbone: str = "dlinear"
    kappa: float = 0.3
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "backbone", BACKBONES.key(self.backbone))
        if not 0.0 < float(self.kappa) < 1.0:
            raise InputError(f"--kappa must be in (0, 1); got {self.kappa}.")
        object.__setattr__(self, "kappa", float(self.kappa))
        object.__setattr__(self, "seed", int(self.seed))


@dataclass(frozen=True)
class CalibrateConfig:
    """The ``backbone``, the miscoverage ``alpha`` in (0, 0.5), the calibrator reported first (``method``, a name of
    ``CALIBRATORS``; a reference is tabulated beside the others), the random exchangeable ``splits`` (1-1000) for
    CC's coverage and the ``seed``."""

    backbone: str = "dlinear"
    alpha: float = 0.05
    method: str = "cc"
    splits: int = 50
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "backbone", BACKBONES.key(self.backbone))
        object.__setattr__(self, "method", CALIBRATORS.key(self.method))
        if not 0.0 < float(self.alpha) < 0.5:
            raise InputError(f"--alpha must be in (0, 0.5); got {self.alpha}.")
        object.__setattr__(self, "alpha", float(self.alpha))
        if not 1 <= int(self.splits) <= MAX_SPLITS:
            raise InputError(f"--splits must be between 1 and {MAX_SPLITS}.")
        object.__setattr__(self, "splits", int(self.splits))
        object.__setattr__(self, "seed", int(self.seed))


@dataclass
class Frozen:
    """The series, its windows, the frozen backbone, where each came from (``source``: the provenance fields;
    ``backbone_source``: one line for the page) and the shipped weights read (``assets``)."""

    series: Series
    windows: Any
    model: Any
    source: dict[str, object]
    backbone_source: str
    assets: list[Path] = field(default_factory=list)


# Backbones trained on a user's series, by (series, settings): the three tabs and reruns reuse one training.
_TRAINED: dict[str, Any] = {}
_TRAINED_MAX = 4


def _series_key(series: Series, backbone: str, seed: int) -> str:
    h = hashlib.sha256(np.ascontiguousarray(series.values, dtype=np.float32).tobytes())
    h.update(repr((series.shift_at, series.lookback, series.horizon, backbone, seed)).encode())
    return h.hexdigest()


def frozen_backbone(data: str | Series, backbone: str, state: tuple[str, dict] | None = None, seed: int = 0,
                    progress: Progress | None = None) -> Frozen:
    """The series (a preset name or the user's series) and its frozen ``backbone``: the preset's shipped one, the
    user's ``state`` (its name and tensors), or one trained on the early regime of the user's series."""
    from . import backbones as bb
    from . import data as dt

    if isinstance(data, Series):
        series = data
        source: dict[str, object] = {"input": series.name, "lookback": series.lookback, "horizon": series.horizon}
    else:
        name = PRESETS.key(data)
        series = PRESETS[name]()
        source = {"preset": name}
    windows = dt.make_windows(series)
    assets: list[Path] = []
    if state is not None:
        model = bb.load_user(state[1], backbone, series.lookback, series.horizon, series.d)
        where = f"{backbone} from {state[0]}"
    elif not isinstance(data, Series):
        model, meta = bb.load_shipped(source["preset"], backbone)
        assets.append(bb.asset_path(source["preset"], backbone))
        where = f"shipped {meta['file']}"
    else:
        key = _series_key(series, backbone, seed)
        if key not in _TRAINED:
            x, y = windows.torch("early")
            xv, yv = windows.torch("early_val")
            _TRAINED[key], _ = bb.train_backbone(bb.config_for(backbone, series.lookback, series.horizon, series.d),
                                                 x, y, xv, yv, seed=seed, progress=progress)
            while len(_TRAINED) > _TRAINED_MAX:
                _TRAINED.pop(next(iter(_TRAINED)))
        model = copy.deepcopy(_TRAINED[key])  # a job may not change the cached backbone
        where = f"{backbone} trained here on the early regime of the series"
    source["backbone"] = where
    return Frozen(series, windows, model, source, where, assets)


def _frozen(data: str | Series, config: Any, state: tuple[str, dict] | None,
            progress: Progress | None) -> tuple[Frozen, Progress | None]:
    """:func:`frozen_backbone`, with the first 30 % of the progress for a backbone trained here; the progress of the
    rest."""
    trains = isinstance(data, Series) and state is None
    f = frozen_backbone(data, config.backbone, state, config.seed,
                        sub_progress(progress, 0.0, 0.3) if trains and progress is not None else None)
    return f, (sub_progress(progress, 0.3, 1.0) if trains and progress is not None else progress)


@dataclass
class AdaptReport:
    """``rows``: per method its test MSE / MAE, per-horizon MSE, validation MSE, trainable parameters, training
    seconds, improvement over the frozen backbone (and epochs and loss curves of trained methods); ``example``: three
    test windows with every method's forecast; ``unchanged``: the backbone's state is bit-identical after training
    (``backbone_sha256`` its hash); ``sweep``: the test MSE of Ada-X+Y per delta (or None)."""

    series: dict
    backbone: str
    backbone_params: int
    backbone_source: str
    delta: float
    kind: str
    zero_init: bool
    rows: dict[str, dict]
    example: dict
    unchanged: bool
    backbone_sha256: str
    sweep: dict | None = None
    source: dict = field(default_factory=dict)
    assets: list[Path] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """The CLI's JSON (the rows as a list with labels, no curves)."""
        keys = ("mse", "mae", "val_mse", "params", "train_s", "improvement")
        rows = [{"method": m, **{k: r[k] for k in keys}, "label": METHODS.label(m)} for m, r in self.rows.items()]
        return {"series": self.series, "backbone": self.backbone, "backbone_params": self.backbone_params,
                "delta": self.delta, "kind": self.kind, "zero_init": self.zero_init, "rows": rows,
                "backbone_unchanged": self.unchanged, "backbone_sha256": self.backbone_sha256}


def run_adapt(data: str | Series, config: AdaptConfig, state: tuple[str, dict] | None = None,
              progress: Progress | None = None, token: CancelToken | None = None) -> AdaptReport:
    """Every method of ``config`` on the post-shift splits of ``data`` around its frozen backbone."""
    from .pipeline import adapt, delta_sweep

    progress = checked(progress, token)
    f, rest = _frozen(data, config, state, progress)
    res = adapt(f.series, f.model, config.delta, config.kind, config.zero_init, config.methods, config.seed,
                f.windows, progress=sub_progress(rest, 0.0, 0.9 if config.sweep else 1.0))
    sweep = None
    if config.sweep:
        report(rest, 0.9, "delta sweep")
        sweep = delta_sweep(f.series, f.model, kind=config.kind, windows=f.windows)
    report(progress, 1.0, "done")
    return AdaptReport(f.series.summary(), config.backbone, res.backbone_params, f.backbone_source, config.delta,
                       config.kind, config.zero_init, res.rows, res.example, res.hash_before == res.hash_after,
                       res.hash_after, sweep, f.source, f.assets)


@dataclass
class SelectReport:
    """The mask's result (:func:`backend.forecast.deltaadapter.pipeline.select`: ``mask`` (L x d), ``kept``,
    ``planted_share``, MSE with and without the mask) and where the series and backbone came from."""

    series: dict
    backbone: str
    result: dict
    source: dict = field(default_factory=dict)
    assets: list[Path] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """The CLI's JSON: the result without the mask itself, the mask's mass per channel."""
        import numpy as np

        out = {k: v for k, v in self.result.items() if k not in ("mask", "planted")}
        mask = np.asarray(self.result["mask"])
        out["channel_share"] = [float(v) for v in mask.sum(0) / max(float(mask.sum()), 1e-12)]
        return out


def run_select(data: str | Series, config: SelectConfig, state: tuple[str, dict] | None = None,
               progress: Progress | None = None, token: CancelToken | None = None) -> SelectReport:
    """The feature mask at budget ``config.kappa`` around the frozen backbone of ``data``."""
    from .pipeline import select

    progress = checked(progress, token)
    f, rest = _frozen(data, config, state, progress)
    report(rest, 0.0, "training the mask")
    res = select(f.series, f.model, config.kappa, config.seed, f.windows)
    report(progress, 1.0, "done")
    return SelectReport(f.series.summary(), config.backbone, res, f.source, f.assets)


@dataclass
class CalibrateReport:
    """The calibration (:func:`backend.forecast.deltaadapter.pipeline.calibrate`: the table of every calibrator,
    random-split coverage, curves before and after the shift, an example) and where the series and backbone came
    from."""

    series: dict
    backbone: str
    method: str
    result: dict
    source: dict = field(default_factory=dict)
    assets: list[Path] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """The CLI's JSON: the chosen calibrator, coverage and width of each, the time-ordered coverage with its
        block-bootstrap interval (the headline), and the mean coverage over random exchangeable splits."""
        res, table, rs = self.result, self.result["table"], self.result["random_splits"]
        return {"series": self.series, "backbone": self.backbone, "alpha": res["alpha"], "method": self.method,
                "chosen": table[self.method], "time_ordered": res["time_ordered"],
                "table": {k: {"coverage": v["coverage"], "width": v["width"]} for k, v in table.items()},
                "random_splits": {"mean_coverage_cc": sum(rs["cc"]) / len(rs["cc"]),
                                  "mean_coverage_cc_plain": sum(rs["cc_plain"]) / len(rs["cc_plain"]),
                                  "mean_coverage_split": sum(rs["split"]) / len(rs["split"]), "n": len(rs["cc"]),
                                  "tolerance": rs["tolerance"]},
                "kappa": res["kappa"], "qc_monotone": res["qc_monotone"], "curves": res["curves"],
                "nominal": res["nominal"]}


def run_calibrate(data: str | Series, config: CalibrateConfig, state: tuple[str, dict] | None = None,
                  progress: Progress | None = None, token: CancelToken | None = None) -> CalibrateReport:
    """QC, CC and the conformal baselines at ``config.alpha`` around the frozen backbone of ``data``."""
    from .pipeline import calibrate

    progress = checked(progress, token)
    f, rest = _frozen(data, config, state, progress)
    report(rest, 0.0, "calibrating")
    res = calibrate(f.series, f.model, config.alpha, config.seed, config.splits, f.windows, also=(config.method,))
    report(progress, 1.0, "done")
    return CalibrateReport(f.series.summary(), config.backbone, config.method, res, f.source, f.assets)


def run_own(table: Any, config: Any, progress: Progress | None = None, token: CancelToken | None = None) -> Any:
    """delta-Adapter on the user's own forecasts, no backbone (``table``: :class:`.own.ForecastTable`, ``config``:
    :class:`.own.OwnConfig`): the forecast, its linear recalibration and Ada-Y, and CC / QC / split-conformal
    intervals with time-ordered coverage (:func:`.own.own_forecasts`)."""
    from .own import own_forecasts

    return own_forecasts(table, config, progress, token)
