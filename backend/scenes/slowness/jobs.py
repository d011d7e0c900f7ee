"""The pure entry points of the temporal-slowness page: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_probe` ``(ProbeConfig)`` -> :class:`ProbeResult`: the shipped encoders of the 2 x 2 ablation (each arm,
  each seed) re-evaluated: linear-probe accuracy for object instance, category and background class on held-out
  photos, the category probe under foreground and background swaps, the paired gains of the central + temporal arm
  over the full-frame arm, and the costs.
- :func:`run_sweep` ``(SweepConfig)`` -> :class:`SweepResult`: probe accuracy of the central + temporal encoders
  trained with other crop sides (16-64 px; 64 = the whole frame) and other DeltaT (1-12 frames), seed 0.
- :func:`run_stream` ``(StreamConfig)`` -> :class:`StreamResult`: one clip of the egocentric stream with its
  saliency, gaze points, crops of the chosen side and sampled positive pairs of each kind (the page's frame strip).
- :func:`run_neighbours` ``(image, NeighbourConfig)`` -> :class:`NeighbourResult`: the nearest neighbours of an
  image among held-out scene photos and real photographs (scikit-image's), for each arm's encoder.

The configs are frozen and check themselves (:class:`backend.errors.InputError`); results are small summaries (the
pictures as uint8 arrays, the rest JSON-able through ``to_dict``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...runtime import ASSETS, CancelToken, Progress, checked, report

SEEDS = (0, 1, 2)  # the seeds shipped per arm
CROP, DELTA_T = 32, 3  # the ablation's crop side and DeltaT
SWEEP_CROPS = (16, 24, 32, 48)  # central + temporal, seed 0; 64 is the full-frame + temporal arm
SWEEP_DELTAS = (1, 3, 6, 12)
TRAIN_COMMAND = "python -m backend.train slowness"
MAX_PER_INSTANCE = 40


def weights_path(arm: str, crop: int, delta_t: int, seed: int) -> Path:
    """The shipped encoder of one training run: ``assets/slowness_<arm>_c<crop>_dt<delta_t>_s<seed>.safetensors``."""
    return ASSETS / f"slowness_{arm}_c{int(crop)}_dt{int(delta_t)}_s{int(seed)}.safetensors"


def load_encoder(arm: str, crop: int = CROP, delta_t: int = DELTA_T, seed: int = 0) -> tuple[Any, dict]:
    """A shipped encoder (float32, eval mode) and its metadata ``{"config", "quality", "extra"}``."""
    import torch

    from ... import weights
    from .learn import ARMS
    from .model import Encoder, ModelConfig

    arm = ARMS.key(arm)
    tensors, meta = weights.load(weights_path(arm, crop, delta_t, seed), made_by=TRAIN_COMMAND)
    width = tuple(meta.config.get("model", {}).get("width", ModelConfig.width))
    enc = Encoder(width)
    enc.load_state_dict({k: v.to(torch.float32) if v.is_floating_point() else v for k, v in tensors.items()})
    enc.eval()
    return enc, {"config": meta.config, "quality": meta.quality, "extra": meta.extra}


def _arms(models: tuple[str, ...] | list[str] | str) -> tuple[str, ...]:
    from .learn import ARMS

    items = [m for m in (models.split(",") if isinstance(models, str) else models) if str(m).strip()]
    names = [ARMS.key(str(m).strip()) for m in items] if items else list(ARMS)
    return tuple(dict.fromkeys(names))


def _seeds(seeds: tuple[int, ...]) -> tuple[int, ...]:
    bad = [s for s in seeds if s not in SEEDS]
    if not seeds or bad:
        raise InputError(f"Seeds must be among the shipped ones ({', '.join(map(str, SEEDS))}); got "
                         f"{', '.join(map(str, seeds)) or 'none'}.")
    return tuple(dict.fromkeys(int(s) for s in seeds))


def _per_instance(train: int, test: int) -> None:
    if not 2 <= train <= MAX_PER_INSTANCE or not 1 <= test <= MAX_PER_INSTANCE:
        raise InputError(f"Photos per instance: 2-{MAX_PER_INSTANCE} for training the probes and "
                         f"1-{MAX_PER_INSTANCE} for testing them; got {train} and {test}.")


# ---------------------------------------------------------------------------------------------------- probe
@dataclass(frozen=True)
class ProbeConfig:
    """Which encoders (``models``: arm names, empty = all four; ``seeds``) and how many photos per instance train
    (``train_per_instance``) and test (``test_per_instance``) the probes; ``c``: the probes' inverse L2 strength."""

    models: tuple[str, ...] = ()
    seeds: tuple[int, ...] = SEEDS
    train_per_instance: int = 10
    test_per_instance: int = 6
    c: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", _arms(self.models))
        object.__setattr__(self, "seeds", _seeds(tuple(self.seeds)))
        _per_instance(self.train_per_instance, self.test_per_instance)
        if not 1e-4 <= self.c <= 1e4:
            raise InputError(f"The probe's C must be between 1e-4 and 1e4; got {self.c}.")


METRICS = ("instance", "category", "background", "fg_swap", "bg_swap", "fg_drop", "bg_drop")


@dataclass
class ProbeResult:
    """``rows``: one per (arm, seed) with every metric of :func:`backend.scenes.slowness.probe.evaluate`;
    ``means`` ``{arm: {metric: mean over seeds}}``; ``paired`` ``{metric: {gain, low, high, n}}`` (central + temporal
    minus full frame + augmentation, 95 % t interval over seeds, when both arms ran); ``labels`` / ``colors`` /
    ``kinds`` per arm; ``costs`` per arm (parameters, training seconds, probe-evaluation seconds); ``photos``: the
    sizes of the photo sets."""

    config: dict
    rows: list[dict]
    means: dict[str, dict[str, float]]
    paired: dict[str, dict[str, float]]
    labels: dict[str, str]
    colors: dict[str, str]
    kinds: dict[str, str]
    costs: dict[str, dict[str, float]]
    photos: dict[str, int]

    def to_dict(self) -> dict:
        return asdict(self)

    def values(self, arm: str, metric: str) -> list[float]:
        """The metric per seed (in ``config["seeds"]`` order) for one arm."""
        return [r[metric] for r in self.rows if r["arm"] == arm]


def run_probe(config: ProbeConfig, progress: Progress | None = None, token: CancelToken | None = None) -> ProbeResult:
    """See the module docstring."""
    from ...stats import paired_ci
    from .learn import ARMS
    from .probe import evaluate, probe_data

    progress = checked(progress, token)
    report(progress, 0.0, "Rendering the probe photos")
    data = probe_data(config.train_per_instance, config.test_per_instance)
    rows, costs = [], {}
    todo = [(a, s) for a in config.models for s in config.seeds]
    for i, (arm, seed) in enumerate(todo):
        report(progress, 0.05 + 0.95 * i / len(todo), f"{ARMS.label(arm)}, seed {seed}")
        enc, meta = load_encoder(arm, seed=seed)
        t0 = time.perf_counter()
        m = evaluate(enc, data, config.c)
        dt = time.perf_counter() - t0
        rows.append({"arm": arm, "seed": seed, **{k: m[k] for k in METRICS}})
        c = costs.setdefault(arm, {"parameters": int(sum(p.numel() for p in enc.parameters())),
                                   "train_s": 0.0, "probe_s": 0.0})
        c["train_s"] += float(meta["quality"].get("seconds", 0.0)) / len(config.seeds)
        c["probe_s"] += dt / len(config.seeds)
    report(progress, 1.0, "Done")
    means = {a: {k: round(float(np.mean([r[k] for r in rows if r["arm"] == a])), 4) for k in METRICS}
             for a in config.models}
    paired: dict[str, dict[str, float]] = {}
    ours, base = ARMS.names("ours")[0], ARMS.names("baseline")[0]
    if ours in config.models and base in config.models:
        for k in METRICS:
            ci = paired_ci([r[k] for r in rows if r["arm"] == ours], [r[k] for r in rows if r["arm"] == base])
            paired[k] = {"gain": round(float(ci.mean), 4), "low": round(float(ci.low), 4),
                         "high": round(float(ci.high), 4), "n": int(ci.n)}
    n_inst = len(set(data.train.instance.tolist()))
    return ProbeResult(asdict(config), rows, means, paired, {a: ARMS.label(a) for a in config.models},
                       {a: ARMS.color(a) for a in config.models}, {a: ARMS.kind(a) for a in config.models},
                       {a: {k: round(v, 3) for k, v in c.items()} for a, c in costs.items()},
                       {"train": len(data.train.seeds), "test": len(data.test.seeds), "instances": n_inst})


# ---------------------------------------------------------------------------------------------------- sweep
@dataclass(frozen=True)
class SweepConfig:
    """Probe settings of the crop-side and DeltaT sweeps (seed 0 encoders)."""

    train_per_instance: int = 10
    test_per_instance: int = 6
    c: float = 1.0

    def __post_init__(self) -> None:
        _per_instance(self.train_per_instance, self.test_per_instance)
        if not 1e-4 <= self.c <= 1e4:
            raise InputError(f"The probe's C must be between 1e-4 and 1e4; got {self.c}.")


@dataclass
class SweepResult:
    """``crop``: rows ``{crop, instance, category, background, ...}`` over crop sides (64 = the full-frame +
    temporal arm); ``delta_t``: rows over DeltaT (crop 32)."""

    config: dict
    crop: list[dict]
    delta_t: list[dict]

    def to_dict(self) -> dict:
        return asdict(self)


def run_sweep(config: SweepConfig, progress: Progress | None = None, token: CancelToken | None = None) -> SweepResult:
    """See the module docstring."""
    from .learn import ARMS
    from .probe import evaluate, probe_data

    progress = checked(progress, token)
    report(progress, 0.0, "Rendering the probe photos")
    data = probe_data(config.train_per_instance, config.test_per_instance)
    ours = ARMS.names("ours")[0]
    full_temporal = next(n for n in ARMS.names("ablation") if ARMS[n].positive is ARMS[ours].positive)
    runs = [("crop", c, ours, c, DELTA_T) for c in SWEEP_CROPS] + [("crop", 64, full_temporal, CROP, DELTA_T)]
    runs += [("delta_t", d, ours, CROP, d) for d in SWEEP_DELTAS]
    out: dict[str, list[dict]] = {"crop": [], "delta_t": []}
    for i, (what, x, arm, crop, dt) in enumerate(runs):
        report(progress, 0.05 + 0.95 * i / len(runs), f"{what} = {x}")
        enc, _ = load_encoder(arm, crop, dt, 0)
        out[what].append({what: x, "arm": arm, **evaluate(enc, data, config.c)})
    report(progress, 1.0, "Done")
    return SweepResult(asdict(config), out["crop"], out["delta_t"])


# --------------------------------------------------------------------------------------------------- stream
@dataclass(frozen=True)
class StreamConfig:
    """One clip of the stream: ``clip`` (its seed), the central ``crop`` side (16-64 px of the 64-px frame),
    ``delta_t`` (1-12 frames) of the temporal pairs, ``pairs`` sampled pairs of each kind, ``seed`` of the
    sampling."""

    clip: int = 0
    crop: int = CROP
    delta_t: int = DELTA_T
    pairs: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        from .learn import check_crop, check_delta

        check_crop(self.crop)
        check_delta(self.delta_t)
        if not 0 <= self.clip < 10**6:
            raise InputError(f"The clip number must be 0 to 999999; got {self.clip}.")
        if not 1 <= self.pairs <= 12:
            raise InputError(f"Pairs to show: 1-12; got {self.pairs}.")


@dataclass
class StreamResult:
    """``frames`` uint8 ``[T, 64, 64, 3]``, ``saliency`` uint8 ``[T, 64, 64]``, ``gaze`` ``[T, 2]``, ``boxes`` ``[T, 4]``
    (the crop windows), ``crops`` uint8 ``[T, 32, 32, 3]`` (resized to the encoder's input), ``fixating`` ``[T]``;
    ``pairs`` ``{arm: uint8 [P, 2, 32, 32, 3]}`` sampled positive pairs, ``pair_frames`` ``{arm: [[t, t'], ...]}``;
    ``labels`` of the clip (focal instance, category, background) and ``gaze_on_object``: the share of frames whose
    gaze lands on the focal object (a check of the saliency model against the rendered labels, never an input)."""

    config: dict
    frames: np.ndarray
    saliency: np.ndarray
    gaze: np.ndarray
    boxes: np.ndarray
    crops: np.ndarray
    fixating: np.ndarray
    pairs: dict[str, np.ndarray]
    pair_frames: dict[str, list[list[int]]]
    labels: dict[str, str]
    gaze_on_object: float
    seconds: float = 0.0
    arm_labels: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON-able part (no pictures)."""
        return {"config": self.config, "gaze": self.gaze.tolist(), "boxes": self.boxes.tolist(),
                "fixating": self.fixating.tolist(), "pair_frames": self.pair_frames, "labels": self.labels,
                "gaze_on_object": self.gaze_on_object, "seconds": self.seconds}


def run_stream(config: StreamConfig, progress: Progress | None = None, token: CancelToken | None = None) -> StreamResult:
    """See the module docstring."""
    from ..ego import BACKGROUND_CLASSES, EgoConfig, make_ego_clip
    from .gaze import crop_boxes, gaze_hits, gaze_points, spectral_residual
    from .learn import ARMS, TrainConfig, central_view, to_input
    from .learn import Stream as _Stream

    progress = checked(progress, token)
    t0 = time.perf_counter()
    ego = EgoConfig()
    clip = make_ego_clip(config.clip, ego)
    sal = spectral_residual(clip.images)
    gaze = gaze_points(sal)
    boxes = crop_boxes(gaze, config.crop, clip.images.shape[1:3])
    one = _Stream(clip.images[None], gaze[None], np.array([clip.instance]), np.array([clip.category]),
                  np.array([clip.background]), clip.instances[None])
    crops = (to_input(central_view(one, config.crop)[0]).permute(0, 2, 3, 1).numpy() * 255).round().astype(np.uint8)
    rng = np.random.default_rng([config.seed, 71])
    pairs, frames_of = {}, {}
    t = rng.integers(0, ego.frames, config.pairs)
    for arm in ARMS:
        cfg = TrainConfig(arm=arm, crop=config.crop, delta_t=config.delta_t, clips=4)
        images = ARMS[arm].view(one, config.crop)
        x1, x2, u = _pairs_with_frames(ARMS[arm], images, t, cfg, np.random.default_rng([config.seed, 73]))
        both = np.stack([x1, x2], 1).transpose(0, 1, 3, 4, 2)
        pairs[arm] = (both * 255).round().astype(np.uint8)
        frames_of[arm] = [[int(a), int(b)] for a, b in zip(t, u, strict=True)]
    cat, color, tex = ego.instances()[clip.instance]
    labels = {"instance": f"#{clip.instance}: {color} {tex} {cat}", "category": cat,
              "background": BACKGROUND_CLASSES[clip.background]}
    hit = float(gaze_hits(gaze, clip.instances).mean())
    return StreamResult(asdict(config), clip.images, (sal * 255).round().astype(np.uint8), gaze, boxes, crops,
                        clip.fixating, pairs, frames_of, labels, hit, round(time.perf_counter() - t0, 3),
                        {a: ARMS.label(a) for a in ARMS})


def _pairs_with_frames(arm: Any, images: np.ndarray, t: np.ndarray, cfg: Any,
                       rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arm's pairs for frames ``t`` of one clip and the partner frames (``t`` itself for augmentations)."""
    from .learn import temporal_pairs, temporal_partner

    state = rng.bit_generator.state
    x1, x2 = arm(images, np.zeros(len(t), dtype=int), t, cfg, rng)
    partner = t
    if arm.positive is temporal_pairs:
        rng.bit_generator.state = state  # replay the draw of the partner frames
        partner = temporal_partner(t, images.shape[1], cfg.delta_t, rng)
    return x1.numpy(), x2.numpy(), partner


# ----------------------------------------------------------------------------------------------- neighbours
GALLERY_PHOTOS = ("astronaut", "camera", "coffee", "chelsea", "rocket", "retina", "immunohistochemistry",
                  "stereo_left", "coins", "moon", "brick", "grass", "gravel", "colorwheel", "cell", "clock", "logo")


@dataclass(frozen=True)
class NeighbourConfig:
    """``k`` nearest neighbours (1-10) for each arm's seed-``seed`` encoder among ``scenes_per_instance`` held-out
    scene photos per instance (1-8) and the scikit-image photographs of :data:`GALLERY_PHOTOS`."""

    k: int = 5
    seed: int = 0
    scenes_per_instance: int = 2

    def __post_init__(self) -> None:
        if not 1 <= self.k <= 10:
            raise InputError(f"Neighbours to show: 1-10; got {self.k}.")
        _seeds((self.seed,))
        if not 1 <= self.scenes_per_instance <= 8:
            raise InputError(f"Scene photos per instance in the gallery: 1-8; got {self.scenes_per_instance}.")


@dataclass
class NeighbourResult:
    """``query`` uint8 ``[64, 64, 3]`` (the image as the encoders see it, before the resize to 32); ``gallery``
    uint8 ``[G, 64, 64, 3]`` with ``gallery_labels`` and ``gallery_source`` ("scene" or "photo");
    ``neighbours`` ``{arm: [{index, similarity, label, source}, ...]}``; ``scene_share`` ``{arm: share of scene
    photos among the neighbours}``; ``labels`` per arm."""

    config: dict
    query: np.ndarray
    gallery: np.ndarray
    gallery_labels: list[str]
    gallery_source: list[str]
    neighbours: dict[str, list[dict]]
    labels: dict[str, str]
    seconds: float

    def to_dict(self) -> dict:
        return {"config": self.config, "neighbours": self.neighbours, "labels": self.labels, "seconds": self.seconds}


def square(image: np.ndarray, side: int = 64) -> np.ndarray:
    """The centred square of an RGB image resized to ``side`` pixels (Lanczos): uint8 ``[side, side, 3]``."""
    from PIL import Image

    a = np.asarray(image)
    if a.ndim == 2:
        a = np.stack([a] * 3, -1)
    if a.ndim != 3 or a.shape[-1] < 3 or min(a.shape[:2]) < 8:
        raise InputError(f"The image must be RGB and at least 8 pixels a side; got shape {a.shape}.")
    a = a[..., :3].astype(np.uint8)
    h, w = a.shape[:2]
    s = min(h, w)
    a = a[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    return np.asarray(Image.fromarray(a).resize((side, side), Image.Resampling.LANCZOS))


def gallery(scenes_per_instance: int = 2) -> tuple[np.ndarray, list[str], list[str]]:
    """Held-out scene photos (seeds after the probe sets) and scikit-image photographs, squared to 64 px."""
    from ...watermark.datasets import load_photo
    from ..ego import BACKGROUND_CLASSES, EgoConfig
    from .probe import PHOTO_SEEDS, photo_set

    ego = EgoConfig()
    ps = photo_set(scenes_per_instance, PHOTO_SEEDS + 500_000, ego)
    table = ego.instances()
    labels = [f"{table[k][1]} {table[k][2]} {table[k][0]} on {BACKGROUND_CLASSES[b]}"
              for k, b in zip(ps.instance, ps.background, strict=True)]
    photos = [square(load_photo(n)) for n in GALLERY_PHOTOS]
    return (np.concatenate([ps.images, np.stack(photos)]), labels + [f"photo: {n}" for n in GALLERY_PHOTOS],
            ["scene"] * len(labels) + ["photo"] * len(GALLERY_PHOTOS))


def run_neighbours(image: np.ndarray, config: NeighbourConfig, progress: Progress | None = None,
                   token: CancelToken | None = None) -> NeighbourResult:
    """See the module docstring. ``image``: uint8 ``[H, W, 3]`` (any size; its centred square is used)."""
    from .learn import ARMS
    from .probe import features, nearest

    progress = checked(progress, token)
    t0 = time.perf_counter()
    q = square(image)
    report(progress, 0.1, "Gallery")
    gal, labels, source = gallery(config.scenes_per_instance)
    out: dict[str, list[dict]] = {}
    for i, arm in enumerate(ARMS):
        report(progress, 0.2 + 0.8 * i / len(ARMS), ARMS.label(arm))
        enc, _ = load_encoder(arm, seed=config.seed)
        idx, sim = nearest(features(enc, q[None]), features(enc, gal), config.k)
        out[arm] = [{"index": int(j), "similarity": round(float(s), 4), "label": labels[j], "source": source[j]}
                    for j, s in zip(idx[0], sim[0], strict=True)]
    return NeighbourResult(asdict(config), q, gal, labels, source, out, {a: ARMS.label(a) for a in ARMS},
                           round(time.perf_counter() - t0, 3))
