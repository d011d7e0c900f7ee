"""Claims of MCD on the miniature, with the shipped weights (assets/mcd_*.safetensors).

- Mean imputed Pearson r (mean of M = 4 samples) above the most-correlated-channel and ridge baselines, on the four
  observation patterns never drawn in training and on patterns that were, reported with the Bayes ceiling.
- One model serves every subset: the same weights file answers every pattern.
- The H = W = 1 reduction (per-cell vectors) runs through the same network, trainer and sampler.
The test panels come from seed range 9,000 (training used 0..1,999).
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.imputation.mcd import evaluate as E
from backend.imputation.mcd import mcd as M
from backend.imputation.mcd import tissue as T

N_TEST, SAMPLES, STEPS = 8, 8, 8
SEEN = ((0, 1, 2, 6, 7, 10), (3, 4, 8, 9))


@pytest.fixture(scope="module")
def test_panels() -> tuple[np.ndarray, np.ndarray]:
    _, std, _ = E.load_model("tissue")
    p = T.generate(N_TEST, T.TEST_SEED)
    return std.fwd(p.x).astype(np.float32), std.fwd(p.mean).astype(np.float32)


_CACHE: dict = {}


def _run(z, mean, obs):  # noqa: ANN001, ANN202
    """One evaluation per pattern per session (the mean-of-samples claim reuses held-out pattern 0's)."""
    key = tuple(sorted(obs))
    if key not in _CACHE:
        names = ["mcd", "mcd_single", "most_correlated", "ridge", "bayes", "unet"]
        _CACHE[key] = E.evaluate(z, key, names, mean=mean, n_samples=SAMPLES, steps=STEPS, seed=0)
    return _CACHE[key]


@pytest.mark.parametrize("k", range(len(M.HELDOUT_PATTERNS)))
def test_claim_heldout_pattern_beats_baselines(k: int, test_panels, record_claim) -> None:
    obs = M.HELDOUT_PATTERNS[k]
    res = _run(*test_panels, obs)
    mr = {m: res.mean_r(m) for m in res.r}
    record_claim(pattern=list(obs), mcd_mean_r=mr["mcd"], mcd_one_sample_mean_r=mr["mcd_single"],
                 most_correlated_mean_r=mr["most_correlated"], ridge_mean_r=mr["ridge"], bayes_ceiling_mean_r=mr["bayes"])
    assert res.heldout
    assert mr["mcd"] > mr["most_correlated"] and mr["mcd"] > mr["ridge"], mr
    assert mr["mcd"] < mr["bayes"]


@pytest.mark.parametrize("obs", SEEN, ids=lambda p: "-".join(map(str, p)))
def test_claim_one_model_serves_every_subset(obs, test_panels, record_claim) -> None:
    """Patterns drawn in training, through the same file: the model never retrains, and beats both baselines."""
    from backend import weights

    before = weights.tensor_hashes(E.TISSUE_FILE)
    res = _run(*test_panels, obs)
    mr = {m: res.mean_r(m) for m in res.r}
    record_claim(pattern=sorted(obs), mcd_mean_r=mr["mcd"], most_correlated_mean_r=mr["most_correlated"],
                 ridge_mean_r=mr["ridge"], bayes_ceiling_mean_r=mr["bayes"], weights_files=1)
    assert not res.heldout
    assert weights.tensor_hashes(E.TISSUE_FILE) == before
    assert mr["mcd"] > mr["most_correlated"] and mr["mcd"] > mr["ridge"], mr


def test_claim_mean_of_samples_beats_one_sample(test_panels, record_claim) -> None:
    res = _run(*test_panels, M.HELDOUT_PATTERNS[0])
    record_claim(mean_of_m=res.mean_r("mcd"), one_sample=res.mean_r("mcd_single"), unet_per_target=res.mean_r("unet"),
                 samples=SAMPLES)
    assert res.mean_r("mcd") > res.mean_r("mcd_single")


def test_claim_single_cell_reduction_runs_through_same_code(record_claim) -> None:
    model, std, _ = E.load_model("cells")
    assert type(model) is M.MCD and model.cfg.widths == E.load_model("tissue")[0].cfg.widths
    v, _ = T.cell_vectors(T.generate(4, T.TEST_SEED))
    z = std.fwd(v).astype(np.float32)
    assert z.shape[1:] == (T.C, 1, 1)
    cov = E.B.pixel_cov(std.fwd(T.cell_vectors(T.generate(40, T.TRAIN_SEED))[0]))
    obs = list(M.HELDOUT_PATTERNS[0])
    mis = [c for c in range(T.C) if c not in obs]
    s = M.impute(model, z, obs, n_samples=SAMPLES, steps=STEPS, seed=0)
    r_mcd = float(np.mean(list(T.per_channel_r(s.mean(0), z, mis).values())))
    r_mc = float(np.mean(list(T.per_channel_r(E.B.most_correlated(z, obs, cov), z, mis).values())))
    r_ridge = float(np.mean(list(T.per_channel_r(E.B.ridge(z, obs, cov), z, mis).values())))
    record_claim(cells=len(z), mcd_mean_r=r_mcd, most_correlated_mean_r=r_mc, ridge_mean_r=r_ridge)
    assert r_mcd > r_mc


@pytest.mark.full
@pytest.mark.parametrize("obs", [*M.HELDOUT_PATTERNS, *SEEN], ids=lambda p: "-".join(map(str, p)))
def test_claim_full_scale_beats_baselines(obs, record_claim) -> None:
    """The same claim on 32 test panels with M = 16 samples and 18 Heun steps (held-out and seen patterns)."""
    _, std, _ = E.load_model("tissue")
    p = T.generate(32, T.TEST_SEED)
    res = E.evaluate(std.fwd(p.x).astype(np.float32), obs, ["mcd", "most_correlated", "ridge", "bayes"],
                     mean=std.fwd(p.mean).astype(np.float32), n_samples=16, steps=18, seed=0)
    mr = {m: res.mean_r(m) for m in res.r}
    record_claim(pattern=sorted(obs), heldout=res.heldout, mcd_mean_r=mr["mcd"],
                 most_correlated_mean_r=mr["most_correlated"], ridge_mean_r=mr["ridge"], bayes_ceiling_mean_r=mr["bayes"])
    assert mr["mcd"] > mr["most_correlated"] and mr["mcd"] > mr["ridge"], mr


SPARSE = (0, 5)


@pytest.mark.xfail(strict=True, reason="with only DNA and CD20 observed, MCD's mean of 8 samples stays below per-pixel "
                   "ridge and the most correlated channel (ci, 8 panels: r 0.164 vs 0.221 ridge, 0.212 most correlated; "
                   "benchmark, 16 panels: 0.154 vs 0.208 and 0.192): little conditional structure is left for the small, briefly "
                   "trained model, whose sample noise then dominates; linear maps of the two channels do better")
def test_claim_sparse_pattern_beats_baselines(test_panels, record_claim) -> None:
    res = _run(*test_panels, SPARSE)
    mr = {m: res.mean_r(m) for m in res.r}
    record_claim(pattern=list(SPARSE), mcd_mean_r=mr["mcd"], most_correlated_mean_r=mr["most_correlated"],
                 ridge_mean_r=mr["ridge"], bayes_ceiling_mean_r=mr["bayes"])
    assert mr["mcd"] > mr["most_correlated"] and mr["mcd"] > mr["ridge"], mr
