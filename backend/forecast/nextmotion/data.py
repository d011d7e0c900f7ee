"""Datasets of simulated scenes and their frozen DINOv2 features.

Splits are seed ranges of :func:`backend.forecast.nextmotion.world.make_scene`: training ``[0, 2000)``, held-out
test ``[200000, ...)`` (ambiguous kinds only for the claims: ``peak`` and ``corner`` alternate). Features are
DINOv2 ViT-S/14 patch tokens of the 112 x 112 image (``[N, 64, 384]``, float16 in the cache), computed once per
split and cached under ``cache_dir()/nextmotion``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .world import AMBIGUOUS, Scene, make_scene

TRAIN_SEEDS = (0, 2000)
TEST_START = 200_000
IMAGE_SIZE = 112


def encode_images(encoder, images: list[np.ndarray], batch: int = 32):
    """uint8 images ``[H, W, 3]`` -> patch tokens float32 tensor ``[N, 64, 384]`` at 112 x 112."""
    import torch
    from PIL import Image

    out = []
    for i in range(0, len(images), batch):
        pil = [Image.fromarray(im) for im in images[i:i + batch]]
        out.append(encoder.patch_features(pil, size=IMAGE_SIZE).float())
    return torch.cat(out) if out else torch.zeros(0, 64, 384)


def ambiguous_test(n: int, start: int = TEST_START) -> list[Scene]:
    """``n`` held-out ambiguous scenes, ``peak`` and ``corner`` alternating."""
    return [make_scene(start + i, AMBIGUOUS[i % 2]) for i in range(n)]


def mixed_test(n: int, start: int = TEST_START + 50_000) -> list[Scene]:
    """``n`` held-out scenes of every kind."""
    return [make_scene(start + i) for i in range(n)]


def cached_features(name: str, scenes: list[Scene], encoder=None):
    """Patch tokens of ``scenes`` (cached by ``name`` and the scenes' seeds): float32 tensor ``[N, 64, 384]``."""
    import torch

    from ...models.vision import load_vision_encoder
    from ...runtime import cache_dir

    folder = Path(cache_dir()) / "nextmotion"
    folder.mkdir(parents=True, exist_ok=True)
    seeds = np.array([s.seed for s in scenes])
    path = folder / f"{name}_{len(scenes)}_{int(seeds.sum()) % 100003}.npz"
    if path.is_file():
        with np.load(path) as z:
            if np.array_equal(z["seeds"], seeds):
                return torch.from_numpy(z["tokens"].astype(np.float32))
    enc = encoder or load_vision_encoder(None)
    tok = encode_images(enc, [s.image for s in scenes])
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, tokens=tok.numpy().astype(np.float16), seeds=seeds)
    tmp.replace(path)
    return tok
