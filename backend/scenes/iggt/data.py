"""IGGT's data: multi-view renders of procedural 3-D scenes (:mod:`backend.scenes.scene3d`), the frozen DINOv2
patch features of every view, and a cache of both for the training and evaluation sets.

Splits (same seed, same scene and cameras):

| split | objects | textures | scene seeds |
|---|---|---|---|
| ``train`` | boxes, spheres | plain, stripes | 0, 1, 2, ... |
| ``val`` | boxes, spheres | plain, stripes | 10,000 + i |
| ``heldout_shape`` | cylinders (a shape never trained on) | plain, stripes | 20,000 + i |
| ``heldout_texture`` | boxes, spheres | checker (a texture never trained on) | 30,000 + i |
| ``heldout_colour`` | boxes, spheres, all of one colour (training scenes give every object its own colour) | plain, stripes | 40,000 + i |

Each scene holds 2-4 objects; its ``views`` cameras sit on one orbit about the scene (radius 2.4-2.9, elevation
25-40 degrees, a random start and 35-70 degrees between consecutive views, vertical field of view 50 degrees). A view
is rendered at :data:`IMAGE` pixels (what DINOv2 sees: 16 x 16 patches of 14 pixels) and its labels at :data:`OUT`
pixels (the network's output grid: z-depth and instance ids from the same camera).

``ViewSet``: ``rgb`` float32 ``[V, OUT, OUT, 3]`` (the image area-resampled to the output grid), ``dino`` float32
``[V, 16, 16, 384]``, ``depth`` float32 ``[V, OUT, OUT]`` (``inf`` on the sky) and ``instance`` int32
``[V, OUT, OUT]`` (0 floor and sky) when the views are rendered, None for photos; ``images`` uint8
``[V, IMAGE, IMAGE, 3]``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InputError
from ..scene3d import Camera, Scene3D, orbit, random_scene, render, to_uint8

IMAGE = 224  # pixels per side that DINOv2 sees (16 x 16 patches)
PATCHES = IMAGE // 14
OUT = 64  # the network's output grid
DINO_DIM = 384
CENTER = (0.0, 0.35, 0.0)
MIN_VIEWS, MAX_VIEWS = 2, 4

SPLITS: dict[str, dict[str, Any]] = {
    "train": {"kinds": ("box", "sphere"), "textures": ("plain", "stripes"), "base": 0},
    "val": {"kinds": ("box", "sphere"), "textures": ("plain", "stripes"), "base": 10_000},
    "heldout_shape": {"kinds": ("cylinder",), "textures": ("plain", "stripes"), "base": 20_000},
    "heldout_texture": {"kinds": ("box", "sphere"), "textures": ("checker",), "base": 30_000},
    "heldout_colour": {"kinds": ("box", "sphere"), "textures": ("plain", "stripes"), "base": 40_000,
                       "palette": ((0.42, 0.55, 0.78),), "distinct_colors": False},
}
SPLIT_LABELS = {"train": "training distribution (boxes, spheres; plain, stripes)",
                "val": "validation (training distribution, other seeds)",
                "heldout_shape": "held-out shape (cylinders)",
                "heldout_texture": "held-out texture (checker)",
                "heldout_colour": "held-out colouring (every object the same colour)"}


@dataclass
class ViewSet:
    """Several views of one scene (see the module docstring for the shapes)."""

    images: np.ndarray
    rgb: np.ndarray
    dino: np.ndarray
    depth: np.ndarray | None = None
    instance: np.ndarray | None = None
    names: tuple[str, ...] = ()

    @property
    def views(self) -> int:
        return int(self.rgb.shape[0])


def check_split(split: str) -> str:
    from ...registry import choose

    return choose(split, SPLITS, "scene split")


def make_scene(split: str, index: int) -> Scene3D:
    """Scene ``index`` of ``split`` (seed = the split's base + index)."""
    s = SPLITS[check_split(split)]
    return random_scene(s["base"] + int(index), n_objects=(2, 4), kinds=s["kinds"], textures=s["textures"],
                        palette=s.get("palette"), distinct_colors=s.get("distinct_colors", True))


def cameras(split: str, index: int, views: int, size: int) -> list[Camera]:
    """The ``views`` cameras of scene ``index`` of ``split`` at ``size`` pixels (same index, same poses)."""
    s = SPLITS[check_split(split)]
    rng = np.random.default_rng([s["base"] + int(index), 7919])
    radius, elev = float(rng.uniform(2.4, 2.9)), float(rng.uniform(25.0, 40.0))
    start = float(rng.uniform(0.0, 360.0))
    steps = rng.uniform(35.0, 70.0, size=max(views - 1, 1))
    out = []
    az = start
    for v in range(views):
        if v:
            az += float(steps[v - 1])
        out.append(orbit(1, radius, elev, size, size, center=CENTER, start_deg=az)[0])
    return out


def render_views(split: str, index: int, views: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Images uint8 ``[V, IMAGE, IMAGE, 3]``, depth float32 ``[V, OUT, OUT]``, instances int32 ``[V, OUT, OUT]``."""
    scene = make_scene(split, index)
    imgs = np.stack([to_uint8(render(scene, c).rgb) for c in cameras(split, index, views, IMAGE)])
    lab = [render(scene, c) for c in cameras(split, index, views, OUT)]
    return imgs, np.stack([r.depth for r in lab]), np.stack([r.instance for r in lab])


def to_grid(images: np.ndarray) -> np.ndarray:
    """uint8 images ``[V, S, S, 3]`` -> float32 ``[V, OUT, OUT, 3]`` in [0, 1] (area resampling)."""
    from PIL import Image

    return np.stack([np.asarray(Image.fromarray(im).resize((OUT, OUT), Image.Resampling.BOX), np.float32) / 255.0
                     for im in images])


def dino_features(encoder: Any, images: np.ndarray, batch: int = 8) -> np.ndarray:
    """DINOv2 patch features of uint8 images ``[V, IMAGE, IMAGE, 3]``: float32 ``[V, 16, 16, 384]``."""
    from PIL import Image

    out = []
    for i in range(0, len(images), batch):
        pil = [Image.fromarray(im) for im in images[i:i + batch]]
        f = encoder.patch_features(pil, size=IMAGE).float().numpy()
        out.append(f.reshape(len(pil), PATCHES, PATCHES, -1))
    return np.concatenate(out).astype(np.float32)


def rendered_viewset(split: str, index: int, views: int, encoder: Any) -> ViewSet:
    """The views of one rendered scene with their labels and DINOv2 features."""
    if not MIN_VIEWS <= views <= MAX_VIEWS:
        raise InputError(f"Choose {MIN_VIEWS}-{MAX_VIEWS} views; got {views}.")
    imgs, depth, inst = render_views(split, index, views)
    return ViewSet(imgs, to_grid(imgs), dino_features(encoder, imgs), depth, inst,
                   tuple(f"view {v + 1}" for v in range(views)))


def photo_viewset(photos: list[Any], encoder: Any, names: tuple[str, ...] = ()) -> tuple[ViewSet, list[str]]:
    """User photos (PIL images) -> a :class:`ViewSet` without labels, and notes (resizing). Each photo is
    centre-cropped to a square and resized to :data:`IMAGE` pixels (photos of different sizes end up the same size)."""
    from PIL import Image

    if not MIN_VIEWS <= len(photos) <= MAX_VIEWS:
        raise InputError(f"Upload {MIN_VIEWS}-{MAX_VIEWS} photos of one scene; got {len(photos)}.")
    notes = []
    sizes = {p.size for p in photos}
    if len(sizes) > 1:
        notes.append("The photos have different sizes (" + ", ".join(f"{w}x{h}" for w, h in sorted(sizes))
                     + f"); each is centre-cropped to a square and resized to {IMAGE} x {IMAGE}.")
    arr = []
    for p in photos:
        p = p.convert("RGB")
        w, h = p.size
        s = min(w, h)
        box = ((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s)
        arr.append(np.asarray(p.crop(box).resize((IMAGE, IMAGE), Image.Resampling.BICUBIC), np.uint8))
    imgs = np.stack(arr)
    names = tuple(names) if len(names) == len(photos) else tuple(f"photo {i + 1}" for i in range(len(photos)))
    return ViewSet(imgs, to_grid(imgs), dino_features(encoder, imgs), names=names), notes


# ------------------------------------------------------------------------------------------------------- cache
def _cache_path(split: str, scenes: int, views: int):  # noqa: ANN202
    from ...runtime import cache_dir

    key = json.dumps({"split": split, "scenes": scenes, "views": views, "image": IMAGE, "out": OUT,
                      "splits": SPLITS[split], "format": 1}, sort_keys=True, default=list)
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    folder = cache_dir() / "iggt"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{split}_{scenes}x{views}_{digest}.npz"


def dataset(split: str, scenes: int, views: int, encoder: Any = None, progress: Any = None,
            use_cache: bool = True) -> dict[str, np.ndarray]:
    """Scenes ``0..scenes-1`` of ``split`` with ``views`` views each: ``dino`` float16 ``[S, V, 16, 16, 384]``,
    ``rgb`` uint8 ``[S, V, OUT, OUT, 3]``, ``depth`` float32 ``[S, V, OUT, OUT]``, ``instance`` uint8
    ``[S, V, OUT, OUT]``; cached in the user cache folder after the first call (DINOv2 runs once per view)."""
    from ...runtime import report

    path = _cache_path(check_split(split), scenes, views)
    if use_cache and path.is_file():
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    if encoder is None:
        from ...models import load

        encoder = load("dinov2")
    dino, rgb, depth, inst = [], [], [], []
    for i in range(scenes):
        imgs, d, m = render_views(split, i, views)
        dino.append(dino_features(encoder, imgs).astype(np.float16))
        rgb.append((to_grid(imgs) * 255 + 0.5).astype(np.uint8))
        depth.append(d)
        inst.append(m.astype(np.uint8))
        report(progress, (i + 1) / scenes, f"{split}: scene {i + 1}/{scenes}")
    out = {"dino": np.stack(dino), "rgb": np.stack(rgb), "depth": np.stack(depth), "instance": np.stack(inst)}
    if use_cache:
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **out)
        tmp.replace(path)
    return out

