"""Soft Best-of-N: invariants of the exact policy and the paper's claims on random discrete instances."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from backend.alignment.softbon import softbon as sb
from backend.errors import InputError


def brute_force(pi: np.ndarray, r: np.ndarray, n: int, beta: float) -> np.ndarray:
    """SBoN's policy by enumerating all K^N tuples (tiny K and N only)."""
    out = np.zeros(len(pi))
    for t in itertools.product(range(len(pi)), repeat=n):
        rr = r[list(t)]
        w = np.exp(beta * (rr - rr.max())) if math.isfinite(beta) else (rr == rr.max()).astype(float)
        w /= w.sum()
        p = np.prod(pi[list(t)])
        for i, k in enumerate(t):
            out[k] += p * w[i]
    return out


@pytest.mark.parametrize(
    ("k", "n", "beta"), [(5, 3, 0.3), (5, 3, 1.0), (6, 4, 8.0), (4, 5, 30.0), (6, 3, 200.0), (5, 4, math.inf)]
)
def test_exact_policy_matches_enumeration(k: int, n: int, beta: float) -> None:
    rng = np.random.default_rng(k * 100 + n)
    pi, r = rng.dirichlet(np.ones(k)), rng.uniform(0, 1, k)
    np.testing.assert_allclose(sb.sbon_policy(pi, r, n, beta), brute_force(pi, r, n, beta), atol=1e-12)


def test_ties_and_limits() -> None:
    rng = np.random.default_rng(3)
    pi = rng.dirichlet(np.ones(5))
    r = np.array([0.1, 0.5, 0.5, 0.9, 0.9])
    for beta in (3.0, math.inf):
        np.testing.assert_allclose(sb.sbon_policy(pi, r, 3, beta), brute_force(pi, r, 3, beta), atol=1e-12)
    # beta = 0 and N = 1 are plain sampling; a huge beta is hard BoN; policies are distributions
    np.testing.assert_allclose(sb.sbon_policy(pi, r, 7, 0.0), pi)
    np.testing.assert_allclose(sb.sbon_policy(pi, r, 1, 5.0), pi)
    np.testing.assert_allclose(sb.sbon_policy(pi, r, 4, 1e4), sb.bon_policy(pi, r, 4), atol=1e-12)
    assert abs(sb.sbon_policy(pi, r, 4, 2.0).sum() - 1) < 1e-12


def test_large_beta_no_nan_and_monte_carlo_agrees() -> None:
    inst = sb.make_instance(sb.InstanceConfig(k=200, hack_frac=0.03), seed=1)
    for beta in (1000.0, 1e4):
        s = sb.sample_sbon(inst.pi_ref, inst.proxy, 8, beta, num_tuples=2000, seed=0)
        assert np.isfinite(s.estimate).all()
    exact = sb.sbon_policy(inst.pi_ref, inst.proxy, 32, 16.0)
    mc = sb.sample_sbon(inst.pi_ref, inst.proxy, 32, 16.0, num_tuples=40_000, seed=0)
    assert 0.5 * np.abs(mc.estimate - exact).sum() < 0.02
    assert 0.5 * np.abs(mc.empirical - exact).sum() < 0.04


def test_calibration() -> None:
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.ones(50))
    r = rng.normal(size=50)
    cal = sb.calibrate(r, pi)
    assert cal.min() > 0 and abs(cal.max() - 1) < 1e-12
    np.testing.assert_allclose(sb.calibrate(np.exp(3 * r) + 7, pi), cal)  # any increasing transform
    np.testing.assert_allclose(pi @ (cal - pi / 2), 0.5, atol=1e-12)  # mid-CDF averages 1/2 under pi_ref
    assert sb.tilted_error(cal, sb.calibrate(r**3, pi), pi, 4.0) == pytest.approx(0.0, abs=1e-15)


def test_registry_and_errors() -> None:
    assert set(sb.POLICIES) == {"sbon", "bon", "sampling", "tilted"}
    assert sb.get_method("SBoN") is sb.sbon_policy
    with pytest.raises(ValueError, match="sbon, bon, sampling, tilted"):
        sb.get_method("nope")
    with pytest.raises(InputError):
        sb.make_instance(sb.InstanceConfig(k=1))
    with pytest.raises(InputError):
        sb.text_instance(["only one"], "ref", embed=lambda xs: np.eye(len(xs)))


def test_text_instance_with_a_fake_encoder() -> None:
    def embed(texts: list[str]) -> np.ndarray:
        v = np.array([[len(t), t.count("a") + 1.0] for t in texts], float)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    cands = sb.split_candidates("first answer\n\nsecond aaa answer\n\nthird")
    inst = sb.text_instance(cands, "a reference", embed, true_scores=[1, 0, 0.5])
    assert inst.k == 3 and inst.labels == cands and np.all(np.abs(inst.proxy) <= 1 + 1e-12)
    res = sb.sweep(inst, sb.SweepConfig(ns=(1, 2, 3), betas=(0.0, 4.0)))
    assert res.true_reward is not None and res.true_reward.shape == (3, 3)


# ---------------------------------------------------------------------------------------------- claims (ci tier)
BETAS = tuple(float(b) for b in np.geomspace(0.5, 32, 13))


@pytest.mark.parametrize("seed", range(3))
def test_claim_kl_bound_exact(seed: int, record_claim) -> None:
    """Lemma 4.1: KL(pi_SBoN || pi_ref) <= log(N / (1 + (N-1) e^-beta)) for N = 2..32, beta in 0.5..32."""
    worst = 0.0
    for kw in ({"k": 200}, {"k": 50, "dirichlet_alpha": 0.2}, {"k": 500, "dirichlet_alpha": 3.0}):
        inst = sb.make_instance(sb.InstanceConfig(**kw), seed)
        for which in ("true", "calibrated"):
            res = sb.sweep(inst, sb.SweepConfig(ns=tuple(range(2, 33)), betas=BETAS, reward=which))
            assert res.reward_range <= 1.0
            bound = sb.kl_bound(np.array(res.ns)[:, None], np.array(BETAS)[None, :])  # rewards in [0, 1]: R = 1
            worst = max(worst, float((res.kl[:, :-1] / bound).max()))
            record_claim(max_kl_over_bound=worst)
            assert (res.kl[:, :-1] <= bound).all()
            assert (res.kl[:, -1] <= sb.bon_kl_bound(np.array(res.ns)) + 1e-12).all()


def test_claim_kl_bound_monte_carlo(record_claim) -> None:
    """The same bound on the empirical (Monte Carlo, Rao-Blackwellised) SBoN distribution."""
    inst = sb.make_instance(sb.InstanceConfig(k=200), seed=11)
    worst = 0.0
    for n in (2, 8, 32):
        for beta in (0.5, 4.0, 32.0):
            mc = sb.sample_sbon(inst.pi_ref, inst.true_reward, n, beta, num_tuples=20_000, seed=n)
            kl, bound = sb.kl_divergence(mc.estimate, inst.pi_ref), sb.kl_bound(n, beta)
            worst = max(worst, kl / bound)
            record_claim(max_kl_over_bound=worst, bound=1.0)
            assert kl <= bound


@pytest.mark.parametrize("which", ["proxy", "calibrated"])
def test_claim_clean_proxy_reward_rises_with_beta(which: str, record_claim) -> None:
    min_step, finite_best = math.inf, 0
    for seed in range(3):
        inst = sb.make_instance(sb.InstanceConfig(k=200, noise=0.0, hack_frac=0.0), seed)
        res = sb.sweep(
            inst, sb.SweepConfig(ns=(2, 4, 8, 16, 32), betas=(0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128), reward=which)
        )
        assert res.true_reward is not None
        min_step = min(min_step, float(np.diff(res.true_reward, axis=1).min()))
        finite_best += sum(not math.isinf(b) for b in res.best_beta[1:])
        record_claim(min_true_reward_step=min_step, step_bound=0.0, finite_best_betas=finite_best, instances=seed + 1)
        assert (np.diff(res.true_reward, axis=1) > 0).all()  # strictly increasing, hard BoN (last column) best
        assert all(math.isinf(b) for b in res.best_beta[1:])


@pytest.mark.parametrize("which", ["proxy", "calibrated"])
def test_claim_hackable_interior_beta_beats_bon(which: str, record_claim) -> None:
    gains = []
    for seed in range(5):
        inst = sb.make_instance(sb.InstanceConfig(k=200, hack_frac=0.03), seed)
        res = sb.sweep(inst, sb.SweepConfig(ns=(32,), betas=(0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128), reward=which))
        best = res.best_beta[0]
        assert 0 < best < math.inf, (seed, best)
        gains.append(res.best_true[0] - res.bon_true[0])
        record_claim(min_gain_over_bon=min(gains), max_gain_over_bon=max(gains), instances=len(gains))
        assert res.best_true[0] > res.bon_true[0] + 0.05


def test_regret_bound_holds(record_claim) -> None:
    """Theorem 5.2 on calibrated rewards: regret vs the optimal policy <= its three-term bound."""
    worst_ratio, min_slack = -math.inf, math.inf
    for seed in range(3):
        for kw in ({"noise": 0.3}, {"hack_frac": 0.03}):
            inst = sb.make_instance(sb.InstanceConfig(k=200, **kw), seed)
            tc, pc = sb.calibrate(inst.true_reward, inst.pi_ref), sb.calibrate(inst.proxy, inst.pi_ref)
            for n in (2, 8, 32):
                for beta in (0.5, 4.0, 32.0):
                    regret = tc.max() - sb.sbon_policy(inst.pi_ref, pc, n, beta) @ tc
                    bound = sb.regret_terms(tc, pc, inst.pi_ref, n, beta)["bound"]
                    worst_ratio, min_slack = max(worst_ratio, regret / bound), min(min_slack, bound - regret)
                    record_claim(max_regret_over_bound=worst_ratio, bound=1.0, min_slack=min_slack)
                    assert regret <= bound


@pytest.mark.full
def test_claim_kl_bound_full(record_claim) -> None:
    betas = tuple(float(b) for b in np.geomspace(0.5, 32, 41))
    worst_exact, worst_mc, instances = 0.0, 0.0, 0
    for seed in range(10):
        for kw in ({"k": 200}, {"k": 50, "dirichlet_alpha": 0.2}, {"k": 500, "dirichlet_alpha": 3.0}, {"k": 1000}):
            inst = sb.make_instance(sb.InstanceConfig(**kw), seed)
            res = sb.sweep(inst, sb.SweepConfig(ns=tuple(range(2, 33)), betas=betas, reward="true"))
            bound = sb.kl_bound(np.array(res.ns)[:, None], np.array(betas)[None, :])
            worst_exact, instances = max(worst_exact, float((res.kl[:, :-1] / bound).max())), instances + 1
            record_claim(max_kl_over_bound=worst_exact, max_mc_kl_over_bound=worst_mc, bound=1.0, instances=instances)
            assert (res.kl[:, :-1] <= bound).all()
            for n in (2, 8, 32):
                for beta in (0.5, 4.0, 32.0):
                    mc = sb.sample_sbon(inst.pi_ref, inst.true_reward, n, beta, num_tuples=40_000, seed=seed)
                    kl, mc_bound = sb.kl_divergence(mc.estimate, inst.pi_ref), sb.kl_bound(n, beta)
                    worst_mc = max(worst_mc, kl / mc_bound)
                    record_claim(max_mc_kl_over_bound=worst_mc)
                    assert kl <= mc_bound
