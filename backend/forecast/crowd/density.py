"""Density fields for STDDN: the differentiable density mapping (DDM), cross-grid detection (CGD), hard binning, and a
finite-volume upwind solver of the continuity equation as an honest reference discretisation.

Paper: "STDDN: A Physics-Guided Deep Learning Framework for Crowd Simulation" (Liu et al., ICLR 2026, arXiv 2604.02756).

DDM (paper section "differentiable density mapping", released code ``position_to_grid_probs``/``grid_to_rho``): each
present agent i gets a softmax over the real grid cells of logits ``-T ||p_i - c_j||^2`` (T learnable, clamped to
[1e-3, 1e3]); absent agents go to one extra virtual cell. ``rho_j = sum_i P_ij``, so the real cells sum exactly to the
number of present agents and rho is smooth in the positions (unlike hard binning, which jumps when an agent crosses a
cell edge).

CGD: ``c_i = clamp(sigmoid(T (JS(P_i(t) || P_i(t+1)) - 0.1)), 0.01, 0.99)`` with the Jensen-Shannon divergence of an
agent's soft cell assignments at consecutive steps (probabilities smoothed by 1e-10 as in the code).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

T_MIN, T_MAX = 1e-3, 1e3


@dataclass(frozen=True)
class Grid:
    """A regular grid of ``nx * ny`` square cells of side ``cell`` starting at ``(x0, y0)``. Cell ``j = iy * nx + ix``
    (row-major, rows along y), so ``rho.view(ny, nx)`` is an image with y as rows."""

    x0: float = 0.0
    y0: float = 0.0
    cell: float = 1.0
    nx: int = 20
    ny: int = 20

    @classmethod
    def from_bounds(cls, bounds: tuple[float, float, float, float], cell: float = 1.0) -> Grid:
        x0, y0, x1, y1 = bounds
        nx = max(1, int(round((x1 - x0) / cell)))
        ny = max(1, int(round((y1 - y0) / cell)))
        return cls(float(x0), float(y0), float(cell), nx, ny)

    @property
    def num_cells(self) -> int:
        return self.nx * self.ny

    def centers(self, device: torch.device | str | None = None) -> torch.Tensor:
        """``[C, 2]`` cell centres."""
        xs = self.x0 + (torch.arange(self.nx, dtype=torch.float32, device=device) + 0.5) * self.cell
        ys = self.y0 + (torch.arange(self.ny, dtype=torch.float32, device=device) + 0.5) * self.cell
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        return torch.stack([gx.reshape(-1), gy.reshape(-1)], dim=-1)


def clamp_temperature(T: torch.Tensor | float) -> torch.Tensor:
    T = torch.as_tensor(T, dtype=torch.float32)
    return T.clamp(T_MIN, T_MAX)


def soft_assign(pos: torch.Tensor, T: torch.Tensor | float, grid: Grid,
                present: torch.Tensor | None = None) -> torch.Tensor:
    """DDM cell probabilities ``[..., N, C + 1]`` of positions ``pos [..., N, 2]`` (last column = virtual cell).

    Agents with NaN positions or ``present`` False are assigned wholly to the virtual cell.
    """
    ok = ~torch.isnan(pos).any(-1)
    if present is not None:
        ok = ok & present
    safe = torch.where(ok[..., None], pos, torch.zeros_like(pos))
    T = clamp_temperature(T)
    # The softmax over cells of -T ((x - cx)^2 + (y - cy)^2) factorises into a softmax over columns times one over
    # rows (the normaliser is a product), which is exact and avoids the [..., N, C, 2] difference tensor.
    cx = grid.x0 + (torch.arange(grid.nx, dtype=pos.dtype, device=pos.device) + 0.5) * grid.cell
    cy = grid.y0 + (torch.arange(grid.ny, dtype=pos.dtype, device=pos.device) + 0.5) * grid.cell
    px = torch.softmax(-T * (safe[..., 0:1] - cx) ** 2, dim=-1)  # [..., N, nx]
    py = torch.softmax(-T * (safe[..., 1:2] - cy) ** 2, dim=-1)  # [..., N, ny]
    real = (py[..., :, None] * px[..., None, :]).flatten(-2)  # [..., N, ny * nx], cell j = iy * nx + ix
    real = torch.where(ok[..., None], real, torch.zeros_like(real))
    virtual = (~ok).to(real.dtype)[..., None]
    return torch.cat([real, virtual], dim=-1)


def density(P: torch.Tensor) -> torch.Tensor:
    """``rho [..., C]`` = sum over agents of the real-cell probabilities of ``P [..., N, C + 1]``."""
    return P[..., :-1].sum(-2)


def soft_density(pos: torch.Tensor, T: torch.Tensor | float, grid: Grid,
                 present: torch.Tensor | None = None) -> torch.Tensor:
    """``rho [..., C]`` of positions ``[..., N, 2]`` (DDM)."""
    return density(soft_assign(pos, T, grid, present))


def hard_density(pos: torch.Tensor, grid: Grid, present: torch.Tensor | None = None) -> torch.Tensor:
    """Counts per cell ``[..., C]`` (hard binning; agents outside the grid or absent are dropped)."""
    ok = ~torch.isnan(pos).any(-1)
    if present is not None:
        ok = ok & present
    safe = torch.where(ok[..., None], pos, torch.zeros_like(pos))
    ix = torch.floor((safe[..., 0] - grid.x0) / grid.cell).long()
    iy = torch.floor((safe[..., 1] - grid.y0) / grid.cell).long()
    inside = ok & (ix >= 0) & (ix < grid.nx) & (iy >= 0) & (iy < grid.ny)
    idx = torch.where(inside, iy * grid.nx + ix, torch.zeros_like(ix))
    out = torch.zeros(*pos.shape[:-2], grid.num_cells, dtype=pos.dtype, device=pos.device)
    return out.scatter_add(-1, idx, inside.to(pos.dtype))


def js_divergence(P1: torch.Tensor, P2: torch.Tensor) -> torch.Tensor:
    """Jensen-Shannon divergence ``[..., N]`` between the real-cell parts of two assignments ``[..., N, C + 1]``
    (smoothed and renormalised with 1e-10 as in the released code)."""
    p = P1[..., :-1]
    q = P2[..., :-1]
    C = p.shape[-1]
    p = (p + 1e-10) / (p.sum(-1, keepdim=True) + 1e-10 * C)
    q = (q + 1e-10) / (q.sum(-1, keepdim=True) + 1e-10 * C)
    m = 0.5 * (p + q)
    return 0.5 * ((p * (p.log() - m.log())).sum(-1) + (q * (q.log() - m.log())).sum(-1))


def crossing_weight(P1: torch.Tensor, P2: torch.Tensor, T: torch.Tensor | float) -> torch.Tensor:
    """CGD weight ``[..., N]`` in [0.01, 0.99]: large when the agent's soft cell assignment changes between steps."""
    return torch.sigmoid(clamp_temperature(T) * (js_divergence(P1, P2) - 0.1)).clamp(0.01, 0.99)


# ------------------------------------------------------------------------------------------- reference physics
def upwind_step(rho: torch.Tensor, u: torch.Tensor, w: torch.Tensor, dt: float, cell: float) -> torch.Tensor:
    """One donor-cell (first-order upwind) finite-volume step of ``d rho/dt + div(rho v) = 0`` with closed boundaries.

    rho, u (x velocity), w (y velocity): ``[ny, nx]``. Face velocities are the mean of the two cells; no flux leaves the
    grid, so total mass is conserved exactly. Stable for ``max|v| dt / cell <= 0.5``.
    """
    uf = 0.5 * (u[:, 1:] + u[:, :-1])  # faces between columns
    fx = torch.clamp(uf, min=0) * rho[:, :-1] + torch.clamp(uf, max=0) * rho[:, 1:]
    wf = 0.5 * (w[1:, :] + w[:-1, :])  # faces between rows
    fy = torch.clamp(wf, min=0) * rho[:-1, :] + torch.clamp(wf, max=0) * rho[1:, :]
    div = torch.zeros_like(rho)
    div[:, :-1] += fx
    div[:, 1:] -= fx
    div[:-1, :] += fy
    div[1:, :] -= fy
    return rho - dt / cell * div


def binned_velocity(pos: torch.Tensor, vel: torch.Tensor, grid: Grid,
                    present: torch.Tensor | None = None) -> torch.Tensor:
    """Mean velocity per cell ``[2, ny, nx]`` of agents ``pos, vel [N, 2]`` (0 in empty cells)."""
    n = hard_density(pos, grid, present)
    ok = ~torch.isnan(pos).any(-1)
    if present is not None:
        ok = ok & present
    out = []
    for k in range(2):
        wgt = torch.where(ok, vel[..., k], torch.zeros_like(vel[..., k]))
        safe = torch.where(ok[..., None], pos, torch.zeros_like(pos))
        ix = torch.floor((safe[..., 0] - grid.x0) / grid.cell).long().clamp(0, grid.nx - 1)
        iy = torch.floor((safe[..., 1] - grid.y0) / grid.cell).long().clamp(0, grid.ny - 1)
        s = torch.zeros(grid.num_cells).scatter_add(0, iy * grid.nx + ix, wgt)
        out.append((s / n.clamp_min(1)).view(grid.ny, grid.nx))
    return torch.stack(out)
