"""PBFM: the solvers' own residuals, ConFIG against the package, the training loop's pieces, the evaluation's
pieces (standardised and weighted energy distances, the noise-equivalent reading, Darcy's solution error), and the
claims on the shipped models: PBFM's residual against flow matching at a bounded distribution error, PBFM on the
Pareto front of every method read with intervals, unrolling against the one-step estimate, and whether the samples
are physical."""

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


def test_config_equal_cosines_and_the_package() -> None:
    """ConFIG's defining property (equal, positive cosines) and the package against the written-out rule: an
    invariant of the implementation, not a claim."""
    chk = E.config_check(200, 50, 0)
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


def test_per_node_normaliser_roundtrip_and_fixed_boundaries() -> None:
    c = P.get_case("darcy")
    f = c.fields(64, 0)
    norm = B.normaliser_for(c, f, per_node=True)
    assert norm.mean.shape == c.shape
    back = norm.decode_t(torch.as_tensor(norm.encode(f))).numpy()
    np.testing.assert_allclose(back, f, atol=1e-10)
    # u is 0 at both ends in every field: whatever the model outputs there decodes to (nearly) 0
    x = norm.decode_t(torch.randn(3, 128, dtype=torch.float64) * 10).numpy()
    assert np.abs(x[:, 1, [0, -1]]).max() < 1e-6


def test_weighted_energy_distance_and_standardisation() -> None:
    c = P.get_case("darcy")
    held = E.heldout("darcy", 100)
    assert np.array_equal(held, E.heldout("darcy", 500)[:100])  # a fixed subset of the 500
    x = c.fields(80, 3)
    d_xh, d_xx, hh = E._distances(E.standardise(x, "darcy"), E.standardise(held, "darcy"))
    ev = E.Evaluated("fm", 0, x, P.mean_abs_residual(c, x), d_xh, d_xx, hh, 0.0)
    assert ev.energy_distance() == pytest.approx(E.standardised_energy_distance(x, held), abs=1e-10)
    w = np.zeros(80)
    w[:40] = 2.0  # each of the first 40 twice: the same as the 40 once (pairs of copies are left out)
    sub = E.Evaluated("fm", 0, x[:40], ev.residual[:40], d_xh[:40], d_xx[:40, :40], hh, 0.0)
    assert ev.energy_distance(w) == pytest.approx(sub.energy_distance(), abs=1e-10)
    # standardising: log k (std ~0.8) and u (std ~0.07) both to about 1
    assert np.allclose(E.standardise(E.heldout("darcy"), "darcy").std(axis=(0, 2)), 1.0, atol=1e-9)


def test_noise_equivalent_and_solution_error_read_back_what_was_put_in() -> None:
    c = P.get_case("darcy")
    for s in (0.003, 0.03):
        # exact on the held-out fields with the unit noise's draw (the residual is linear in u, zero on solver fields)
        h = E.heldout("darcy", 500)
        h[:, 1] += s * np.random.default_rng(7).standard_normal(h[:, 1].shape)
        got = E.noise_equivalent("darcy", float(P.mean_abs_residual(c, h).mean()))["noise_std"]
        assert got == pytest.approx(s, rel=1e-9)
        # and close on other solver fields with another draw
        f = E.reference_fields("darcy", 300, noise=s)
        got = E.noise_equivalent("darcy", float(P.mean_abs_residual(c, f).mean()))["noise_std"]
        assert got == pytest.approx(s, rel=0.1)
    clean = E.reference_fields("darcy", 50)
    assert E.darcy_solution_error(clean).max() < 1e-9
    np.testing.assert_allclose(E.darcy_solution_error(E.reference_fields("darcy", 50, zero_physical=True)), 1.0)


# ------------------------------------------------------------------------------------------------ claims
# The claims are read on the shipped models (3 seeds each). ci tier: Darcy, 128 samples per model seed against a
# fixed subset of the held-out fields (the first 256 of the 500); full tier: 500 samples per seed against all 500
# held-out fields (the claimed sizes), Darcy and the heat equation. Distribution error: energy distance on
# standardised channels. Intervals: the paired bootstrap over (seed, sample) units (sample i of two methods starts
# from the same noise) and the Student-t interval over the three model seeds; a claim is resolved only when both are.
CI_N, CI_HELD, FULL_N, FULL_HELD = 128, 256, 500, 500
SEEDS = (0, 1, 2)
N_BOOT, N_BOOT_CI = 1000, 500  # bootstrap resamples: full, ci


def _evaluate(case: str, n: int, n_held: int, methods: list[str] | None = None,
              n_boot: int = N_BOOT) -> tuple[dict, list[dict], int]:
    keep: dict = {}
    names = methods or [m for m in B.METHODS if case in B.METHODS.get(m).cases]
    scores, _ = E.score(case, names, SEEDS, n=n, steps=50, n_held=n_held, keep=keep)
    return keep, E.summarise(scores), n_boot


@pytest.fixture(scope="module")
def darcy_ci() -> tuple[dict, list[dict], int]:
    return _evaluate("darcy", CI_N, CI_HELD, n_boot=N_BOOT_CI)


@pytest.fixture(scope="module")
def darcy_full() -> tuple[dict, list[dict], int]:
    return _evaluate("darcy", FULL_N, FULL_HELD)


def _rows(rows: list[dict]) -> dict[str, dict]:
    return {r["method"]: r for r in rows}


def _union(*cis) -> list[float]:  # noqa: ANN002 - PairedCI
    return [min(c.low for c in cis), max(c.high for c in cis)]


FACTOR = 2.0  # "much smaller": at least a factor 2 (the paper reports up to 8)
ED_SLACK = 1.10  # "a similar distribution error": at most 10 % above flow matching's


def _residual_claim(evs: dict, rows: list[dict], n_boot: int, record_claim, case: str = "darcy") -> None:  # noqa: ANN001
    r = _rows(rows)
    p, f = r["pbfm"], r["fm"]
    cmp = E.compare(evs, "pbfm", "fm", SEEDS, n_boot=n_boot)
    factor = cmp["res_ratio"].mean
    f_int = _union(cmp["res_ratio"], cmp["res_ratio_seeds"])
    ed_ratio = p["energy_distance"] / f["energy_distance"]
    phys = E.PHYSICAL_CHANNEL[case]
    record_claim(residual_factor=factor, factor_bound=FACTOR, factor_excess_ci=[f_int[0] - FACTOR, f_int[1] - FACTOR],
                 factor_samples_interval=[cmp["res_ratio"].low, cmp["res_ratio"].high],
                 factor_seeds_interval=[cmp["res_ratio_seeds"].low, cmp["res_ratio_seeds"].high],
                 pbfm_residual=p["mean_residual"], fm_residual=f["mean_residual"],
                 pbfm_ed=p["energy_distance"], fm_ed=f["energy_distance"], ed_ratio=ed_ratio, ed_bound=ED_SLACK,
                 ed_diff_samples_interval=[cmp["ed"].low, cmp["ed"].high],
                 ed_diff_seeds_interval=[cmp["ed_seeds"].low, cmp["ed_seeds"].high],
                 pbfm_ed_physical=p[f"ed_channel_{phys}"], fm_ed_physical=f[f"ed_channel_{phys}"],
                 pbfm_ed_channels=[v for k, v in p.items() if k.startswith("ed_channel_")],
                 fm_ed_channels=[v for k, v in f.items() if k.startswith("ed_channel_")],
                 pbfm_ed_raw=p["energy_distance_raw"], fm_ed_raw=f["energy_distance_raw"],
                 pbfm_noise_rel=p["noise_rel"], fm_noise_rel=f["noise_rel"],
                 pbfm_noise_std=p["noise_std"], fm_noise_std=f["noise_std"])
    assert factor >= FACTOR and ed_ratio <= ED_SLACK


RESIDUAL_XFAIL = (
    "measured: FM's mean |residual| over PBFM's is 1.78 on Darcy (full, 3 seeds x 500 samples: 0.0974 vs 0.0547; "
    "interval [1.77, 1.79] over samples, [1.71, 1.85] over seeds; ci 1.78) and 1.35 on the heat equation ([1.35, "
    "1.35], [1.33, 1.36]), short of the factor 2 that 'much smaller' is read as; on Darcy PBFM's distribution error "
    "on standardised channels is also 1.14x FM's in the full tier (0.431 vs 0.379, difference [0.041, 0.062] over "
    "samples; ci 1.03x), above the 1.10 bound. Cause: neither model's samples are physical (claim 'physical'): "
    "PBFM's residual equals solver fields plus white noise of 28 % of u's std, FM's 50 %, so the residual loss "
    "halves a residual that stays at noise level, and the ConFIG update that lowers it costs distribution error")


@pytest.mark.xfail(strict=True, reason=RESIDUAL_XFAIL)
def test_claim_pbfm_residual_below_fm_darcy(darcy_ci, record_claim) -> None:  # noqa: ANN001 - fixtures
    """ci: Darcy, 3 seeds x 128 samples against 256 held-out fields."""
    _residual_claim(*darcy_ci, record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=RESIDUAL_XFAIL)
@pytest.mark.parametrize("case", list(P.CASES))
def test_claim_pbfm_residual_below_fm_full(case: str, darcy_full, record_claim) -> None:  # noqa: ANN001
    """full: both cases, 3 seeds x 500 samples against the 500 held-out fields."""
    evs, rows, n_boot = darcy_full if case == "darcy" else _evaluate(case, FULL_N, FULL_HELD, ["pbfm", "fm"])
    _residual_claim(evs, rows, n_boot, record_claim, case)


def _pareto_claim(evs: dict, rows: list[dict], n_boot: int, record_claim) -> None:  # noqa: ANN001 - the fixture
    pr = E.pareto_reading(evs, SEEDS, "pbfm", n_boot=n_boot)
    front = sorted(m for m, r in _rows(rows).items() if r["pareto"])
    record_claim(front=",".join(front), dominating_point=",".join(pr["dominating_point"]),
                 decisive=pr["decisive"], axis=pr["axis"], edge_gain=pr["edge_gain"], edge_ci=pr["edge"],
                 edge_samples_interval=pr["edge_samples"], edge_seeds_interval=pr["edge_seeds"],
                 unresolved=",".join(pr["unresolved"]),
                 off_front_resolved=pr["off_front_resolved"], on_front_resolved=pr["on_front_resolved"],
                 pbfm_ed=_rows(rows)["pbfm"]["energy_distance"], pbfm_residual=_rows(rows)["pbfm"]["mean_residual"],
                 sweep={m: [round(r["energy_distance"], 4), round(r["mean_residual"], 5)]
                        for m, r in _rows(rows).items()})
    assert not pr["off_front_resolved"]


def test_claim_pbfm_on_the_pareto_front_darcy(darcy_ci, record_claim) -> None:  # noqa: ANN001 - fixtures
    """ci: every Darcy method (lambda 0.1 to 300, guidance, no unrolling), 3 seeds x 128 samples."""
    _pareto_claim(*darcy_ci, record_claim)


@pytest.mark.full
def test_claim_pbfm_on_the_pareto_front_darcy_full(darcy_full, record_claim) -> None:  # noqa: ANN001
    _pareto_claim(*darcy_full, record_claim)


HEAT_XFAIL = (
    "measured (3 seeds x 500 samples against 500 held-out fields): residual guidance 0.2 is better than PBFM on both "
    "axes beyond the noise: energy distance 0.515 vs 0.540 (relative gain of PBFM -0.047, intervals [-0.057, "
    "-0.037] over samples and [-0.086, -0.008] over seeds), mean |residual| 0.381 vs 0.401 (-0.050, [-0.052, "
    "-0.048] and [-0.060, -0.040]); the point-estimate front is weighted-3, guidance-0.05 and guidance-0.2. The "
    "heat equation is linear, so the guidance step along the residual gradient of the one-step estimate is nearly "
    "exact, while PBFM's residual loss competes with the FM loss through the whole field; no heat model is "
    "physical (PBFM's residual equals white noise of 64 % of u's std, FM's 86 %)")


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=HEAT_XFAIL)
def test_claim_pbfm_on_the_pareto_front_heat(record_claim) -> None:  # noqa: ANN001 - the fixture
    """full: the heat methods (lambda 0.1 to 10, guidance), 3 seeds x 500 samples."""
    _pareto_claim(*_evaluate("heat", FULL_N, FULL_HELD), record_claim)


def _unroll_claim(evs: dict, rows: list[dict], n_boot: int, record_claim) -> None:  # noqa: ANN001 - the fixture
    r = _rows(rows)
    cmp = E.compare(evs, "pbfm-1step", "pbfm", SEEDS, n_boot=n_boot, ratio=False)
    scale = r["pbfm"]["mean_residual"]
    ed_ratio = r["pbfm"]["energy_distance"] / r["pbfm-1step"]["energy_distance"]
    record_claim(res_gain_rel=cmp["res"].mean / scale,
                 res_gain_samples_ci=[cmp["res"].low / scale, cmp["res"].high / scale],
                 res_gain_seeds_ci=[cmp["res_seeds"].low / scale, cmp["res_seeds"].high / scale],
                 pbfm_residual=scale, one_step_residual=r["pbfm-1step"]["mean_residual"],
                 pbfm_ed=r["pbfm"]["energy_distance"], one_step_ed=r["pbfm-1step"]["energy_distance"],
                 ed_ratio=ed_ratio, ed_bound=ED_SLACK,
                 ed_diff_samples_interval=[-cmp["ed"].high, -cmp["ed"].low])
    assert cmp["res"].mean > 0 and ed_ratio <= ED_SLACK


def test_claim_unrolling_lowers_the_residual_darcy(darcy_ci, record_claim) -> None:  # noqa: ANN001 - fixtures
    """ci: PBFM against PBFM trained on the one-step estimate, 3 seeds x 128 samples."""
    _unroll_claim(*darcy_ci, record_claim)


@pytest.mark.full
def test_claim_unrolling_lowers_the_residual_darcy_full(darcy_full, record_claim) -> None:  # noqa: ANN001
    _unroll_claim(*darcy_full, record_claim)


SOLUTION_BOUND = 0.05  # physically consistent: u within 5 % (relative RMS) of the solver's u for the sample's log k


def _physical_claim(evs: dict, rows: list[dict], n_boot: int, record_claim,  # noqa: ANN001, ARG001 - the fixture
                    diagnostics: dict | None = None) -> None:
    r = _rows(rows)
    sol = np.concatenate([E.darcy_solution_error(evs[("pbfm", s)].samples) for s in SEEDS])
    extra = {}
    for name, d in (diagnostics or {}).items():
        extra[f"diag_{name}"] = [round(d["energy_distance"], 4), round(d["mean_residual"], 5),
                                 round(d["noise_rel"], 4), round(d["solution_error"], 4)]
    record_claim(pbfm_solution_error=float(np.median(sol)), solution_bound=SOLUTION_BOUND,
                 fm_solution_error=r["fm"]["solution_error"], pbfm_noise_rel=r["pbfm"]["noise_rel"],
                 pbfm_noise_std=r["pbfm"]["noise_std"], best_solution_error=min(
                     (x["solution_error"], m) for m, x in r.items())[0],
                 best_solution_method=min((x["solution_error"], m) for m, x in r.items())[1], **extra)
    assert float(np.median(sol)) <= SOLUTION_BOUND


PHYSICAL_XFAIL = (
    "measured (full, 3 seeds x 500 Darcy samples): a PBFM sample's u is 42 % (median relative RMS error) away from "
    "the solver's u for the sample's own log k (FM 45 %; ci 42 %), against the 5 % bound; PBFM's residual equals "
    "solver fields plus white noise of std 0.020 on u, 28 % of u's std (FM 0.036, 50 %). Diagnosed with single-seed "
    "models (500 samples): training length is the main cause. Flow matching trained 8,000 steps instead of 2,000 "
    "reaches energy distance 0.012 (the held-out set's own noise level; 2,000 steps: 0.379) and residual 0.0205 "
    "(noise 11 % of u's std, u error 9.9 %), still above the bound; 3 x 512 hidden at 2,000 steps halves the "
    "residual (0.047) but is farther from the data (0.597); per-node normalisation lowers it by a quarter (0.072, "
    "energy distance 0.422). The shipped 2,000-step models are under-trained, and the remaining error is per-node "
    "noise that the residual's second differences amplify (a residual of 1 is the size of the source term h^2 f)")


@pytest.mark.xfail(strict=True, reason=PHYSICAL_XFAIL)
def test_claim_pbfm_samples_are_physical_darcy(darcy_ci, record_claim) -> None:  # noqa: ANN001 - fixtures
    """ci: the median relative error of a PBFM sample's u against the solver's u for the sample's own log k."""
    _physical_claim(*darcy_ci, record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=PHYSICAL_XFAIL)
def test_claim_pbfm_samples_are_physical_darcy_full(darcy_full, record_claim) -> None:  # noqa: ANN001
    """full: also re-evaluates the diagnostic models (wider, longer, per-node normalisation; seed 0, 500 samples)
    and records their energy distance, residual, noise-equivalent and solution error."""
    diag = {}
    for name in B.DIAGNOSTICS:
        sc, _ = E.score("darcy", [name], (0,), n=FULL_N, steps=50, n_held=FULL_HELD)
        diag[name] = E.summarise(sc)[0]
    _physical_claim(*darcy_full, record_claim, diag)
