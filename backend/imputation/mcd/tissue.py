"""Synthetic multiplexed-tissue panels for the MCD page, with the generator's noise-free mean as the ceiling.

A stand-in for imaging mass cytometry (IMC) panels, which are not available offline (MCD, "Controllable diffusion for
multi-channel biological data", tansey-lab). Each image is ``size x size`` pixels with ``C = 12`` marker channels:

1. Cells: a Voronoi tessellation of Poisson-scattered seeds (about one cell per 26 pixels).
2. Cell types (tumour, T cell, B cell, macrophage, stroma) drawn from a softmax of smooth random fields at each seed,
   so that types cluster into regions (tumour nests, immune aggregates, stroma bands): spatial context is informative.
3. Per-cell states: a CD8 / CD4 split of T cells, proliferation (Ki67), and log-normal per-cell intensities shared by
   co-localised markers (panCK with E-cadherin, CD3 with CD8). Mutually exclusive markers never share a cell type
   (CD3 vs CD20, panCK vs CD68). Neighbourhood effects: PD-L1 on tumour cells and macrophages grows with the share of
   T cells among the cell's Voronoi neighbours; HLA-DR on CD8 T cells grows with neighbouring tumour cells.
4. Sub-cellular patterns: nuclear (Gaussian around the seed), membrane (Gaussian in the distance to the Voronoi
   boundary) and cytoplasmic (the whole cell, dimmer in the nucleus), then a Gaussian point-spread blur.
5. Noise: heteroscedastic Gaussian, std ``0.04 + 0.12 * mean``, clipped at zero.

:func:`generate` returns the noisy panels (what every method sees) and the noise-free blurred means. The mean given the
full latent state (cell map, types, per-cell states) is the Bayes-optimal predictor given the latents; no predictor
from observed channels can beat it in expected squared error, so its Pearson r with the noisy panel is the ceiling
reported next to every method (:func:`bayes_ceiling`). The exact posterior mean given only observed channels
(integrating over the latents) has no closed form and is left out.

:func:`cell_vectors` reduces images to per-cell mean vectors ``(n_cells, C, 1, 1)``: the H = W = 1 (single-cell) case.

Shapes: panels ``(N, C, H, W)`` float32; ``labels`` ``(N, H, W)`` int cell ids; ``types`` per image ``(n_cells,)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter

CHANNELS = ("DNA", "panCK", "E-cadherin", "CD3", "CD8", "CD20", "CD68", "SMA", "Vimentin", "Ki67", "PD-L1",
            "HLA-DR")
CELL_TYPES = ("tumour", "T cell", "B cell", "macrophage", "stroma")
C = len(CHANNELS)
NUC, MEM, CYT = 0, 1, 2
# channel -> sub-cellular pattern
PATTERN = np.array([NUC, CYT, MEM, MEM, MEM, MEM, CYT, CYT, CYT, NUC, MEM, MEM])
# base expression per (cell type, channel); per-cell states modulate these (see _cell_intensity)
BASE = np.array([
    # DNA panCK Ecad CD3  CD8  CD20 CD68 SMA  Vim  Ki67 PDL1 HLADR
    [1.0, 1.0, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.05, 0.0, 0.0, 0.05],  # tumour
    [1.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.1],  # T cell (CD8 is a per-cell state)
    [1.1, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.2, 0.05, 0.0, 0.8],  # B cell
    [0.8, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 0.0, 0.0, 0.7],  # macrophage
    [0.7, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9, 1.0, 0.0, 0.0, 0.0],  # stroma
], dtype=np.float64)
PRESETS = ("tissue-0", "tissue-1", "tissue-2", "tissue-3")
TRAIN_SEED, VAL_SEED, TEST_SEED = 0, 7_000, 9_000


@dataclass(frozen=True)
class TissueConfig:
    size: int = 32
    cell_area: float = 26.0  # pixels per cell
    nucleus_sigma: float = 1.1
    membrane_sigma: float = 0.55
    blur_sigma: float = 0.6
    noise_floor: float = 0.04
    noise_gain: float = 0.12
    region_scale: float = 7.0  # correlation length of the type fields (pixels)
    region_beta: float = 3.0  # sharpness of the type softmax


@dataclass
class Panels:
    """Noisy panels ``x`` (N, C, H, W), noise-free means ``mean`` (the ceiling), cell ids ``labels`` (N, H, W) and
    per-image cell types ``types`` (list of (n_cells,) arrays)."""

    x: np.ndarray
    mean: np.ndarray
    labels: np.ndarray
    types: list[np.ndarray]


def _voronoi(rng: np.random.Generator, cfg: TissueConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    s = cfg.size
    n = max(4, rng.poisson(s * s / cfg.cell_area))
    seeds = rng.uniform(-0.5, s - 0.5, size=(n, 2))
    yy, xx = np.mgrid[0:s, 0:s]
    pix = np.stack([yy.ravel(), xx.ravel()], 1).astype(np.float64)
    d = np.sqrt(((pix[:, None, :] - seeds[None]) ** 2).sum(-1))  # (P, n)
    order = np.argsort(d, axis=1)[:, :2]
    d1 = np.take_along_axis(d, order[:, :1], 1)[:, 0]
    d2 = np.take_along_axis(d, order[:, 1:2], 1)[:, 0]
    lab = order[:, 0]
    # neighbours: cells that are each other's second-nearest somewhere (they share a boundary)
    adj = np.zeros((n, n), bool)
    adj[order[:, 0], order[:, 1]] = True
    adj |= adj.T
    return seeds, lab.reshape(s, s), np.stack([d1, (d2 - d1) / 2]).reshape(2, s, s), adj


def _types(rng: np.random.Generator, seeds: np.ndarray, cfg: TissueConfig) -> np.ndarray:
    s = cfg.size
    k = len(CELL_TYPES)
    fields = gaussian_filter(rng.standard_normal((k, s + 8, s + 8)), sigma=(0, cfg.region_scale, cfg.region_scale),
                             mode="wrap")
    fields /= fields.reshape(k, -1).std(1)[:, None, None] + 1e-9
    iy = np.clip(np.round(seeds[:, 0]).astype(int) + 4, 0, s + 7)
    ix = np.clip(np.round(seeds[:, 1]).astype(int) + 4, 0, s + 7)
    logits = cfg.region_beta * fields[:, iy, ix].T + np.log([0.34, 0.2, 0.12, 0.14, 0.2])
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    u = rng.uniform(size=(len(seeds), 1))
    return (u > np.cumsum(p, 1)).sum(1).clip(0, k - 1)


def _cell_intensity(rng: np.random.Generator, types: np.ndarray, adj: np.ndarray) -> np.ndarray:
    n = len(types)
    amp = BASE[types].copy()  # (n, C)
    shared = np.exp(0.35 * rng.standard_normal((n, 3)))  # co-localised groups share one log-normal factor
    amp[:, [1, 2]] *= shared[:, :1]
    amp[:, [3, 4]] *= shared[:, 1:2]
    amp[:, [6, 11]] *= shared[:, 2:3]
    amp *= np.exp(0.2 * rng.standard_normal((n, C)))  # independent per-marker variation
    tcell = types == 1
    cd8 = tcell & (rng.uniform(size=n) < 0.5)
    amp[cd8, 4] = 0.9 * shared[cd8, 1]
    prolif = rng.uniform(size=n) < np.where(types == 0, 0.35, np.where(tcell, 0.1, 0.02))
    amp[prolif, 9] = np.exp(0.25 * rng.standard_normal(prolif.sum()))
    deg = adj.sum(1).clip(min=1)
    t_share = (adj & tcell[None]).sum(1) / deg
    tum_share = (adj & (types == 0)[None]).sum(1) / deg
    pdl1 = (types == 0) | (types == 3)
    amp[pdl1, 10] = 1.6 * t_share[pdl1]  # induced by neighbouring T cells
    gzmb = cd8 & (tum_share > 0)
    amp[gzmb, 11] += 0.8 * tum_share[gzmb]  # activated CD8 next to tumour also raise HLA-DR
    return amp


def _profiles(dist: np.ndarray, cfg: TissueConfig) -> np.ndarray:
    d1, b = dist
    nuc = np.exp(-(d1**2) / (2 * cfg.nucleus_sigma**2))
    mem = np.exp(-(b**2) / (2 * cfg.membrane_sigma**2))
    cyt = 1.0 - 0.6 * nuc
    return np.stack([nuc, mem, cyt])  # (3, H, W)


def one_image(rng: np.random.Generator, cfg: TissueConfig = TissueConfig()) -> tuple[np.ndarray, ...]:
    """One panel: (noisy (C,H,W), mean (C,H,W), labels (H,W), types (n,))."""
    seeds, lab, dist, adj = _voronoi(rng, cfg)
    types = _types(rng, seeds, cfg)
    amp = _cell_intensity(rng, types, adj)  # (n, C)
    prof = _profiles(dist, cfg)[PATTERN]  # (C, H, W)
    mean = amp[lab].transpose(2, 0, 1) * prof + 0.02
    mean = gaussian_filter(mean, sigma=(0, cfg.blur_sigma, cfg.blur_sigma), mode="nearest")
    noisy = mean + (cfg.noise_floor + cfg.noise_gain * mean) * rng.standard_normal(mean.shape)
    return noisy.clip(min=0).astype(np.float32), mean.astype(np.float32), lab, types


def generate(n: int, seed: int, cfg: TissueConfig = TissueConfig()) -> Panels:
    """``n`` panels from one seed (image i uses ``default_rng([seed, i])``: any prefix is reproducible)."""
    xs, ms, ls, ts = [], [], [], []
    for i in range(n):
        x, m, lab, t = one_image(np.random.default_rng([seed, i]), cfg)
        xs.append(x)
        ms.append(m)
        ls.append(lab)
        ts.append(t)
    return Panels(np.stack(xs), np.stack(ms), np.stack(ls), ts)


def preset(name: str) -> Panels:
    """A named example panel (one image of the test seed range)."""
    from backend.registry import choose

    i = PRESETS.index(choose(name, PRESETS, "preset"))
    x, m, lab, t = one_image(np.random.default_rng([TEST_SEED + 500, i]))
    return Panels(x[None], m[None], lab[None], [t])


def cell_vectors(p: Panels, use_mean: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell mean expression: (noisy vectors, noise-free vectors), each ``(n_cells, C, 1, 1)``."""
    xs, ms = [], []
    for x, m, lab in zip(p.x, p.mean, p.labels, strict=True):
        ids = lab.ravel()
        cnt = np.bincount(ids)
        keep = cnt >= 3
        for src, dst in ((x, xs), (m, ms)):
            flat = src.reshape(C, -1)
            s = np.stack([np.bincount(ids, weights=flat[c], minlength=len(cnt)) for c in range(C)], 1)
            dst.append((s[keep] / cnt[keep, None]).astype(np.float32))
    out = np.concatenate(ms if use_mean else xs)[:, :, None, None]
    return out, np.concatenate(ms)[:, :, None, None]


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson r of two arrays (flattened); 0 when either is constant."""
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    a = a - a.mean()
    b = b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 1e-12 else 0.0


def per_channel_r(pred: np.ndarray, true: np.ndarray, channels: list[int]) -> dict[int, float]:
    """Mean over images of the per-image Pearson r, per channel. ``pred``/``true``: (N, C, H, W). With H = W = 1 the
    r is over the N vectors instead (one number per channel)."""
    if pred.shape[-1] * pred.shape[-2] == 1:
        return {c: pearson(pred[:, c], true[:, c]) for c in channels}
    return {c: float(np.mean([pearson(pred[i, c], true[i, c]) for i in range(len(pred))])) for c in channels}


def per_image_r(pred: np.ndarray, true: np.ndarray, channels: list[int]) -> np.ndarray:
    """(N, len(channels)) per-image Pearson r; with H = W = 1 one row over the N vectors."""
    if pred.shape[-1] * pred.shape[-2] == 1:
        return np.array([[pearson(pred[:, c], true[:, c]) for c in channels]])
    return np.array([[pearson(pred[i, c], true[i, c]) for c in channels] for i in range(len(pred))])


def bayes_ceiling(p: Panels, channels: list[int]) -> dict[int, float]:
    """Pearson r of the noise-free mean (Bayes-optimal given the latent cell map and states) with the noisy panel."""
    return per_channel_r(p.mean, p.x, channels)
