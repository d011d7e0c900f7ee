"""Invariants of the decision-pretrained transformer (``backend/icrl/vintix``): the attention mask, exact permutation
invariance, the all-prefix forward pass equals one pass per prefix, the heads, the task priors and demonstrators,
seeds, and bad input. Model-level tests use the shipped flow model (``python -m backend.train vintix``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.icrl.vintix import tasks as T
from backend.icrl.vintix.dpt import DPT, DPTConfig, invariant_mask


@pytest.fixture(scope="module")
def flow():
    from backend.icrl.vintix.evaluate import load_model

    return load_model("flow")


def test_mask_context_sees_only_bos_and_itself_query_sees_its_prefix() -> None:
    L = 5
    m = invariant_mask(L)
    assert m.shape == (1 + L + L + 1, 1 + L + L + 1)
    assert m[0].tolist() == [True] + [False] * (2 * L + 1)
    for i in range(1, L + 1):  # context tokens: BOS + themselves
        assert m[i].nonzero().flatten().tolist() == [0, i]
    for j in range(L + 1):  # query copy j: BOS, c_1..c_j, itself
        row = 1 + L + j
        assert m[row].nonzero().flatten().tolist() == [0, *range(1, 1 + j), row]
    single = invariant_mask(L, all_prefixes=False)
    assert single[-1].nonzero().flatten().tolist() == list(range(L + 1)) + [L + 1]


def test_all_prefix_pass_equals_one_pass_per_prefix(flow) -> None:
    b = T.make_batch("karm", 3, 12, np.random.default_rng(1), heldout=True)
    h_all = flow.hidden("karm", b.context, b.query)  # (B, L+1, d)
    assert h_all.shape == (3, 13, flow.cfg.d_model)
    for lv in (0, 1, 5, 12):
        h = flow.hidden("karm", b.context[:, :lv], b.query, all_prefixes=False)
        torch.testing.assert_close(h_all[:, lv], h, atol=1e-5, rtol=0)


def test_outputs_exactly_invariant_to_a_shuffle_float64(flow) -> None:
    from backend.icrl.vintix.evaluate import permutation_gap

    gap = permutation_gap(flow, length=32, n_tasks=4, seed=3)
    assert gap["max"] <= 1e-9, gap
    # a causal mask over the same tokens would not be invariant: the mask is what makes it exact
    net = DPT(DPTConfig()).double()
    b = T.make_batch("cont", 2, 16, np.random.default_rng(0))
    ctx = b.context.double()
    perm = torch.randperm(16, generator=torch.Generator().manual_seed(0))
    import backend.icrl.vintix.dpt as D

    orig = D.invariant_mask
    try:
        D.invariant_mask = lambda n, all_prefixes=True: torch.ones(n + 2, n + 2, dtype=torch.bool).tril()
        q = b.query.double()
        with torch.no_grad():
            gap_causal = (net.hidden("cont", ctx, q, False) - net.hidden("cont", ctx[:, perm], q, False)).abs().max()
    finally:
        D.invariant_mask = orig
    assert float(gap_causal) > 1e-6


def test_flow_head_heun_and_baseline_likelihoods() -> None:
    from backend.icrl.vintix.heads import FlowHead, GaussianHead, MixtureHead

    torch.manual_seed(0)
    h = torch.randn(4, 8)
    flow = FlowHead(8, hidden=16, n_freq=4, steps=6)
    s1 = flow.sample(h, 5, generator=torch.Generator().manual_seed(1))
    s2 = flow.sample(h, 5, generator=torch.Generator().manual_seed(1))
    assert s1.shape == (4, 5) and torch.equal(s1, s2)
    assert flow.gamma(torch.tensor([0.3])).shape == (1, 8)
    assert any(p is flow.freq for p in flow.parameters())  # learned frequencies
    # a zero velocity leaves the initial noise unchanged under Heun
    for p in flow.net[-1].parameters():
        torch.nn.init.zeros_(p)
    x = flow.sample(h, 3, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(x, torch.randn(4, 3, generator=torch.Generator().manual_seed(2)))
    g = GaussianHead(8, hidden=16)
    a = torch.randn(4)
    mu, ls = g.params(h)
    ref = -torch.distributions.Normal(mu, ls.exp()).log_prob(a).mean()
    torch.testing.assert_close(g.loss(h, a), ref)
    m = MixtureHead(8, hidden=16, components=3)
    logw, mus, lss = m.params(h)
    mix = torch.distributions.MixtureSameFamily(
        torch.distributions.Categorical(logits=logw), torch.distributions.Normal(mus, lss.exp())
    )
    torch.testing.assert_close(m.loss(h, a), -mix.log_prob(a).mean())
    assert m.sample(h, 7, generator=torch.Generator().manual_seed(0)).shape == (4, 7)


def test_dark_room_optimal_policy_reaches_every_goal() -> None:
    for goal in range(T.N_DARK**2):
        for s in range(T.N_DARK**2):
            for _ in range(2 * T.N_DARK):
                s = T.dark_step(s, T.dark_optimal(s, goal))
            assert s == goal
            assert T.dark_optimal(goal, goal) == 0


def test_heldout_priors_differ_from_training() -> None:
    rng = np.random.default_rng(0)
    assert not set(T.dark_goals(True)) & set(T.dark_goals(False))
    tr = [T.draw_cont(rng) for _ in range(200)]
    ho = [T.draw_cont(rng, heldout=True) for _ in range(200)]
    assert min(w for t in tr for w in t.widths) >= 0.10 > max(w for t in ho for w in t.widths)
    assert all(len(t.centers) == 2 and t.heights[0] == t.heights[1] for t in ho)
    km = np.concatenate([T.draw_karm(rng, heldout=True).means for _ in range(300)])
    assert abs(km.std() - 0.2) < 0.03 and abs(km.mean() - 0.5) < 0.03  # N(0.5, 0.2^2), not U[0, 1] (std 0.29)


def test_demonstrator_noise_rises_and_labels_are_optimal() -> None:
    rng = np.random.default_rng(0)
    task = T.KArmTask(np.array([0.1, 0.9, 0.3, 0.2]))
    ctx = T.karm_context(task, 2000, rng, kind="demo")
    frac_best = ctx[:, 1].mean()
    assert 0.3 < frac_best < 0.95  # noisy but tilted to the best arm
    b = T.make_batch("karm", 8, 10, rng)
    assert all(int(b.target[i]) < int(b.query[i].sum()) for i in range(8))
    bc = T.make_batch("cont", 8, 10, rng)
    assert bc.target.dtype == torch.float32 and bc.context.shape == (8, 10, 2)


def test_run_is_seeded_and_summaries_are_small(flow) -> None:  # noqa: ARG001 - loads the model once
    import json

    from backend.icrl.vintix.evaluate import AGENTS
    from backend.icrl.vintix.online import CONT_AGENTS, DARK_AGENTS
    from backend.icrl.vintix.run import run

    a = run("bimodal", context=16, n_samples=64, seed=2, horizon=8, replicas=4)
    b = run("bimodal", context=16, n_samples=64, seed=2, horizon=8, replicas=4)
    assert a["heads"]["flow"]["density"] == b["heads"]["flow"]["density"]
    assert a["regret"]["agents"]["dpt_flow"]["final_per_task"] == b["regret"]["agents"]["dpt_flow"]["final_per_task"]
    assert set(a["regret"]["agents"]) == set(CONT_AGENTS) and not a["beyond_context"]
    assert len(json.dumps(a)) < 200_000
    k = run(T.KArmTask(np.array([0.2, 0.8])), context=8, horizon=8, replicas=4, seed=0)
    assert set(k["regret"]["agents"]) == set(AGENTS)
    assert len(k["regret"]["agents"]["dpt"]["cum_regret"]) == 8
    d = run("darkroom", context=8, horizon=24, replicas=8, seed=0)
    assert set(d["agents"]) == set(DARK_AGENTS) and len(d["agents"]["dpt"]["returns"]) == 2


def test_ad_is_causal_and_sources_learn() -> None:
    """AD's prediction at a position ignores later tokens; the source histories it distils improve (Thompson
    sampling pulls the best arm more later than early; goal posterior sampling ends on the goal)."""
    from backend.icrl.vintix.ad import AD, psrl_dark_actions, source_batch, thompson_karm

    torch.manual_seed(0)
    model = AD().eval()
    rng = np.random.default_rng(0)
    tok, act, mask = source_batch("karm", 4, rng)
    z1 = model.logits("karm", tok, mask)
    tok2 = tok.clone()
    tok2[:, 40:] = torch.randn_like(tok2[:, 40:])
    z2 = model.logits("karm", tok2, mask)
    assert torch.allclose(z1[:, :40], z2[:, :40], atol=1e-6) and not torch.allclose(z1[:, 40:], z2[:, 40:])
    assert act.shape == (4, 64) and tok.shape == (4, 64, 22)
    tasks = [T.KArmTask(np.array([0.1, 0.9, 0.4]))] * 64
    arms, _, _ = thompson_karm(tasks, 128, rng)
    assert (arms[:, 96:] == 1).mean() > 0.95 > (arms[:, :8] == 1).mean()
    goals = np.array(T.DARK_HELDOUT * 4)
    states, _, rewards = psrl_dark_actions(goals, 10 * T.DARK_HORIZON, rng)
    last = rewards[:, -T.DARK_HORIZON :].sum(1)
    assert (last >= 1).all() and rewards[:, : T.DARK_HORIZON].sum() < last.sum()


def test_gp_posterior_and_paired_online_runs() -> None:
    """GP-UCB's posterior concentrates on repeated observations; every continuous agent meets the same reward noise
    (uniform actions' regret is the gap to the best value on average)."""
    from backend.icrl.vintix.online import _gp_posterior, cont_online_regret

    a = np.full((1, 30), 0.3)
    y = np.full((1, 30), 0.7)
    grid = np.array([0.3, 0.9])
    mean, sd = _gp_posterior(a, y, grid, 0.07, 0.0, 0.25)
    assert abs(mean[0, 0] - 0.7) < 0.01 and sd[0, 0] < 0.03 and abs(mean[0, 1]) < 1e-3 and sd[0, 1] > 0.24
    task = T.ContTask(np.array([0.0]), np.array([0.2]), np.array([1.0]))
    res = cont_online_regret([task] * 8, horizon=16, seed=0, agents=["uniform", "gp_ucb"])
    u = res["agents"]["uniform"]["final"] / 16
    expect = 1.0 - float(task.mean_reward(np.linspace(-1, 1, 4001)).mean())
    assert abs(u - expect) < 0.15 and res["agents"]["gp_ucb"]["final"] < res["agents"]["uniform"]["final"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"context": 65}, "Context length 65 is out of range"),
        ({"context": -1}, "Context length -1 is out of range"),
        ({"task": "karm", "horizon": 0}, "Horizon 0 is out of range"),
        ({"task": "karm", "horizon": 10_000}, "Horizon 10000 is out of range"),
        ({"task": "maze"}, "Unknown task 'maze'"),
        ({"n_samples": 0}, "Samples per head"),
    ],
)
def test_bad_settings_are_refused_with_a_message(flow, kwargs, match) -> None:  # noqa: ARG001
    from backend.icrl.vintix.run import run

    with pytest.raises(InputError, match=match):
        run(**kwargs)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"mean\n0.5\n", "1 arm means; give 2 to 10"),
        (b"mean\n" + b"0.5\n" * 11, "11 arm means"),
        (b"mean\n0.5\nabc\n", "line 3: mean 'abc' is not a number"),
        (b"mean\n0.5\n7\n", r"\[-0.5, 1.5\]"),
        (b"center,width\n1.5,0.1\n", r"centres must lie in the action range"),
        (b"center,width\n0.1,0.001\n", "widths must lie"),
        (b"a,r\n" + b"".join(f"{x:.2f},0.5\n".encode() for x in np.linspace(-1, 1, 10)), "flat"),
        (b"a,r\n" + b"".join(f"{x:.2f},{x}\n".encode() for x in np.linspace(1, -1, 10)), "strictly increasing"),
        (b"x,y\n1,2\n", "header 'x,y' not understood"),
        (b"\xff\xfe m", "not valid UTF-8"),
    ],
)
def test_bad_task_files_are_refused_with_a_message(data, match) -> None:
    from backend.io.registry import decode

    with pytest.raises(InputError, match=match):
        decode("bandit_task", data, name="task.csv")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"\r\x00", "looks binary"),
        (b"\r\x00\n", "looks binary"),
        (b"mean\n0.1\n0.\x009\n", "looks binary"),
        (b"mean\r0.1\r0.9\r", "not a readable CSV"),
    ],
)
def test_task_files_the_csv_reader_refuses_are_input_errors(data, match) -> None:
    """A NUL byte beside a carriage return, or a lone carriage return inside a line, is an InputError, not a csv.Error."""
    from backend.io.registry import decode

    with pytest.raises(InputError, match=match) as err:
        decode("bandit_task", data, name="task.csv")
    assert type(err.value) is InputError


def test_task_files_of_each_layout() -> None:
    from backend.io.registry import decode

    k = decode("bandit_task", b"mean\n0.1\n0.9\n0.4\n")
    assert isinstance(k, T.KArmTask) and k.best == 1
    c = decode("bandit_task", b"center,width,height\n-0.5,0.1,0.5\n0.5,0.1,1.0\n")
    assert isinstance(c, T.ContTask) and abs(c.best - 0.5) < 1e-3
    xs = np.linspace(-1, 1, 41)
    curve = "a,r\n" + "".join(f"{x:.3f},{np.exp(-((x - 0.3) ** 2) / 0.02):.4f}\n" for x in xs)
    cu = decode("bandit_task", curve.encode())
    assert isinstance(cu, T.CurveTask) and abs(cu.best - 0.3) < 0.05 and len(cu.centers) == 1
