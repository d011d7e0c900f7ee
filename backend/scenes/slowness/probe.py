"""Evaluating a frozen encoder: linear probes, foreground and background swaps, nearest neighbours.

The probe data are object-centred photos (:func:`backend.scenes.ego.make_photo`), a different kind of image from the
stream the encoders learn from (one large centred object, no distractors, no camera motion), in the way the paper
probes on image datasets rather than on Ego4D frames. ``train_per_instance`` photos of every instance train the
probes, ``test_per_instance`` other photos (other poses, light and backgrounds) test them. The three probes are
multinomial logistic regressions on the standardised 64-dimensional features (scikit-learn, L2, ``C``): object
instance (32 classes), object category (8) and background class (8).

Swaps (the ImageNet-9 idea, Xiao et al. 2021): every test photo is rendered again with the same seed and either a
different background class (*background swap*: object, pose and light kept) or an instance of another category in
the same pose (*foreground swap*: backdrop kept). The category probe trained on the original photos is scored on
both against the original label; a model that reads the object loses accuracy under a foreground swap, one that
reads the background under a background swap. Because categories co-occur with backgrounds (``context``), reading
the background alone already scores above chance.

Shapes: photos uint8 ``[N, 64, 64, 3]``; features float32 ``[N, 64]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..ego import BACKGROUND_CLASSES, EgoConfig, make_photo
from .learn import to_input
from .model import Encoder

PHOTO_SEEDS = 1_000_000  # first photo seed (training clips use seeds below 10,000)
TASKS = ("instance", "category", "background")


@dataclass(frozen=True)
class PhotoSet:
    """Photos with labels: ``images`` uint8 ``[N, H, W, 3]``, ``instance`` / ``category`` / ``background`` int
    ``[N]``, ``seeds`` ``[N]`` (the photo seeds, for swaps)."""

    images: np.ndarray
    instance: np.ndarray
    category: np.ndarray
    background: np.ndarray
    seeds: np.ndarray

    def labels(self, task: str) -> np.ndarray:
        return getattr(self, task)


def photo_set(per_instance: int, first: int, config: EgoConfig | None = None, instance_of=None,  # noqa: ANN001
              background_of=None) -> PhotoSet:  # noqa: ANN001 - optional maps seed -> label
    """``per_instance`` photos of every instance, seeds ``first ..`` (photo ``i`` shows instance ``i mod n``);
    ``instance_of`` / ``background_of`` replace a seed's instance or background (the swaps)."""
    config = config or EgoConfig()
    n = config.n_instances
    photos = []
    seeds = np.arange(first, first + per_instance * n)
    for s in seeds:
        k = int(s - first) % n
        kk = k if instance_of is None else int(instance_of(int(s), k))
        bg = None if background_of is None else int(background_of(int(s)))
        p = make_photo(int(s), config, kk, bg)
        photos.append(p)
    return PhotoSet(np.stack([p.image for p in photos]), np.array([p.instance for p in photos]),
                    np.array([p.category for p in photos]), np.array([p.background for p in photos]), seeds)


@dataclass(frozen=True)
class ProbeData:
    """The probe's photo sets: ``train``, ``test`` and the test photos under the two swaps (labels of the swapped
    sets are the swapped photo's own; the swap scores use the original test labels)."""

    train: PhotoSet
    test: PhotoSet
    fg_swap: PhotoSet
    bg_swap: PhotoSet


def probe_data(train_per_instance: int = 10, test_per_instance: int = 6, config: EgoConfig | None = None,
               first: int = PHOTO_SEEDS) -> ProbeData:
    """The photo sets; swaps draw the replacement from the stream ``default_rng([seed, 67])`` of each photo."""
    config = config or EgoConfig()
    n = config.n_instances
    train = photo_set(train_per_instance, first, config)
    t0 = first + train_per_instance * n
    test = photo_set(test_per_instance, t0, config)
    n_bg, per = len(BACKGROUND_CLASSES), config.instances_per_category
    orig_bg = dict(zip(test.seeds.tolist(), test.background.tolist(), strict=True))

    def other_instance(seed: int, k: int) -> int:
        rng = np.random.default_rng([seed, 67])
        cat = config.category_of(k)
        new_cat = (cat + 1 + int(rng.integers(len(config.categories) - 1))) % len(config.categories)
        return new_cat * per + int(rng.integers(per))

    def other_background(seed: int) -> int:
        rng = np.random.default_rng([seed, 67, 1])
        return (orig_bg[seed] + 1 + int(rng.integers(n_bg - 1))) % n_bg

    fg = photo_set(test_per_instance, t0, config, instance_of=other_instance)
    bg = photo_set(test_per_instance, t0, config, background_of=other_background)
    return ProbeData(train, test, fg, bg)


@torch.no_grad()
def features(encoder: Encoder, images: np.ndarray, batch: int = 256) -> np.ndarray:
    """Frozen features of uint8 ``[N, h, w, 3]`` images (resized to 32): float32 ``[N, 64]``."""
    encoder.eval()
    out = [encoder(to_input(images[i:i + batch])) for i in range(0, len(images), batch)]
    return torch.cat(out).numpy().astype(np.float32)


@dataclass
class LinearProbe:
    """A fitted probe: standardisation ``mean`` / ``scale`` and the scikit-learn classifier."""

    mean: np.ndarray
    scale: np.ndarray
    clf: object

    def predict(self, feats: np.ndarray) -> np.ndarray:
        return self.clf.predict((feats - self.mean) / self.scale)

    def accuracy(self, feats: np.ndarray, labels: np.ndarray) -> float:
        return float((self.predict(feats) == labels).mean())


def fit_probe(feats: np.ndarray, labels: np.ndarray, c: float = 1.0) -> LinearProbe:
    """Multinomial L2 logistic regression (lbfgs, up to 2000 iterations) on standardised features."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = feats.mean(0), feats.std(0) + 1e-6
    clf = LogisticRegression(C=c, max_iter=2000)
    clf.fit((feats - mean) / scale, labels)
    return LinearProbe(mean, scale, clf)


def evaluate(encoder: Encoder, data: ProbeData, c: float = 1.0) -> dict[str, float]:
    """Probe accuracies on the test photos (``instance``, ``category``, ``background``) and the category probe's
    accuracy under the swaps (``fg_swap``, ``bg_swap``, scored against the original categories) with the drops
    ``fg_drop`` / ``bg_drop`` (original minus swapped)."""
    ftr = features(encoder, data.train.images)
    fte = features(encoder, data.test.images)
    out: dict[str, float] = {}
    probes = {}
    for task in TASKS:
        probes[task] = fit_probe(ftr, data.train.labels(task), c)
        out[task] = probes[task].accuracy(fte, data.test.labels(task))
    cat = probes["category"]
    out["fg_swap"] = cat.accuracy(features(encoder, data.fg_swap.images), data.test.category)
    out["bg_swap"] = cat.accuracy(features(encoder, data.bg_swap.images), data.test.category)
    out["fg_drop"] = out["category"] - out["fg_swap"]
    out["bg_drop"] = out["category"] - out["bg_swap"]
    return {k: round(float(v), 4) for k, v in out.items()}


def nearest(query: np.ndarray, gallery: np.ndarray, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Cosine nearest neighbours: for features ``query [Q, d]`` and ``gallery [G, d]``, indices and similarities
    ``[Q, k]``, most similar first."""
    q = query / (np.linalg.norm(query, axis=1, keepdims=True) + 1e-9)
    g = gallery / (np.linalg.norm(gallery, axis=1, keepdims=True) + 1e-9)
    sim = q @ g.T
    idx = np.argsort(-sim, axis=1)[:, :k]
    return idx, np.take_along_axis(sim, idx, 1)
