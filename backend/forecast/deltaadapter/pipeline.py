"""One delta-Adapter run: a frozen backbone, the adapters and every baseline on the same post-shift data, with costs.

:func:`adapt` trains Ada-X, Ada-Y and Ada-X+Y and the adaptation baselines on the ``adapt`` split (early stopping on
``val``), scores all on ``test`` (MSE, MAE, per-horizon MSE), and reports trainable parameters and training seconds
beside each; the backbone's state hash is taken before and after. :func:`delta_sweep` is test MSE of Ada-X+Y against
delta. :func:`select` trains the feature mask. :func:`calibrate` fits QC and CC and the conformal baselines and
reports coverage and mean width on the test split, coverage against nominal before and after the shift, and CC's
coverage over random exchangeable splits.

The methods and calibrators are the entries of :mod:`.interface` (``METHODS``, ``CALIBRATORS``); the presets,
``synthetic`` (:func:`.data.synthetic`), ``co2`` and ``macro`` (:mod:`.data`), each ship with their backbones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from backend.errors import InputError

from . import adapters as ad
from . import calibration as cal
from . import data as dt
from .backbones import load_shipped, n_params, state_hash
from .backbones import predict as _predict
from .interface import CALIBRATORS, METHODS, PRESETS, AdaptContext, Scored


def load_preset(name: str) -> dt.Series:
    """The series of a preset (a name of ``interface.PRESETS``)."""
    return PRESETS.get(name)()


def _scores(pred: np.ndarray, y: np.ndarray) -> dict:
    err = pred - y
    return {"mse": float(np.mean(err**2)), "mae": float(np.mean(np.abs(err))),
            "mse_per_horizon": [float(v) for v in np.mean(err**2, axis=(0, 2))],
            "se_sem_per_horizon": [float(v) for v in np.std(err**2, axis=(0, 2)) / np.sqrt(len(err))]}


@dataclass
class AdaptResult:
    rows: dict[str, dict]
    hash_before: str
    hash_after: str
    backbone_params: int
    example: dict = field(default_factory=dict)

    def table(self) -> list[dict]:
        return [{"method": k, **{c: v[c] for c in ("mse", "mae", "val_mse", "params", "train_s", "improvement")}}
                for k, v in self.rows.items()]


def adapt(series: dt.Series, backbone: torch.nn.Module, delta: float = 0.1, kind: str = "add",
          zero_init: bool = False, methods: tuple[str, ...] = tuple(METHODS), seed: int = 0,
          windows: dt.Windows | None = None, n_example: int = 3, epochs: int | None = None, progress=None,
          cancel=None) -> AdaptResult:
    """Every method of ``methods`` on the post-shift splits of ``series``; ``delta`` in (0, 1]. ``epochs`` caps the
    epochs of every trained method alike (default: each method's own, 10 with early stopping)."""
    if not 0.0 < delta <= 1.0:
        raise InputError(f"delta must be in (0, 1]; got {delta}.")
    w = windows or dt.make_windows(series)
    xt, _ = w.torch("test")
    h0 = state_hash(backbone)
    frozen = {s: _predict(backbone, w.torch(s)[0]) for s in ("adapt", "val", "test")}
    ctx = AdaptContext(backbone, w, frozen, kind, delta, zero_init, seed, epochs)
    rows: dict[str, dict] = {}
    preds: dict[str, np.ndarray] = {}
    todo = [METHODS.key(m) for m in methods]
    for i, m in enumerate(todo):
        if cancel is not None:
            cancel.check()
        if progress is not None:
            progress(i / len(todo), f"{m}")
        fit = METHODS[m](ctx)
        preds[m] = fit.test
        val_mse = float(np.mean((fit.val - w.y["val"]) ** 2)) if fit.val is not None else None
        rows[m] = {**_scores(fit.test, w.y["test"]), "val_mse": val_mse, "params": int(fit.params),
                   "train_s": float(fit.seconds), **fit.extra}
    base = rows.get("frozen", {}).get("mse")
    for r in rows.values():
        r["improvement"] = float(1 - r["mse"] / base) if base else None
    h1 = state_hash(backbone)
    idx = np.linspace(0, len(xt) - 1, n_example).astype(int)
    example = {"t0": [int(v) for v in w.t0["test"][idx]], "truth": w.y["test"][idx, :, 0].tolist(),
               "history": w.x["test"][idx, -min(w.lookback, 3 * w.horizon):, 0].tolist(),
               "pred": {k: v[idx, :, 0].tolist() for k, v in preds.items()}}
    return AdaptResult(rows, h0, h1, n_params(backbone), example)


def delta_sweep(series: dt.Series, backbone: torch.nn.Module, deltas=(0.01, 0.05, 0.1, 0.2, 0.3), kind: str = "add",
                seed: int = 0, windows: dt.Windows | None = None) -> dict:
    """Test MSE of Ada-X+Y per delta (and the frozen backbone's)."""
    w = windows or dt.make_windows(series)
    xa, ya = w.torch("adapt")
    xv, yv = w.torch("val")
    xt, _ = w.torch("test")
    frozen = float(np.mean((_predict(backbone, xt) - w.y["test"]) ** 2))
    out = []
    for dlt in deltas:
        model, _ = ad.train_adapter(backbone, xa, ya, xv, yv, ad.AdapterConfig(kind=kind, delta=float(dlt)), seed)
        out.append(float(np.mean((_predict(model, xt) - w.y["test"]) ** 2)))
    return {"deltas": [float(d) for d in deltas], "mse": out, "frozen": frozen, "kind": kind}


def versus_lora(series: dt.Series, backbone: torch.nn.Module, delta: float = 0.1, kind: str = "add", seed: int = 0,
                windows: dt.Windows | None = None, epochs: int | None = None, confidence: float = 0.95) -> dict:
    """Ada-X+Y against LoRA at equal trainable parameters: LoRA's rank is :func:`baselines.matched_rank` of the
    adapters' count. Both train on the ``adapt`` split and stop on ``val``; the gain is LoRA's minus Ada-X+Y's test MSE
    per window (positive: the adapters win), its interval a moving-block bootstrap over the time-ordered test windows
    (blocks of ``max(2 H, 24)`` windows; the windows overlap). Returns ``rank``, ``params`` per method, ``mse`` per
    method, ``gain``, ``gain_ci``, ``block`` and ``windows``."""
    from backend.stats import block_bootstrap_mean

    from . import baselines as bl

    w = windows or dt.make_windows(series)
    (xa, ya), (xv, yv), (xt, _) = w.torch("adapt"), w.torch("val"), w.torch("test")
    cfg = ad.AdapterConfig(mode="xy", kind=kind, delta=delta)
    fit_cfg = bl.LORA_FIT if epochs is None else replace(bl.LORA_FIT, epochs=min(bl.LORA_FIT.epochs, int(epochs)))
    if epochs is not None:
        cfg.fit = replace(cfg.fit, epochs=min(cfg.fit.epochs, int(epochs)))
    model, _ = ad.train_adapter(backbone, xa, ya, xv, yv, cfg, seed)
    k_ada = ad.adapter_params(model)
    rank = bl.matched_rank(backbone, k_ada)
    low, _, k_lora = bl.lora(backbone, xa, ya, xv, yv, rank=rank, cfg=fit_cfg, seed=seed)
    from .interface import lora as lora_fit

    ours = METHODS.names("ours")[0]  # Ada-X+Y
    base = next(n for n in METHODS if METHODS[n] is lora_fit)
    err = {name: ((_predict(m, xt) - w.y["test"]) ** 2).reshape(len(xt), -1).mean(axis=1)
           for name, m in ((ours, model), (base, low))}
    block = max(2 * int(w.horizon), 24)
    ci = block_bootstrap_mean(err[base] - err[ours], block, confidence=confidence, seed=seed)
    return {"rank": int(rank), "params": {ours: int(k_ada), base: int(k_lora)},
            "mse": {k: float(v.mean()) for k, v in err.items()}, "gain": ci.mean, "gain_ci": [ci.low, ci.high],
            "block": block, "windows": int(len(xt))}


def select(series: dt.Series, backbone: torch.nn.Module, kappa: float = 0.3, seed: int = 0,
           windows: dt.Windows | None = None) -> dict:
    """Train the feature mask at budget ``kappa``; its mean mask (L x d), share on planted inputs and test MSEs."""
    w = windows or dt.make_windows(series)
    xa, ya = w.torch("adapt")
    xv, yv = w.torch("val")
    xt, _ = w.torch("test")
    model, log = ad.train_mask(backbone, xa, ya, xv, yv, ad.MaskConfig(kappa=kappa), seed)
    s = ad.mask_summary(model, xt, series.planted)
    mse_mask = float(np.mean((_predict(model, xt) - w.y["test"]) ** 2))
    mse_frozen = float(np.mean((_predict(backbone, xt) - w.y["test"]) ** 2))
    return {"kappa": kappa, "mask": s["mask"].tolist(), "kept": s["kept"], "planted_share": s.get("planted_share"),
            "planted_fraction_of_inputs": s.get("planted_fraction_of_inputs"),
            "planted": series.planted.tolist() if series.planted is not None else None,
            "channels": series.channels, "mse_mask": mse_mask, "mse_frozen": mse_frozen,
            "mse_ratio": mse_mask / mse_frozen, "train_s": log.seconds}


NOMINAL = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
# The calibrators every calibration tabulates: all but the references (mapie's split conformal, tabulated when asked).
TABULATED: tuple[str, ...] = tuple(m for m in CALIBRATORS if CALIBRATORS.kind(m) != "reference")


def calibrate(series: dt.Series, backbone: torch.nn.Module, alpha: float = 0.05, seed: int = 0, n_splits: int = 50,
              windows: dt.Windows | None = None, also: tuple[str, ...] = ()) -> dict:
    """QC and CC plus the conformal baselines at miscoverage ``alpha`` (0 < alpha < 0.5); ``also``: calibrators
    tabulated beside :data:`TABULATED`."""
    if not 0.0 < alpha < 0.5:
        raise InputError(f"alpha must be in (0, 0.5); got {alpha}.")
    w = windows or dt.make_windows(series)
    splits = ("early_val", "adapt", "val", "test")
    xs = {s: torch.from_numpy(w.x[s]) for s in splits}
    pred = {s: _predict(backbone, xs[s]) for s in splits}
    taus = sorted(set(cal.TAUS) | {alpha / 2, 1 - alpha / 2} | {a for n in NOMINAL for a in ((1 - n) / 2, (1 + n) / 2)})
    t0 = time.perf_counter()
    qc, qlog = cal.train_qc(xs["adapt"], torch.from_numpy(pred["adapt"]), torch.from_numpy(w.y["adapt"]), xs["val"],
                            torch.from_numpy(pred["val"]), torch.from_numpy(w.y["val"]), taus, seed=seed)
    qc_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    net, clog = cal.train_cc(xs["adapt"], torch.from_numpy(pred["adapt"]), torch.from_numpy(w.y["adapt"]),
                             xs["val"], torch.from_numpy(pred["val"]), torch.from_numpy(w.y["val"]), seed=seed)
    cc_s = time.perf_counter() - t0
    with torch.no_grad():
        q = {s: qc(xs[s], torch.from_numpy(pred[s])).numpy() for s in splits}
        wsc = {s: net(xs[s], torch.from_numpy(pred[s])).numpy() for s in splits}
    tau_arr = np.array(taus)

    def tau_index(a: float) -> tuple[int, int]:
        return int(np.argmin(np.abs(tau_arr - a / 2))), int(np.argmin(np.abs(tau_arr - (1 - a / 2))))

    f = Scored(pred, w.y, q, wsc, tau_index)
    table = {}
    for m in dict.fromkeys((*TABULATED, *(CALIBRATORS.key(a) for a in also))):
        iv = CALIBRATORS[m](alpha, f, "val", "test")
        table[m] = {"coverage": iv.coverage(w.y["test"]), "width": iv.width(),
                    "per_horizon": iv.per_horizon(w.y["test"])}
    table["qc"]["train_s"], table["cc"]["train_s"] = qc_s, cc_s
    # coverage vs nominal: calibrated before the shift (early_val) and scored there / after it, and recalibrated after
    curves = {}
    for m in (m for m in TABULATED if CALIBRATORS[m].curve):
        c = CALIBRATORS[m]
        before, stale, after = [], [], []
        for nom in NOMINAL:
            a = 1 - nom
            before.append(c(a, f, "early_val", "early_val").coverage(w.y["early_val"]))
            stale.append(c(a, f, "early_val", "test").coverage(w.y["test"]))
            after.append(c(a, f, "val", "test").coverage(w.y["test"]))
        curves[m] = {"before_shift": before, "after_shift_stale": stale, "after_shift": after}
    # the split-conformal calibrators' scores pooled over the post-shift held-out windows
    scores = {"scaled": np.concatenate([np.abs(w.y[s] - pred[s]) / wsc[s] for s in ("val", "test")]),
              "absolute": np.concatenate([np.abs(w.y[s] - pred[s]) for s in ("val", "test")])}
    pooled = scores["scaled"]
    random_splits = {m: cal.random_split_coverage(scores[c.scores], alpha, n_splits, seed=seed, rule=c.rule).tolist()
                     for m, c in CALIBRATORS.items() if c.scores is not None}
    n_test_el = (len(pooled) - int(0.5 * len(pooled))) * pooled.shape[1] * pooled.shape[2]
    mono = bool((np.diff(q["test"], axis=-1) >= 0).all())
    i_lo, i_hi = tau_index(alpha)
    qc_tau_cov = {f"{t:g}": float((w.y["test"][..., 0] <= q["test"][..., 0, j]).mean()) for j, t in enumerate(taus)
                  if t in cal.TAUS}
    noise = None
    if series.noise_scale is not None:
        idx = w.t0["test"][:, None] + np.arange(w.horizon)[None]
        noise = float(np.corrcoef(wsc["test"][..., 0].ravel(), series.noise_scale[idx].ravel())[0, 1])
    cc_test = CALIBRATORS["cc"](alpha, f, "val", "test")
    lo_t, hi_t = cc_test.lo, cc_test.hi
    # the headline coverage: calibrated on the validation windows, scored on the later test windows (time order)
    time_ordered = {}
    for m in TABULATED:
        iv = CALIBRATORS[m](alpha, f, "val", "test")
        time_ordered[m] = cal.time_ordered_coverage((w.y["test"] >= iv.lo) & (w.y["test"] <= iv.hi), w.horizon,
                                                    seed=seed)
    qlo, qhi = q["test"][..., i_lo], q["test"][..., i_hi]
    k_ex = np.linspace(0, len(w.y["test"]) - 1, 3).astype(int)
    return {"alpha": alpha, "table": table, "nominal": list(NOMINAL), "curves": curves, "time_ordered": time_ordered,
            "random_splits": {**random_splits, "n_test_elements": int(n_test_el),
                              "tolerance": cal.binomial_tolerance(alpha, int(n_test_el))},
            "qc_monotone": mono, "qc_tau_coverage": qc_tau_cov, "width_noise_corr": noise,
            "kappa": {"rank": cal.conformal_kappa(np.abs(w.y["val"] - pred["val"]) / wsc["val"], alpha),
                      "plain": cal.conformal_kappa(np.abs(w.y["val"] - pred["val"]) / wsc["val"], alpha, "plain")},
            "example": {"truth": w.y["test"][k_ex, :, 0].tolist(), "pred": pred["test"][k_ex, :, 0].tolist(),
                        "cc_lo": lo_t[k_ex, :, 0].tolist(), "cc_hi": hi_t[k_ex, :, 0].tolist(),
                        "qc": q["test"][k_ex, :, 0].tolist(), "taus": taus, "qc_lo": qlo[k_ex, :, 0].tolist(),
                        "qc_hi": qhi[k_ex, :, 0].tolist()},
            "curves_train": {"quantile_calibrator": {"train": qlog.train, "val": qlog.val},
                             "scale_net": {"train": clog.train, "val": clog.val}}}


def shipped(preset: str, kind: str):
    """``(series, frozen backbone, meta)`` of a preset with its shipped backbone."""
    s = load_preset(preset)
    model, meta = load_shipped(preset, kind)
    return s, model, meta
