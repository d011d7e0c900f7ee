"""The protection methods as one registry, the per-source protectors (the trained models each method applies) and
the victim grid: every method x {scratch, pretrained} x seeds, clean test accuracy of each victim.

``METHODS`` entries are callables ``(images uint8 [N, 32, 32, 3], labels [N], protectors, eps) -> uint8 [N, ...]``
applying a trained protector to new images (the page, the CLI); :func:`build_protectors` trains them on a source's
training set and returns the protected training set of each method as the training saw it (EMN's min-min noise is
the noise of its last round, not a re-application).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ...registry import Registry
from ...runtime import CancelToken, Progress, checked, report, sub_progress
from .data import ImageSet
from .generator import BaitConfig, Generator, bait_apply, train_bait
from .nets import SmallCNN
from .perturb import EMNConfig, accuracy, emn, emn_apply, linf, targeted_poison
from .victims import INITS, VictimConfig, train_victim


@dataclass
class Protectors:
    """The trained models of one source: the EMN min-min surrogate, the crafting model (fine-tuned from the prior on
    clean data: the targeted poison's target and BAIT's surrogate warm start), BAIT's generator and that of its
    zero-unroll ablation."""

    emn_surrogate: SmallCNN
    crafting: SmallCNN
    bait_generator: Generator
    bait_k0_generator: Generator
    logs: dict[str, Any] = field(default_factory=dict)


def _clean(images: np.ndarray, labels: np.ndarray, p: Protectors, eps: int) -> np.ndarray:
    return images.copy()


def _emn(images: np.ndarray, labels: np.ndarray, p: Protectors, eps: int) -> np.ndarray:
    return emn_apply(p.emn_surrogate, images, labels, eps)


def _targeted(images: np.ndarray, labels: np.ndarray, p: Protectors, eps: int) -> np.ndarray:
    return targeted_poison(p.crafting, images, labels, eps)


def _bait(images: np.ndarray, labels: np.ndarray, p: Protectors, eps: int) -> np.ndarray:
    return bait_apply(p.bait_generator, images, labels, eps)


def _bait_k0(images: np.ndarray, labels: np.ndarray, p: Protectors, eps: int) -> np.ndarray:
    return bait_apply(p.bait_k0_generator, images, labels, eps)


METHODS: Registry[Callable[..., np.ndarray]] = Registry("protection method")
METHODS.add("clean", _clean, label="clean (no protection)", kind="reference")
METHODS.add("emn", _emn, label="EMN (error-minimising)", kind="baseline")
METHODS.add("targeted", _targeted, label="targeted poison", kind="baseline")
METHODS.add("bait", _bait, label="BAIT (ours)", kind="ours")
METHODS.add("bait_k0", _bait_k0, label="BAIT, 0 unrolled steps", kind="ablation")
get_method = METHODS.get

# Whether a method needs the label of each image when it protects (every method but the clean reference).
NEEDS_LABEL: dict[str, bool] = {name: METHODS.kind(name) != "reference" for name in METHODS}


def build_protectors(train: ImageSet, prior_state: dict[str, torch.Tensor], eps: int, bait: BaitConfig,
                     emn_config: EMNConfig | None = None, seed: int = 0, progress: Progress | None = None,
                     token: CancelToken | None = None) -> tuple[Protectors, dict[str, np.ndarray]]:
    """Train every protector on ``train`` and protect it: (protectors, {method: protected uint8 images as the
    training made them})."""
    progress = checked(progress, token)
    x, y = train.images, train.labels
    logs: dict[str, Any] = {}
    t = time.perf_counter()
    emn_imgs, sur, logs["emn"] = emn(x, y, eps, emn_config or EMNConfig(), seed=seed,
                                     progress=sub_progress(progress, 0, 0.25))
    logs["emn"]["seconds"] = round(time.perf_counter() - t, 1)
    t = time.perf_counter()
    crafting = train_victim(x, y, "pretrained", prior_state, seed=900 + seed)
    tgt_imgs = targeted_poison(crafting, x, y, eps)
    logs["targeted"] = {"crafting_train_accuracy": round(accuracy(crafting, x, y), 4),
                        "seconds": round(time.perf_counter() - t, 1)}
    theta0 = {k: v.detach().clone() for k, v in crafting.state_dict().items()}
    outs = []
    for k, (lo, hi) in zip((bait.unroll, 0), ((0.3, 0.75), (0.75, 1.0)), strict=True):
        t = time.perf_counter()
        cfg = BaitConfig(**{**bait.__dict__, "unroll": k})
        imgs, gen_k, log = train_bait(x, y, theta0, eps, cfg, seed=seed, progress=sub_progress(progress, lo, hi))
        log["summary"]["seconds"] = round(time.perf_counter() - t, 1)
        outs.append((imgs, gen_k, log))
    logs["bait"], logs["bait_k0"] = outs[0][2], outs[1][2]
    prot = Protectors(sur, crafting, outs[0][1], outs[1][1], logs)
    # In the registry's order: clean, EMN, targeted poison, BAIT, BAIT without unrolled steps.
    sets = dict(zip(METHODS, (x.copy(), emn_imgs, tgt_imgs, outs[0][0], outs[1][0]), strict=True))
    for name, imgs in sets.items():
        logs.setdefault("linf", {})[name] = linf(x, imgs)
    return prot, sets


def victim_grid(sets: dict[str, np.ndarray], train: ImageSet, test: ImageSet,
                prior_state: dict[str, torch.Tensor], seeds: tuple[int, ...], config: VictimConfig | None = None,
                keep: Callable[[str, str, int], bool] | None = None, progress: Progress | None = None,
                token: CancelToken | None = None) -> tuple[list[dict[str, Any]], dict[str, SmallCNN]]:
    """Train a victim per (method, init, seed) on ``sets[method]`` with ``train.labels``; rows of clean test
    accuracy, and the victims ``keep(method, init, seed)`` selects, keyed ``method.init.seed``."""
    progress = checked(progress, token)
    rows, kept = [], {}
    jobs = [(m, i, s) for m in sets for i in INITS for s in seeds]
    for j, (m, init, s) in enumerate(jobs):
        t = time.perf_counter()
        net = train_victim(sets[m], train.labels, init, prior_state, s, config or VictimConfig())
        rows.append({"source": train.name, "method": m, "init": init, "seed": int(s),
                     "test_accuracy": round(accuracy(net, test.images, test.labels), 4),
                     "train_accuracy": round(accuracy(net, sets[m], train.labels), 4),
                     "seconds": round(time.perf_counter() - t, 2)})
        if keep is not None and keep(m, init, s):
            kept[f"{m}.{init}.{s}"] = net
        report(progress, (j + 1) / len(jobs), f"{train.name} {m} {init} seed {s}: {rows[-1]['test_accuracy']:.3f}")
    return rows, kept
