"""The pure entry points of IGGT: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_segment` ``(SegmentConfig, photos=None)`` -> :class:`SegmentResult`: 2-4 views of one scene (rendered
  from a split, with ground truth; or the user's photos, without), the network's depth and features, every
  segmenter's track labels with their masks and cross-view matches, T-mIoU / T-SR where ground truth exists, a PCA
  of the features, costs.
- :func:`run_eval` ``(EvalConfig)`` -> :class:`EvalResult`: T-mIoU / T-SR of every segmenter over scenes of the
  held-out splits and over the shipped seeds (per scene, for paired comparisons), the share of same-instance
  cross-view pixel pairs within the margin, depth AbsRel, times.

The configs are frozen and check themselves (:class:`backend.errors.InputError`); the results are small dataclasses
(``to_dict()`` is JSON-able). ``encoder`` (DINOv2) and ``models`` (seed -> network) may be passed in already loaded (the
page caches them); None loads the shipped ones.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, report
from .data import MAX_VIEWS, MIN_VIEWS, SPLIT_LABELS, SPLITS

SEEDS = (0, 1, 2)
HELDOUT = ("heldout_shape", "heldout_texture", "heldout_colour")
PHOTOS = "photos"
MAX_SCENE = 9999


def _methods(names: Any) -> tuple[str, ...]:
    from .segment import SEGMENTERS

    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if not names:
        return tuple(SEGMENTERS)
    return tuple(SEGMENTERS.key(n) for n in names)


@dataclass(frozen=True)
class SegmentConfig:
    """One scene: ``views`` views of scene ``scene`` of ``split`` (a split of :data:`backend.scenes.iggt.data.SPLITS`,
    or ``photos`` for uploaded photos), segmented with the network of training seed ``seed`` by ``methods`` (all by
    default); HDBSCAN's ``min_cluster_size`` on a subset of ``sample`` pixels (clustering seed ``cluster_seed``)."""

    split: str = "heldout_shape"
    scene: int = 0
    views: int = 2
    seed: int = 0
    methods: tuple[str, ...] = ()
    min_cluster_size: int = 20
    sample: int = 2500
    cluster_seed: int = 0

    def __post_init__(self) -> None:
        from ...registry import choose

        object.__setattr__(self, "split", choose(self.split, [*SPLITS, PHOTOS], "scene split"))
        object.__setattr__(self, "methods", _methods(self.methods))
        if not 0 <= int(self.scene) <= MAX_SCENE:
            raise InputError(f"The scene index must be 0-{MAX_SCENE}; got {self.scene}.")
        if not MIN_VIEWS <= int(self.views) <= MAX_VIEWS:
            raise InputError(f"Choose {MIN_VIEWS}-{MAX_VIEWS} views; got {self.views}.")
        if int(self.seed) not in SEEDS:
            raise InputError(f"The network seed must be one of {list(SEEDS)}; got {self.seed}.")
        if not 5 <= int(self.min_cluster_size) <= 500:
            raise InputError(f"min_cluster_size must be 5-500; got {self.min_cluster_size}.")
        if not 200 <= int(self.sample) <= 20_000:
            raise InputError(f"The clustered subset must be 200-20,000 pixels; got {self.sample}.")

    def cluster(self) -> Any:
        from .segment import ClusterConfig

        return ClusterConfig(min_cluster_size=int(self.min_cluster_size), sample=int(self.sample),
                             seed=int(self.cluster_seed))


@dataclass
class SegmentResult:
    """See :func:`run_segment`. Arrays: ``images`` uint8 ``[V, 224, 224, 3]``; ``labels[method]`` int ``[V, 64, 64]``;
    ``depth_pred`` float32 ``[V, 64, 64]``; ``depth_true`` / ``instance_true`` (None for photos); ``pca`` uint8
    ``[V, 64, 64, 3]`` (the first three principal components of the features, over all views)."""

    config: dict
    source: str
    names: list[str]
    notes: list[str]
    metrics: dict[str, dict]
    tracks: dict[str, list[list[dict]]]
    labels_of: dict[str, str]
    costs: dict[str, Any]
    depth_absrel: float | None
    pairs_within_margin: float | None
    images: Any = None
    labels: dict[str, Any] = field(default_factory=dict)
    depth_pred: Any = None
    depth_true: Any = None
    instance_true: Any = None
    pca: Any = None

    def to_dict(self, arrays: bool = False) -> dict:
        """The JSON summary (``arrays=True`` adds the label maps as nested lists)."""
        out = {k: getattr(self, k) for k in ("config", "source", "names", "notes", "metrics", "tracks", "labels_of",
                                             "costs", "depth_absrel", "pairs_within_margin")}
        if arrays:
            out["label_maps"] = {k: np.asarray(v).tolist() for k, v in self.labels.items()}
        return out


def load_models(seeds: tuple[int, ...] = SEEDS) -> dict[int, Any]:
    """The shipped networks, seed -> :class:`backend.scenes.iggt.model.IGGTNet`."""
    from .learn import load_model

    return {int(s): load_model(int(s)) for s in seeds}


def _encoder(encoder: Any) -> Any:
    if encoder is not None:
        return encoder
    from ...models import load

    return load("dinov2")


def track_summary(labels: np.ndarray) -> list[list[dict]]:
    """Per view, the tracks present: ``{"track", "pixels", "bbox": [row0, col0, row1, col1]}`` (largest first)."""
    out = []
    for lab in labels:
        rows = []
        for t in np.unique(lab):
            ys, xs = np.nonzero(lab == t)
            rows.append({"track": int(t), "pixels": int(len(ys)),
                         "bbox": [int(ys.min()), int(xs.min()), int(ys.max()), int(xs.max())]})
        out.append(sorted(rows, key=lambda r: -r["pixels"]))
    return out


def pca_image(features: np.ndarray) -> np.ndarray:
    """``[V, H, W, D]`` -> uint8 ``[V, H, W, 3]``: the first three principal components over all views, each scaled
    to [0, 255] by its 1st-99th percentile (one scale for every view)."""
    v, h, w, d = features.shape
    x = features.reshape(-1, d).astype(np.float64)
    x = x - x.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    p = x @ vt[:3].T
    if p.shape[1] < 3:
        p = np.pad(p, ((0, 0), (0, 3 - p.shape[1])))
    lo, hi = np.percentile(p, 1, axis=0), np.percentile(p, 99, axis=0)
    p = np.clip((p - lo) / np.maximum(hi - lo, 1e-9), 0, 1)
    return (p * 255 + 0.5).astype(np.uint8).reshape(v, h, w, 3)


def _segment_all(vs: Any, model: Any, methods: tuple[str, ...], ccfg: Any,
                 token: CancelToken | None = None) -> tuple[np.ndarray, np.ndarray, dict, dict, float]:
    """Network + every segmenter on one :class:`ViewSet`: log depth, features, labels, seconds per method."""
    from .learn import predict
    from .segment import SEGMENTERS, Inputs

    t0 = time.perf_counter()
    ld, f = predict(model, vs.dino, vs.rgb)
    net_s = time.perf_counter() - t0
    x = Inputs(vs.rgb, vs.dino, ld, f)
    labels, secs = {}, {}
    for m in methods:
        if token is not None:
            token.check()
        t0 = time.perf_counter()
        labels[m] = SEGMENTERS.get(m)(x, ccfg)
        secs[m] = time.perf_counter() - t0
    return ld, f, labels, secs, net_s


def run_segment(config: SegmentConfig, photos: list[Any] | None = None, photo_names: tuple[str, ...] = (),
                encoder: Any = None, models: dict[int, Any] | None = None, progress: Progress | None = None,
                token: CancelToken | None = None) -> SegmentResult:
    """See the module docstring. ``photos``: PIL images (the ``photos`` split only)."""
    from .data import photo_viewset, rendered_viewset
    from .learn import load_model
    from .model import LossConfig, count_parameters
    from .segment import SEGMENTERS, pair_distances, track_metrics

    progress = checked(progress, token)
    if config.split == PHOTOS and not photos:
        raise InputError(f"Upload {MIN_VIEWS}-{MAX_VIEWS} photos of one scene (none given).")
    if config.split != PHOTOS and photos:
        raise InputError("Photos are read only with the 'photos' split.")
    report(progress, 0.0, "Loading DINOv2")
    enc = _encoder(encoder)
    model = (models or {}).get(int(config.seed)) or load_model(int(config.seed))
    report(progress, 0.1, "DINOv2 features")
    t0 = time.perf_counter()
    notes: list[str] = []
    if config.split == PHOTOS:
        vs, notes = photo_viewset(list(photos), enc, tuple(photo_names))
        notes.append("Photos are out of distribution: the network was trained only on renders of boxes and "
                     "spheres on a plain floor, so its depth and instance features on real photos are not "
                     "validated here.")
    else:
        vs = rendered_viewset(config.split, int(config.scene), int(config.views), enc)
    dino_s = time.perf_counter() - t0
    report(progress, 0.5, "Network and clustering")
    ld, f, labels, secs, net_s = _segment_all(vs, model, config.methods, config.cluster(), token)
    metrics: dict[str, dict] = {}
    absrel = within = None
    if vs.instance is not None:
        for m, lab in labels.items():
            tm = track_metrics(lab, vs.instance)
            metrics[m] = {"t_miou": tm["t_miou"], "t_sr": tm["t_sr"], "matches": tm["matches"],
                          "instances": tm["instances"]}
        ok = np.isfinite(vs.depth)
        absrel = round(float(np.mean(np.abs(np.exp(ld[ok]) - vs.depth[ok]) / vs.depth[ok])), 4)
        dist = pair_distances(f, vs.instance, seed=int(config.cluster_seed))
        within = round(float((dist < LossConfig().margin).mean()), 4) if dist.size else None
    report(progress, 1.0, "done")
    cfg = asdict(config)
    cfg["methods"] = list(config.methods)
    return SegmentResult(
        config=cfg, source="photos" if config.split == PHOTOS else SPLIT_LABELS[config.split],
        names=list(vs.names), notes=notes, metrics=metrics,
        tracks={m: track_summary(lab) for m, lab in labels.items()},
        labels_of={m: SEGMENTERS.label(m) for m in labels},
        costs={"dinov2_s": round(dino_s, 3), "network_s": round(net_s, 3),
               "segment_s": {m: round(s, 3) for m, s in secs.items()},
               "network_parameters": count_parameters(model), "dinov2_parameters": 22_056_576},
        depth_absrel=absrel, pairs_within_margin=within, images=vs.images,
        labels={m: lab.astype(np.int32) for m, lab in labels.items()}, depth_pred=np.exp(ld).astype(np.float32),
        depth_true=vs.depth, instance_true=vs.instance, pca=pca_image(f))


# -------------------------------------------------------------------------------------------------- evaluation
@dataclass(frozen=True)
class EvalConfig:
    """Scenes ``first .. first + scenes - 1`` of each split in ``splits`` with ``views`` views, every network of
    ``seeds``, every segmenter of ``methods``."""

    splits: tuple[str, ...] = HELDOUT
    scenes: int = 6
    first: int = 0
    views: int = 3
    seeds: tuple[int, ...] = SEEDS
    methods: tuple[str, ...] = ()
    min_cluster_size: int = 20
    sample: int = 2500

    def __post_init__(self) -> None:
        from ...registry import choose

        object.__setattr__(self, "splits", tuple(choose(s, SPLITS, "scene split") for s in self.splits))
        object.__setattr__(self, "methods", _methods(self.methods))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        if not self.splits or not self.seeds:
            raise InputError("Choose at least one split and one seed.")
        if any(s not in SEEDS for s in self.seeds):
            raise InputError(f"Seeds must be among {list(SEEDS)}; got {list(self.seeds)}.")
        if not 1 <= int(self.scenes) <= 200:
            raise InputError(f"scenes must be 1-200; got {self.scenes}.")
        if not MIN_VIEWS <= int(self.views) <= MAX_VIEWS:
            raise InputError(f"Choose {MIN_VIEWS}-{MAX_VIEWS} views; got {self.views}.")


@dataclass
class EvalResult:
    """Per split: ``per_scene[split][seed][method]`` = {``t_miou``: [scenes], ``t_sr``: [scenes, None where no
    instance is visible in two views]}; ``pairs_within_margin[split][seed]`` and ``pairs_beyond_margin`` (different
    instances) per scene; ``depth_absrel[split][seed]`` per scene; ``summary[split][method]`` = mean T-mIoU / T-SR
    over seeds and scenes; ``seconds[method]`` mean per scene."""

    config: dict
    per_scene: dict
    pairs_within_margin: dict
    pairs_beyond_margin: dict
    depth_absrel: dict
    summary: dict
    labels: dict
    seconds: dict

    def to_dict(self) -> dict:
        return asdict(self)


def _cross_pairs_beyond(features: np.ndarray, gt: np.ndarray, margin: float, seed: int) -> float | None:
    """Share of cross-view pixel pairs of *different* objects whose feature distance is at least ``margin``."""
    rng = np.random.default_rng(seed)
    v = gt.shape[0]
    ids = [int(k) for k in np.unique(gt) if k > 0]
    picks = {}
    for j in range(v):
        for k in ids:
            ys, xs = np.nonzero(gt[j] == k)
            if len(ys):
                sel = rng.choice(len(ys), size=min(32, len(ys)), replace=False)
                picks[(j, k)] = features[j, ys[sel], xs[sel]]
    out = []
    for (j, k), a in picks.items():
        for (j2, k2), b in picks.items():
            if j < j2 and k != k2:
                out.append(np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)).ravel())
    return float((np.concatenate(out) >= margin).mean()) if out else None


def run_eval(config: EvalConfig, encoder: Any = None, models: dict[int, Any] | None = None,
             progress: Progress | None = None, token: CancelToken | None = None) -> EvalResult:
    """See the module docstring."""
    from .data import rendered_viewset
    from .model import LossConfig
    from .segment import SEGMENTERS, ClusterConfig, pair_distances, track_metrics

    progress = checked(progress, token)
    enc = _encoder(encoder)
    models = models or load_models(config.seeds)
    margin = LossConfig().margin
    per_scene: dict = {}
    within: dict = {}
    beyond: dict = {}
    absrel: dict = {}
    secs: dict[str, list[float]] = {m: [] for m in config.methods}
    total = len(config.splits) * config.scenes
    done = 0
    for split in config.splits:
        per_scene[split] = {str(s): {m: {"t_miou": [], "t_sr": []} for m in config.methods} for s in config.seeds}
        within[split] = {str(s): [] for s in config.seeds}
        beyond[split] = {str(s): [] for s in config.seeds}
        absrel[split] = {str(s): [] for s in config.seeds}
        for i in range(config.first, config.first + config.scenes):
            vs = rendered_viewset(split, i, config.views, enc)
            for s in config.seeds:
                ccfg = ClusterConfig(min_cluster_size=config.min_cluster_size, sample=config.sample, seed=i)
                ld, f, labels, sec, _ = _segment_all(vs, models[s], config.methods, ccfg, token)
                for m, lab in labels.items():
                    tm = track_metrics(lab, vs.instance)
                    per_scene[split][str(s)][m]["t_miou"].append(round(tm["t_miou"], 5))
                    per_scene[split][str(s)][m]["t_sr"].append(None if tm["t_sr"] is None else round(tm["t_sr"], 5))
                    secs[m].append(sec[m])
                dist = pair_distances(f, vs.instance, seed=i)
                within[split][str(s)].append(round(float((dist < margin).mean()), 5) if dist.size else None)
                beyond[split][str(s)].append(_cross_pairs_beyond(f, vs.instance, margin, i))
                ok = np.isfinite(vs.depth)
                absrel[split][str(s)].append(round(float(np.mean(np.abs(np.exp(ld[ok]) - vs.depth[ok])
                                                                  / vs.depth[ok])), 5))
            done += 1
            report(progress, done / total, f"{split}: scene {i + 1 - config.first}/{config.scenes}")
    summary = {split: {m: {"t_miou": _mean([x for s in config.seeds for x in per_scene[split][str(s)][m]["t_miou"]]),
                           "t_sr": _mean([x for s in config.seeds for x in per_scene[split][str(s)][m]["t_sr"]])}
                       for m in config.methods} for split in config.splits}
    cfg = asdict(config)
    return EvalResult(cfg, per_scene, within, beyond, absrel, summary, {m: SEGMENTERS.label(m) for m in config.methods},
                      {m: round(float(np.mean(v)), 4) for m, v in secs.items()})


def _mean(xs: list) -> float | None:
    v = [x for x in xs if x is not None]
    return round(float(np.mean(v)), 5) if v else None


def scene_means(res: EvalResult, split: str, method: str, metric: str) -> np.ndarray:
    """Per scene, the metric averaged over the seeds (NaN where no seed has a value): ``[scenes]``."""
    rows = [[np.nan if x is None else x for x in res.per_scene[split][str(s)][method][metric]]
            for s in res.config["seeds"]]
    arr = np.asarray(rows, dtype=float)
    with np.errstate(all="ignore"):
        return np.nanmean(arr, axis=0) if np.isfinite(arr).any() else np.full(arr.shape[1], np.nan)
