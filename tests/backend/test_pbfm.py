"""PBFM: the solvers' own residuals, ConFIG against the package, the training loop's pieces, and the claims on the
shipped models (PBFM's residual against flow matching at a bounded distribution error; PBFM on the Pareto front of
the weighted sums and guidance)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.physics.pbfm import evaluation as E
from backend.physics.pbfm import pbfm as B
from backend.physics.pbfm import pdes as P


@pytest.mark.parametrize("case", list(P.CASES))
def test_solver_fields_have_zero_residual_under_the_training_residual(case: str) -> None:
    c = P.get_case(case)
    f = c.fields(32, 5)
    assert f.shape[1:] == c.shape
    assert P.mean_abs_residual(c, f).max() < 1e-10
    noisy = f + 1e-3 * np.random.default_rng(0).standard_normal(f.shape)
    assert P.mean_abs_residual(c, noisy).mean() > 1e-5
    # the torch residual (training) equals the numpy one (evaluation)
    rt = c.residual(torch.as_tensor(noisy)).numpy()
    np.testing.assert_allclose(rt, c.residual(noisy), rtol=1e-10, atol=1e-14)


def test_darcy_solver_against_the_constant_permeability_solution() -> None:
    u = P.darcy_solve(np.zeros((1, P.DARCY_N)))[0]
    x = np.linspace(0, 1, P.DARCY_N)
    np.testing.assert_allclose(u, x * (1 - x) / 2, atol=1e-12)  # -u'' = 1: exact for second differences


def test_config_equal_cosines_and_the_package(record_claim) -> None:
    chk = E.config_check(200, 50, 0)
    record_claim(max_cos_gap=chk["max_cos_gap"], min_cos=chk["min_cos"], max_rel_diff=chk["max_rel_diff_to_rule"])
    assert chk["max_cos_gap"] < 1e-9 and chk["min_cos"] > 0 and chk["max_rel_diff_to_rule"] < 1e-9


def test_config_falls_back_to_fm_on_nan() -> None:
    g1 = torch.randn(10, dtype=torch.float64)
    assert torch.equal(B.config_update(g1, torch.full((10,), float("nan"), dtype=torch.float64)), g1)


def test_normaliser_roundtrip_and_unroll() -> None:
    c = P.get_case("darcy")
    f = c.fields(8, 0)
    norm = B.normaliser_for(c, f)
    back = norm.decode_t(torch.as_tensor(norm.encode(f))).numpy()
    np.testing.assert_allclose(back, f, atol=1e-10)
    model = B.Velocity(128, B.PBFMConfig())
    x, t = torch.randn(4, 128), torch.full((4,), 0.25)
    one = x + 0.75 * model(x, t)
    assert torch.allclose(B._unroll(model, x, t, 1), one, atol=1e-6)


def test_short_training_runs_for_every_method() -> None:
    cfg = B.PBFMConfig(steps=8, batch=16, n_train=64, hidden=32)
    for name in ("fm", "weighted-1", "pbfm"):
        model, norm, log = B.METHODS.get(name).fit(cfg, seed=0)
        x = B.sample(model, norm, P.get_case("darcy"), 4, steps=3)
        assert x.shape == (4, 2, 64) and np.isfinite(x).all()
    with pytest.raises(InputError, match="steps"):
        B.sample(model, norm, P.get_case("darcy"), 4, steps=0)


def test_energy_distance_is_zero_for_a_set_and_itself_shifted_is_positive() -> None:
    a = np.random.default_rng(0).standard_normal((200, 2, 8))
    b = np.random.default_rng(1).standard_normal((200, 2, 8))
    assert abs(B.energy_distance(a, b)) < 0.2
    assert B.energy_distance(a, b + 2.0) > 1.0


def test_field_upload_validation() -> None:
    import io

    buf = io.BytesIO()
    np.savez(buf, field=np.full((2, 64), np.nan))
    with pytest.raises(InputError, match="NaN"):
        P.read_field(buf.getvalue())
    buf = io.BytesIO()
    np.savez(buf, field=np.zeros((3, 5)))
    with pytest.raises(InputError, match="expected"):
        P.read_field(buf.getvalue())
    assert P.read_field(b"\n".join(b",".join(b"0" for _ in range(64)) for _ in range(2))).shape == (2, 64)


# ------------------------------------------------------------------------------------------------ claims
def _scores(case: str, n: int, seeds: tuple[int, ...]) -> dict[str, dict[str, float]]:
    scores, _ = E.score(case, list(B.METHODS), seeds, n=n, steps=50)
    return {r["method"]: r for r in E.summarise(scores)}


def _claim(rows: dict[str, dict[str, float]], record_claim) -> None:  # noqa: ANN001 - the fixture
    p, f = rows["pbfm"], rows["fm"]
    factor = f["mean_residual"] / p["mean_residual"]
    ed_ratio = p["energy_distance"] / f["energy_distance"]
    record_claim(residual_factor=factor, ed_ratio=ed_ratio, pbfm_residual=p["mean_residual"],
                 fm_residual=f["mean_residual"], pbfm_ed=p["energy_distance"], fm_ed=f["energy_distance"],
                 pbfm_on_front=bool(p["pareto"]))
    assert factor > 1.0 and ed_ratio <= 1.10


@pytest.fixture(scope="module")
def darcy_rows() -> dict[str, dict[str, float]]:
    return _scores("darcy", 128, (0, 1, 2))


def test_claim_pbfm_residual_below_fm_darcy(darcy_rows, record_claim) -> None:  # noqa: ANN001 - fixtures
    """ci: Darcy, 3 seeds x 128 samples, 50 Euler steps."""
    _claim(darcy_rows, record_claim)


@pytest.mark.full
@pytest.mark.parametrize("case", list(P.CASES))
def test_claim_pbfm_residual_below_fm_full(case: str, record_claim) -> None:
    """full: both cases, 3 seeds x 512 samples."""
    _claim(_scores(case, 512, (0, 1, 2)), record_claim)


def test_claim_pbfm_on_the_pareto_front_darcy(darcy_rows, record_claim) -> None:  # noqa: ANN001 - fixtures
    rows = darcy_rows
    front = sorted(m for m, r in rows.items() if r["pareto"])
    record_claim(front=",".join(front))
    assert rows["pbfm"]["pareto"]


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "measured (3 seeds x 512 samples): on the heat equation residual guidance 0.2 dominates PBFM (energy distance "
    "0.323 vs 0.342, residual 0.382 vs 0.401 at 256 samples); the front is weighted-3, guidance-0.05 and guidance-0.2. "
    "The heat equation is linear, so the guidance step along the residual gradient of the one-step estimate is "
    "nearly exact, while PBFM's residual loss competes with the FM loss through the whole field"))
def test_claim_pbfm_on_the_pareto_front_heat(record_claim) -> None:
    rows = _scores("heat", 512, (0, 1, 2))
    front = sorted(m for m, r in rows.items() if r["pareto"])
    record_claim(front=",".join(front), pbfm_ed=rows["pbfm"]["energy_distance"],
                 pbfm_residual=rows["pbfm"]["mean_residual"], guidance_ed=rows["guidance-0.2"]["energy_distance"],
                 guidance_residual=rows["guidance-0.2"]["mean_residual"])
    assert rows["pbfm"]["pareto"]
