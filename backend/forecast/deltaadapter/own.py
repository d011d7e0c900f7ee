"""delta-Adapter on the user's own forecasts, with no backbone: the output adapter and the two calibrators need only
the inputs ``X``, the forecast ``y_hat`` and the truth ``y``, so a forecaster that lives elsewhere (a spreadsheet, a
vendor, a model this lab cannot load) can be post-processed from a table of its forecasts.

The table (input kind ``forecast_table``, :func:`read_forecasts`): a header row, a time column first (dates with or
without UTC offsets, or increasing numbers; :mod:`backend.io.timeaxis`), the columns ``actual`` and ``forecast`` (by
those names, else the second and third columns), then up to 16 numeric covariates. Each row is one time step with
the one-step-ahead forecast made for it.

:func:`own_forecasts` ``(table, OwnConfig)`` -> :class:`OwnResult` (the page's and the CLI's job:
:func:`backend.forecast.deltaadapter.jobs.run_own`), in time order: the windows' first 50 % adapt, the next
20 % validate (early stopping, conformal calibration), the last 30 % test. A window at step ``t`` is the ``lookback``
steps before ``t`` of ``[actual, covariates]`` (standardised by the adaptation split) and the forecast for ``t``:
``X`` ``[N, L, 1 + c]``, ``y_hat`` and ``y`` ``[N, 1, 1]``.

- point forecasts: the forecast as given; a linear recalibration ``a y_hat + b`` (least squares on the adaptation
  split: the plain baseline); **Ada-Y** ``y_hat + delta A_out(y_hat)`` (:class:`~.adapters.DeltaAdapter` around the
  identity, ``mode="y"``: the forecast is the frozen model's output).
- intervals at miscoverage ``alpha``: every calibrator the page tabulates (:data:`~.pipeline.TABULATED`: **CC**,
  **QC**, the conformal baselines), calibrated on the validation windows; coverage on the later test windows with a
  moving-block bootstrap interval (:func:`~.calibration.time_ordered_coverage`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from backend.errors import InputError
from backend.io.timeaxis import parse_time_column
from backend.runtime import CancelToken, Progress, checked, report

from .data import read_frame

MAX_BYTES = 10 * 2**20
MAX_ROWS = 20_000
MAX_COVARIATES = 16
MIN_ROWS = 120
SPLITS = (("adapt", 0.5), ("val", 0.2), ("test", 0.3))
OURS_INTERVAL = "cc"  # the calibrator whose band the plot draws


@dataclass
class ForecastTable:
    """``actual`` and ``forecast`` float64 ``[T]``, ``covariates`` float64 ``[T, c]`` (names in
    ``covariate_names``), ``times`` as written in the file."""

    name: str
    times: list[str]
    actual: np.ndarray
    forecast: np.ndarray
    covariates: np.ndarray
    covariate_names: list[str]
    about: str = ""

    def summary(self) -> dict[str, object]:
        return {"name": self.name, "rows": int(len(self.actual)), "covariates": self.covariate_names,
                "about": self.about}


def read_forecasts(data: bytes, name: str = "the upload") -> ForecastTable:
    """The ``forecast_table`` kind's decoder (see the module docstring); InputError says what to fix."""
    import pandas as pd

    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {MAX_BYTES // 2**20} MB.")
    df = read_frame(data, name, "time, actual, forecast, covariates", MAX_ROWS)
    if df.shape[1] < 3:
        raise InputError(f"{name} needs a time column, an actual and a forecast column (found {df.shape[1]}).")
    if len(df) > MAX_ROWS:
        raise InputError(f"{name} has more than {MAX_ROWS:,} rows; cut it to the most recent {MAX_ROWS:,}.")
    if len(df) < MIN_ROWS:
        raise InputError(f"{name} has {len(df)} rows; adaptation, validation and test splits need at least "
                         f"{MIN_ROWS}.")
    cols = [str(c) for c in df.columns]
    lower = {c.strip().lower(): c for c in cols[1:]}
    actual = lower.get("actual", cols[1])
    forecast = lower.get("forecast", cols[2] if cols[2] != actual else cols[1])
    rest = [c for c in cols[1:] if c not in (actual, forecast)]
    if len(rest) > MAX_COVARIATES:
        raise InputError(f"{name} has {len(rest)} covariates; the limit is {MAX_COVARIATES}.")
    values = {}
    for c in (actual, forecast, *rest):
        col = pd.to_numeric(df[c], errors="coerce")
        if col.isna().any():
            bad = df[c][col.isna()]
            what = "a missing value" if pd.isna(bad.iloc[0]) else f"the non-numeric value {str(bad.iloc[0])[:30]!r}"
            raise InputError(f"Column {c!r} has {what} at line {int(bad.index[0]) + 2}; fill or remove it.")
        v = col.to_numpy(np.float64)
        if not np.isfinite(v).all():
            raise InputError(f"Column {c!r} has infinite values.")
        values[c] = v
    axis = parse_time_column(df.iloc[:, 0], cols[0])
    if not (np.diff(axis.order) > 0).all():
        raise InputError(f"The time column {cols[0]!r} must be strictly increasing (sorted, no duplicates; time "
                         "stamps are compared in UTC).")
    if float(values[actual].std()) == 0.0:
        raise InputError(f"Column {actual!r} (the actual values) is constant.")
    cov = np.stack([values[c] for c in rest], axis=1) if rest else np.zeros((len(df), 0))
    about = f"{len(df)} rows; actual {actual!r}, forecast {forecast!r}, {len(rest)} covariates"
    return ForecastTable(str(name), [str(t) for t in df.iloc[:, 0]], values[actual], values[forecast], cov, rest,
                         about + (f" ({axis.note})" if axis.note else ""))


@dataclass(frozen=True)
class OwnConfig:
    """Window length, the adapter's edit bound and kind, the miscoverage, the seed."""

    lookback: int = 24
    delta: float = 0.1
    kind: str = "add"
    alpha: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        if not 4 <= int(self.lookback) <= 256:
            raise InputError(f"The window length must be 4-256 steps; got {self.lookback}.")
        if not 0.0 < float(self.delta) <= 1.0:
            raise InputError(f"delta must be in (0, 1]; got {self.delta}.")
        if self.kind not in ("add", "mul"):
            raise InputError(f"The edit is 'add' or 'mul'; got {self.kind!r}.")
        if not 0.0 < float(self.alpha) < 0.5:
            raise InputError(f"alpha must be in (0, 0.5); got {self.alpha}.")


@dataclass
class OwnResult:
    """``points``: method -> test MSE / MAE (original units) and training seconds; ``intervals``: calibrator ->
    time-ordered coverage, its block-bootstrap interval and mean width; ``example``: the test windows' truth,
    forecasts and CC band (original units) for the plot; ``splits``: windows per split."""

    table: dict
    config: dict
    points: dict
    intervals: dict
    example: dict
    splits: dict = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def windows(table: ForecastTable, lookback: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per split ``(X [N, L, 1 + c], y_hat [N, 1, 1], y [N, 1, 1])`` in the standardised units of the adaptation
    split, plus ``"scale"`` = ``(mean, std)`` of the actual values."""
    t = len(table.actual)
    feats = np.concatenate([table.actual[:, None], table.covariates], axis=1)
    starts = np.arange(lookback, t)
    n = len(starts)
    if n < 60:
        raise InputError(f"{table.name} gives {n} windows of {lookback} steps; at least 60 are needed (a longer "
                         "table or a shorter window).")
    cut = np.cumsum([0] + [int(f * n) for _, f in SPLITS[:-1]] + [n - sum(int(f * n) for _, f in SPLITS[:-1])])
    adapt_end = starts[cut[1] - 1]
    mean, std = feats[:adapt_end].mean(0), feats[:adapt_end].std(0)
    std = np.where(std > 0, std, 1.0)
    z = (feats - mean) / std
    yz = (table.actual - mean[0]) / std[0]
    fz = (table.forecast - mean[0]) / std[0]
    out: dict = {"scale": (float(mean[0]), float(std[0]))}
    for (s, _), a, b in zip(SPLITS, cut[:-1], cut[1:], strict=True):
        idx = starts[a:b]
        x = z[idx[:, None] + np.arange(-lookback, 0)[None]]
        out[s] = (x.astype(np.float32), fz[idx][:, None, None].astype(np.float32), yz[idx][:, None, None].astype(
            np.float32))
    return out


def own_forecasts(table: ForecastTable, config: OwnConfig, progress: Progress | None = None,
                  token: CancelToken | None = None) -> OwnResult:
    """The forecast, its linear recalibration and Ada-Y on the test split; CC, QC and split conformal intervals."""
    import torch
    from torch import nn

    from . import calibration as cal
    from .adapters import AdapterConfig, train_adapter
    from .interface import CALIBRATORS, Scored
    from .pipeline import TABULATED

    progress = checked(progress, token)
    w = windows(table, int(config.lookback))
    m, s = w["scale"]
    tt = {k: tuple(torch.from_numpy(a) for a in w[k]) for k in ("adapt", "val", "test")}
    y_test = w["test"][2] * s + m
    points: dict[str, dict] = {}

    def score(name: str, pred_z: np.ndarray, secs: float) -> None:
        pred = pred_z * s + m
        points[name] = {"mse": float(((pred - y_test) ** 2).mean()), "mae": float(np.abs(pred - y_test).mean()),
                        "train_s": round(secs, 3)}

    score("forecast", w["test"][1], 0.0)
    t0 = time.perf_counter()
    f_a, y_a = w["adapt"][1].ravel(), w["adapt"][2].ravel()
    a, b = np.polyfit(f_a, y_a, 1)
    score("linear", a * w["test"][1] + b, time.perf_counter() - t0)
    report(progress, 0.2, "Ada-Y on the forecasts")
    t0 = time.perf_counter()
    ada, _ = train_adapter(nn.Identity(), tt["adapt"][1], tt["adapt"][2], tt["val"][1], tt["val"][2],
                           AdapterConfig(mode="y", kind=config.kind, delta=float(config.delta)), seed=config.seed,
                           cancel=token)
    with torch.no_grad():
        ada_test = ada(tt["test"][1]).numpy()
    score("ada_y", ada_test, time.perf_counter() - t0)
    report(progress, 0.5, "calibrators")
    alpha = float(config.alpha)
    taus = sorted(set(cal.TAUS) | {alpha / 2, 1 - alpha / 2})
    qc, _ = cal.train_qc(*tt["adapt"], *tt["val"], taus=taus, seed=config.seed)
    net, _ = cal.train_cc(*tt["adapt"], *tt["val"], seed=config.seed)
    splits = ("val", "test")
    with torch.no_grad():
        scored = Scored({k: w[k][1] for k in splits}, {k: w[k][2] for k in splits},
                        {k: qc(tt[k][0], tt[k][1]).numpy() for k in splits},
                        {k: net(tt[k][0], tt[k][1]).numpy() for k in splits},
                        lambda a: (taus.index(a / 2), taus.index(1 - a / 2)))
    intervals, ivs = {}, {}
    for k in TABULATED:  # every calibrator of the registry, calibrated on the validation windows
        ivs[k] = iv = CALIBRATORS[k](alpha, scored, "val", "test")
        y = w["test"][2]
        to = cal.time_ordered_coverage((y >= iv.lo) & (y <= iv.hi), 1, seed=config.seed)
        intervals[k] = {"coverage": to["coverage"], "interval": to["ci"], "width": iv.width() * s,
                        "block": to["block"]}
    report(progress, 1.0, "done")
    n_show = min(200, len(y_test))
    cc = ivs[OURS_INTERVAL]
    example = {"truth": (y_test[-n_show:, 0, 0]).tolist(), "forecast": (w["test"][1][-n_show:, 0, 0] * s + m).tolist(),
               "ada_y": (ada_test[-n_show:, 0, 0] * s + m).tolist(), "cc_lo": (cc.lo[-n_show:, 0, 0] * s + m).tolist(),
               "cc_hi": (cc.hi[-n_show:, 0, 0] * s + m).tolist(), "times": table.times[-n_show:]}
    return OwnResult(table.summary(), asdict(config), points, intervals, example,
                     {k: int(len(w[k][0])) for k in ("adapt", "val", "test")})
