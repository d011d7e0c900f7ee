"""MCD (backend/imputation/mcd): the tissue generator, the masking rule, the network's blocks, the EDM preconditioning,
the sampler, the baselines, the stack reader and the CLI's refusals. No shipped weights are needed here (see
test_mcd_claims.py for the claims)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.imputation.mcd import baselines as B
from backend.imputation.mcd import mcd as M
from backend.imputation.mcd import tissue as T
from backend.imputation.mcd.stack import read_stack, to_bytes


@pytest.fixture(scope="module")
def panels() -> T.Panels:
    return T.generate(24, 123)


def test_generator_is_deterministic_and_shaped(panels: T.Panels) -> None:
    again = T.generate(3, 123)
    assert panels.x.shape == (24, T.C, 32, 32) and panels.x.dtype == np.float32
    np.testing.assert_array_equal(panels.x[:3], again.x)
    assert np.all(panels.x >= 0) and np.all(np.isfinite(panels.x))


def test_generator_markers_colocalise_and_exclude(panels: T.Panels) -> None:
    """Co-localised markers correlate; mutually exclusive ones never share a cell."""
    flat = panels.x.transpose(1, 0, 2, 3).reshape(T.C, -1)
    r = np.corrcoef(flat)
    ch = {n: i for i, n in enumerate(T.CHANNELS)}
    assert r[ch["panCK"], ch["E-cadherin"]] > 0.6 and r[ch["CD3"], ch["CD8"]] > 0.5
    assert r[ch["CD3"], ch["CD20"]] < 0 and r[ch["panCK"], ch["CD68"]] < 0
    for types in panels.types:
        assert set(np.unique(types)) <= set(range(len(T.CELL_TYPES)))
    # per-cell noise-free means: a cell bright in CD3 is never bright in CD20
    v, vm = T.cell_vectors(panels)
    both = (vm[:, ch["CD3"], 0, 0] > 0.3) & (vm[:, ch["CD20"], 0, 0] > 0.3)
    assert both.mean() < 0.01
    assert v.shape[1:] == (T.C, 1, 1)


def test_spatial_context_carries_information(panels: T.Panels) -> None:
    """PD-L1 (neighbourhood-induced) correlates better with a blurred CD3 map than with the same pixel's CD3."""
    from scipy.ndimage import uniform_filter

    ch = {n: i for i, n in enumerate(T.CHANNELS)}
    cd3, pd = panels.mean[:, ch["CD3"]], panels.mean[:, ch["PD-L1"]]
    ctx = uniform_filter(cd3, size=(1, 9, 9))
    assert T.pearson(ctx, pd) > T.pearson(cd3, pd) + 0.1


def test_bayes_ceiling_is_below_one_and_high(panels: T.Panels) -> None:
    r = T.bayes_ceiling(panels, list(range(T.C)))
    assert all(0.6 < v < 1.0 for v in r.values()), r


def test_masks_exclude_heldout_patterns() -> None:
    cfg = M.MCDConfig()
    m = M.sample_masks(4000, cfg, torch.Generator().manual_seed(0))
    k = m.sum(1)
    assert k.min() >= 1 and k.max() <= cfg.channels - 1
    seen = {tuple(row.bool().tolist()) for row in m}
    for p in M.HELDOUT_PATTERNS:
        assert tuple(M.pattern_mask(p, 12).astype(bool).tolist()) not in seen
    assert len(seen) > 1000  # many distinct subsets: one model amortises over them


def test_channel_groups_are_never_observed_together_in_training() -> None:
    """The APART rule: no training mask observes a channel of both groups; the near held-out patterns lie one channel
    away from a drawn pattern, the far ones (two or more channels of each group) two or more; seen patterns at distance 0."""
    cfg = M.MCDConfig(apart=M.APART)  # the --apart training rule (the shipped model is trained without it)
    m = M.sample_masks(3000, cfg, torch.Generator().manual_seed(1)).bool()
    a, b = M.APART
    assert not (m[:, list(a)].any(1) & m[:, list(b)].any(1)).any()
    assert all(M.distance_to_training(p, cfg) == 1 for p in M.HELDOUT_PATTERNS)
    assert all(M.distance_to_training(p, cfg) >= 2 for p in M.FAR_PATTERNS)
    assert all(set(a) <= set(p) and len(set(b) & set(p)) >= 2 for p in M.FAR_PATTERNS)
    assert M.distance_to_training((3, 4, 8, 9), cfg) == 0
    assert M.distance_to_training((1, 2, 9), M.MCDConfig()) == 0  # without the rule it is drawn
    assert all(M.distance_to_training(p, M.MCDConfig()) == 0 for p in M.FAR_PATTERNS)


def test_mean_of_samples_is_no_worse_than_one_sample_in_squared_error() -> None:
    """Averaging M samples cannot raise the squared error over the average sample (Jensen / the bias-variance split):
    ``mean_i ||s_i - x||^2 = ||s_bar - x||^2 + mean_i ||s_i - s_bar||^2``, an identity for ANY samples. So the
    mean-of-samples statement is an invariant of the estimator, not a claim about MCD; checked on real sampler
    output of a small untrained model."""
    torch.manual_seed(0)
    model = M.MCD(M.MCDConfig(widths=(8, 16, 16), emb=16)).eval()
    z = np.random.default_rng(0).standard_normal((3, 12, 8, 8)).astype(np.float32)
    s = M.impute(model, z, [0, 3, 5], n_samples=6, steps=3, seed=2).astype(np.float64)
    mis = [c for c in range(12) if c not in (0, 3, 5)]
    err = ((s[:, :, mis] - z[None, :, mis]) ** 2).mean((1, 2, 3, 4))
    bar = s.mean(0)
    lhs = err.mean()
    rhs = ((bar[:, mis] - z[:, mis]) ** 2).mean() + ((s[:, :, mis] - bar[None, :, mis]) ** 2).mean()
    assert lhs == pytest.approx(rhs, rel=1e-9)
    assert ((bar[:, mis] - z[:, mis]) ** 2).mean() <= err.mean()


def test_masked_regressor_is_the_same_network_and_keeps_observed() -> None:
    torch.manual_seed(0)
    cfg = M.MCDConfig(widths=(8, 16, 16), emb=16)
    reg, diff = M.MaskedRegressor(cfg), M.MCD(cfg)
    assert M.n_params(reg) == M.n_params(diff)
    assert [k for k, _ in reg.named_parameters()] == [k for k, _ in diff.named_parameters()]
    z = np.random.default_rng(0).standard_normal((2, 12, 8, 8)).astype(np.float32)
    p = M.regress(reg.eval(), z, [1, 4])
    assert p.shape == z.shape and np.array_equal(p[:, [1, 4]], z[:, [1, 4]])
    # the prediction reads only the observed channels
    z2 = z.copy()
    z2[:, 6] += 5.0
    np.testing.assert_allclose(M.regress(reg, z2, [1, 4])[:, [0, 2]], p[:, [0, 2]], atol=1e-6)
    model, log = M.train(z, M.MCDConfig(widths=(8, 16, 16), emb=16, steps=3, batch=2), regressor=True)
    assert isinstance(model, M.MaskedRegressor) and log.steps == 3


def test_multiscale_ridge_extends_ridge(panels: T.Panels) -> None:
    """With the pixel scale only it is the per-pixel ridge; the blurred scales add neighbourhood context and fit the
    training pixels at least as well."""
    std = M.Standardiser.fit(panels.x)
    z = std.fwd(panels.x).astype(np.float32)
    obs = [0, 3, 9]
    mis = [c for c in range(12) if c not in obs]
    one = B.MultiScaleRidge.fit(z, scales=(0.0,))
    np.testing.assert_allclose(one.predict(z, obs)[:, mis], B.ridge(z, obs, B.pixel_cov(z))[:, mis], atol=1e-3)
    ms = B.MultiScaleRidge.fit(z)
    mse1 = ((one.predict(z, obs) - z)[:, mis] ** 2).mean()
    mse4 = ((ms.predict(z, obs) - z)[:, mis] ** 2).mean()
    assert mse4 <= mse1 + 1e-6
    assert B.multiscale(z[:2]).shape == (2, 12 * len(B.SCALES), 32, 32)


def test_se_gate_keeps_spatial_maps() -> None:
    torch.manual_seed(0)
    se = M.SE(8)
    x = torch.randn(2, 8, 5, 5)
    ratio = se(x) / x
    assert torch.allclose(ratio, ratio[:, :, :1, :1].expand_as(ratio), atol=1e-5)


@pytest.mark.parametrize("hw", [1, 32])
def test_network_runs_at_any_size_including_single_cells(hw: int) -> None:
    torch.manual_seed(0)
    model = M.MCD(M.MCDConfig(widths=(8, 16, 16), emb=16))
    x = torch.randn(3, 12, hw, hw)
    out = model(x, torch.full((3,), 0.5), x, torch.ones(3, 12))
    assert out.shape == x.shape and torch.isfinite(out).all()


def test_edm_preconditioning_is_identity_at_zero_noise() -> None:
    torch.manual_seed(0)
    model = M.MCD(M.MCDConfig(widths=(8, 16, 16), emb=16))
    x = torch.randn(2, 12, 8, 8)
    out = model(x, torch.full((2,), 1e-4), x, torch.zeros(2, 12))
    assert torch.allclose(out, x, atol=1e-3)


def test_condition_changes_the_output() -> None:
    """The encoder's features reach the output: two conditions, two outputs (zero-init attention aside)."""
    torch.manual_seed(0)
    model = M.MCD(M.MCDConfig(widths=(8, 16, 16), emb=16))
    x = torch.randn(1, 12, 8, 8)
    m = torch.ones(1, 12)
    a = model(x, torch.ones(1), x, m)
    b = model(x, torch.ones(1), -x, m)
    assert (a - b).abs().max() > 1e-3


def test_impute_is_seeded_and_keeps_observed_channels() -> None:
    torch.manual_seed(0)
    model = M.MCD(M.MCDConfig(widths=(8, 16, 16), emb=16)).eval()
    z = np.random.default_rng(0).standard_normal((2, 12, 8, 8)).astype(np.float32)
    a = M.impute(model, z, [0, 3], n_samples=2, steps=3, seed=5)
    b = M.impute(model, z, [0, 3], n_samples=2, steps=3, seed=5)
    c = M.impute(model, z, [0, 3], n_samples=2, steps=3, seed=6)
    assert a.shape == (2, 2, 12, 8, 8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(a[:, :, [0, 3]], np.broadcast_to(z[None, :, [0, 3]], a[:, :, [0, 3]].shape))
    for bad in ({"steps": 0}, {"steps": 500}):
        with pytest.raises(InputError, match="steps"):
            M.impute(model, z, [0], **bad)
    for obs in ([], list(range(12)), [12]):
        with pytest.raises(InputError, match="observed"):
            M.impute(model, z, obs, steps=2)


def test_sigma_schedule_is_decreasing_to_zero() -> None:
    s = M.sigma_schedule(18)
    assert s[0] == pytest.approx(80.0) and s[-2] == pytest.approx(0.002, rel=1e-3) and s[-1] == 0
    assert torch.all(s[1:] < s[:-1])


def test_ridge_matches_least_squares_and_most_correlated_picks_best(panels: T.Panels) -> None:
    std = M.Standardiser.fit(panels.x)
    z = std.fwd(panels.x).astype(np.float32)
    cov = B.pixel_cov(z)
    obs, t = [0, 1, 3], 2
    pred = B.ridge(z, obs, cov, alpha=1e-9)
    xo = z[:, obs].transpose(1, 0, 2, 3).reshape(3, -1).T.astype(np.float64)
    y = z[:, t].ravel()
    xo1 = np.c_[xo, np.ones(len(xo))]
    beta = np.linalg.lstsq(xo1, y, rcond=None)[0]
    np.testing.assert_allclose(pred[:, t].ravel(), xo1 @ beta - beta[-1], atol=2e-3)
    assert B.best_channel(obs, t, cov) == 1  # E-cadherin's best partner is panCK
    mc = B.most_correlated(z, obs, cov)
    assert T.pearson(mc[:, t], z[:, t]) == pytest.approx(abs(np.corrcoef(z[:, 1].ravel(), y)[0, 1]), abs=1e-4)


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_stack_reader_accepts_and_refuses() -> None:
    x = T.generate(1, 5).x[0]
    np.testing.assert_array_equal(read_stack(to_bytes(x)), x)
    assert read_stack(_npz(stack=x[None].astype(np.float64))).shape == (12, 32, 32)
    cases = {
        "NaN": _npz(stack=np.where(x > 0.5, np.nan, x)),
        "rank": _npz(stack=x[0]),
        "too many": _npz(stack=np.concatenate([x, x[:4]])),
        "too few": _npz(stack=x[:5]),
        "each side": _npz(stack=np.zeros((12, 4, 4)) + np.arange(16).reshape(4, 4)),
        "object": _npz(stack=np.array([{"a": 1}] * 12, dtype=object)),
        "dtype": _npz(stack=np.ones((12, 16, 16), dtype=np.complex64)),
        "TIFF": b"II*\x00" + b"\x00" * 64,
        "not an NPZ": b"hello",
        "constant": _npz(stack=np.ones((12, 16, 16))),
    }
    for msg, data in cases.items():
        with pytest.raises(InputError, match=msg):
            read_stack(data)


def test_cli_refuses_bad_arguments_and_writes_nothing(tmp_path, capsys) -> None:
    import json

    from backend.__main__ import main

    bad = tmp_path / "bad.npz"
    bad.write_bytes(_npz(stack=np.full((12, 16, 16), np.inf)))
    before = sorted(tmp_path.iterdir())
    for argv, msg in ((["--steps", "0"], "steps"), (["--samples", "99"], "samples"),
                      (["--observed", "0,40"], "out of range"), (["--observed", "x"], "comma"),
                      (["--stack", str(bad)], "NaN or inf"), (["--stack", str(tmp_path / "none.npz")], "No such")):
        code = main(["mcd", "impute", *argv, "--json"])
        out = json.loads(capsys.readouterr().out)
        assert code == 2 and msg in out["error"], (argv, out)
    assert sorted(tmp_path.iterdir()) == before
