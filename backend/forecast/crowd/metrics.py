"""Crowd simulation metrics, as in STDDN/SPDiff's evaluation (``utils/metrics.py`` of the released code):

* MAE: mean Euclidean distance between predicted and true positions over valid (frame, agent) pairs;
* OT: entropic Sinkhorn transport cost between the predicted and true position clouds of each frame (squared Euclidean
  cost, uniform weights, epsilon 0.1, at most 100 log-domain iterations), averaged over frames;
* MMD: maximum mean discrepancy with 5 Gaussian kernels whose bandwidths are the mean pairwise squared distance times
  2^-2 .. 2^2 (kernel_mul 2, kernel_num 5), averaged over frames;
* FDE: error at each agent's last valid frame; collisions: pairs of simulated agents closer than 0.5 m per present
  agent.

Valid pairs: the agent is present in both the ground truth and the rollout and past its warm-up (``mask_p_pred`` in the
code). OT/MMD compare the clouds of those agents frame by frame (every ``stride`` frames; stride 1 = every frame).
Entropic OT is not exactly zero for identical clouds: points closer than about sqrt(eps) = 0.3 m share mass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .data import Clip


def valid_mask(pred: np.ndarray, clip: Clip, warmup: int) -> np.ndarray:
    """``[T, N]`` bool: present in both, and past the agent's warm-up."""
    t = np.arange(clip.num_frames)[:, None]
    return clip.present & ~np.isnan(pred[..., 0]) & (t - clip.entry_frames()[None, :] >= warmup)


def sinkhorn_cost(x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None, eps: float = 0.1,
                  max_iter: int = 100, tol: float = 1e-4) -> torch.Tensor:
    """Batched entropic OT cost ``<pi, C>`` between clouds ``x, y [F, n, 2]`` (rows with ``mask [F, n]`` False are
    padding; x and y share the mask). Returns ``[F]``."""
    if x.dim() == 2:
        x, y = x[None], y[None]
        mask = None if mask is None else mask[None]
    if mask is None:
        mask = torch.ones(x.shape[:2], dtype=torch.bool)
    x = x.double()
    y = y.double()
    C = ((x[:, :, None, :] - y[:, None, :, :]) ** 2).sum(-1)
    n = mask.sum(-1, keepdim=True).clamp_min(1).double()
    log_w = torch.where(mask, -torch.log(n), torch.full(mask.shape, -1e9, dtype=torch.float64))
    u = torch.zeros_like(log_w)
    v = torch.zeros_like(log_w)
    for _ in range(max_iter):
        u_prev = u
        u = eps * (log_w - torch.logsumexp((-C + u[:, :, None] + v[:, None, :]) / eps, dim=-1)) + u
        v = eps * (log_w - torch.logsumexp((-C + u[:, :, None] + v[:, None, :]) / eps, dim=-2)) + v
        if ((u - u_prev).abs() * mask).sum(-1).max() < tol:
            break
    pi = torch.exp((-C + u[:, :, None] + v[:, None, :]) / eps)
    pi = pi * (mask[:, :, None] & mask[:, None, :])
    return (pi * C).sum((-2, -1)).float()


def mmd(x: torch.Tensor, y: torch.Tensor, mask_x: torch.Tensor | None = None, mask_y: torch.Tensor | None = None,
        kernel_mul: float = 2.0, kernel_num: int = 5) -> torch.Tensor:
    """Batched multi-kernel MMD between clouds ``x [F, n, 2]`` and ``y [F, m, 2]`` (masks mark real rows). ``[F]``."""
    if x.dim() == 2:
        x, y = x[None], y[None]
        mask_x = None if mask_x is None else mask_x[None]
        mask_y = None if mask_y is None else mask_y[None]
    mask_x = torch.ones(x.shape[:2], dtype=torch.bool) if mask_x is None else mask_x
    mask_y = torch.ones(y.shape[:2], dtype=torch.bool) if mask_y is None else mask_y
    z = torch.cat([x, y], 1).double()
    mz = torch.cat([mask_x, mask_y], 1)
    d2 = ((z[:, :, None] - z[:, None]) ** 2).sum(-1)
    pair = mz[:, :, None] & mz[:, None, :]
    ns = mz.sum(-1).double()
    bw = (d2 * pair).sum((-2, -1)) / (ns**2 - ns).clamp_min(1)
    bw = bw.clamp_min(1e-12) / kernel_mul ** (kernel_num // 2)
    K = sum(torch.exp(-d2 / (bw * kernel_mul**i)[:, None, None]) for i in range(kernel_num))
    K = K * pair
    n = x.shape[1]
    nx = mask_x.sum(-1).double().clamp_min(1)
    ny = mask_y.sum(-1).double().clamp_min(1)
    xx = K[:, :n, :n].sum((-2, -1)) / nx**2
    yy = K[:, n:, n:].sum((-2, -1)) / ny**2
    xy = K[:, :n, n:].sum((-2, -1)) / (nx * ny)
    return (xx + yy - 2 * xy).float()


@dataclass
class Curves:
    """Per-frame errors on frames ``frames`` (seconds = frames * dt)."""

    frames: np.ndarray
    mae: np.ndarray
    ot: np.ndarray
    mmd: np.ndarray
    agents: np.ndarray


def curves(pred: np.ndarray, clip: Clip, warmup: int, stride: int = 1, eps: float = 0.1,
           max_iter: int = 100) -> Curves:
    """MAE, OT and MMD per frame (every ``stride`` frames with at least 2 valid agents)."""
    mask = valid_mask(pred, clip, warmup)
    frames = np.array([t for t in range(0, clip.num_frames, stride) if mask[t].sum() >= 2], dtype=int)
    if len(frames) == 0:
        z = np.zeros(0)
        return Curves(frames, z, z, z, z.astype(int))
    n = int(mask[frames].sum(1).max())
    X = torch.zeros(len(frames), n, 2)
    Y = torch.zeros(len(frames), n, 2)
    M = torch.zeros(len(frames), n, dtype=torch.bool)
    for k, t in enumerate(frames):
        sel = np.flatnonzero(mask[t])
        X[k, : len(sel)] = torch.from_numpy(pred[t, sel])
        Y[k, : len(sel)] = torch.from_numpy(clip.positions[t, sel])
        M[k, : len(sel)] = True
    err = (X - Y).norm(dim=-1)
    mae = ((err * M).sum(1) / M.sum(1)).numpy()
    ot_v = sinkhorn_cost(X, Y, M, eps, max_iter).numpy()
    mmd_v = mmd(X, Y, M, M).numpy()
    return Curves(frames, mae, ot_v, mmd_v, M.sum(1).numpy())


def collision_rate(pos: np.ndarray, threshold: float = 0.5, stride: int = 1) -> float:
    """Mean over frames of (pairs closer than ``threshold``) / (present agents)."""
    rates = []
    for t in range(0, pos.shape[0], stride):
        p = pos[t][~np.isnan(pos[t, :, 0])]
        if len(p) < 2:
            continue
        d = np.linalg.norm(p[:, None] - p[None], axis=-1)
        close = np.triu(d < threshold, k=1).sum()
        rates.append(close / len(p))
    return float(np.mean(rates)) if rates else 0.0


def segment_hits(a: np.ndarray, b: np.ndarray, walls: np.ndarray) -> np.ndarray:
    """Which steps cross which walls: ``[M, W]`` booleans, True where the step ``a[m] -> b[m]`` (``[M, 2]`` each)
    properly intersects the wall segment ``(x1, y1, x2, y2)`` of ``walls [W, 4]`` (touching or a zero-length or NaN
    step is not a crossing)."""
    a, b = a[:, None], b[:, None]  # [M, 1, 2]
    c, d = walls[None, :, :2], walls[None, :, 2:]  # [1, W, 2]

    def orient(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> np.ndarray:
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])

    return (orient(a, b, c) * orient(a, b, d) < 0) & (orient(c, d, a) * orient(c, d, b) < 0)


def wall_crossings(pos: np.ndarray, walls: np.ndarray) -> int:
    """How many times agents walk through a wall: steps ``pos[t] -> pos[t + 1]`` (``[T, N, 2]``, NaN = absent) whose
    segment properly intersects a wall segment ``(x1, y1, x2, y2)`` of ``walls [W, 4]``."""
    if len(walls) == 0 or pos.shape[0] < 2:
        return 0
    a, b = pos[:-1].reshape(-1, 2), pos[1:].reshape(-1, 2)
    ok = ~(np.isnan(a).any(-1) | np.isnan(b).any(-1)) & (np.linalg.norm(b - a, axis=-1) > 0)
    return int(segment_hits(a[ok], b[ok], walls).sum())


def fde(pred: np.ndarray, clip: Clip, warmup: int) -> float:
    """Mean error at each agent's last valid frame."""
    mask = valid_mask(pred, clip, warmup)
    errs = []
    for n in np.flatnonzero(mask.any(0)):
        t = int(np.flatnonzero(mask[:, n])[-1])
        errs.append(float(np.linalg.norm(pred[t, n] - clip.positions[t, n])))
    return float(np.mean(errs)) if errs else float("nan")


def summarize(pred: np.ndarray, clip: Clip, warmup: int, stride: int = 1) -> tuple[dict[str, float], Curves]:
    """The metrics row of one rollout plus its curves."""
    c = curves(pred, clip, warmup, stride)
    mask = valid_mask(pred, clip, warmup)
    err = np.linalg.norm(pred - clip.positions, axis=-1)[mask]
    row = {
        "MAE": float(err.mean()) if err.size else float("nan"),
        "OT": float(c.ot.mean()) if len(c.ot) else float("nan"),
        "MMD": float(c.mmd.mean()) if len(c.mmd) else float("nan"),
        "FDE": fde(pred, clip, warmup),
        "collisions": collision_rate(pred, 0.5, stride),
        "wall_crossings": wall_crossings(pred, clip.walls()) / max(1, int(mask.any(0).sum())),
        "valid_pairs": int(mask.sum()),
    }
    return row, c
