"""STDDN: a physics-guided deep learning framework for crowd simulation (miniature, CPU).

Paper: Zijin Liu et al., "STDDN: A Physics-Guided Deep Learning Framework for Crowd Simulation" (Spatio-Temporal
Decoupled Differential Equation Network), ICLR 2026, arXiv 2604.02756. Reimplemented from the paper and from reading the
released code (GitHub liuzjin/STDDN, a fork of SPDiff, arXiv 2402.06680); no code copied.

What is here:

* :class:`MicroNet` -- the microscopic trajectory network (SPDiff's denoiser with the diffusion step fixed at 0, i.e.
  one deterministic pass): per-agent next acceleration from an E(n)-equivariant GNN over the top-6 neighbours within
  4 m in a 90-degree half-angle field of view (2 layers), an obstacle EGNN over the top-5 wall points (1 layer), a
  recurrent encoder of the last 8 (p, v, a) states, an embedding of the current acceleration, and the goal term
  ``(v0 e_goal - v) / tau`` with tau = 2.2 s. State update as in the code: ``v_{t+1} = v_t + a_t dt``,
  ``p_{t+1} = p_t + v_t dt``, ``a_{t+1} = net(state_t)``.
* :class:`DensityODE` -- the macroscopic density Neural ODE: the differentiable density map (``density.soft_assign``),
  cross-grid detection (``density.crossing_weight``) and the density-velocity coupled dynamic graph (DVCG): learned cell
  embeddings ``w_j, b_j`` give each agent an edge strength ``s_i = <w_send, w_recv> |v_i| c_i + <b_send, b_recv>`` from
  its soft sender cells (t) to its soft receiver cells (t + 1); ``d rho / dt = inflow - outflow`` is integrated with
  torchdiffeq's Euler method over the training window.
* :func:`window_loss` -- the staged loss ``lambda1 (MSE(a) + MSE(p)) + lambda2 L_rho`` with
  ``L_rho = sum 1[rho_gt > 0] (1 + 20 rho_gt) (rho_ode - rho_gt)^2 / sum 1[rho_gt > 0]``.

Inference uses only :class:`MicroNet` (the ODE only regularises training), so STDDN and its no-density ablation cost
the same per simulated step.

Miniature choices and deviations (documented, deliberate):

* Sizes: GRU history encoder (hidden 32) instead of an LSTM of 160; EGNN hidden 16; 1 m grid cells on the 20 m window
  (20 x 20 cells + 1 virtual) instead of 0.2 m; cell embeddings of dimension 4.
* History positions are fed relative to the current position (the code feeds absolute coordinates, which cannot
  transfer to held-out geometries); EGNN coordinates are not moved between layers; the constant diffusion-time embedding
  (step 0) is dropped (it is a bias).
* The released head reads only the EGNN's invariant hidden state; we also add the last layer's equivariant aggregate
  ``mean_j (p_j - p_i) f_x(m_ij)`` (which the code computes and discards) so interactions keep their direction.
* Environment (checked against the released code): the network sees (a) its current waypoint through the
  goal term ``(v0 e_goal - v) / tau`` (GC: one waypoint per agent, its last observed position; an agent moves to its
  next waypoint within 0.5 m and leaves at the last), (b) the top-6 pedestrians within 4 m whose direction is within
  90 degrees of its heading, as relative (p, v, a), and (c) the top-5 obstacle points within 4 m under the same
  field-of-view test, in a separate 1-layer obstacle EGNN whose messages read only the agent's hidden state and the
  distance (GC's only obstacle is a circle of 100 points, radius 2.2 m; there are no walls). Walls are therefore
  obstacle points here too (every 0.3 m along each wall; ``Scene.obstacle_points``), with the same 5 / 4 m / 90 degree
  selection, and the obstacle EGNN's equivariant aggregate also reaches the output (see the previous point). Neither
  the released rollout (training or ``simulate``) nor ours has any wall or collision handling: positions are
  integrated as ``p + v dt``, never clamped or projected. ``evaluate.wall_response`` measures how much the trained
  networks use the obstacle branch (very little: ``python -m backend.train crowd --walls`` records it in
  assets/crowd_eval.json["walls"]).
* Outflow: the code's outflow uses the extrapolated next move (t + 1 -> t + 2) times the DDM of predicted positions,
  which does not conserve mass. By default (``outflow="conservative"``) each agent's move is one directed edge of the
  graph carrying the flux ``f_i = s_i rho(sender_i)`` with ``rho(sender_i) = P_i(t) . rho`` (the paper's inflow
  factor); the same flux enters the receiver cells and leaves the sender cells:
  ``inflow_j = sum_i f_i P_ij(t+1)``, ``outflow_j = sum_i f_i P_ij(t)``. With hard (one-hot) assignments this is the
  released formula's "density at the cell times the strengths of the edges leaving it" with consistent time indices,
  i.e. the continuity equation on the learned graph; its right-hand side sums to zero when nobody enters or leaves, and
  with ``f_i = 1`` one Euler step carries an agent's soft density exactly from its cells at t to those at t + 1.
  (Why the edge flux: the relaxation ``rho_j sum_i s_i P_ij(t)`` also conserves mass but cannot move an agent's own
  kernel -- for a lone agent it removes ``P(t)^2`` and adds ``|P(t)|^2 P(t+1)`` -- so a fitted ODE with it beats
  "density stays put" by only 13% on training windows and the density term barely reaches the network; the released
  formula does not beat it at all on our data. The edge flux beats it by about 60%.)
  ``outflow="code"`` reproduces the released formula.
* CGD of the inflow compares P(t) with P(t + 1) (the code compares P(t) with itself, a quirk).
* The optional GC velocity-fusion CNN is not used (``fused_v`` off).
* DDM temperature floor: the released code clamps T to [1e-3, 1e3] (on 0.2 m cells). With that range the learned T
  collapses in our training (1 -> 0.026, a kernel about 4 m wide on 1 m cells): widening the kernel makes every
  density map nearly uniform, so ``L_rho`` falls without any flow being modelled, and its gradient on the trajectory
  network vanishes (about 1e-7 of the acceleration term's; 5000x more at T = 1). The drift also happens when the
  label's T is detached (it runs through the ODE's own soft assignments), so we bound the kernel instead: T >= t_min =
  1, the released initial value, i.e. the kernel (standard deviation ``1 / sqrt(2 T)`` = 0.71 m) may sharpen but never
  grow wider than at the start; a physical length, since our cells are 5x coarser than the paper's. T stays learnable
  above the floor; the raw parameter is projected back after each optimiser step.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

from backend.registry import choose

from .density import T_MAX, T_MIN, Grid, crossing_weight, density, soft_assign

HISTORY = 8
OUTFLOWS = ("conservative", "code")  # the density ODE's outflow formulas (see "Outflow" above)


@dataclass
class MicroConfig:
    """The trajectory network's sizes (paper/code values in comments)."""

    hist_len: int = HISTORY  # num_history_feature 8
    hist_emb: int = 32  # history_emsize 64
    hist_hidden: int = 32  # history_lstm 160 (GC) / 64 (UCY)
    hist_out: int = 32  # history_lstm_out 64
    egnn_hidden: int = 16  # egnn_hid_dim 8 (GC) / 16 (UCY)
    egnn_layers: int = 2
    obs_hidden: int = 16  # egnn_hid_dim_obs 32
    obs_layers: int = 1
    spatial_emb: int = 32  # spatial_emsize 64
    topk_ped: int = 6
    topk_obs: int = 5
    radius: float = 4.0  # dist_threshold 4 m
    sight_deg: float = 90.0  # half-angle of the field of view (cos >= cos 90 deg: the front half-plane)
    tau: float = 2.2  # goal relaxation time tau1 / tau2
    dt: float = 0.08


@dataclass
class StddnConfig:
    """Macroscopic part and loss (code defaults in comments)."""

    cell: float = 1.0  # grid_size 0.2 m
    bounds: tuple[float, float, float, float] = (0.0, 0.0, 20.0, 20.0)
    embed_dim: int = 4  # node_embed_dim 5 (GC) / 10 (UCY)
    temperature: float = 1.0
    outflow: str = "conservative"  # or "code"
    density_weight: float = 20.0  # (1 + 20 rho) in L_rho
    stages: dict[str, tuple[float, float]] = field(
        default_factory=lambda: {"trajectory": (1.0, 0.1), "physics": (0.1, 1.0), "joint": (1.0, 1.0)})
    time_decay: float = 0.9
    t_min: float = 1.0  # DDM temperature floor (kernel std <= 0.71 m, the released init); released clamp: 1e-3

    @property
    def grid(self) -> Grid:
        return Grid.from_bounds(self.bounds, self.cell)



# --------------------------------------------------------------------------------------------------- features
def _fov_ok(rel: torch.Tensor, heading: torch.Tensor, cos_min: float) -> torch.Tensor:
    """rel ``[..., N, M, 2]``, heading ``[..., N, 2]`` (unit) -> ``[..., N, M]`` in-sight mask."""
    d = rel.norm(dim=-1).clamp_min(1e-6)
    return (rel * heading[..., None, :]).sum(-1) / d >= cos_min - 1e-6


def heading_of(v: torch.Tensor, goal_dir: torch.Tensor) -> torch.Tensor:
    speed = v.norm(dim=-1, keepdim=True)
    return torch.where(speed > 1e-3, v / speed.clamp_min(1e-6), goal_dir)


def neighbours(p: torch.Tensor, v: torch.Tensor, a: torch.Tensor, present: torch.Tensor, heading: torch.Tensor,
               k: int, radius: float, sight_deg: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top-k neighbours in sight. Returns idx ``[B, N, k]``, mask ``[B, N, k]`` and relative features
    ``[B, N, k, 6]`` = (p_j - p_i, v_j - v_i, a_j - a_i)."""
    B, N, _ = p.shape
    rel = p[:, None, :, :] - p[:, :, None, :]  # [B, N(i), N(j), 2] = p_j - p_i
    d = rel.norm(dim=-1)
    ok = present[:, :, None] & present[:, None, :] & (d <= radius)
    ok &= ~torch.eye(N, dtype=torch.bool, device=p.device)[None]
    ok &= _fov_ok(rel, heading, math.cos(math.radians(sight_deg)))
    kk = min(k, max(N - 1, 1))
    dist = torch.where(ok, d, torch.full_like(d, float("inf")))
    top, idx = torch.topk(dist, kk, dim=-1, largest=False)
    mask = torch.isfinite(top)
    state = torch.cat([p, v, a], dim=-1)  # [B, N, 6]
    nb = torch.gather(state[:, None].expand(B, N, N, 6), 2, idx[..., None].expand(B, N, kk, 6))
    relf = (nb - state[:, :, None, :]) * mask[..., None]
    if kk < k:  # pad to k
        pad = k - kk
        idx = F.pad(idx, (0, pad))
        mask = F.pad(mask, (0, pad))
        relf = F.pad(relf, (0, 0, 0, pad))
    return idx, mask, relf


def obstacle_neighbours(p: torch.Tensor, present: torch.Tensor, heading: torch.Tensor, obstacles: torch.Tensor,
                        k: int, radius: float, sight_deg: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k wall points in sight: mask ``[B, N, k]`` and relative positions ``[B, N, k, 2]`` (o - p)."""
    B, N, _ = p.shape
    M = obstacles.shape[1]
    if M == 0:
        return torch.zeros(B, N, k, dtype=torch.bool, device=p.device), torch.zeros(B, N, k, 2, device=p.device)
    rel = obstacles[:, None, :, :] - p[:, :, None, :]  # [B, N, M, 2]
    d = rel.norm(dim=-1)
    ok = present[:, :, None] & (d <= radius) & _fov_ok(rel, heading, math.cos(math.radians(sight_deg)))
    kk = min(k, M)
    dist = torch.where(ok, d, torch.full_like(d, float("inf")))
    top, idx = torch.topk(dist, kk, dim=-1, largest=False)
    mask = torch.isfinite(top)
    relp = torch.gather(rel, 2, idx[..., None].expand(B, N, kk, 2)) * mask[..., None]
    if kk < k:
        mask = F.pad(mask, (0, k - kk))
        relp = F.pad(relp, (0, 0, 0, k - kk))
    return mask, relp


# ------------------------------------------------------------------------------------------------------ network
class EGNNLayer(nn.Module):
    """One E(n)-equivariant message-passing layer (Satorras et al. 2021, in SPDiff's acceleration form).

    ``m_ij = f_e(h_i, h_j, d_ij)``; vector ``mean_j (x_j - x_i) f_x(m_ij)`` (equivariant); ``a_i' = f_a(h_i) a_i +
    vector``; ``h_i' = h_i + f_h(h_i, sum_j m_ij)`` (invariant). For obstacles ``h_j`` is absent.
    """

    def __init__(self, hid: int, with_neighbour_state: bool = True) -> None:
        super().__init__()
        e_in = 2 * hid + 1 if with_neighbour_state else hid + 1
        self.f_e = nn.Sequential(nn.Linear(e_in, hid), nn.SiLU(), nn.Linear(hid, hid), nn.SiLU())
        self.f_x = nn.Sequential(nn.Linear(hid, hid), nn.SiLU(), nn.Linear(hid, 1))
        self.f_a = nn.Sequential(nn.Linear(hid, hid), nn.SiLU(), nn.Linear(hid, 1))
        self.f_h = nn.Sequential(nn.Linear(2 * hid, hid), nn.SiLU(), nn.Linear(hid, hid))

    def forward(self, h: torch.Tensor, h_nb: torch.Tensor | None, rel: torch.Tensor, mask: torch.Tensor,
                a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """h ``[B, N, H]``, h_nb ``[B, N, k, H]`` or None, rel ``[B, N, k, 2]``, mask ``[B, N, k]``, a ``[B, N, 2]``."""
        d = rel.norm(dim=-1, keepdim=True)
        parts = [h[:, :, None, :].expand(*rel.shape[:3], h.shape[-1])]
        if h_nb is not None:
            parts.append(h_nb)
        m = self.f_e(torch.cat([*parts, d], dim=-1)) * mask[..., None]
        vec = (rel * self.f_x(m)).sum(-2) / (mask.sum(-1, keepdim=True) + 1e-6)
        a_new = self.f_a(h) * a + vec
        h = h + self.f_h(torch.cat([h, m.sum(-2)], dim=-1))
        return h, a_new, vec


class MicroNet(nn.Module):
    """The microscopic trajectory network: state at t -> acceleration ``[B, N, 2]`` at t + 1."""

    def __init__(self, cfg: MicroConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg = cfg or MicroConfig()
        self.hist_in = nn.Linear(6, cfg.hist_emb)
        self.hist_rnn = nn.GRU(cfg.hist_emb, cfg.hist_hidden, batch_first=True)
        self.hist_out = nn.Linear(cfg.hist_hidden, cfg.hist_out)
        self.enc_v = nn.Linear(1, 8)
        self.enc_a = nn.Linear(1, 8)
        self.emb = nn.Linear(16, cfg.egnn_hidden)
        self.egnn = nn.ModuleList(EGNNLayer(cfg.egnn_hidden) for _ in range(cfg.egnn_layers))
        self.enc_v_obs = nn.Linear(1, 8)
        self.enc_a_obs = nn.Linear(1, 8)
        self.emb_obs = nn.Linear(16, cfg.obs_hidden)
        self.egnn_obs = nn.ModuleList(EGNNLayer(cfg.obs_hidden, with_neighbour_state=False)
                                      for _ in range(cfg.obs_layers))
        self.spatial = nn.Linear(2, cfg.spatial_emb)
        ctx = cfg.hist_out + cfg.egnn_hidden + cfg.obs_hidden + cfg.spatial_emb
        self.head = nn.Sequential(nn.Linear(ctx, cfg.spatial_emb // 2), nn.ReLU(), nn.Linear(cfg.spatial_emb // 2, 2))

    def forward(self, p: torch.Tensor, v: torch.Tensor, a: torch.Tensor, hist: torch.Tensor, hist_ok: torch.Tensor,
                goal: torch.Tensor, v0: torch.Tensor, present: torch.Tensor, obstacles: torch.Tensor,
                v_live: torch.Tensor | None = None, a_live: torch.Tensor | None = None) -> torch.Tensor:
        """p, v, a, goal ``[B, N, 2]``; hist ``[B, N, L, 6]`` absolute (p, v, a), oldest first, last = now;
        hist_ok ``[B, N, L]``; v0 ``[B, N]``; present ``[B, N]``; obstacles ``[B, M, 2]``. Returns ``[B, N, 2]``.

        ``v_live`` / ``a_live`` (training rollouts): the same velocity / acceleration still attached to the graph. As in
        the released code, they feed the goal term ``(v0 e - v) / tau`` and the current-acceleration embedding (the
        denoiser's input ``x``), while neighbour, obstacle and history features use the detached state."""
        cfg = self.cfg
        B, N, _ = p.shape
        v_live = v if v_live is None else v_live
        a_live = a if a_live is None else a_live
        to_goal = goal - p
        dist = to_goal.norm(dim=-1, keepdim=True)
        dist = torch.where(dist == 0, dist + 0.1, dist)
        e_goal = to_goal / dist
        goal_term = (v0[..., None] * e_goal - v_live) / cfg.tau
        heading = heading_of(v, e_goal)
        # history (relative positions)
        hrel = torch.cat([hist[..., :2] - p[:, :, None, :], hist[..., 2:]], dim=-1) * hist_ok[..., None]
        x = torch.relu(self.hist_in(hrel.reshape(B * N, cfg.hist_len, 6)))
        _, hn = self.hist_rnn(x)
        h_hist = self.hist_out(hn[-1].reshape(B, N, -1))
        # pedestrians
        idx, mask, relf = neighbours(p, v, a, present, heading, cfg.topk_ped, cfg.radius, cfg.sight_deg)
        speed, acc = v.norm(dim=-1, keepdim=True), a.norm(dim=-1, keepdim=True)
        h = self.emb(torch.cat([self.enc_v(speed), self.enc_a(acc)], -1))
        k = idx.shape[-1]
        vec_p = torch.zeros_like(p)
        for layer in self.egnn:
            h_nb = torch.gather(h[:, None].expand(B, N, N, h.shape[-1]), 2, idx[..., None].expand(B, N, k, h.shape[-1]))
            h_nb = h_nb * mask[..., None]
            h, _, vec_p = layer(h, h_nb, relf[..., :2], mask, a)
        # obstacles
        omask, orel = obstacle_neighbours(p, present, heading, obstacles, cfg.topk_obs, cfg.radius, cfg.sight_deg)
        ho = self.emb_obs(torch.cat([self.enc_v_obs(speed), self.enc_a_obs(acc)], -1))
        vec_o = torch.zeros_like(p)
        for layer in self.egnn_obs:
            ho, _, vec_o = layer(ho, None, orel, omask, a)
        s = torch.relu(self.spatial(a_live))
        out = self.head(torch.cat([h_hist, h, ho, s], dim=-1))
        acc = out + vec_p + vec_o + goal_term
        return torch.where(present[..., None], acc, torch.zeros_like(acc))


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def micro_macs(cfg: MicroConfig, n_agents: int) -> int:
    """Approximate multiply-adds of one MicroNet pass for ``n_agents`` (linear layers and GRU; neighbour search
    excluded)."""
    net = MicroNet(cfg)
    lin = {name: m for name, m in net.named_modules() if isinstance(m, nn.Linear)}
    per_agent = 0
    k, ko, L = cfg.topk_ped, cfg.topk_obs, cfg.hist_len
    for name, m in lin.items():
        mult = 1
        if name.startswith("hist_in"):
            mult = L
        elif ".f_e." in name or ".f_x." in name:
            mult = ko if name.startswith("egnn_obs") else k
        elif name.startswith("egnn.") or name.startswith("egnn_obs."):
            mult = 1
        per_agent += mult * m.in_features * m.out_features
    gru = 3 * (cfg.hist_emb + cfg.hist_hidden) * cfg.hist_hidden * L
    return int(n_agents * (per_agent + gru))


# ----------------------------------------------------------------------------------------------- density ODE
class DensityODE(nn.Module):
    """The DVCG right-hand side ``d rho / dt`` over the grid cells (plus the learnable DDM temperature T).

    Call :meth:`prepare` with the window's positions and speeds, then integrate with torchdiffeq (``method="euler"``,
    time in frames); :meth:`forward` reads the prepared transition of step ``floor(t)``.
    """

    def __init__(self, grid: Grid, embed_dim: int = 4, temperature: float = 1.0, outflow: str = "conservative",
                 t_min: float = T_MIN) -> None:
        super().__init__()
        self.grid = grid
        self.outflow = choose(outflow, OUTFLOWS, "outflow")
        self.t_min = max(float(t_min), T_MIN)
        C = grid.num_cells
        self.node_w = nn.Parameter(torch.randn(C + 1, embed_dim) * 0.01)
        self.node_b = nn.Parameter(torch.randn(C + 1, embed_dim) * 0.01)
        self.temperature = nn.Parameter(torch.tensor(float(temperature)))
        self._P: list[torch.Tensor] = []
        self._s: list[torch.Tensor] = []
        self._s_out: list[torch.Tensor] = []

    @property
    def T(self) -> torch.Tensor:
        """The learned DDM temperature clamped to ``[t_min, 1e3]``."""
        return self.temperature.clamp(self.t_min, T_MAX)

    @torch.no_grad()
    def project_temperature(self) -> None:
        """Keep the raw parameter inside ``[t_min, 1e3]`` (call after each optimiser step)."""
        self.temperature.clamp_(self.t_min, T_MAX)

    def assign(self, pos: torch.Tensor, present: torch.Tensor | None = None) -> torch.Tensor:
        return soft_assign(pos, self.T, self.grid, present)

    def prepare(self, pos: torch.Tensor, speed: torch.Tensor, present: torch.Tensor,
                ext: torch.Tensor | None = None) -> None:
        """pos ``[B, K + 1, N, 2]`` (positions of steps 0..K), speed ``[B, K + 1, N]``, present ``[B, K + 1, N]``;
        ext ``[B, K + 1, N, 2]`` extrapolated next positions ``p_{t+1} + v_{t+1} dt`` (only for ``outflow="code"``).
        Precomputes the soft assignments and each step's edge strengths."""
        K1 = pos.shape[1]
        self._P = [self.assign(pos[:, t], present[:, t]) for t in range(K1)]
        self._s = [self.edge_strength(self._P[t], self._P[t + 1], speed[:, t]) for t in range(K1 - 1)]
        self._s_out = []
        if self.outflow == "code":
            assert ext is not None
            Pext = [self.assign(ext[:, t], present[:, t]) for t in range(K1)]
            self._s_out = [self.edge_strength(self._P[t + 1], Pext[t + 1], speed[:, t + 1]) for t in range(K1 - 1)]

    def edge_strength(self, Ps: torch.Tensor, Pr: torch.Tensor, speed: torch.Tensor) -> torch.Tensor:
        """``s_i = <w_s, w_r> |v_i| c_i + <b_s, b_r>`` ``[B, N]`` for soft senders ``Ps`` and receivers ``Pr``."""
        w, b = self.node_w[:-1], self.node_b[:-1]
        ps, pr = Ps[..., :-1], Pr[..., :-1]
        c = crossing_weight(Ps, Pr, self.T)
        ww = ((ps @ w) * (pr @ w)).sum(-1)
        bb = ((ps @ b) * (pr @ b)).sum(-1)
        return ww * speed * c + bb

    def rhs(self, rho: torch.Tensor, Ps: torch.Tensor, Pr: torch.Tensor, s: torch.Tensor,
            s_out: torch.Tensor | None = None) -> torch.Tensor:
        """``d rho / dt`` ``[B, C]`` for one step: senders ``Ps [B, N, C + 1]`` (t), receivers ``Pr`` (t + 1) and edge
        strengths ``s [B, N]`` (``s_out``: the next move's, for ``outflow="code"``)."""
        rho_send = (Ps[..., :-1] * rho[:, None, :]).sum(-1)
        flux = (s * rho_send)[:, None, :]  # [B, 1, N]: each agent's edge flux s_i rho(sender_i)
        inflow = torch.bmm(flux, Pr[..., :-1])[:, 0]
        if self.outflow == "conservative":  # the same flux leaves the sender cells
            outflow = torch.bmm(flux, Ps[..., :-1])[:, 0]
        else:  # the released code: next move (t+1 -> t+2) times the DDM of the predicted positions at t+1
            assert s_out is not None
            outflow = density(Pr) * torch.bmm(s_out[:, None, :], Pr[..., :-1])[:, 0]
        return inflow - outflow

    def forward(self, t: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
        i = min(int(torch.floor(t + 1e-6).item()), len(self._s) - 1)
        return self.rhs(rho, self._P[i], self._P[i + 1], self._s[i], self._s_out[i] if self._s_out else None)

    def integrate(self, rho0: torch.Tensor, steps: int) -> torch.Tensor:
        """Euler integration (torchdiffeq) over ``steps`` frames: ``[B, steps + 1, C]``."""
        from torchdiffeq import odeint

        ts = torch.arange(steps + 1, dtype=torch.float32)
        return odeint(self, rho0, ts, method="euler").transpose(0, 1)


def physics_loss(rho_ode: torch.Tensor, rho_gt: torch.Tensor, weight: float = 20.0) -> torch.Tensor:
    """``sum 1[rho_gt > 0] (1 + w rho_gt) (rho_ode - rho_gt)^2 / sum 1[rho_gt > 0]``."""
    occ = (rho_gt > 0).to(rho_gt.dtype)
    return (occ * (1 + weight * rho_gt) * (rho_ode - rho_gt) ** 2).sum() / (occ.sum() + 1e-6)


# ---------------------------------------------------------------------------------------------- the model
class STDDN(nn.Module):
    """Micro network + density ODE. ``micro`` alone is the simulator at inference."""

    def __init__(self, micro: MicroConfig | None = None, macro: StddnConfig | None = None) -> None:
        super().__init__()
        self.micro_cfg = micro or MicroConfig()
        self.cfg = macro or StddnConfig()
        self.micro = MicroNet(self.micro_cfg)
        self.ode = DensityODE(self.cfg.grid, self.cfg.embed_dim, self.cfg.temperature, self.cfg.outflow,
                              self.cfg.t_min)

    def config_dict(self) -> dict:
        return {"micro": asdict(self.micro_cfg), "macro": {k: v for k, v in asdict(self.cfg).items()}}


@dataclass
class WindowBatch:
    """B training windows of K + 1 frames over N (padded) agents. Ground truth ``p, v, a [B, K + 1, N, 2]`` (0 when
    absent), ``present, forced, mask [B, K + 1, N]`` (mask = loss mask: present, past warm-up), ``hist [B, N, L, 6]``
    and ``hist_ok [B, N, L]`` at frame 0, ``goal [B, K + 1, N, 2]``, ``v0 [B, N]``, ``obstacles [B, M, 2]``."""

    p: torch.Tensor
    v: torch.Tensor
    a: torch.Tensor
    present: torch.Tensor
    forced: torch.Tensor
    mask: torch.Tensor
    hist: torch.Tensor
    hist_ok: torch.Tensor
    goal: torch.Tensor
    v0: torch.Tensor
    obstacles: torch.Tensor
    dt: float = 0.08


@dataclass
class WindowOutput:
    p: torch.Tensor  # [B, K + 1, N, 2] predicted (0 when absent)
    v: torch.Tensor
    a: torch.Tensor
    rho_ode: torch.Tensor | None  # [B, K + 1, C]
    rho_gt: torch.Tensor | None
    losses: dict[str, torch.Tensor]


def rollout_window(net: MicroNet, b: WindowBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Autoregressive micro rollout over the window with ground-truth injection of forced (warm-up / entering) agents.
    As in the released code, the relational and history inputs are detached, while the current velocity (goal term) and
    acceleration (the denoiser's ``x``) stay attached, so later losses reach earlier steps through the network as well as
    through the state update (detaching every input would cut that path)."""
    K1 = b.p.shape[1]
    dt = b.dt
    p, v, a = b.p[:, 0], b.v[:, 0], b.a[:, 0]
    hist, hist_ok = b.hist, b.hist_ok
    ps, vs, as_ = [p], [v], [a]
    for t in range(K1 - 1):
        pres = b.present[:, t]
        a_next = net(p.detach(), v.detach(), a.detach(), hist.detach(), hist_ok, b.goal[:, t], b.v0, pres, b.obstacles,
                     v_live=v, a_live=a)
        v_n = v + a * dt
        p_n = p + v * dt
        a_n = a_next
        f = b.forced[:, t + 1, :, None]
        p_n = torch.where(f, b.p[:, t + 1], p_n)
        v_n = torch.where(f, b.v[:, t + 1], v_n)
        a_n = torch.where(f, b.a[:, t + 1], a_n)
        pres_n = b.present[:, t + 1, :, None]
        p_n, v_n, a_n = (torch.where(pres_n, x, torch.zeros_like(x)) for x in (p_n, v_n, a_n))
        hist = torch.cat([hist[:, :, 1:], torch.cat([p_n, v_n, a_n], -1)[:, :, None]], dim=2)
        hist_ok = torch.cat([hist_ok[:, :, 1:], b.present[:, t + 1, :, None]], dim=2)
        p, v, a = p_n, v_n, a_n
        ps.append(p)
        vs.append(v)
        as_.append(a)
    return torch.stack(ps, 1), torch.stack(vs, 1), torch.stack(as_, 1)


def _masked_mse(x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor, decay: float) -> torch.Tensor:
    """Mean over valid (t, n) of the squared error averaged over the 2 components, step k weighted by decay^(k-1)."""
    K1 = x.shape[1]
    w = torch.tensor([0.0] + [decay ** (k - 1) for k in range(1, K1)])[None, :, None]
    m = mask.to(x.dtype) * w
    err = ((x - y) ** 2).mean(-1)
    return (err * m).sum() / m.sum().clamp_min(1e-6)


def window_loss(model: STDDN, b: WindowBatch, lam1: float, lam2: float, train_net: bool = True) -> WindowOutput:
    """The staged STDDN loss on a batch of windows. With ``lam2 == 0`` the ODE is skipped (the no-density ablation).
    ``train_net=False`` (the "physics" stage, trajectory network frozen as in the released supervisor) runs the micro
    rollout without a graph, so only the ODE's parameters (cell embeddings, T) receive gradients."""
    if train_net:
        p, v, a = rollout_window(model.micro, b)
    else:
        with torch.no_grad():
            p, v, a = rollout_window(model.micro, b)
    cfg = model.cfg
    loss_a = _masked_mse(a, b.a, b.mask, cfg.time_decay)
    loss_p = _masked_mse(p, b.p, b.mask, cfg.time_decay)
    losses = {"a": loss_a, "p": loss_p}
    rho_ode = rho_gt = None
    total = lam1 * (loss_a + loss_p)
    if lam2 > 0:
        K = p.shape[1] - 1
        speed = v.norm(dim=-1)
        ext = p + v * b.dt if cfg.outflow == "code" else None
        model.ode.prepare(p, speed, b.present, ext)
        gt_P = model.ode.assign(b.p, b.present)  # [B, K + 1, N, C + 1]
        rho_gt = density(gt_P)
        rho_ode = model.ode.integrate(rho_gt[:, 0], K)
        loss_rho = physics_loss(rho_ode[:, 1:], rho_gt[:, 1:], cfg.density_weight)
        losses["rho"] = loss_rho
        total = total + lam2 * loss_rho
    losses["total"] = total
    return WindowOutput(p, v, a, rho_ode, rho_gt, losses)
