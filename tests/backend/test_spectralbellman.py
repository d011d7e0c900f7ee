"""Spectral Bellman Method: environment and reader invariants, the SBM iterations, the agents, and the claims on the
miniature (the rank-d MDP's spectrum and span; episodes to solve DeepSea(N) for N in {6, 10}, full tier up to 20)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.errors import InputError
from backend.io import registry
from backend.rl.spectralbellman import mdps
from backend.rl.spectralbellman.agents import AGENTS, AgentConfig, LinearLSVI, run_agents, solve_sweep
from backend.rl.spectralbellman.inputs import mdp_json
from backend.rl.spectralbellman.spectral_bellman import (
    SBMConfig,
    SBMLearner,
    backup_rank,
    learn_features,
    max_principal_angle,
)


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


# ------------------------------------------------------------------------------------------------ claims
def test_claim_rank_d_spectrum_cuts_at_d(record_claim) -> None:
    low, full = mdps.spectrum(mdps.low_rank_mdp()), mdps.spectrum(mdps.full_rank_mdp())
    ratio = float(low[8] / low[0])
    record_claim(ratio_d_plus_1=ratio, ratio_d=float(low[7] / low[0]), fullrank_ratio_d_plus_1=float(full[8] / full[0]))
    assert ratio < 1e-8


def test_claim_sbm_iterations_reach_the_true_span(record_claim) -> None:
    m = mdps.low_rank_mdp()
    r = learn_features(m, SBMConfig(d=8, iters=200, seed=0))
    angle = max_principal_angle(r.phi, m.phi_true)
    first = next(i for i, a in zip(r.angles_iter, r.max_angle) if a < 1e-3)
    record_claim(max_angle_rad=angle, iterations_to_1e_3=first, closure=r.closure[-1])
    assert angle < 1e-3


def _deepsea_claim(sizes: tuple[int, ...], seeds: int, budget: int, record_claim) -> None:  # noqa: ANN001
    sw = solve_sweep(sizes, seeds, list(AGENTS), budget)
    med = {n: {N: a["sizes"][str(N)]["median"] for N in sizes} for n, a in sw["agents"].items()}
    record_claim(
        **{f"median_{n}_N{N}": v for n, per in med.items() for N, v in per.items()},
        **{
            f"iqr_{n}_N{N}": sw["agents"][n]["sizes"][str(N)]["q75"] - sw["agents"][n]["sizes"][str(N)]["q25"]
            for n in ("ts_sbm", "ts_random", "ts_true")
            for N in sizes
        },
    )
    for N in sizes:
        assert med["ts_sbm"][N] < med["ts_random"][N]  # fewer episodes than random features
        assert med["ts_sbm"][N] <= 1.5 * med["ts_true"][N]  # close to (at most 1.5x) the true features


def test_claim_ts_sbm_solves_deepsea_faster_than_random_features(record_claim) -> None:
    _deepsea_claim((6, 10), 3, 400, record_claim)


@pytest.mark.full
def test_claim_ts_sbm_solves_deepsea_faster_than_random_features_up_to_20(record_claim) -> None:
    _deepsea_claim((6, 10, 15, 20), 10, 1000, record_claim)
