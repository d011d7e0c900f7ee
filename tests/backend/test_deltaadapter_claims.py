"""The claims of delta-Adapter on our miniature, with the shipped frozen backbones (``assets/deltaadapter_*``).

ci tier: the synthetic preset's shift with DLinear (every method but Ada-X / Ada-Y alone), the patch transformer on a fixed
subset of the adaptation split (Ada-X+Y vs full fine-tuning, same epochs), the feature mask at budget 0.3, the
calibrators with DLinear. Full tier: the MLP, the patch transformer on the whole adaptation split with every method, and the
real series (CO2, macro) with every backbone."""

from __future__ import annotations

import numpy as np
import pytest

from backend.forecast.deltaadapter import calibration as cal
from backend.forecast.deltaadapter import data as dt
from backend.forecast.deltaadapter import pipeline as pl
from backend.forecast.deltaadapter.backbones import load_shipped
from backend.forecast.deltaadapter.interface import METHODS

BASELINES = ("revin", "refit", "ewma")
CI_METHODS = ("frozen", "ada_xy", "finetune", "lora", "revin", "refit", "ewma")  # Ada-X / Ada-Y alone: full tier
_CACHE: dict = {}


@pytest.fixture(scope="module")
def synth() -> tuple[dt.Series, dt.Windows]:
    s = dt.synthetic()
    return s, dt.make_windows(s)


def _adapt(synth, backbone: str, methods=CI_METHODS, subset: int | None = None,
           epochs: int | None = None) -> pl.AdaptResult:
    """``subset``: the first ``subset`` windows of every post-shift split (adapt, val, test)."""
    key = (backbone, methods, subset, epochs)
    if key not in _CACHE:
        s, w = synth
        if subset is not None:
            cut = ("adapt", "val", "test")
            w = dt.Windows({k: (v[:subset] if k in cut else v) for k, v in w.x.items()},
                           {k: (v[:subset] if k in cut else v) for k, v in w.y.items()},
                           {k: (v[:subset] if k in cut else v) for k, v in w.t0.items()},
                           w.mean, w.std, w.lookback, w.horizon)
        model, _ = load_shipped("synthetic", backbone)
        _CACHE[key] = pl.adapt(s, model, 0.1, "add", methods=methods, windows=w, epochs=epochs)
    return _CACHE[key]


def _numbers(r: pl.AdaptResult) -> dict:
    return {f"mse_{k}": v["mse"] for k, v in r.rows.items()}


@pytest.mark.parametrize("backbone", ["dlinear", pytest.param("mlp", marks=pytest.mark.full)])
def test_claim_ada_xy_lowers_mse_of_frozen_backbone(synth, backbone: str, record_claim) -> None:
    r = _adapt(synth, backbone)
    record_claim(**_numbers(r), backbone_unchanged=r.hash_before == r.hash_after)
    assert r.hash_before == r.hash_after
    assert r.rows["ada_xy"]["mse"] < r.rows["frozen"]["mse"]
    assert r.rows["ada_xy"]["val_mse"] < r.rows["frozen"]["val_mse"]


_LINEAR_SHIFT = ("the preset's shift is linear in the inputs (daily amplitude, lead coefficient, level), so a ridge "
                 "refit of one linear layer on the 697 adaptation windows recovers it, while delta = 0.1 caps "
                 "Ada-Y's edit at 0.1 per step against a shift of about 0.23 (amplitude) + 0.23 (level) in "
                 "standardised units")


@pytest.mark.parametrize("backbone", [
    pytest.param("dlinear", marks=pytest.mark.xfail(strict=True, reason=(
        "measured test MSE: Ada-X+Y 0.1758 beats RevIN 0.1826 and EWMA 0.1882 but not the last-layer refit 0.1358; "
        + _LINEAR_SHIFT))),
    pytest.param("mlp", marks=[pytest.mark.full, pytest.mark.xfail(strict=True, reason=(
        "measured test MSE: Ada-X+Y 0.3426 vs RevIN 0.3334, last-layer refit 0.3186, EWMA 0.3382 (all better); "
        + _LINEAR_SHIFT + "; the MLP's larger bias (frozen 0.450) needs edits beyond delta"))]),
    pytest.param("patchtst", marks=[pytest.mark.full, pytest.mark.timeout(2700), pytest.mark.xfail(strict=True, reason=(
        "measured test MSE (all 697 adaptation windows): Ada-X+Y 0.3007 beats the last-layer refit 0.3601 but not "
        "RevIN 0.2753 or the EWMA 0.2879: the transformer has no internal normalisation, so per-window "
        "re-normalisation and a running bias absorb the level shift that delta = 0.1 caps for the adapters"))]),
])
def test_claim_ada_xy_at_least_as_good_as_revin_refit_ewma(synth, backbone: str, record_claim) -> None:
    r = _adapt(synth, backbone, tuple(METHODS) if backbone == "patchtst" else CI_METHODS)
    record_claim(**{f"mse_{k}": r.rows[k]["mse"] for k in ("ada_xy", *BASELINES)})
    for b in BASELINES:
        assert r.rows["ada_xy"]["mse"] <= r.rows[b]["mse"], b


def test_claim_patch_transformer_small_and_faster_than_finetuning(synth, record_claim) -> None:
    r = _adapt(synth, "patchtst", ("frozen", "ada_xy", "finetune"), subset=128, epochs=3)
    share = r.rows["ada_xy"]["params"] / r.backbone_params
    record_claim(backbone_params=r.backbone_params, adapter_params=r.rows["ada_xy"]["params"], share=share,
                 ada_xy_s=r.rows["ada_xy"]["train_s"], finetune_s=r.rows["finetune"]["train_s"],
                 ada_xy_epochs=r.rows["ada_xy"]["epochs"], finetune_epochs=r.rows["finetune"]["epochs"],
                 **_numbers(r))
    assert r.backbone_params >= 500_000 and share < 0.10
    assert r.rows["ada_xy"]["mse"] < r.rows["frozen"]["mse"]
    per_epoch = r.rows["ada_xy"]["train_s"] / r.rows["ada_xy"]["epochs"]
    assert per_epoch < r.rows["finetune"]["train_s"] / r.rows["finetune"]["epochs"]
    assert r.rows["ada_xy"]["train_s"] < r.rows["finetune"]["train_s"]


@pytest.mark.full
@pytest.mark.timeout(2700)
def test_claim_patch_transformer_full(synth, record_claim) -> None:
    r = _adapt(synth, "patchtst", tuple(METHODS))
    share = r.rows["ada_xy"]["params"] / r.backbone_params
    record_claim(**_numbers(r), share=share)
    assert r.hash_before == r.hash_after and share < 0.10
    assert r.rows["ada_xy"]["mse"] < r.rows["frozen"]["mse"]


@pytest.mark.full
@pytest.mark.timeout(2700)
@pytest.mark.xfail(strict=False, reason=(
    "not robust at full scale: Ada-X+Y trained faster than full fine-tuning in 2 of 3 runs (197.9 s vs 221.8 s in "
    "the benchmark run, benchmarks/results/deltaadapter.md; 37.4 s vs 47.5 s in a test run) and slower in one "
    "(65.2 s, 10 epochs, vs 62.7 s, 9 epochs, early stopped): Ada-X needs the backward pass through the whole frozen "
    "transformer, so an epoch costs about what a fine-tuning epoch costs (6.5 s vs 7.0 s) and early stopping decides "
    "the total; Ada-Y alone, with no backward through the backbone, takes about 0.4x"))
def test_claim_patch_transformer_full_time(synth, record_claim) -> None:
    r = _adapt(synth, "patchtst", tuple(METHODS))
    rows = r.rows
    record_claim(ada_xy_s=rows["ada_xy"]["train_s"], finetune_s=rows["finetune"]["train_s"],
                 ada_y_s=rows["ada_y"]["train_s"], ada_xy_epochs=rows["ada_xy"]["epochs"],
                 finetune_epochs=rows["finetune"]["epochs"])
    assert rows["ada_xy"]["train_s"] < rows["finetune"]["train_s"]


@pytest.mark.parametrize("backbone", [
    pytest.param("mlp", marks=pytest.mark.xfail(strict=True, reason=(
        "measured on the 697 test windows: LoRA of rank 26 (41,664 parameters) 0.3122 vs Ada-X+Y (41,176) 0.3426, "
        "gain -0.0304 [-0.0518, -0.0081] (block bootstrap, blocks of 48 windows): LoRA edits every weight of the "
        "MLP without a bound, while delta = 0.1 caps the adapters' edits against a shift of about 0.46 in "
        "standardised units (see the cheap-baselines claim)"))),
    pytest.param("patchtst", marks=[pytest.mark.full, pytest.mark.timeout(2700), pytest.mark.xfail(strict=True, reason=(
        "measured on the 697 test windows: LoRA of rank 4 (43,680 parameters) 0.2547 vs Ada-X+Y (41,176) 0.3007, "
        "gain -0.0461 [-0.0757, -0.0212]: the transformer's weights absorb the level shift that delta caps for the "
        "adapters"))]),
])
def test_claim_ada_xy_beats_lora_at_equal_parameters(synth, backbone: str, record_claim) -> None:
    """LoRA's rank is the one whose trainable count is closest to Ada-X+Y's; paired per test window, time-ordered
    block bootstrap. DLinear admits no equal-parameter LoRA (its largest rank, 24, gives 28,800 < 41,176)."""
    s, w = synth
    model, _ = load_shipped("synthetic", backbone)
    r = pl.versus_lora(s, model, windows=w)
    p = r["params"]
    record_claim(rank=r["rank"], ada_xy_params=p["ada_xy"], lora_params=p["lora"], mse_ada_xy=r["mse"]["ada_xy"],
                 mse_lora=r["mse"]["lora"], gain=r["gain"], gain_ci=r["gain_ci"], block=r["block"])
    assert abs(p["lora"] - p["ada_xy"]) <= 0.1 * p["ada_xy"]  # equal parameters, within 10 %
    assert r["gain"] > 0


def test_lora_rank_matching_counts_what_lora_trains(synth) -> None:
    from backend.forecast.deltaadapter import baselines as bl
    from backend.forecast.deltaadapter.training import FitConfig

    _, w = synth
    model, _ = load_shipped("synthetic", "mlp")
    (xa, ya), (xv, yv) = w.torch("adapt"), w.torch("val")
    rank = bl.matched_rank(model, 41_176)
    _, _, k = bl.lora(model, xa[:8], ya[:8], xv[:8], yv[:8], rank=rank, cfg=FitConfig(epochs=1))
    assert k == bl.lora_params(model, rank)
    gaps = {r: abs(bl.lora_params(model, r) - 41_176) for r in (rank - 1, rank, rank + 1)}
    assert gaps[rank] == min(gaps.values())


def test_dlinear_costs_reported(synth, record_claim) -> None:
    """DLinear is smaller than an adapter: its numbers are reported without the size claim."""
    r = _adapt(synth, "dlinear")
    record_claim(backbone_params=r.backbone_params, adapter_params=r.rows["ada_xy"]["params"],
                 ada_xy_s=r.rows["ada_xy"]["train_s"], finetune_s=r.rows["finetune"]["train_s"],
                 lora_params=r.rows["lora"]["params"])
    assert r.rows["ada_xy"]["params"] > r.backbone_params


@pytest.mark.xfail(strict=True, reason=(
    "measured at budget 0.3: the thresholded mask keeps 29.5 % of the inputs (budget met) with test MSE 0.978x the "
    "unmasked one (bound met), but the planted inputs (25 % of all) hold 58.3 % of the retained mass, not 80 %: the "
    "mask keeps what the frozen backbone relies on, and the shipped DLinear's own input saliency |x dF/dx| puts 60 % "
    "of its reliance on the planted inputs (its moving-average trend map mixes 25 neighbouring lags, and it gives "
    "weight to the noise channels), so a mask that keeps its forecast cannot be more selective than the backbone"))
def test_claim_mask_keeps_planted_inputs(synth, record_claim) -> None:
    s, w = synth
    model, _ = load_shipped("synthetic", "dlinear")
    sel = pl.select(s, model, 0.3, windows=w)
    record_claim(planted_share=sel["planted_share"], kept=sel["kept"], mse_ratio=sel["mse_ratio"],
                 planted_fraction_of_inputs=sel["planted_fraction_of_inputs"])
    assert sel["kept"] <= 0.3 + 0.02
    assert sel["planted_share"] >= 0.80
    assert sel["mse_ratio"] <= 1.02


@pytest.fixture(scope="module")
def calib(synth) -> dict:
    s, w = synth
    model, _ = load_shipped("synthetic", "dlinear")
    return pl.calibrate(s, model, 0.05, n_splits=50, windows=w)


def test_random_split_coverage_meets_the_conformal_guarantee(calib) -> None:
    """Over random exchangeable splits the mean coverage is at least 1 - alpha whatever the scale net learned (the
    conformal theorem): an invariant of the implementation, not a claim."""
    rs = calib["random_splits"]
    assert len(rs["cc"]) >= 50 and float(np.mean(rs["cc"])) >= 1 - 0.05


def test_claim_cc_time_ordered_coverage(calib, record_claim) -> None:
    """Calibrated on the validation windows, scored on the later test windows: the nominal 0.95 lies inside the
    block-bootstrap interval of the measured coverage (blocks of 2 H or 24 windows; the windows overlap)."""
    to = calib["time_ordered"]
    cc = to["cc"]
    record_claim(coverage=cc["coverage"], coverage_interval=cc["ci"], block=cc["block"], windows=cc["windows"],
                 iid_half_width=cc["iid_tolerance"], random_split_mean=float(np.mean(calib["random_splits"]["cc"])),
                 **{f"{m}_coverage": to[m]["coverage"] for m in ("split", "cqr", "aci", "qc")},
                 **{f"{m}_coverage_interval": to[m]["ci"] for m in ("split", "cqr", "aci", "qc")})
    assert cc["ci"][0] <= 0.95 <= cc["ci"][1]


@pytest.mark.xfail(strict=True, reason=(
    "measured at alpha 0.05: CC width 2.064 (coverage 0.951) vs constant-width split conformal 1.877 (coverage "
    "0.939); the scale net's width correlates -0.20 with the true noise std: after the shift the frozen model's "
    "residuals are dominated by its bias (about 0.3 |sin| of the daily cycle, largest at peaks and troughs) rather "
    "than by the noise (largest at peaks), and w(y_hat, mean-pooled x) cannot separate the two"))
def test_claim_cc_narrower_than_split_conformal(calib, record_claim) -> None:
    t = calib["table"]
    record_claim(cc_width=t["cc"]["width"], split_width=t["split"]["width"], cc_coverage=t["cc"]["coverage"],
                 split_coverage=t["split"]["coverage"], width_noise_corr=calib["width_noise_corr"])
    assert t["cc"]["width"] < t["split"]["width"]
    assert abs(t["cc"]["coverage"] - t["split"]["coverage"]) <= 0.02  # equal coverage
    assert calib["width_noise_corr"] > 0


def test_coverage_after_shift_is_reported(calib) -> None:
    """The page's report of coverage after the shift (recalibrated and stale): every calibrator has its numbers."""
    t, c = calib["table"], calib["curves"]
    i95 = calib["nominal"].index(0.95)
    for m in ("cc", "cqr", "aci"):
        assert 0.0 <= c[m]["after_shift_stale"][i95] <= 1.0 and 0.0 <= c[m]["before_shift"][i95] <= 1.0
    assert calib["qc_monotone"]
    for m in ("cc", "cqr", "aci"):
        assert 0.0 <= t[m]["coverage"] <= 1.0


def test_claim_split_conformal_equals_mapie(synth, record_claim) -> None:
    s, w = synth
    import torch

    model, _ = load_shipped("synthetic", "dlinear")
    with torch.no_grad():
        pv = model(torch.from_numpy(w.x["val"])).numpy().astype(np.float64)
        pt = model(torch.from_numpy(w.x["test"])).numpy().astype(np.float64)
    yv = w.y["val"].astype(np.float64)
    ours = cal.split_conformal(yv - pv, pt, 0.05)
    lo, hi = cal.mapie_split_conformal(pv, yv, pt, 0.05)
    diff = max(float(np.abs(ours.lo - lo).max()), float(np.abs(ours.hi - hi).max()))
    record_claim(max_abs_diff=diff)
    assert diff < 1e-6


@pytest.mark.full
@pytest.mark.parametrize("preset", ["co2", "macro"])
@pytest.mark.parametrize("backbone", ["dlinear", "patchtst", "mlp"])
def test_real_series_as_measured(preset: str, backbone: str, record_claim) -> None:
    s = pl.load_preset(preset)
    model, _ = load_shipped(preset, backbone)
    r = pl.adapt(s, model, 0.1, "add")
    record_claim(**_numbers(r))
    assert r.hash_before == r.hash_after
    assert r.rows["ada_xy"]["mse"] < r.rows["frozen"]["mse"]
