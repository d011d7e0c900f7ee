"""From per-pixel features to instance masks matched across views, the segmenters (IGGT, its per-view ablation and
the two baselines), and the multi-view metrics.

Clustering (:func:`cluster`): scikit-learn's HDBSCAN on a random subset of the pixels (``sample`` points; HDBSCAN's
cost grows faster than linearly), then every pixel joins the cluster whose mean is nearest (noise points too). A
segmenter returns *track labels* ``[V, H, W]`` (int, >= 0): pixels with the same label in different views are the same
instance, so the labels are the masks and their cross-view matches at once.

| name | label | kind | what |
|------|-------|------|------|
| ``iggt`` | IGGT features, joint HDBSCAN (ours) | ours | one HDBSCAN over the 8-d features of all views: a cluster spans views |
| ``iggt_per_view`` | IGGT features, per view + Hungarian | ablation | HDBSCAN per view, clusters matched across views by ``linear_sum_assignment`` on their mean features |
| ``dinov2_hungarian`` | DINOv2 clusters + Hungarian | baseline | HDBSCAN per view on the DINOv2 patch features (bilinearly upsampled, PCA to 16-d), matched by cosine of their mean features |
| ``colour_depth`` | Colour + predicted depth + Hungarian | baseline | HDBSCAN per view on colour, the network's predicted log depth and position, matched by mean colour |

(``SEGMENTERS``.) Metrics (:func:`track_metrics`), over the object instances of the ground truth (floor and sky are
not scored): a ground-truth *track* is an instance's masks in all views; predicted tracks are matched one to one to
ground-truth tracks by the Hungarian algorithm on their IoU over all views' pixels together. **T-mIoU** is the mean of
the matched IoU over the ground-truth tracks (0 for an unmatched one). **T-SR** is the share of ground-truth tracks
visible (at least ``min_pixels``) in two or more views whose matched track has IoU >= 0.5 in *every* view where the
instance is visible: the instance is segmented and tracked under one id through the views.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...registry import Registry


@dataclass(frozen=True)
class ClusterConfig:
    """HDBSCAN settings and the size of the clustered subset; ``match_cost`` is the largest matching cost a
    cross-view match may have in the per-view segmenters (in their own units)."""

    min_cluster_size: int = 20
    min_samples: int = 8
    sample: int = 2500
    seed: int = 0


def cluster(points: np.ndarray, cfg: ClusterConfig, seed_offset: int = 0) -> np.ndarray:
    """``points [N, D]`` -> labels ``[N]`` in ``0..k-1`` (every point assigned)."""
    from sklearn.cluster import HDBSCAN

    x = np.asarray(points, np.float32)
    n = len(x)
    rng = np.random.default_rng([cfg.seed, seed_offset])
    idx = rng.choice(n, size=min(cfg.sample, n), replace=False)
    sub = x[idx]
    lab = HDBSCAN(min_cluster_size=cfg.min_cluster_size, min_samples=cfg.min_samples, copy=True).fit_predict(sub)
    ids = [k for k in np.unique(lab) if k >= 0]
    if not ids:
        return np.zeros(n, np.int64)
    centres = np.stack([sub[lab == k].mean(0) for k in ids])
    d = ((x[:, None, :] - centres[None]) ** 2).sum(-1)
    return d.argmin(1).astype(np.int64)


def match_views(labels: list[np.ndarray], descriptors: list[np.ndarray], cost: Callable, max_cost: float) -> np.ndarray:
    """Per-view cluster labels (each ``[H, W]``, ids ``0..k_v-1``) with one descriptor row per cluster -> track
    labels ``[V, H, W]``. View 0's clusters start the tracks; each further view's clusters are matched to the tracks
    so far by ``linear_sum_assignment`` on ``cost(track_desc, view_desc)``; a match costlier than ``max_cost`` or an
    unmatched cluster starts a new track (a track's descriptor is the mean of its clusters')."""
    from scipy.optimize import linear_sum_assignment

    tracks: list[list[np.ndarray]] = [[d] for d in descriptors[0]]
    out = [labels[0].copy()]
    for lab, desc in zip(labels[1:], descriptors[1:], strict=True):
        tdesc = np.stack([np.mean(t, 0) for t in tracks])
        c = cost(tdesc, desc)
        rows, cols = linear_sum_assignment(c)
        new = np.full(len(desc), -1)
        for r, k in zip(rows, cols, strict=True):
            if c[r, k] <= max_cost:
                new[k] = r
                tracks[r].append(desc[k])
        for k in range(len(desc)):
            if new[k] < 0:
                new[k] = len(tracks)
                tracks.append([desc[k]])
        out.append(new[lab])
    return np.stack(out)


def _euclid(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sqrt(((a[:, None, :] - b[None]) ** 2).sum(-1))


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    an = a / (np.linalg.norm(a, axis=1, keepdims=True) + 1e-8)
    bn = b / (np.linalg.norm(b, axis=1, keepdims=True) + 1e-8)
    return 1.0 - an @ bn.T


def _per_view(points: np.ndarray, desc_points: np.ndarray, cfg: ClusterConfig, cost: Callable,
              max_cost: float) -> np.ndarray:
    """Cluster each view's ``points [V, H, W, D]`` separately, describe each cluster by the mean of
    ``desc_points [V, H, W, E]`` over it, and match across views."""
    v, h, w = points.shape[:3]
    labels, descs = [], []
    for j in range(v):
        lab = cluster(points[j].reshape(h * w, -1), cfg, seed_offset=j + 1)
        e = desc_points[j].reshape(h * w, -1)
        descs.append(np.stack([e[lab == k].mean(0) for k in range(lab.max() + 1)]))
        labels.append(lab.reshape(h, w))
    return match_views(labels, descs, cost, max_cost)


# ---------------------------------------------------------------------------------------------------- segmenters
@dataclass
class Inputs:
    """What a segmenter may read: ``rgb [V, H, W, 3]`` in [0, 1], ``dino [V, 16, 16, 384]``, the network's
    ``log_depth [V, H, W]`` and ``features [V, H, W, 8]``."""

    rgb: np.ndarray
    dino: np.ndarray
    log_depth: np.ndarray
    features: np.ndarray


def seg_iggt(x: Inputs, cfg: ClusterConfig) -> np.ndarray:
    v, h, w, d = x.features.shape
    return cluster(x.features.reshape(-1, d), cfg).reshape(v, h, w)


def seg_iggt_per_view(x: Inputs, cfg: ClusterConfig) -> np.ndarray:
    return _per_view(x.features, x.features, cfg, _euclid, 1.0)


def _dino_pixels(dino: np.ndarray, size: int) -> np.ndarray:
    """Patch features ``[V, P, P, C]`` -> bilinearly upsampled, L2-normalised ``[V, size, size, C]``."""
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(np.ascontiguousarray(dino, np.float32)).permute(0, 3, 1, 2)
    up = F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False).permute(0, 2, 3, 1).numpy()
    return up / (np.linalg.norm(up, axis=-1, keepdims=True) + 1e-8)


def seg_dinov2(x: Inputs, cfg: ClusterConfig) -> np.ndarray:
    v, h, w = x.rgb.shape[:3]
    up = _dino_pixels(x.dino, h)
    flat = up.reshape(-1, up.shape[-1])
    mean = flat.mean(0)
    sub = flat[:: max(1, len(flat) // 4000)] - mean
    _, vecs = np.linalg.eigh(sub.T @ sub)  # principal axes, ascending variance
    pca = ((flat - mean) @ vecs[:, ::-1][:, :16]).reshape(v, h, w, 16)
    return _per_view(pca, up, cfg, _cosine, 0.5)


def seg_colour_depth(x: Inputs, cfg: ClusterConfig) -> np.ndarray:
    v, h, w = x.rgb.shape[:3]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32) / max(h, w)
    pos = np.broadcast_to(np.stack([yy, xx], -1), (v, h, w, 2))
    ld = x.log_depth[..., None]
    pts = np.concatenate([x.rgb, 1.5 * (ld - ld.mean()), 0.5 * pos], -1).astype(np.float32)
    return _per_view(pts, x.rgb, cfg, _euclid, 0.25)


SEGMENTERS: Registry[Callable[[Inputs, ClusterConfig], np.ndarray]] = Registry("segmenter")
SEGMENTERS.add("iggt", seg_iggt, label="IGGT features, joint HDBSCAN (ours)", kind="ours",
               about="one HDBSCAN over the learned 8-d features of all views; a cluster spans views")
SEGMENTERS.add("iggt_per_view", seg_iggt_per_view, label="IGGT features, per view + Hungarian", kind="ablation",
               about="HDBSCAN per view on the learned features, clusters matched across views by the Hungarian "
                     "algorithm on their mean features")
SEGMENTERS.add("dinov2_hungarian", seg_dinov2, label="DINOv2 clusters + Hungarian", kind="baseline",
               about="HDBSCAN per view on DINOv2 patch features, matched across views by the Hungarian algorithm "
                     "on the cosine of their mean features")
SEGMENTERS.add("colour_depth", seg_colour_depth, label="Colour + predicted depth + Hungarian", kind="baseline",
               about="HDBSCAN per view on colour, the network's predicted depth and position, matched across "
                     "views by mean colour")


# ------------------------------------------------------------------------------------------------------- metrics
def track_metrics(pred: np.ndarray, gt: np.ndarray, min_pixels: int = 20) -> dict:
    """T-mIoU and T-SR of track labels ``pred [V, H, W]`` against instance ids ``gt [V, H, W]`` (0 not scored); see
    the module docstring. Returns ``t_miou``, ``t_sr`` (None when no instance is visible in two views),
    ``instances`` (per ground-truth id: matched track, IoU, views visible, success) and ``matches`` (gt id -> track)."""
    from scipy.optimize import linear_sum_assignment

    gt_ids = [int(k) for k in np.unique(gt) if k > 0]
    tr_ids = [int(k) for k in np.unique(pred)]
    if not gt_ids:
        return {"t_miou": None, "t_sr": None, "instances": [], "matches": {}}
    g = np.stack([(gt == k).reshape(-1) for k in gt_ids]).astype(np.float32)
    p = np.stack([(pred == k).reshape(-1) for k in tr_ids]).astype(np.float32)
    inter = g @ p.T
    union = g.sum(1)[:, None] + p.sum(1)[None, :] - inter
    iou = inter / np.maximum(union, 1)
    rows, cols = linear_sum_assignment(-iou)
    match = {gt_ids[r]: tr_ids[c] for r, c in zip(rows, cols, strict=True) if iou[r, c] > 0}
    inst, successes = [], []
    for r, k in enumerate(gt_ids):
        t = match.get(k)
        m_iou = float(iou[r, tr_ids.index(t)]) if t is not None else 0.0
        vis = [j for j in range(gt.shape[0]) if (gt[j] == k).sum() >= min_pixels]
        ok = None
        if len(vis) >= 2:
            ok = t is not None and all(
                ((gt[j] == k) & (pred[j] == t)).sum() / max(((gt[j] == k) | (pred[j] == t)).sum(), 1) >= 0.5
                for j in vis)
            successes.append(ok)
        inst.append({"gt": k, "track": t, "iou": round(m_iou, 4), "views_visible": len(vis), "success": ok})
    return {"t_miou": float(np.mean([i["iou"] for i in inst])),
            "t_sr": float(np.mean(successes)) if successes else None,
            "instances": inst, "matches": {str(k): v for k, v in match.items()}}


def pair_distances(features: np.ndarray, gt: np.ndarray, per_instance: int = 64, seed: int = 0) -> np.ndarray:
    """Distances between the features of same-instance pixels in *different* views (objects only): up to
    ``per_instance`` random pixels per instance and view, all cross-view pairs. ``features [V, H, W, D]``."""
    rng = np.random.default_rng(seed)
    v = gt.shape[0]
    out = []
    for k in [int(k) for k in np.unique(gt) if k > 0]:
        picks = []
        for j in range(v):
            ys, xs = np.nonzero(gt[j] == k)
            if len(ys):
                sel = rng.choice(len(ys), size=min(per_instance, len(ys)), replace=False)
                picks.append(features[j, ys[sel], xs[sel]])
            else:
                picks.append(None)
        for a in range(v):
            for b in range(a + 1, v):
                if picks[a] is not None and picks[b] is not None:
                    out.append(_euclid(picks[a], picks[b]).ravel())
    return np.concatenate(out) if out else np.zeros(0)
