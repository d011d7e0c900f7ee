"""Small, model-agnostic feature utilities shared by pages (no streamlit, no plotly)."""

from __future__ import annotations

import numpy as np


def pca_rgb(features: np.ndarray, grid: tuple[int, int], n_components: int = 3) -> np.ndarray:
    """Project patch features on their first three principal components and map them to colours.

    Args:
        features: ``[N, C]`` patch features (N = grid[0] * grid[1], row-major).
        grid: ``(rows, cols)`` of the patch grid.
    Returns:
        ``[rows, cols, 3]`` float array in [0, 1]; each component is min-max scaled over the image (robust 1-99%).
    """
    feats = np.asarray(features, dtype=np.float64)
    rows, cols = grid
    if feats.ndim != 2 or feats.shape[0] != rows * cols:
        raise ValueError(f"features {feats.shape} do not match grid {grid}")
    centred = feats - feats.mean(axis=0, keepdims=True)
    # principal axes from the SVD; sign fixed so the largest |loading| is positive (deterministic colours)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:n_components]
    signs = np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])
    proj = centred @ (axes * signs[:, None]).T
    lo, hi = np.percentile(proj, 1, axis=0), np.percentile(proj, 99, axis=0)
    scaled = np.clip((proj - lo) / np.maximum(hi - lo, 1e-12), 0.0, 1.0)
    if scaled.shape[1] < 3:
        scaled = np.pad(scaled, ((0, 0), (0, 3 - scaled.shape[1])))
    return scaled.reshape(rows, cols, 3)
