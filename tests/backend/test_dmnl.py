"""DMNL: invariants of the choice model, the diversity functions, greedy and the learners; the paper's claims on the
miniature (greedy ratio, regret against the exhaustive variant, sublinear growth, per-round cost in N)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from backend.bandits.dmnl import agents as A
from backend.bandits.dmnl import items
from backend.bandits.dmnl import model as M
from backend.errors import InputError
from backend.stats import paired_bootstrap
from tests.bench_tables import keyed_rows


def _div(kind: str, n: int = 8, k: int = 3, seed: int = 0) -> M.Diversity:
    rng = np.random.default_rng(seed)
    return M.coverage(rng.integers(0, 3, n), k, 0.5) if kind == "coverage" else M.facility(
        rng.standard_normal((n, 3)), k)


# ------------------------------------------------------------------------------------------------ the model
def test_reward_is_the_sum_of_choice_probabilities_and_the_augmented_mnl() -> None:
    rng = np.random.default_rng(1)
    u, lam, g = rng.uniform(-1, 1, 4), 0.7, 0.55
    p = M.choice_probs(u, lam, g)
    assert p.sum() == pytest.approx(1.0)
    assert float(M.reward(u, lam, g)) == pytest.approx(p[:-1].sum(), abs=1e-12)
    # the paper's form: exp(u_i) / (exp(-lam g) + sum exp(u_j))
    direct = np.exp(u) / (np.exp(-lam * g) + np.exp(u).sum())
    np.testing.assert_allclose(p[:-1], direct, rtol=1e-12)


@pytest.mark.parametrize("kind", ["coverage", "facility"])
def test_diversity_is_monotone_submodular_and_normalised(kind: str) -> None:
    div = _div(kind, n=7, k=4, seed=3)
    subsets = [list(s) for r in range(0, 5) for s in itertools.combinations(range(7), r)]
    val = {tuple(s): div.value(s) for s in subsets}
    assert val[()] == 0.0 and all(0.0 <= v <= 1.0 + 1e-12 for v in val.values())
    for s in subsets:
        for t in subsets:
            if set(s) <= set(t):
                assert val[tuple(s)] <= val[tuple(t)] + 1e-12
                for i in set(range(7)) - set(t):
                    if len(t) < 4:  # marginal gains shrink as the set grows
                        gs = div.value(sorted([*s, i])) - val[tuple(s)]
                        gt = div.value(sorted([*t, i])) - val[tuple(t)]
                        assert gs >= gt - 1e-12
    np.testing.assert_allclose(div.gain_values([0, 2], np.array([1, 3, 5])),
                               [div.value([0, 2, j]) for j in (1, 3, 5)], rtol=1e-12)


def test_coverage_counts_distinct_categories_first() -> None:
    div = M.coverage(np.array([0, 0, 1, 2]), k=3, rho=0.5)
    assert div.value([0, 2, 3]) == pytest.approx(1.0)  # three categories: the maximum
    assert div.value([0, 1, 2]) == pytest.approx((1 + 0.5 + 1) / 3)


def test_greedy_cost_is_nk_and_enumeration_is_c_n_k() -> None:
    u = np.random.default_rng(0).uniform(-1, 1, 12)
    div = _div("coverage", n=12, k=4)
    res = M.greedy_true(u, 1.0, div, 4)
    assert res.evaluations == sum(12 - j for j in range(4)) and len(set(res.items.tolist())) == 4
    assert M.all_subsets(12, 4).shape == (math.comb(12, 4), 4)
    with pytest.raises(InputError, match="enumeration"):
        M.all_subsets(40, 8)


def test_optimum_has_k_items_reward_is_monotone() -> None:
    u = np.random.default_rng(2).uniform(-1, 1, 6)
    div = _div("facility", n=6, k=3)
    for r in range(1, 3):
        for s in itertools.combinations(range(6), r):
            for i in set(range(6)) - set(s):
                assert M.true_reward(u, 1.0, div, np.array([*s, i])) >= M.true_reward(u, 1.0, div, np.array(s))


def test_the_guarantee_needs_the_bounded_regime() -> None:
    """Outside bounded utilities and lambda the reward is not submodular and greedy can fall below the bound: the hard
    instance at u = -6, lambda = 6 gives 0.56 (the sigmoid is convex in its low range)."""
    u, _, div, k = M.hard_instance()
    subsets = M.all_subsets(len(u), k)
    g_all = div.enumerate_values(subsets)
    low = np.full(3, -6.0)
    ratio = M.greedy_true(low, 6.0, div, k).value / M.exhaustive_true(low, 6.0, subsets, g_all).value
    assert ratio < M.APPROX


# ------------------------------------------------------------------------------------------------ learners
def test_catalogue_and_item_table_validation() -> None:
    cat = items.synthetic(20, 5, 5, seed=0)
    assert np.linalg.norm(cat.features, axis=1).max() <= 1 + 1e-12 and np.linalg.norm(cat.theta) == pytest.approx(1)
    X = cat.contexts(3, 0.3, 0)
    assert X.shape == (3, 20, 5) and np.linalg.norm(X, axis=-1).max() <= 1 + 1e-12
    with pytest.raises(InputError, match="single category"):
        items.read_item_table(b"a,category\n" + b"1,x\n" * 12)
    with pytest.raises(InputError, match="non-numeric"):
        items.read_item_table(b"a,b,category\n" + b"1,z,x\n2,3,y\n" * 6)
    with pytest.raises(InputError, match="missing"):
        items.read_item_table(b"a,b,category\n" + b"1,,x\n2,3,y\n" * 6)
    with pytest.raises(InputError, match="between 1 and the number of items"):
        A.simulate(items.synthetic(5, 2, 3), k=6, rounds=20)


def test_simulation_is_deterministic_and_common_random_numbers_pair_agents() -> None:
    cat = items.synthetic(10, 3, 5, seed=4)
    a = A.simulate(cat, k=3, rounds=150, agents=["ofu-dmnl", "oracle", "random"], seed=4)
    b = A.simulate(cat, k=3, rounds=150, agents=["ofu-dmnl", "oracle", "random"], seed=4)
    np.testing.assert_array_equal(a.runs["ofu-dmnl"].assortments, b.runs["ofu-dmnl"].assortments)
    assert np.abs(a.runs["oracle"].regret).max() < 1e-12  # the oracle plays the enumerated optimum
    assert a.runs["random"].regret.sum() > a.runs["ofu-dmnl"].regret.sum()
    assert np.all(a.runs["ofu-dmnl"].regret >= -1e-12)


def test_random_rounds_while_lambda_is_uncertain() -> None:
    div = _div("coverage", n=10, k=3)
    agent = A.OMDLearner(5, 3, div, A.DMNLConfig(), diverse=True, search="greedy", rng=np.random.default_rng(0))
    X = items.synthetic(10, 3, 5).features
    agent.select(1, X)
    assert agent.random_rounds == 1  # lambda_hat = 0: the interval contains 0
    agent.w[-1] = 50.0
    agent.select(2, X)
    assert agent.random_rounds == 1  # a confident positive lambda: greedy


def test_omd_learns_the_augmented_parameter() -> None:
    cat = items.synthetic(10, 3, 5, seed=1)
    sim = A.simulate(cat, k=3, lam=1.0, rounds=3000, agents=["ofu-dmnl"], seed=1, sigma=0.5)
    assert abs(sim.runs["ofu-dmnl"].lambda_hat[-1] - 1.0) < 0.6


def test_greedy_and_exhaustive_agree_in_the_same_state() -> None:
    """Given the same learner state, the greedy optimistic assortment equals the exhaustive one in nearly every round:
    the spread between the two agents' regrets comes from their trajectories, not from the greedy step."""
    cat = items.synthetic(10, 3, 5, seed=0)
    div = M.make_diversity("coverage", categories=cat.categories, features=cat.features, k=3)
    g = A.OMDLearner(5, 3, div, A.DMNLConfig(), diverse=True, search="greedy", rng=np.random.default_rng(0))
    f = A.OMDLearner(5, 3, div, A.DMNLConfig(), diverse=True, search="exhaustive", rng=np.random.default_rng(0))
    X, U = cat.contexts(400, 0.3, 0), None
    U = X @ cat.theta
    uni = np.random.default_rng(1).random(400)
    same, gap = 0, 0.0
    for t in range(400):
        f.w, f.H = g.w.copy(), g.H.copy()
        g.rng = np.random.default_rng(t)
        f.rng = np.random.default_rng(t)
        S, S2 = g.select(t + 1, X[t]), f.select(t + 1, X[t])
        same += set(S.tolist()) == set(S2.tolist())
        gap += M.true_reward(U[t], 1.0, div, S2) - M.true_reward(U[t], 1.0, div, S)
        g.update(X[t], S, M.draw_choice(U[t, S], 1.0, div.value(S), uni[t]))
    assert same >= 0.98 * 400 and abs(gap) < 0.05


# ------------------------------------------------------------------------------------------------ claims
def test_claim_greedy_ratio(record_claim) -> None:
    check = M.random_instances_ratio(300, seed=0)
    u, lam, div, k = M.hard_instance()
    subsets = M.all_subsets(len(u), k)
    opt = M.exhaustive_true(u, lam, subsets, div.enumerate_values(subsets))
    got = M.greedy_true(u, lam, div, k)
    hard = got.value / opt.value
    worst = M.adversarial_ratio(30, 120, seed=0)
    record_claim(random_min_ratio=float(check.ratios.min()), random_suboptimal=int(check.suboptimal),
                 hard_instance_ratio=hard, adversarial_min_ratio=worst.ratio, adversarial_evaluations=worst.evaluations,
                 bound=M.APPROX)
    assert set(got.items.tolist()) != set(opt.items.tolist())  # greedy really is suboptimal on the hard instance
    assert worst.ratio <= hard  # the search starts from the hand-built instance and never accepts a worse ratio
    assert check.ratios.min() >= M.APPROX and hard >= M.APPROX and worst.ratio >= M.APPROX


def test_adversarial_search_stays_in_the_regime_and_reports_a_real_instance() -> None:
    worst = M.adversarial_ratio(4, 40, seed=1)
    assert np.abs(worst.u).max() <= 1 and 0 <= worst.lam <= 1 and 0 <= worst.similarity.min()
    assert worst.similarity.max() <= 1 and worst.evaluations == 4 * 41
    ratio, got, opt = M._ratio(worst.u, worst.lam, worst.similarity, worst.k)
    assert ratio == pytest.approx(worst.ratio) and sorted(got.items.tolist()) == worst.greedy_items
    assert worst.trace == sorted(worst.trace, reverse=True)  # the best ratio so far never rises


MARGIN = 1.10  # "comparable": greedy's cumulative regret within 10 % of the exhaustive variant's


def _regret_vs_full(n: int, k: int, rounds: int, seeds: int) -> dict[str, object]:
    """Facility-location diversity at lambda* = 1, where greedy and enumeration offer different sets in most rounds
    (under coverage diversity they coincide in 98 % of rounds, which would compare an algorithm with itself).
    Per seed the two agents see the same contexts and choice draws; the ratio of mean cumulative regrets gets a
    paired bootstrap interval over seeds, and ``excess_ci`` is that interval minus the 10 % margin (contains zero:
    the seeds cannot tell whether greedy stays within 10 %)."""
    ours, full, curves, same = [], [], [], []
    for seed in range(seeds):
        cat = items.synthetic(n, max(2, n // 4), 5, seed=seed)
        sim = A.simulate(cat, k=k, lam=1.0, rounds=rounds, diversity="facility",
                         agents=["ofu-dmnl", "ofu-dmnl-full"], seed=seed)
        a, b = sim.runs["ofu-dmnl"], sim.runs["ofu-dmnl-full"]
        ours.append(a.regret.sum())
        full.append(b.regret.sum())
        curves.append(np.cumsum(a.regret))
        same.append(np.mean([set(x) == set(y) for x, y in zip(a.assortments.tolist(), b.assortments.tolist())]))
    ci = paired_bootstrap(lambda x, y: x.mean() / y.mean(), ours, full)
    med = np.median(np.stack(curves), axis=0)
    return {"mean_regret_ours": float(np.mean(ours)), "mean_regret_full": float(np.mean(full)),
            "ratio": ci.mean, "ratio_interval": [ci.low, ci.high], "excess_ci": [ci.low - MARGIN, ci.high - MARGIN],
            "same_set_share": float(np.mean(same)), "seeds": seeds, "exponent": A.growth_exponent(med)}


def test_claim_regret_close_to_exhaustive(record_claim) -> None:
    """ci: N = 12, K = 4 (495 sets), T = 1,000, 40 seeds. Fails when the whole interval of the ratio lies above the
    margin; the recorded ``excess_ci`` decides between holds and not resolved."""
    r = _regret_vs_full(12, 4, 1000, 40)
    record_claim(**r)
    assert r["same_set_share"] < 0.5  # the two really choose differently
    assert r["ratio_interval"][0] <= MARGIN and r["exponent"] < 0.7


@pytest.mark.full
def test_claim_regret_close_to_exhaustive_at_n16(record_claim) -> None:
    """The full setting: N = 16, K = 4 (1,820 sets), T = 2,000, 60 seeds."""
    r = _regret_vs_full(16, 4, 2000, 60)
    record_claim(**r)
    assert r["same_set_share"] < 0.5
    assert r["ratio_interval"][0] <= MARGIN and r["exponent"] < 0.7


def test_greedy_scores_a_linear_number_of_sets() -> None:
    """Per-round work of the assortment search once lambda is confidently positive: greedy scores
    sum_{j<K} (N - j) candidate sets (linear in N), the exhaustive variant C(N, K). Counted: true by construction,
    an invariant; the times are the claim's (``benchmarks/dmnl.py``)."""
    ev = {}
    for search, ns in (("greedy", (10, 20, 50, 100)), ("exhaustive", (10, 15, 20))):
        for n in ns:
            cat = items.synthetic(n, max(2, n // 4), 5)
            div = M.make_diversity("coverage", categories=cat.categories, features=cat.features, k=5)
            agent = A.OMDLearner(5, 5, div, A.DMNLConfig(), diverse=True, search=search,
                                 rng=np.random.default_rng(0))
            agent.w[-1] = 50.0
            S = agent.select(1, cat.features)
            assert agent.random_rounds == 0 and len(set(S.tolist())) == 5
            ev[(search, n)] = agent.evaluations
    for n in (10, 20, 50, 100):
        assert ev[("greedy", n)] == sum(n - j for j in range(5))
    for n in (10, 15, 20):
        assert ev[("exhaustive", n)] == math.comb(n, 5)


def test_claim_runtime_from_the_benchmark(record_claim) -> None:
    """Wall-clock cost per round as measured by ``benchmarks/dmnl.py`` (K = 5, one thread; read from its results,
    not timed here): greedy's time grows at most linearly from N = 10 to 100, and enumeration costs more than greedy
    from N = 20 on."""
    rows = keyed_rows("dmnl", "Per-round cost vs N")
    ours = {n: float(r[0]) for n, r in rows.items()}
    full = {n: float(r[2]) for n, r in rows.items() if r[2] != "-"}
    growth = ours[100] / ours[10]
    record_claim(greedy_ms_n10=ours[10], greedy_ms_n100=ours[100], growth_n10_to_n100=growth,
                 full_over_greedy_n20=full[20] / ours[20])
    assert growth <= 10.0  # linear in N or better
    assert full[20] / ours[20] > 2.0


def test_an_id_column_names_the_items() -> None:
    rows = [f"SKU-{i:03d},{i % 7 + 0.5},{(i * 3) % 5},{'abc'[i % 3]}" for i in range(12)]
    cat = items.read_item_table(("sku,price,rating,category\n" + "\n".join(rows) + "\n").encode())
    assert cat.names[:2] == ["SKU-000", "SKU-001"] and cat.dim == 2 and cat.category_names == ["a", "b", "c"]
    named = items.read_item_table(("n,price,category\n" + "".join(f"{i},{i % 4},{'xy'[i % 2]}\n" for i in range(12))
                                   ).encode(), id_column="n")
    assert named.names[3] == "3" and named.dim == 1  # a numeric id column is a feature unless named
    with pytest.raises(InputError, match="No id column 'nope'"):
        items.read_item_table(b"a,category\n" + b"1,x\n2,y\n" * 6, id_column="nope")
    with pytest.raises(InputError, match="no numeric feature column"):
        items.read_item_table(b"name,category\n" + b"p,x\nq,y\n" * 6)
    sim = A.simulate(cat, k=2, rounds=10, agents=["ofu-dmnl"], seed=0)
    assert all(n.startswith("SKU-") for n in sim.to_json(cat)["item_names"])


def test_lsb_greedy_fills_k_distinct_slots_and_learns_from_each_shown_slot() -> None:
    cat = items.synthetic(12, 4, 5, seed=2)
    sim = A.simulate(cat, k=3, rounds=300, agents=["lsb-greedy", "random"], seed=2)
    S = sim.runs["lsb-greedy"].assortments
    assert S.shape == (300, 3) and all(len(set(row)) == 3 for row in S.tolist())
    # a learner, not a coin: it beats random assortments on the same rounds and choices
    assert sim.runs["lsb-greedy"].regret.sum() < sim.runs["random"].regret.sum()


def _logged_rounds(cat, lam: float, k: int, n: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    div = M.make_diversity("coverage", categories=cat.categories, features=cat.features, k=k)
    rows = ["shown,chosen"]
    for _ in range(n):
        S = np.sort(rng.choice(cat.n_items, k, replace=False))
        c = M.draw_choice(cat.features[S] @ cat.theta, lam, div.value(S), float(rng.random()))
        rows.append(";".join(cat.names[i] for i in S) + "," + (cat.names[S[c]] if c >= 0 else ""))
    return ("\n".join(rows) + "\n").encode()


def test_a_preference_fitted_to_logged_choices_recovers_the_true_one() -> None:
    cat = items.synthetic(20, 5, 3, seed=5)
    cat.theta = 2.0 * cat.theta  # utilities up to 2: enough signal in 4,000 rounds
    div = M.make_diversity("coverage", categories=cat.categories, features=cat.features, k=4)
    log = items.read_choice_log(_logged_rounds(cat, 1.5, 4, 4000, seed=0)).resolve(cat)
    fit = items.fit_preference(cat, log, div, reg=0.1)
    cos = fit.theta @ cat.theta / (np.linalg.norm(fit.theta) * np.linalg.norm(cat.theta))
    assert cos > 0.95 and abs(np.linalg.norm(fit.theta) - 2.0) < 0.5 and abs(fit.lam - 1.5) < 0.6
    assert fit.loglik > fit.baseline_loglik  # the fitted model explains the choices better than chance
    used = items.with_fitted_preference(cat, fit)
    assert np.allclose(used.theta, fit.theta) and "fitted to 4000 logged rounds" in used.source


def test_preference_and_choice_log_bad_input() -> None:
    cat = items.synthetic(8, 2, 3, seed=0)
    assert np.linalg.norm(items.with_preference(cat, "1, 2; 2").theta) == pytest.approx(1.0)
    with pytest.raises(InputError, match="needs 3 numbers"):
        items.with_preference(cat, "1 2")
    with pytest.raises(InputError, match="must be numbers"):
        items.with_preference(cat, "1 x 2")
    with pytest.raises(InputError, match="'shown' and 'chosen'"):
        items.read_choice_log(b"a,b\n1,2\n")
    with pytest.raises(InputError, match="not an item"):
        items.read_choice_log(b"shown,chosen\nitem 0;ghost,\n").resolve(cat)
    with pytest.raises(InputError, match="not among the shown"):
        items.read_choice_log(b"shown,chosen\nitem 0;item 1,item 2\n").resolve(cat)
    log = items.read_choice_log(b"shown,chosen\n1;2,2\nitem 3|item 4,none\n")
    assert log.resolve(cat) == [([0, 1], 1), ([3, 4], -1)]
    with pytest.raises(InputError, match="at least 10"):
        items.fit_preference(cat, [([0, 1], 0)] * 3, M.make_diversity(
            "coverage", categories=cat.categories, features=cat.features, k=2))
