"""Metrics of trajectory grids (numpy). A grid is ``[G, G, T, 2]`` displacements in pixels; a set of samples is
``[K, G, G, T, 2]``.

- :func:`mse`: mean over points and steps of the squared displacement error (px^2).
- :func:`best_of_k`: the smallest :func:`mse` of K samples against the truth.
- :func:`lrtl`: ``||M - rank-r SVD(M)||_F`` of a trajectory matrix ``M`` (points x 2T). A 2-D rigid body's points
  move as ``R(t) p + c(t)``, so its matrix is ``[p_x, p_y, 1] @ C`` with rank at most 3: :func:`object_lrtl` sums
  the rank-3 residuals over the scene's objects (root of the sum of squares). :func:`grid_lrtl` is the paper's
  whole-grid form (rank 5), used where no object segments are known (an uploaded image).
- :func:`coverage`: the share of a scene's possible outcomes that some sample reaches (its MSE to the outcome below
  ``tau`` times the MSE between the outcomes).
- :func:`motion_features` and :func:`frechet`: a Frechet distance between Gaussians fitted to pooled motion
  features (the displacement averaged over 2 x 2 regions of the grid at the middle and last step: 16 numbers).
"""

from __future__ import annotations

import numpy as np

TAU = 0.2


def mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2).sum(-1).mean())


def best_of_k(samples: np.ndarray, truth: np.ndarray) -> float:
    return min(mse(s, truth) for s in samples)


def lrtl(m: np.ndarray, rank: int) -> float:
    """``||M - rank-r SVD(M)||_F`` of a matrix ``[n, d]``."""
    m = np.asarray(m, np.float64)
    if min(m.shape) <= rank:
        return 0.0
    s = np.linalg.svd(m, compute_uv=False)
    return float(np.sqrt((s[rank:] ** 2).sum()))


def trajectory_matrix(traj: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """``[G, G, T, 2]`` -> ``[points, 2T]`` (the points of ``mask`` only, if given)."""
    t = traj.shape[-2]
    pts = traj[mask] if mask is not None else traj.reshape(-1, t, 2)
    return pts.reshape(pts.shape[0], 2 * t)


def object_lrtl(traj: np.ndarray, segments: np.ndarray) -> float:
    """Rank-3 LRTL per object of ``segments`` (``[G, G]``, 0 = static), combined as a root sum of squares."""
    total = 0.0
    for k in np.unique(segments):
        if k == 0:
            continue
        total += lrtl(trajectory_matrix(traj, segments == k), 3) ** 2
    return float(np.sqrt(total))


def grid_lrtl(traj: np.ndarray) -> float:
    """The whole grid's rank-5 LRTL (the paper's form)."""
    return lrtl(trajectory_matrix(traj), 5)


def deform(traj: np.ndarray, mask: np.ndarray, amount: float) -> np.ndarray:
    """``traj`` plus a non-rigid bend of the points of ``mask``: with ``u, v`` a point's offset from the object's
    centre (in grid strides) and ``r = t / T``, it moves by ``amount * sum_j phi_j(u, v) psi_j(t)`` over the five
    quadratic and cubic monomials ``u^2, v^2, u v, u^2 v, u v^2``, each with its own time profile ``r^(j+1)`` on x or
    y: a motion of rank 5 in the points that no rotation or translation (rank 3) absorbs."""
    out = np.array(traj, np.float64)
    ij = np.argwhere(mask).astype(np.float64)
    if len(ij) == 0:
        return out
    v, u = (ij - ij.mean(0)).T
    t = traj.shape[-2]
    r = np.arange(1, t + 1) / t
    for j, phi in enumerate((u * u, v * v, u * v, u * u * v, u * v * v)):
        out[mask, :, j % 2] += amount * phi[:, None] * r[None, :] ** (j + 1)
    return out


def coverage(samples: np.ndarray, outcomes: np.ndarray, tau: float = TAU) -> float:
    """Share of ``outcomes`` ``[O, G, G, T, 2]`` reached by some sample (MSE < ``tau`` x the outcomes' spread)."""
    o = len(outcomes)
    if o < 2:
        return float(best_of_k(samples, outcomes[0]) < tau * max(mse(outcomes[0], 0 * outcomes[0]), 1e-9))
    spread = min(mse(outcomes[a], outcomes[b]) for a in range(o) for b in range(a + 1, o))
    return float(np.mean([best_of_k(samples, out) < tau * spread for out in outcomes]))


def motion_features(trajs: np.ndarray) -> np.ndarray:
    """``[N, G, G, T, 2]`` -> ``[N, 16]``: mean displacement of each 2 x 2 region at steps T/2 and T."""
    n, g, _, t, _ = trajs.shape
    h = g // 2
    steps = trajs[:, :, :, [t // 2 - 1, t - 1]]  # [N, G, G, 2, 2]
    pooled = steps[:, : 2 * h, : 2 * h].reshape(n, 2, h, 2, h, 2, 2).mean((2, 4))
    return pooled.reshape(n, -1)


def frechet(a: np.ndarray, b: np.ndarray) -> float:
    """Frechet distance between Gaussians fitted to feature sets ``[Na, D]`` and ``[Nb, D]``."""
    from scipy import linalg

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    mu = a.mean(0) - b.mean(0)
    ca = np.cov(a, rowvar=False) + 1e-6 * np.eye(a.shape[1])
    cb = np.cov(b, rowvar=False) + 1e-6 * np.eye(b.shape[1])
    root = linalg.sqrtm(ca @ cb)
    return float(mu @ mu + np.trace(ca + cb - 2 * np.real(root)))
