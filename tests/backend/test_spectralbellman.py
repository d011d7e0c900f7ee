"""Spectral Bellman Method: environment and reader invariants, the SBM iterations, the agents, and the claims on the
miniature: how well learned features capture held-out backups (a full-rank MDP with table features, the pixel
gridworld with network features), and episodes to solve DeepSea(N) against the tuned references, re-evaluated from the
shipped per-seed log (``assets/spectralbellman_deepsea_log.json``; the full tier reruns it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from backend.errors import InputError
from backend.io import registry
from backend.rl.spectralbellman import explore_log, mdps
from backend.rl.spectralbellman.agents import (
    AGENTS,
    AgentConfig,
    LinearLSVI,
    feature_scale,
    run_agents,
    ucbvi_steps,
)
from backend.rl.spectralbellman.inputs import mdp_json
from backend.rl.spectralbellman.spectral_bellman import (
    SBMConfig,
    SBMLearner,
    backup_rank,
    capture,
    learn_features,
    max_principal_angle,
)
from backend.stats import paired_ci


# ------------------------------------------------------------------------------------------------ environments
@pytest.mark.parametrize("name", list(mdps.ENVS))
def test_environments_are_stochastic_and_seeded(name: str) -> None:
    a, b = mdps.make_env(name, size=6, seed=3), mdps.make_env(name, size=6, seed=3)
    assert np.allclose(a.P.sum(axis=2), 1.0) and (a.P >= 0).all()
    assert np.array_equal(a.P, b.P) and np.array_equal(a.R, b.R)
    assert 0 <= a.start < a.n_states and not a.terminal[a.start]


def test_low_rank_mdp_factorises_with_reward_in_the_span() -> None:
    m = mdps.low_rank_mdp(seed=1)
    phi = m.phi_true
    assert phi.shape == (200, 8) and np.linalg.matrix_rank(phi) == 8
    Y = mdps.stacked_backups(m, 64)
    resid = Y - phi @ np.linalg.lstsq(phi, Y, rcond=None)[0]
    assert np.abs(resid).max() < 1e-10  # every backup lies in span(phi*): zero inherent Bellman error


@pytest.mark.parametrize("name", ["deepsea", "chain", "gridworld"])
def test_deterministic_true_features_have_zero_bellman_error(name: str) -> None:
    m = mdps.make_env(name, size=6)
    Y = mdps.stacked_backups(m, 64)
    phi = m.phi_true
    resid = Y - phi @ np.linalg.lstsq(phi, Y, rcond=None)[0]
    assert np.abs(resid).max() < 1e-9


def test_deepsea_has_one_treasure_and_optimal_return() -> None:
    m = mdps.deepsea(8, seed=2)
    assert (m.R > 0.5).sum() == 1
    assert mdps.optimal_return(m) == pytest.approx(0.99)


def test_full_rank_spectrum_is_smeared() -> None:
    s = mdps.spectrum(mdps.full_rank_mdp())
    assert s[8] / s[0] > 1e-3 and backup_rank(mdps.full_rank_mdp()) > 40


# ------------------------------------------------------------------------------------------------ MDP JSON reader
def test_json_example_round_trips() -> None:
    m = registry.decode("mdp_json", mdp_json())
    assert (m.n_states, m.n_actions, m.horizon, m.gamma) == (4, 2, 8, 0.9)
    assert np.allclose(m.P.sum(axis=2), 1.0)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda o: o["P"][1].__setitem__(0, [0.5, 0.7, -0.2, 0.0]), "negative"),
        (lambda o: o["P"][2].__setitem__(1, [0.5, 0.3, 0.0, 0.0]), "sums to 0.8"),
        (lambda o: o.__setitem__("R", [[0, 0]] * 3), "shape"),
        (lambda o: o.__setitem__("gamma", 1.5), "gamma"),
        (lambda o: o.pop("P"), "lacks P"),
        (lambda o: o.__setitem__("horizon", 0), "horizon"),
        (lambda o: o.__setitem__("terminal", [0]), "start state is terminal"),
        (lambda o: o["R"].__setitem__(0, ["a", 1]), "numbers"),
    ],
)
def test_json_bad_files_say_what_to_change(edit, message: str) -> None:  # noqa: ANN001 - an editing lambda
    obj = json.loads(mdp_json())
    edit(obj)
    with pytest.raises(InputError, match=message):
        registry.decode("mdp_json", json.dumps(obj).encode())


def test_json_size_limit_is_stated() -> None:
    too_many = {"states": 201, "actions": 1, "P": [[[1.0] + [0.0] * 200]] * 201, "R": [[0]] * 201, "gamma": 0.9}
    with pytest.raises(InputError, match="between 1 and 200"):
        registry.decode("mdp_json", json.dumps(too_many).encode())


# ------------------------------------------------------------------------------------------------ SBM iterations
def test_unit_step_without_penalty_is_the_power_iteration_update() -> None:
    """lr_phi = 1, no penalty: one L1 step sets Phi to Y Theta~ C^{-1} / n (the ALS / power-iteration update)."""
    import torch

    m = mdps.low_rank_mdp()
    cfg = SBMConfig(d=8, lr_phi=1.0, orth=0.0, ema=0.0, seed=4)
    ln = SBMLearner(m.n_states, m.n_actions, cfg)
    phi0 = ln.phi()
    gen_state = ln.gen.get_state()
    ln.step(m.gamma, m.P, m.R, iters=1)
    ln.gen.set_state(gen_state)
    theta = ln.sample_theta(None)
    Y = mdps.backup(m, (phi0 @ theta.numpy().T).reshape(m.n_states, m.n_actions, -1)).reshape(200, -1)
    tt = theta.numpy()  # Delta starts at zero: theta~ = theta on the first step
    C = tt.T @ tt / len(tt)
    expected = Y @ tt @ np.linalg.inv(C) / len(tt)
    assert np.allclose(ln.phi(), expected, atol=1e-8 * np.abs(expected).max())
    assert isinstance(ln.table, torch.nn.Parameter)


def test_sbm_is_deterministic_and_validates() -> None:
    m = mdps.low_rank_mdp()
    a = learn_features(m, SBMConfig(iters=20, seed=5))
    b = learn_features(m, SBMConfig(iters=20, seed=5))
    assert np.array_equal(a.phi, b.phi)
    with pytest.raises(InputError, match="out of range"):
        learn_features(m, SBMConfig(d=0))


def test_network_features_close_the_backups_on_the_gridworld() -> None:
    m = mdps.gridworld()
    r = learn_features(m, SBMConfig(d=8, iters=150, features="network", record_every=50))
    assert r.closure[-1] < 0.5 * r.closure[0]  # the network's span captures more of the backups as it trains
    assert r.reference.startswith("top-8")


# ------------------------------------------------------------------------------------------------ agents
def test_agents_are_seeded_and_lsvi_is_exact_when_tabular() -> None:
    m = mdps.deepsea(5, seed=0)
    cfg = AgentConfig(episodes=15, seed=2)
    a, b = run_agents(m, ["ts_true", "rnd"], cfg), run_agents(m, ["ts_true", "rnd"], cfg)
    assert a["ts_true"].returns == b["ts_true"].returns and a["rnd"].returns == b["rnd"].returns
    # LSVI on one-hot features with every pair observed recovers the optimal Q (finite horizon, lambda -> 0)
    model = LinearLSVI(m, np.eye(m.n_states * 2), lam=1e-9)
    for s in range(m.n_states - 1):
        for act in range(2):
            model.add(s, act, float(m.R[s, act]), int(m.P[s, act].argmax()))
    Q = model.q(model.solve(None, 0.0))
    assert Q[0].max() == pytest.approx(mdps.optimal_return(m), abs=1e-6)


def test_thompson_sampling_escapes_the_gridworld_self_loops() -> None:
    """Fresh noise per step to go: bumping into a wall (a self-loop) does not compound one draw, so TS reaches the
    goal of the cyclic gridworld."""
    m = mdps.gridworld()
    run = AGENTS.get("ts_true")(m, AgentConfig(episodes=100, seed=0, stop_when_solved=True), None)
    assert run.episodes_to_solve is not None and run.episodes_to_solve <= 60


def test_registry_and_bad_settings() -> None:
    assert AGENTS.kind("ts_sbm") == "ours" and set(AGENTS) >= {"ts_random", "ts_true", "rnd", "egreedy"}
    with pytest.raises(InputError, match="exploration agent"):
        AGENTS.get("nope")
    with pytest.raises(InputError, match="Episodes"):
        run_agents(mdps.chain(5), ["egreedy"], AgentConfig(episodes=0))
    with pytest.raises(InputError, match="DeepSea size"):
        mdps.deepsea(100)


# ------------------------------------------------------------------------------------------------ invariants behind
# the method (true by construction, so not claims)
def test_spectrum_cuts_at_d_under_zero_bellman_error() -> None:
    """P and r are built from phi*, so every backup lies in span(phi*): the stacked backups have rank d exactly; the
    full-rank MDP's spectrum has no cut."""
    low, full = mdps.spectrum(mdps.low_rank_mdp()), mdps.spectrum(mdps.full_rank_mdp())
    assert low[8] / low[0] < 1e-8 and low[7] / low[0] > 1e-3
    assert full[8] / full[0] > 1e-3


def test_sbm_iterations_reach_the_true_span() -> None:
    """On the rank-8 MDP the targets always lie in span(phi*), so a power-iteration step lands in it."""
    m = mdps.low_rank_mdp()
    r = learn_features(m, SBMConfig(d=8, iters=100, seed=0, record_every=100))
    assert max_principal_angle(r.phi, m.phi_true) < 1e-3
    assert r.closure[-1] < 1e-6
    assert capture(m, r.phi)["residual"] < 1e-8  # held-out backups lie in the learned span too


def test_capture_ratio_is_one_for_the_top_singular_vectors() -> None:
    m = mdps.full_rank_mdp()
    Y = mdps.stacked_backups(m, 512, 999)
    U = np.linalg.svd(Y, full_matrices=False)[0][:, :8]
    c = capture(m, U)
    assert c["ratio"] == pytest.approx(1.0, abs=1e-9) and 0 < c["optimum"] < c["residual"] + 1e-12
    assert capture(m, np.random.default_rng(0).standard_normal((200, 8)))["ratio"] > 2.0


def test_ts_sbm_centres_nu_on_the_agents_fit_in_the_raw_feature_scale(monkeypatch) -> None:
    """The centre handed to the SBM learner reproduces the agent's fitted Q on the learner's raw features
    ("consistent"); "mixed" hands over the fit on the normalised features unchanged."""
    from backend.rl.spectralbellman import agents as ag
    from backend.rl.spectralbellman.spectral_bellman import SBMLearner as Learner

    learner_side: list[tuple[np.ndarray, np.ndarray]] = []  # (raw features, centre) per refresh
    agent_side: list[tuple[np.ndarray, np.ndarray]] = []  # (agent features, agent fit) per refresh
    step, real_run = Learner.step, ag._run

    def spy_step(self, gamma, P, R, mask=None, iters=1, theta_hat=None, callback=None):  # noqa: ANN001, ANN202
        learner_side.append((self.phi(), theta_hat))
        return step(self, gamma, P, R, mask, iters, theta_hat, callback)

    def spy_run(mdp, name, phi, cfg, mode, progress, feature_seconds=0.0, refresh=None):  # noqa: ANN001, ANN202
        def wrapped(model):  # noqa: ANN001, ANN202
            agent_side.append((model.phi.copy(), model.solve(None, 0.0)))
            refresh(model)

        return real_run(mdp, name, phi, cfg, mode, progress, feature_seconds, wrapped)

    monkeypatch.setattr(Learner, "step", spy_step)
    monkeypatch.setattr(ag, "_run", spy_run)
    m = mdps.deepsea(5, seed=1)
    for centre in ("consistent", "mixed"):
        learner_side.clear()
        agent_side.clear()
        ag.run_ts_sbm(m, AgentConfig(episodes=12, seed=0, centre=centre))
        assert len(learner_side) == len(agent_side) == 2
        for (phi_agent, theta_agent), (phi_raw, theta_raw) in zip(agent_side, learner_side, strict=True):
            if centre == "consistent":
                assert np.allclose(phi_raw @ theta_raw, phi_agent @ theta_agent, atol=1e-10)
            else:
                assert np.allclose(theta_raw, theta_agent)
                assert not np.allclose(phi_raw @ theta_raw, phi_agent @ theta_agent)


def test_ts_sbm_zero_gives_never_visited_pairs_zero_features() -> None:
    from backend.rl.spectralbellman import agents as ag

    m = mdps.deepsea(6, seed=0)
    rows: list[np.ndarray] = []
    real = ag.LinearLSVI.set_features

    def spy(self, phi):  # noqa: ANN001, ANN202
        n = self.N.sum(axis=2).reshape(-1)
        rows.append(np.abs(phi[n == 0]).max(initial=0.0))
        assert feature_scale(phi) == pytest.approx(1.0)
        return real(self, phi)

    ag.LinearLSVI.set_features = spy
    try:
        ag.run_ts_sbm_zero(m, AgentConfig(episodes=16, seed=0))
    finally:
        ag.LinearLSVI.set_features = real
    assert rows and max(rows) == 0.0


def test_ucbvi_is_optimistic_and_exact_when_every_pair_is_known() -> None:
    m = mdps.deepsea(5, seed=3)
    model = LinearLSVI(m, np.eye(m.n_states * 2), lam=1.0)
    Qs = ucbvi_steps(model, beta=0.1, rmax=1.0)
    assert all(np.allclose(Q[~m.terminal], k + 1.0) for k, Q in enumerate(Qs))  # nothing tried: Q_k = k rmax
    for s in range(m.n_states - 1):
        for act in range(2):
            model.add(s, act, float(m.R[s, act]), int(m.P[s, act].argmax()))
    exact = ucbvi_steps(model, beta=0.0, rmax=1.0)[-1]
    assert exact[m.start].max() == pytest.approx(mdps.optimal_return(m), abs=1e-12)


# ------------------------------------------------------------------------------------------------ claims: representation
def _learned_ratios(m: mdps.MDP, features: str, seeds: int) -> tuple[list[float], list[float], np.ndarray]:
    """Capture ratios of the initial and of the learned features (200 SBM iterations, d = 8) per seed, and the last
    seed's learned features."""
    before, after = [], []
    for seed in range(seeds):
        ln = SBMLearner(m.n_states, m.n_actions, SBMConfig(d=8, features=features, seed=seed), m.obs, m.terminal)
        before.append(capture(m, ln.phi())["ratio"])
        ln.step(m.gamma, m.P, m.R, iters=200)
        after.append(capture(m, ln.phi())["ratio"])
    return before, after, ln.phi()


def _capture_claim(env: str, features: str, seeds: int, record_claim, table_reference: bool = False) -> None:  # noqa: ANN001
    """Held-out capture ratio (residual / Eckart-Young optimum, d = 8) of the features after 200 SBM iterations and
    of the same learner's initial (random) features, paired over the seeds; with ``table_reference`` also the table
    features' ratio on the same MDP (the exact preconditioned power-iteration step)."""
    m = mdps.make_env(env)
    before, after, phi = _learned_ratios(m, features, seeds)
    gain = paired_ci(before, after)
    ratio = float(np.mean(after))
    sv = np.linalg.svd(phi, compute_uv=False)
    extra = {}
    if table_reference:
        extra["ratio_table_features"] = float(np.mean(_learned_ratios(m, "table", seeds)[1]))
    record_claim(ratio=ratio, ratio_max=float(np.max(after)), ratio_random=float(np.mean(before)),
                 optimum=capture(m, np.eye(m.n_states * m.n_actions)[:, :8])["optimum"], bound=CAPTURE_BOUND,
                 seeds=seeds, feature_condition=float(sv[0] / sv[-1]), **extra, **gain.numbers("gain_over_random"))
    assert ratio <= CAPTURE_BOUND  # within 25 % of the best d-dimensional subspace's residual
    assert gain.mean > 0  # and better than the features it started from


CAPTURE_BOUND = 1.25


def test_claim_table_features_capture_full_rank_backups(record_claim) -> None:
    _capture_claim("fullrank", "table", 3, record_claim)


@pytest.mark.full
def test_claim_table_features_capture_full_rank_backups_10_seeds(record_claim) -> None:
    _capture_claim("fullrank", "table", 10, record_claim)


PIXEL_XFAIL = (
    "the pixel network's features capture the gridworld's held-out backups with ratio 1.337 (3 seeds; 1.333 over 10) "
    "against the bound 1.25, hardly better than the untrained network's 1.41 (gain 0.073, 95 % CI [-0.15, 0.30] over "
    "3 seeds, [0.027, 0.120] over 10), while table features on the same MDP reach 1.143: the MDP admits better 8-dim "
    "features. Cause: the network's L1 step is Adam on the unpreconditioned loss, not a power-iteration update, and "
    "its features collapse onto about four directions (singular values about 14, 8, 8, 8, then 0.04-0.3)"
)


@pytest.mark.xfail(strict=True, reason=PIXEL_XFAIL)
def test_claim_network_features_capture_gridworld_backups(record_claim) -> None:
    _capture_claim("gridworld", "network", 3, record_claim, table_reference=True)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=PIXEL_XFAIL)
def test_claim_network_features_capture_gridworld_backups_10_seeds(record_claim) -> None:
    _capture_claim("gridworld", "network", 10, record_claim, table_reference=True)


# ------------------------------------------------------------------------------------------------ claims: exploration
LOG = Path(__file__).resolve().parents[2] / "assets" / explore_log.LOG_NAME


def _record_log(ev: dict, record_claim) -> dict:  # noqa: ANN001
    """Medians of ours, the ablations and every tuned family; the tuned variants; the paired log-ratio intervals
    against the strongest reference."""
    nums: dict = {}
    for N, per in ev["sizes"].items():
        for fam, var in per["tuned"].items():
            nums[f"median_{fam}_N{N}"] = per["variants"][var]["median"]
            nums[f"solved_{fam}_N{N}"] = per["variants"][var]["solved"]
            if fam in explore_log.REFERENCES:
                nums[f"tuned_{fam}_N{N}"] = var
        nums[f"strongest_N{N}"] = per["strongest"]
    return nums


def _exploration(ev: dict, record_claim) -> None:  # noqa: ANN001
    nums = _record_log(ev, record_claim)
    for N, per in ev["sizes"].items():
        lr = per["log_ratio"][per["strongest"]]
        nums[f"log_ratio_vs_strongest_N{N}"] = lr["mean"]
        nums[f"log_ratio_vs_strongest_N{N}_ci"] = lr["ci"]
        nums[f"log_ratio_vs_strongest_N{N}_pairs"] = lr["pairs"]
    record_claim(**nums, seeds=ev["seeds"], budget=ev["budget"])
    for per in ev["sizes"].values():  # ours solves sooner than the strongest tuned reference (geometric mean)
        assert per["log_ratio"][per["strongest"]]["mean"] < 0


def _learned_features(log: dict, record_claim) -> None:  # noqa: ANN001
    """TS + SBM with never-visited rows zeroed against RLSVI (one-hot features), both at their best lambda of the
    grid both were run on (the smallest size: the lambda grid of the SBM agents runs there only); the ablations'
    ratios to TS + SBM at the page's settings beside, at every size."""
    ev = explore_log.evaluate(log)
    tab = explore_log._table(log)
    nums: dict = {}
    small = str(min(log["sizes"]))
    for N, per in ev["sizes"].items():
        nums[f"ratio_zero_over_ours_N{N}"] = 1.0 / per["log_ratio"]["ts_sbm_zero"]["ratio_geomean"]
        if "ts_sbm_mixed" in per["log_ratio"]:
            nums[f"ratio_mixed_over_ours_N{N}"] = 1.0 / per["log_ratio"]["ts_sbm_mixed"]["ratio_geomean"]
        if N != small:
            continue
        zero, rlsvi = explore_log.matched_tuning(log, int(N), "ts_sbm_zero", "rlsvi")
        ci = paired_ci(np.log(tab[zero][int(N)]), np.log(tab[rlsvi][int(N)]))
        nums |= {
            f"median_ts_sbm_N{N}": per["variants"]["ts_sbm"]["median"],
            f"median_ts_sbm_zero_N{N}": float(np.median(tab[zero][int(N)])),
            f"median_rlsvi_N{N}": float(np.median(tab[rlsvi][int(N)])),
            f"tuned_ts_sbm_zero_N{N}": zero,
            f"tuned_rlsvi_N{N}": rlsvi,
            f"log_ratio_zero_vs_rlsvi_N{N}": ci.mean,
            f"log_ratio_zero_vs_rlsvi_N{N}_ci": [ci.low, ci.high],
            f"log_ratio_zero_vs_rlsvi_N{N}_pairs": ci.n,
        }
    record_claim(**nums, seeds=ev["seeds"])
    assert nums[f"log_ratio_zero_vs_rlsvi_N{small}"] < 0


EXPLORE_XFAIL = (
    "TS + SBM needs more episodes than the strongest tuned reference, UCB-VI (beta 0.01), at both sizes: DeepSea(10) "
    "median 36.5 (lambda 0.01) vs 17, episode ratio x2.33 (mean log-ratio 95 % CI [0.48, 1.22], 10 seeds); "
    "DeepSea(20) median 156 vs 44, x3.60 (CI [1.15, 1.41]); TS over the true features (lambda 0.01: 25.5, 92.5) "
    "and RND (30, 77.5) are faster too, RLSVI is level (x0.81 CI [-0.43, 0.01]; x1.03 CI [-0.10, 0.16]). Cause: "
    "on a deterministic tabular DeepSea, optimism on the empirical model (UCB-VI) and Thompson sampling over the "
    "true features with a small prior weight explore deeper than Thompson sampling over features learned online from "
    "the replay counts, whose optimism comes mostly from the random initial rows of never-visited pairs (zeroing "
    "them makes TS + SBM x2.0 and x3.4 slower)"
)
LEARNED_XFAIL = (
    "with the never-visited rows zeroed, Thompson sampling over the SBM features is slower than over one-hot "
    "features on DeepSea(10): median 96 (lambda 1) vs RLSVI 48.5 (lambda 0.01), episode ratio x2.14 (mean log-ratio "
    "95 % CI [0.36, 1.16], 10 seeds); zeroing them slows TS + SBM x2.0 at N = 10 and x3.4 at N = 20, while centring nu "
    "on the normalised fit changes little (x0.95, log CI [-0.11, 0.01]). Cause: features learned from the replay "
    "counts span the visited pairs only, so Sigma^-1 holds no uncertainty about unvisited ones; TS + SBM's "
    "exploration comes from its random initial rows, not from the learned covariance"
)


@pytest.mark.xfail(strict=True, reason=EXPLORE_XFAIL)
def test_claim_ts_sbm_solves_deepsea_sooner_than_the_tuned_references(record_claim) -> None:
    _exploration(explore_log.evaluate(explore_log.load(LOG)), record_claim)


@pytest.mark.xfail(strict=True, reason=LEARNED_XFAIL)
def test_claim_learned_features_alone_explore_sooner_than_one_hot(record_claim) -> None:
    _learned_features(explore_log.load(LOG), record_claim)


def test_shipped_log_is_the_full_grid_and_reproduces() -> None:
    """Every variant x size x seed of the full tier is in the log, and rerunning a few cheap rows (tabular agents,
    seeds 0-1 of the smaller size) gives the logged episodes."""
    log = explore_log.load(LOG)
    sizes, seeds, budget = explore_log.TIERS["full"]
    assert (tuple(log["sizes"]), len(log["seeds"]), log["budget"]) == (sizes, seeds, budget)
    want = {(v["variant"], N, s) for v in explore_log.variants(sizes) for N in v["sizes"] for s in range(seeds)}
    have = {(r["variant"], r["N"], r["seed"]) for r in log["runs"]}
    assert want == have
    rows = {(r["variant"], r["N"], r["seed"]): r for r in log["runs"]}
    N = min(sizes)
    for v in explore_log.variants(sizes):
        if v["agent"] not in ("ucbvi", "ts_true") or v["params"].get("lam", 0.01) != 0.01:
            continue
        for seed in (0, 1):
            run = AGENTS.get(v["agent"])(mdps.deepsea(N, seed=seed),
                                         AgentConfig(episodes=budget, seed=seed, stop_when_solved=True, **v["params"]),
                                         None)
            assert run.episodes_to_solve == rows[(v["variant"], N, seed)]["episodes_to_solve"], v["variant"]


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=EXPLORE_XFAIL)
def test_claim_ts_sbm_solves_deepsea_sooner_than_the_tuned_references_rerun(record_claim) -> None:
    log = explore_log.make_log("full")
    ship = explore_log.load(LOG)
    same = {(r["variant"], r["N"], r["seed"]): r["episodes_to_solve"] for r in ship["runs"]}
    agree = np.mean([same.get((r["variant"], r["N"], r["seed"])) == r["episodes_to_solve"] for r in log["runs"]])
    record_claim(agreement_with_shipped_log=float(agree))
    _exploration(explore_log.evaluate(log), record_claim)
