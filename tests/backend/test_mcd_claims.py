"""Claims of MCD on the miniature, with the shipped weights (assets/mcd_*.safetensors).

Every bound is MCD (mean of M samples) against EVERY method on the page that predicts from the observed channels: the
deterministic masked regressor (MCD's network and masking, MSE), the per-target U-Nets trained for the pattern, the
multi-scale and per-pixel ridge and the most correlated channel. Comparisons are paired over (pattern, test panel):
each pair is one panel's mean Pearson r over the imputed channels; ``gain_vs_<method>`` is MCD minus that method with
a 95 % t interval (``backend.stats.paired_ci``); an interval containing zero reads "not resolved".

- Near held-out patterns (never drawn in training, each one channel away from a drawn pattern), with the page's model.
- Far patterns (``FAR_PATTERNS``, two or more channels from every training pattern), with MCD and the regressor
  trained with the group rule (``--apart``); the page's model draws every other combination, so no pattern is far from
  its training.
- One model serves every subset: a pattern drawn in training and a sparse one, through the same weights file.
- The H = W = 1 reduction (per-cell vectors) through the same network, trainer and sampler.
The test panels come from seed range 9,000 (training used 0..1,999).
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.imputation.mcd import evaluate as E
from backend.imputation.mcd import mcd as M
from backend.imputation.mcd import tissue as T
from backend.stats import paired_ci

N_TEST, SAMPLES, STEPS = 8, 8, 8
COMPETITORS = [m for m in E.METHODS if E.METHODS.kind(m) in ("baseline", "ablation")]


@pytest.fixture(scope="module")
def test_panels() -> tuple[np.ndarray, np.ndarray]:
    _, std, _ = E.load_model("tissue")
    p = T.generate(N_TEST, T.TEST_SEED)
    return std.fwd(p.x).astype(np.float32), std.fwd(p.mean).astype(np.float32)


_CACHE: dict = {}


def _run(z, mean, obs, n_samples: int = SAMPLES, steps: int = STEPS):  # noqa: ANN001, ANN202
    """One evaluation per pattern and setting per session."""
    key = (tuple(sorted(obs)), len(z), n_samples, steps)
    if key not in _CACHE:
        _CACHE[key] = E.evaluate(z, key[0], mean=mean, n_samples=n_samples, steps=steps, seed=0)
    return _CACHE[key]


def compare(results: list[E.EvalResult]) -> tuple[dict, dict]:
    """Paired comparison of MCD with every competitor, each over the (pattern, panel) pairs where it predicts (the
    U-Nets exist only for the patterns of ``E.UNET_PATTERNS``): (numbers to record, gains)."""
    nums: dict = {"patterns": [r.observed for r in results], "distance_to_training": [r.distance for r in results],
                  "mcd_mean_r": float(np.mean(np.concatenate([r.r_image["mcd"] for r in results])))}
    gains = {}
    for m in COMPETITORS:
        have = [r for r in results if m in r.r_image]
        if not have:
            continue
        ours = np.concatenate([r.r_image["mcd"] for r in have])
        theirs = np.concatenate([r.r_image[m] for r in have])
        nums[f"{m}_mean_r"] = float(theirs.mean())
        gains[m] = paired_ci(ours, theirs)
        nums.update(gains[m].numbers(f"gain_vs_{m}"))
        if len(have) < len(results):
            nums[f"{m}_patterns"] = [r.observed for r in have]
    nums["not_in_bound"] = [m for m in COMPETITORS if m not in gains]  # no shipped networks for these patterns
    nums["bayes_ceiling_mean_r"] = float(np.mean([r.mean_r("bayes") for r in results]))
    nums["strongest_baseline"] = min(gains, key=lambda m: gains[m].mean)  # the smallest gain of MCD
    nums["per_pattern_mean_r"] = {E.pattern_key(r.observed): {m: round(r.mean_r(m), 4) for m in r.ranking()}
                                  for r in results}
    return nums, gains


def brief(nums: dict) -> str:
    """The recorded means and gains in one line (the failure message)."""
    out = []
    for k, v in nums.items():
        if isinstance(v, dict) or k.endswith("_pairs"):
            continue
        if k.endswith("_mean_r") or k.startswith("gain_vs_"):
            out.append(f"{k} {[round(float(x), 3) for x in v] if isinstance(v, list) else round(float(v), 3)}")
    return "; ".join(out)


@pytest.mark.xfail(strict=True, reason="on the four near held-out patterns (32 pairs) MCD's mean r 0.468 is below the "
                   "per-target U-Nets 0.579 (gain -0.111, 95 % interval [-0.137, -0.086]) and the masked regressor 0.516 "
                   "(-0.048 [-0.066, -0.030]); it is above ridge 0.438 (+0.030 [0.008, 0.051]) and the most correlated "
                   "channel 0.360, and level with multi-scale ridge 0.463 (+0.005 [-0.015, 0.025]); cause: "
                   "the mean of M = 8 posterior samples keeps part of the samples' spread, while the masked regressor (the same network, initialised from MCD, 120 MSE steps) and the per-target U-Nets estimate the conditional mean directly in one pass; the averaged samples approach it only as M grows")
def test_claim_heldout_patterns_beat_every_baseline(test_panels, record_claim) -> None:
    res = [_run(*test_panels, obs) for obs in M.HELDOUT_PATTERNS]
    nums, gains = compare(res)
    record_claim(**nums)
    assert all(r.distance == 1 for r in res)
    assert min(g.mean for g in gains.values()) > 0, brief(nums)
    assert nums["mcd_mean_r"] < nums["bayes_ceiling_mean_r"]


@pytest.mark.xfail(strict=True, reason="on the two far patterns (two or more channels from every training pattern, 16 pairs) "
                   "MCD trained with the group rule reaches mean r 0.328, below the per-target U-Nets trained for these "
                   "patterns 0.550 (gain -0.222 [-0.271, -0.173]), the masked regressor trained with the same rule 0.418 "
                   "(-0.090 [-0.127, -0.053]) and level with multi-scale ridge 0.350 (-0.022 [-0.056, 0.013]) and ridge "
                   "0.310 (+0.018 [-0.027, 0.064]); above the most correlated channel 0.261; near held-out patterns give "
                   "MCD 0.468: imputing from channel groups never observed together costs the diffusion model more than "
                   "the per-pattern regressors, which are trained on exactly these patterns; cause of the gap to the "
                   "regressor as on the near patterns: the mean of M = 8 samples keeps part of their spread")
def test_claim_far_patterns_beat_every_baseline(test_panels, record_claim) -> None:
    """Patterns two or more channels from every training pattern: MCD and the masked regressor trained with the group
    rule (``mcd_tissue_apart`` / ``mcd_regressor_apart``: no epithelial marker ever observed with a cell-state
    marker), against every method on the page (the U-Nets are trained for these very patterns)."""
    z, mean = test_panels
    res = [E.evaluate(z, obs, mean=mean, n_samples=SAMPLES, steps=STEPS, seed=0, weights="tissue_apart")
           for obs in M.FAR_PATTERNS]
    nums, gains = compare(res)
    record_claim(**nums)
    assert all(r.distance >= 2 for r in res)
    assert min(g.mean for g in gains.values()) > 0, brief(nums)


@pytest.mark.xfail(strict=True, reason="on the seen pattern CD3, CD8, Vimentin, Ki67 (8 panels) the one model's mean r 0.472 "
                   "is below the U-Nets trained for that pattern 0.661 (gain -0.189 [-0.225, -0.153]) and the masked "
                   "regressor 0.545 (-0.073 [-0.121, -0.026]), above multi-scale ridge 0.376, ridge 0.315 and the most "
                   "correlated channel 0.250; cause: the mean of M = 8 posterior samples keeps part of the samples' spread, while the masked regressor (the same network, initialised from MCD, 120 MSE steps) and the per-target U-Nets estimate the conditional mean directly in one pass; the averaged samples approach it only as M grows")
def test_claim_one_model_serves_every_subset(test_panels, record_claim) -> None:
    """Patterns drawn in training, through the same file: the model never retrains, and beats every baseline."""
    from backend import weights

    before = weights.tensor_hashes(E.TISSUE_FILE)
    res = [_run(*test_panels, obs) for obs in E.SEEN_PATTERNS]
    nums, gains = compare(res)
    record_claim(**nums, weights_files=1)
    assert all(r.distance == 0 for r in res)
    assert weights.tensor_hashes(E.TISSUE_FILE) == before
    assert min(g.mean for g in gains.values()) > 0, brief(nums)


@pytest.mark.xfail(strict=True, reason="with only DNA and CD20 observed MCD's mean r 0.164 is below every method: U-Nets "
                   "0.298 (-0.134 [-0.224, -0.045]), masked regressor 0.254 (-0.091 [-0.152, -0.029]), multi-scale ridge "
                   "0.239, ridge 0.221, most correlated 0.212: little conditional structure is left and the sample noise "
                   "of 8 averaged samples dominates")
def test_claim_sparse_pattern_beats_every_baseline(test_panels, record_claim) -> None:
    res = [_run(*test_panels, E.SPARSE_PATTERN)]
    nums, gains = compare(res)
    record_claim(**nums)
    assert min(g.mean for g in gains.values()) > 0, brief(nums)


@pytest.mark.xfail(strict=True, reason="per-cell vectors of 16 panels (604 cells): MCD's mean r 0.492 is below the masked "
                   "regressor on vectors 0.623 (-0.131 [-0.168, -0.094]), the per-target networks 0.619 (-0.127 "
                   "[-0.171, -0.083]) and ridge 0.561 (-0.069 [-0.103, -0.035]), level with the most correlated channel "
                   "0.453 (+0.039 [-0.019, 0.097]); cause: the mean of M = 8 posterior samples keeps part of the samples' spread, while the masked regressor (the same network and masking, MSE) and the per-target U-Nets estimate the conditional mean directly in one pass; the averaged samples approach it only as M grows")
def test_claim_single_cell_reduction_beats_every_baseline(record_claim) -> None:
    """Per-cell vectors (H = W = 1) of 16 test panels through the same MCD class; pairs: panels (r over each panel's
    cells, mean over the imputed channels)."""
    model, std, _ = E.load_model("cells")
    assert type(model) is M.MCD and model.cfg.widths == E.load_model("tissue")[0].cfg.widths
    p = T.generate(16, T.TEST_SEED)
    cov = E.B.pixel_cov(std.fwd(T.cell_vectors(T.generate(40, T.TRAIN_SEED))[0]))
    obs = list(M.HELDOUT_PATTERNS[0])
    mis = [c for c in range(T.C) if c not in obs]
    nets, nets_obs = E.load_cell_unets()
    assert tuple(obs) == nets_obs
    reg = E.load_regressor("cells")
    per: dict[str, list[float]] = {m: [] for m in ("mcd", "regressor", "unet", "ridge", "most_correlated")}
    n_cells = 0
    for i in range(len(p.x)):
        v, _ = T.cell_vectors(T.Panels(p.x[i:i + 1], p.mean[i:i + 1], p.labels[i:i + 1], p.types[i:i + 1]))
        z = std.fwd(v).astype(np.float32)
        n_cells += len(z)
        preds = {"mcd": M.impute(model, z, obs, n_samples=SAMPLES, steps=STEPS, seed=i).mean(0),
                 "regressor": M.regress(reg, z, obs), "unet": E.B.unet_predict(nets, z, obs),
                 "ridge": E.B.ridge(z, obs, cov), "most_correlated": E.B.most_correlated(z, obs, cov)}
        for m, pr in preds.items():
            per[m].append(float(np.mean(list(T.per_channel_r(pr, z, mis).values()))))
    nums: dict = {"cells": n_cells, "panels": len(p.x), "mcd_mean_r": float(np.mean(per["mcd"]))}
    gains = {}
    for m in ("regressor", "unet", "ridge", "most_correlated"):
        nums[f"{m}_mean_r"] = float(np.mean(per[m]))
        gains[m] = paired_ci(per["mcd"], per[m])
        nums.update(gains[m].numbers(f"gain_vs_{m}"))
    record_claim(**nums)
    assert min(g.mean for g in gains.values()) > 0, brief(nums)


FULL = {"near": M.HELDOUT_PATTERNS, "seen": E.SEEN_PATTERNS}


_FULL_CAUSE = ("the mean of M = 16 posterior samples keeps part of the samples' spread, while the masked regressor and the "
               "per-target U-Nets estimate the conditional mean directly in one pass")


@pytest.mark.full
@pytest.mark.parametrize("group", [
    pytest.param("near", marks=pytest.mark.xfail(strict=True, reason=(
        "32 panels, M = 16, 18 steps, the four near held-out patterns: MCD 0.494 below the per-target U-Nets 0.580 "
        "(gain -0.086 [-0.094, -0.078]) and the masked regressor 0.514 (-0.019 [-0.026, -0.013]); above multi-scale "
        "ridge 0.458 (+0.037 [0.028, 0.045]), ridge 0.423 and the most correlated channel 0.342; cause: " + _FULL_CAUSE))),
    pytest.param("seen", marks=pytest.mark.xfail(strict=True, reason=(
        "32 panels, M = 16, 18 steps, the seen pattern: MCD 0.470 below the U-Nets 0.616 (-0.147 [-0.163, -0.130]) "
        "and the masked regressor 0.493 (-0.024 [-0.039, -0.008]); above multi-scale ridge 0.355, ridge 0.309 and the "
        "most correlated channel 0.249; cause: " + _FULL_CAUSE))),
])
def test_claim_full_scale_beats_every_baseline(group: str, record_claim) -> None:
    """The same bounds on 32 test panels with M = 16 samples and 18 Heun steps."""
    _, std, _ = E.load_model("tissue")
    p = T.generate(32, T.TEST_SEED)
    z, mean = std.fwd(p.x).astype(np.float32), std.fwd(p.mean).astype(np.float32)
    res = [_run(z, mean, obs, 16, 18) for obs in FULL[group]]
    nums, gains = compare(res)
    record_claim(**nums)
    assert min(g.mean for g in gains.values()) > 0, brief(nums)
