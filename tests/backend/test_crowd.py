"""Invariants of the crowd package (STDDN spec, "Invariants for unit tests"): density mapping, cross-grid detection,
the ODE right-hand side, the reference upwind solver, the simulators, the metrics, the rollout protocol, CSV input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.forecast.crowd import csvio
from backend.forecast.crowd.data import WARMUP, Clip
from backend.forecast.crowd.density import (
    Grid,
    crossing_weight,
    density,
    hard_density,
    soft_assign,
    soft_density,
    upwind_step,
)
from backend.forecast.crowd.generate import GeneratorConfig, generate_clip
from backend.forecast.crowd.interface import METHODS, get_method
from backend.forecast.crowd.methods import ConstantVelocity, Learned
from backend.forecast.crowd.metrics import mmd, sinkhorn_cost, summarize, wall_crossings
from backend.forecast.crowd.physics import Orca, SocialForceConfig, social_force_step
from backend.forecast.crowd.rollout import simulate
from backend.forecast.crowd.scenes import EVAL_SCENES, TRAIN_SCENES, get_scene, open_room
from backend.forecast.crowd.stddn import STDDN, DensityODE, MicroNet, physics_loss, rollout_window, window_loss
from backend.forecast.crowd.training import ClipTensors, collate, make_window

GRID = Grid(0.0, 0.0, 1.0, 20, 20)


@pytest.fixture(scope="module")
def small_clip() -> Clip:
    return generate_clip(EVAL_SCENES[1], 5, GeneratorConfig(seconds=6.0, burn_in=6.0))


# ------------------------------------------------------------------------------------------------------- DDM
@pytest.mark.parametrize("T", [1e-3, 0.3, 1.0, 7.0, 1e3])
def test_soft_density_sums_to_agent_count(T: float) -> None:
    g = torch.Generator().manual_seed(0)
    pos = torch.rand(3, 17, 2, generator=g) * 20
    present = torch.rand(3, 17, generator=g) > 0.3
    pos[0, 2] = float("nan")
    rho = soft_density(pos, T, GRID, present)
    count = (present & ~torch.isnan(pos).any(-1)).sum(-1).float()
    assert torch.allclose(rho.sum(-1), count, atol=1e-5)


def test_absent_agents_only_in_virtual_cell() -> None:
    pos = torch.tensor([[[3.0, 4.0], [float("nan"), 1.0], [5.0, 5.0]]])
    present = torch.tensor([[True, True, False]])
    P = soft_assign(pos, 1.0, GRID, present)
    assert P.shape == (1, 3, GRID.num_cells + 1)
    assert torch.allclose(P[0, 1], torch.eye(GRID.num_cells + 1)[-1])
    assert torch.allclose(P[0, 2], torch.eye(GRID.num_cells + 1)[-1])
    assert P[0, 0, -1] == 0 and math.isclose(float(P[0, 0].sum()), 1.0, rel_tol=1e-6)


def test_separable_softmax_equals_the_direct_one() -> None:
    pos = torch.tensor([[2.3, 7.9], [15.2, 0.4]])
    T = torch.tensor(0.7)
    d2 = ((pos[:, None, :] - GRID.centers()) ** 2).sum(-1)
    direct = torch.softmax(-T * d2, -1)
    assert torch.allclose(soft_assign(pos, T, GRID)[:, :-1], direct, atol=1e-6)


def test_density_gradient_is_finite_and_nonzero() -> None:
    pos = torch.tensor([[4.3, 9.8], [12.1, 3.3]], requires_grad=True)
    rho = soft_density(pos, 1.0, GRID)
    (rho * torch.arange(GRID.num_cells, dtype=torch.float32)).sum().backward()
    assert torch.isfinite(pos.grad).all() and pos.grad.abs().sum() > 0


def test_density_is_continuous_across_a_cell_edge_unlike_hard_binning() -> None:
    xs = torch.linspace(4.9, 5.1, 201)  # the edge between cells 4 and 5 is at x = 5
    pos = torch.stack([xs, torch.full_like(xs, 10.5)], -1)[:, None, :]
    soft = soft_density(pos, 1.0, GRID)
    hard = hard_density(pos, GRID)
    assert (soft[1:] - soft[:-1]).abs().max() < 0.01
    assert (hard[1:] - hard[:-1]).abs().max() == 1.0


# ------------------------------------------------------------------------------------------------------- CGD
def test_crossing_weight_properties() -> None:
    p0 = torch.tensor([[5.5, 5.5]])
    P0 = soft_assign(p0, 1.0, GRID)
    jumps = [0.0, 0.2, 0.5, 1.0, 2.0]
    w = [float(crossing_weight(P0, soft_assign(p0 + torch.tensor([j, 0.0]), 1.0, GRID), 1.0)) for j in jumps]
    assert w == sorted(w) and w[0] < w[-1]  # smallest when stationary, increasing with the jump
    assert math.isclose(w[0], 1 / (1 + math.exp(0.1)), rel_tol=1e-4)  # sigmoid(-0.1) at T = 1
    P1 = soft_assign(p0 + torch.tensor([0.7, -0.3]), 1.0, GRID)
    assert torch.allclose(crossing_weight(P0, P1, 1.0), crossing_weight(P1, P0, 1.0), atol=1e-6)  # symmetric
    big = crossing_weight(soft_assign(p0, 50.0, GRID), soft_assign(p0 + torch.tensor([8.0, 0.0]), 50.0, GRID), 50.0)
    small = crossing_weight(soft_assign(p0, 50.0, GRID), soft_assign(p0, 50.0, GRID), 50.0)
    assert math.isclose(float(big), 0.99, rel_tol=1e-6) and math.isclose(float(small), 0.01, rel_tol=1e-6)


# ------------------------------------------------------------------------------------------------------- ODE
def test_ode_rhs_conserves_mass_when_nobody_enters_or_leaves() -> None:
    torch.manual_seed(1)
    ode = DensityODE(GRID, embed_dim=4)
    with torch.no_grad():
        ode.node_w.normal_()
        ode.node_b.normal_()
    B, K, N = 2, 6, 9
    pos = torch.rand(B, 1, N, 2) * 18 + 1 + torch.cumsum(torch.randn(B, K + 1, N, 2) * 0.3, 1)
    present = torch.ones(B, K + 1, N, dtype=torch.bool)
    speed = torch.rand(B, K + 1, N) * 1.5
    ode.prepare(pos, speed, present)
    rho = torch.rand(B, GRID.num_cells) * 2
    for t in range(K):
        d = ode(torch.tensor(float(t)), rho)
        assert d.abs().sum() > 1e-3
        assert torch.allclose(d.sum(-1), torch.zeros(B), atol=1e-4)
    rho0 = soft_density(pos[:, 0], ode.temperature, GRID)
    traj = ode.integrate(rho0, K)
    assert torch.allclose(traj.sum(-1), rho0.sum(-1, keepdim=True).expand(B, K + 1), atol=1e-3)


def test_ode_edge_flux_carries_a_lone_agents_density_exactly() -> None:
    """The continuity structure: an agent's move is one edge whose flux ``s_i rho(sender_i)`` leaves its cells at t and
    enters its cells at t + 1. With that flux equal to 1, one Euler step maps the DDM at t onto the DDM at t + 1 (the
    relaxation ``rho_j sum_i s_i P_ij(t)`` cannot: it removes ``P(t)^2`` instead of ``P(t)``)."""
    ode = DensityODE(GRID, embed_dim=4)
    p0 = torch.tensor([[[7.3, 9.6]]])
    p1 = p0 + torch.tensor([0.45, -0.3])
    P0, P1 = ode.assign(p0), ode.assign(p1)
    rho0 = density(P0)
    s = 1.0 / (P0[..., :-1] * rho0[:, None, :]).sum(-1)  # flux s * rho(sender) = 1
    rho1 = rho0 + ode.rhs(rho0, P0, P1, s)
    assert torch.allclose(rho1, density(P1), atol=1e-6)
    assert torch.allclose(rho1.sum(), torch.tensor(1.0), atol=1e-5)


def test_physics_stage_trains_only_the_ode(small_clip: Clip) -> None:
    """The released supervisor's "physics" stage freezes the trajectory network: ``train_net=False`` gives the ODE's
    parameters gradients and the network none; the "trajectory" stage (lambda2 = 0) gives the ODE none."""
    torch.manual_seed(0)
    model = STDDN()
    ct = ClipTensors.from_clip(small_clip)
    batch = collate([make_window(ct, t0, 10) for t0 in (5, 30)], small_clip.dt)
    window_loss(model, batch, 0.0, 1.0, train_net=False).losses["rho"].backward()
    assert all(p.grad is None for p in model.micro.parameters())
    assert model.ode.node_w.grad.abs().sum() > 0 and model.ode.node_b.grad.abs().sum() > 0
    model.zero_grad(set_to_none=True)
    window_loss(model, batch, 1.0, 0.0).losses["total"].backward()
    assert model.ode.node_w.grad is None and model.micro.head[0].weight.grad.abs().sum() > 0


def test_released_code_outflow_runs_but_does_not_conserve_mass() -> None:
    torch.manual_seed(2)
    ode = DensityODE(GRID, embed_dim=4, outflow="code")
    with torch.no_grad():
        ode.node_w.normal_()
        ode.node_b.normal_()
    pos = torch.rand(1, 1, 6, 2) * 16 + 2 + torch.cumsum(torch.randn(1, 5, 6, 2) * 0.3, 1)
    present = torch.ones(1, 5, 6, dtype=torch.bool)
    ode.prepare(pos, torch.rand(1, 5, 6), present, ext=pos + 0.1)
    d = ode(torch.tensor(0.0), soft_density(pos[:, 0], 1.0, GRID))
    assert torch.isfinite(d).all() and d.sum().abs() > 1e-4
    with pytest.raises(ValueError, match="Valid names: conservative, code"):
        DensityODE(GRID, outflow="upwind")


def test_physics_loss_counts_only_occupied_cells() -> None:
    gt = torch.tensor([[0.0, 1.0, 0.5]])
    pred = torch.tensor([[5.0, 1.0, 0.0]])
    assert math.isclose(float(physics_loss(pred, gt)), (1 + 20 * 0.5) * 0.25 / 2, rel_tol=1e-5)


def test_upwind_solver_conserves_mass_with_closed_boundaries() -> None:
    g = torch.Generator().manual_seed(3)
    rho = torch.rand(12, 15, generator=g)
    u = torch.randn(12, 15, generator=g)
    w = torch.randn(12, 15, generator=g)
    total = rho.sum()
    for _ in range(30):
        rho = upwind_step(rho, u, w, 0.1, 1.0)
    assert torch.isclose(rho.sum(), total, rtol=1e-5)
    assert rho.min() >= -1e-6  # CFL 0.1 * |v| / 1 < 0.5: stays non-negative


def test_training_lowers_the_density_loss(small_clip: Clip) -> None:
    torch.manual_seed(0)
    model = STDDN()
    ct = ClipTensors.from_clip(small_clip)
    batch = collate([make_window(ct, t0, 10) for t0 in (5, 20, 35, 50)], small_clip.dt)
    out = window_loss(model, batch, 1.0, 1.0)  # the full staged loss back-propagates into both parts
    out.losses["total"].backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    assert model.micro.head[0].weight.grad.abs().sum() > 0 and model.ode.node_w.grad.abs().sum() > 0
    with torch.no_grad():  # then fit the ODE alone on the fixed micro rollout
        p, v, _ = rollout_window(model.micro, batch)
        rho_gt = density(model.ode.assign(batch.p, batch.present))
    opt = torch.optim.Adam([model.ode.node_w, model.ode.node_b, model.ode.temperature], lr=0.05)
    losses = []
    for _ in range(15):
        model.ode.prepare(p, v.norm(dim=-1), batch.present)
        rho_gt = density(model.ode.assign(batch.p, batch.present))
        loss = physics_loss(model.ode.integrate(rho_gt[:, 0], 9)[:, 1:], rho_gt[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]


def test_temperature_floor_stops_the_density_kernel_from_widening(small_clip: Clip) -> None:
    """With the released clamp [1e-3, 1e3] the density loss alone pulls T down (a wider kernel flattens every density
    map, a collapse that makes the density term inert); STDDN's ODE keeps T >= t_min = 1 (kernel std
    <= 0.71 m) by projecting the raw parameter after each step."""
    ct = ClipTensors.from_clip(small_clip)
    batch = collate([make_window(ct, t0, 10) for t0 in (10, 40)], small_clip.dt)
    finals = {}
    for t_min in (1e-3, None):
        torch.manual_seed(0)
        model = STDDN()
        if t_min is not None:
            model.ode.t_min = t_min
        assert float(model.ode.T.detach()) == 1.0
        opt = torch.optim.Adam([model.ode.node_w, model.ode.node_b, model.ode.temperature], lr=0.05)
        for _ in range(6):
            loss = window_loss(model, batch, 0.0, 1.0).losses["rho"]
            opt.zero_grad()
            loss.backward()
            opt.step()
            model.ode.project_temperature()
        finals[t_min] = float(model.ode.T.detach())
    assert finals[1e-3] < 0.9  # the released range: the kernel widens
    assert finals[None] >= 1.0 and STDDN().cfg.t_min == 1.0


def test_training_rollout_keeps_the_goal_term_and_acceleration_input_attached() -> None:
    """As in the released code, the network's relational and history inputs are detached in training rollouts, but the
    goal term ``(v0 e - v) / tau`` and the current-acceleration embedding see the live state, so d a_next / d v is
    exactly -1/tau per component; inference (no live tensors) gives the same numbers."""
    torch.manual_seed(0)
    net = MicroNet()
    N = 5
    p = torch.rand(1, N, 2) * 10 + 5
    v, a = torch.randn(1, N, 2), torch.randn(1, N, 2) * 0.3
    hist = torch.cat([p, v, a], -1)[:, :, None].expand(1, N, 8, 6).clone()
    args = (hist, torch.ones(1, N, 8, dtype=torch.bool), torch.full((1, N, 2), 19.0), torch.full((1, N), 1.3),
            torch.ones(1, N, dtype=torch.bool), torch.zeros(1, 0, 2))
    v_live, a_live = v.clone().requires_grad_(), a.clone().requires_grad_()
    out = net(p, v, a, *args, v_live=v_live, a_live=a_live)
    gv = torch.autograd.grad(out[..., 0].sum(), v_live, retain_graph=True)[0]
    assert torch.allclose(gv[..., 0], torch.full((1, N), -1 / net.cfg.tau))
    assert torch.allclose(gv[..., 1], torch.zeros(1, N))
    assert torch.autograd.grad(out.sum(), a_live)[0].abs().sum() > 0
    assert torch.allclose(out, net(p, v, a, *args))


# ------------------------------------------------------------------------------------------------ simulators
def test_social_force_free_flow_speed_cap_and_goal() -> None:
    cfg = SocialForceConfig()
    walls = torch.from_numpy(open_room().wall_array())
    p = torch.tensor([[2.0, 2.0], [18.0, 2.5], [2.0, 17.0], [10.0, 10.0]])
    goals = torch.tensor([[18.0, 2.0], [2.0, 2.0], [18.0, 3.0], [10.0, 10.0]])
    v = torch.zeros(4, 2)
    v0 = torch.full((4,), 1.3)
    pres = torch.ones(4, dtype=torch.bool)
    min_d, max_speed, reached = 9.0, 0.0, False
    for _ in range(400):
        d = goals - p
        e = d / d.norm(dim=-1, keepdim=True).clamp_min(1e-6)
        p, v, _ = social_force_step(p, v, e, v0, pres, walls, 0.08, cfg)
        dd = torch.cdist(p, p) + torch.eye(4) * 99
        min_d = min(min_d, float(dd.min()))
        max_speed = max(max_speed, float(v.norm(dim=-1).max()))
        reached |= bool((p[2] - goals[2]).norm() < 0.5)
    assert min_d > 2 * cfg.radius - 0.1  # the head-on pair passes without overlapping
    assert max_speed <= cfg.max_speed_factor * 1.3 + 1e-5
    assert reached


def test_orca_agents_do_not_overlap() -> None:
    orca = Orca(np.zeros((0, 4)), 0.08)
    p = np.array([[0.0, 0.0], [6.0, 0.05], [3.0, -3.0]], np.float32)
    goal = np.array([[6.0, 0.0], [0.0, 0.0], [3.0, 3.0]], np.float32)
    v = np.zeros_like(p)
    md = 9.0
    for _ in range(120):
        e = goal - p
        e /= np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-6)
        v = orca.velocities(p, v, 1.3 * e, np.full(3, 1.7), np.ones(3, bool))
        p = p + v * 0.08
        d = np.linalg.norm(p[:, None] - p[None], axis=-1) + np.eye(3) * 99
        md = min(md, float(d.min()))
    assert md > 0.5 - 0.02


def test_generator_is_deterministic_and_open(small_clip: Clip) -> None:
    again = generate_clip(EVAL_SCENES[1], 5, GeneratorConfig(seconds=6.0, burn_in=6.0))
    np.testing.assert_array_equal(np.nan_to_num(small_clip.positions), np.nan_to_num(again.positions))
    entries = small_clip.entry_frames()
    assert (entries > 0).any()  # agents keep arriving
    assert small_clip.meta["orca_agents"] > 0  # the ground truth mixes in ORCA agents
    assert {s.name for s in TRAIN_SCENES}.isdisjoint({s.name for s in EVAL_SCENES})  # held-out geometries


# ---------------------------------------------------------------------------------------------------- metrics
def test_metrics_zero_symmetric_and_monotone() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(30, 2, generator=g) * 15
    x = x[torch.cdist(x, x).add(torch.eye(30) * 9).min(1).values > 0.8][:12]  # spread points
    assert float(sinkhorn_cost(x, x)) < 1e-3 and float(mmd(x, x)) < 1e-9
    y = x + torch.randn(x.shape, generator=g) * 0.7
    assert math.isclose(float(sinkhorn_cost(x, y)), float(sinkhorn_cost(y, x)), rel_tol=1e-3)
    assert math.isclose(float(mmd(x, y)), float(mmd(y, x)), rel_tol=1e-6)
    shifts = [0.2, 0.5, 1.0, 2.0, 4.0]
    ot_v = [float(sinkhorn_cost(x, x + s)) for s in shifts]
    mmd_v = [float(mmd(x, x + s)) for s in shifts]
    assert ot_v == sorted(ot_v) and mmd_v == sorted(mmd_v)


def test_sinkhorn_matches_pot() -> None:
    ot = pytest.importorskip("ot")
    g = torch.Generator().manual_seed(2)
    x = torch.rand(15, 2, generator=g) * 4
    y = torch.rand(15, 2, generator=g) * 4 + 0.5
    M = ot.dist(x.double().numpy(), y.double().numpy())  # squared Euclidean
    w = np.full(15, 1 / 15)
    ref = float(ot.sinkhorn2(w, w, M, 0.1, method="sinkhorn_log", numItermax=2000, stopThr=1e-9))
    ours = float(sinkhorn_cost(x, y, max_iter=400, tol=1e-9))
    assert math.isclose(ours, ref, rel_tol=1e-3)


# ---------------------------------------------------------------------------------------------------- rollout
def test_rollout_injects_at_entry_and_masks_exits(small_clip: Clip) -> None:
    r = simulate(small_clip, ConstantVelocity())
    pred = r.positions
    entry = small_clip.entry_frames()
    gt = small_clip.positions
    for n in range(small_clip.num_agents):
        e = entry[n]
        assert np.isnan(pred[:e, n]).all()  # not before its entry frame
        assert not np.isnan(pred[e, n]).any()  # appears at it
        w = min(small_clip.num_frames, e + WARMUP)
        ok = small_clip.present[e:w, n]
        np.testing.assert_allclose(pred[e:w, n][ok], gt[e:w, n][ok], atol=1e-5)  # warm-up = ground truth
        alive = ~np.isnan(pred[:, n, 0])
        if alive.any():
            last = np.flatnonzero(alive)[-1]
            assert alive[e:last + 1].all()  # once gone, it stays gone
    out = pred[-1][~np.isnan(pred[-1, :, 0])]
    x0, y0, x1, y1 = small_clip.bounds
    assert ((out >= [x0, y0]) & (out <= [x1, y1])).all()


def test_micro_net_is_permutation_equivariant() -> None:
    torch.manual_seed(0)
    net = MicroNet().eval()
    N = 7
    p = torch.rand(1, N, 2) * 6 + 5
    v, a = torch.randn(1, N, 2), torch.randn(1, N, 2) * 0.2
    hist = torch.cat([p, v, a], -1)[:, :, None].repeat(1, 1, 8, 1)
    ok = torch.ones(1, N, 8, dtype=torch.bool)
    goal, v0, pres = torch.rand(1, N, 2) * 20, torch.full((1, N), 1.3), torch.ones(1, N, dtype=torch.bool)
    obs = torch.rand(1, 10, 2) * 20
    perm = torch.randperm(N)
    out = net(p, v, a, hist, ok, goal, v0, pres, obs)
    outp = net(p[:, perm], v[:, perm], a[:, perm], hist[:, perm], ok[:, perm], goal[:, perm], v0[:, perm],
               pres[:, perm], obs)
    assert torch.allclose(out[:, perm], outp, atol=1e-5)


def test_registry() -> None:
    assert set(METHODS) == {"stddn", "micro", "social_force", "orca", "constant_velocity"}
    assert get_method("Constant-Velocity").name == "constant_velocity"
    assert isinstance(get_method("stddn", net=MicroNet()), Learned)
    with pytest.raises(InputError, match="Valid names: stddn, micro, social_force, orca, constant_velocity"):
        get_method("diffusion")
    with pytest.raises(InputError, match="Unknown scene 'stadium'. Valid names: .*bottleneck"):
        get_scene("stadium")


def test_wall_crossings_count_steps_through_walls(small_clip: Clip) -> None:
    walls = np.array([[5.0, 0.0, 5.0, 10.0]], np.float32)
    pos = np.full((4, 3, 2), np.nan, np.float32)
    pos[:, 0] = [[4.0, 1.0], [4.8, 1.0], [5.3, 1.0], [6.0, 1.0]]  # through the wall once
    pos[:, 1] = [[4.0, 11.0], [4.9, 11.0], [5.2, 11.0], [6.0, 11.0]]  # past its end: no crossing
    pos[1:, 2] = [[4.5, 3.0], [4.5, 4.0], [4.5, 5.0]]  # alongside it
    assert wall_crossings(pos, walls) == 1
    assert wall_crossings(small_clip.positions, small_clip.walls()) == 0  # the simulator's walkers never do


def test_wall_probe_reads_the_obstacle_branch(small_clip: Clip) -> None:
    """``evaluate.wall_response`` isolates what the walls add: a network whose obstacle EGNN only emits
    ``-mean_j (o_j - p_i)`` (hidden state untouched) is pushed away from a straight wall by exactly its distance."""
    from backend.forecast.crowd.evaluate import near_wall_bias, wall_response

    torch.manual_seed(0)
    net = MicroNet().eval()
    layer = net.egnn_obs[0]
    with torch.no_grad():
        for lin in (layer.f_x[-1], layer.f_h[-1]):
            lin.weight.zero_()
            lin.bias.zero_()
        layer.f_x[-1].bias.fill_(-1.0)
    w = wall_response(net)
    assert w["learned"] == pytest.approx(list(w["distances"]), abs=1e-5)
    assert w["generator_sf"][0] > w["generator_sf"][-1] > 0
    nb = near_wall_bias(net, small_clip)
    assert nb["samples"] > 0 and math.isfinite(nb["predicted"]) and math.isfinite(nb["truth"])


def test_wall_guard_stops_steps_through_walls(small_clip: Clip) -> None:
    """The diagnostic ``evaluate.WallGuard`` cancels a step through a wall (the agent stays and slides along it) and
    leaves every other step alone; constant velocity then never crosses a wall of the held-out bottleneck."""
    from backend.forecast.crowd.evaluate import WallGuard
    from backend.forecast.crowd.rollout import CrowdState

    guard = WallGuard(ConstantVelocity())
    guard.reset(small_clip)
    guard.walls = torch.tensor([[5.0, 0.0, 5.0, 10.0]])
    n = 2
    s = CrowdState(p=torch.tensor([[4.95, 1.0], [1.0, 1.0]]), v=torch.tensor([[1.0, 0.5], [1.0, 0.5]]),
                   a=torch.zeros(n, 2), present=torch.ones(n, dtype=torch.bool), hist=torch.zeros(n, 8, 6),
                   hist_ok=torch.zeros(n, 8, dtype=torch.bool), goal=torch.zeros(n, 2), v0=torch.ones(n))
    p, v, _ = guard.step(s, 0.08)
    assert torch.equal(p[0], s.p[0]) and v[0].tolist() == pytest.approx([0.0, 0.5])  # stopped, slides along y
    assert p[1].tolist() == pytest.approx([1.08, 1.04])  # untouched
    r = simulate(small_clip, WallGuard(ConstantVelocity()))
    assert wall_crossings(r.positions, small_clip.walls()) == 0
    assert wall_crossings(simulate(small_clip, ConstantVelocity()).positions, small_clip.walls()) > 0


def test_summarize_of_ground_truth_is_zero(small_clip: Clip) -> None:
    row, curves = summarize(small_clip.positions, small_clip, WARMUP, stride=3)
    assert row["MAE"] == 0 and row["MMD"] < 1e-9 and row["OT"] < 0.02
    assert len(curves.frames) > 0


# ------------------------------------------------------------------------------------------------------ CSV
def test_csv_round_trip_and_resampling(small_clip: Clip) -> None:
    df = csvio.clip_to_frame(small_clip, fps=2.5)  # every 5th frame, like 0.4 s annotations
    clip = csvio.read_trajectories(df.to_csv(index=False).encode(), fps=2.5, name="t.csv")
    assert clip.dt == pytest.approx(0.08)
    assert clip.num_agents <= small_clip.num_agents
    # frames that coincide with the annotation grid reproduce the data
    t = 10
    common = clip.present[t] & ~np.isnan(clip.positions[t, :, 0])
    assert common.any()
    assert np.isfinite(clip.velocities()).all()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("frame,id,x\n0,1,2\n1,1,3\n", "lacks the column"),
        ("frame,id,x,y\n0,1,2,abc\n1,1,3,4\n", "non-numeric"),
        ("frame,id,x,y\n0,1,2,3\n0,1,2.5,3\n1,1,3,4\n", "repeated"),
        ("frame,id,x,y\n0,1,2,3\n0,2,4,3\n", "single frame"),
        ("frame,id,x,y\n0,1,2,3\n1,1,5e6,3\n", "metres"),
        ("frame,id,x,y\n", "no rows"),
        ("", "empty"),
    ],
)
def test_csv_bad_inputs(text: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        csvio.read_trajectories(text.encode(), name="bad.csv")


# ------------------------------------------------------------------------------------------------------ CLI
def test_cli_simulate_evaluate_and_bad_input(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # noqa: ANN001
    import argparse
    import json

    from backend.forecast.crowd import cli
    from backend.runtime import ASSETS

    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="group"))
    out_csv = tmp_path / "r.csv"
    args = parser.parse_args(["crowd", "simulate", "--scene", "bottleneck", "--method", "constant_velocity",
                              "--method", "social_force", "--seconds", "3", "--seed", "1", "--json", "--out",
                              str(out_csv)])
    assert args.func(args) == 0
    res = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in res["metrics"]] == ["constant_velocity", "social_force"]
    assert res["provenance"]["seed"] == 1 and res["clip"]["frames"] == 37
    assert {"method", "frame", "time_s", "id", "x", "y"} <= set(out_csv.read_text().splitlines()[0].split(","))
    args = parser.parse_args(["crowd", "simulate", "--input", str(ASSETS / "crowd_sample_bottleneck.csv"), "--fps",
                              "2.5", "--method", "constant_velocity", "--json"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["clip"]["name"] == "crowd_sample_bottleneck.csv"
    args = parser.parse_args(["crowd", "evaluate", "--scenes", "corridor", "--methods", "constant_velocity",
                              "--seconds", "3", "--json"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["table"][0]["method"] == "constant_velocity"
    bad = tmp_path / "bad.csv"
    bad.write_text("frame,id,x,y\n0,1,1,abc\n")
    args = parser.parse_args(["crowd", "simulate", "--input", str(bad), "--json"])
    with pytest.raises(InputError, match="non-numeric"):
        args.func.handler(args)
    assert args.func(args) == 2 and "non-numeric" in json.loads(capsys.readouterr().out)["error"]
    args = parser.parse_args(["crowd", "simulate", "--method", "diffusion", "--json"])
    with pytest.raises(InputError, match="Valid names"):
        args.func.handler(args)
    args = parser.parse_args(["crowd", "scenes"])  # without --json: a short text listing
    assert args.func(args) == 0 and "bottleneck" in capsys.readouterr().out
