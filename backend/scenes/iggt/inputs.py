"""IGGT's inputs: 2-4 photos of one scene.

The page uploads several image files at once (``ui.inputs.multi_image_input``: each file through the shared
``image`` kind, the count checked by :func:`check_view_count`); the CLI reads image paths (``--views A.png B.png``,
each through the ``image`` kind) or one ZIP of the views, the kind this package declares:

| kind | decoder | accepts | limits |
|------|---------|---------|--------|
| ``image_views`` | ``backend.scenes.iggt.inputs.decode_views`` | a ZIP of 2-4 PNG, JPEG or WebP images (in name order; folders and other files ignored) | 40 MB, 80 MB uncompressed, each image by the lab's image rules |

``PRESETS``: the page's and the CLI's preset scenes, name -> :class:`backend.scenes.iggt.jobs.SegmentConfig`
settings (held-out shapes and textures, and the training distribution).
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from ...errors import InputError
from ...io.registry import MB, InputKind, declare
from .data import MAX_VIEWS, MIN_VIEWS

IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "webp")
MAX_ZIP = 40 * MB

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="image_views", what="2-4 photos of one scene (a ZIP)",
            decoder="backend.scenes.iggt.inputs:decode_views", extensions=("zip",), max_bytes=MAX_ZIP,
            limits=f"a ZIP of {MIN_VIEWS}-{MAX_VIEWS} PNG, JPEG or WebP photos of one scene; at most 40 MB "
                   "(80 MB uncompressed), each image at most 20 MB and 40 megapixels",
            family="archive"),
)

PRESETS: dict[str, dict[str, Any]] = {
    "Held-out shape: cylinders (scene 0, 2 views)": {"split": "heldout_shape", "scene": 0, "views": 2},
    "Held-out texture: checker (scene 2, 3 views)": {"split": "heldout_texture", "scene": 2, "views": 3},
    "Held-out shape: cylinders (scene 5, 4 views)": {"split": "heldout_shape", "scene": 5, "views": 4},
    "Training distribution (validation scene 1, 3 views)": {"split": "val", "scene": 1, "views": 3},
}


def check_view_count(n: int) -> None:
    """InputError unless ``MIN_VIEWS <= n <= MAX_VIEWS``."""
    if n < MIN_VIEWS:
        raise InputError(f"IGGT needs {MIN_VIEWS}-{MAX_VIEWS} views of one scene; got {n}. Add "
                         f"{MIN_VIEWS - n} more photo{'s' if MIN_VIEWS - n > 1 else ''} of the same scene from "
                         "another viewpoint.")
    if n > MAX_VIEWS:
        raise InputError(f"IGGT reads at most {MAX_VIEWS} views of one scene; got {n}. Remove {n - MAX_VIEWS}.")


def decode_views(data: bytes, name: str = "the upload") -> list[tuple[str, Any]]:
    """A ZIP of 2-4 images -> ``[(member name, PIL image)]`` in name order."""
    from ...io.archives import open_zip, read_member
    from ...io.images import decode_image

    if not data:
        raise InputError(f"{name} is empty (0 bytes). Upload a ZIP of {MIN_VIEWS}-{MAX_VIEWS} photos.")
    if len(data) > MAX_ZIP:
        raise InputError(f"{name} is {len(data) / MB:.1f} MB; the limit is {MAX_ZIP / MB:.0f} MB.")
    if not data.startswith(b"PK"):
        raise InputError(f"{name} is not a ZIP archive. Upload a ZIP of {MIN_VIEWS}-{MAX_VIEWS} PNG, JPEG or WebP "
                         "photos, or the photos themselves.")
    zf = open_zip(data, name, max_total=2 * MAX_ZIP, max_members=64)
    members = sorted((i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX")
                      and i.filename.rsplit(".", 1)[-1].lower() in IMAGE_EXTENSIONS), key=lambda i: i.filename)
    if not members:
        raise InputError(f"{name} holds no PNG, JPEG or WebP image. Put {MIN_VIEWS}-{MAX_VIEWS} photos of one scene "
                         "in the ZIP.")
    check_view_count(len(members))
    return [(i.filename, decode_image(read_member(zf, i, name), name=f"{i.filename} in {name}")) for i in members]


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0)), d)
    return buf.getvalue()


def _png(arr: Any) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def view_pngs(split: str = "heldout_shape", scene: int = 0, views: int = 2, size: int = 64) -> list[bytes]:
    """PNG files of rendered views of one scene (``size`` pixels), for examples and tests."""
    from ..scene3d import render, to_uint8
    from .data import cameras, make_scene

    sc = make_scene(split, scene)
    return [_png(to_uint8(render(sc, c).rgb)) for c in cameras(split, scene, views, size)]


def image_views(seed: int = 0) -> bytes:
    """A ZIP of two 32-pixel rendered views of one held-out scene."""
    a, b = view_pngs("heldout_shape", seed, 2, 32)
    return _zip({"view_1.png": a, "view_2.png": b})


def image_views_odd() -> dict[str, bytes]:
    """Valid-but-odd ZIPs: views of different sizes, a JPEG among PNGs in a folder with a stray text file, four
    views."""
    import numpy as np
    from PIL import Image

    a, b = view_pngs("heldout_texture", 1, 2, 32)
    big = view_pngs("heldout_texture", 1, 2, 48)[1]
    buf = io.BytesIO()
    Image.fromarray(np.asarray(Image.open(io.BytesIO(b)).convert("RGB"))).save(buf, format="JPEG", quality=90)
    four = view_pngs("val", 0, 4, 24)
    return {
        "sizes.zip": _zip({"a.png": a, "b.png": big}),
        "folder_jpeg.zip": _zip({"scene/": b"", "scene/1.png": a, "scene/2.JPG": buf.getvalue(),
                                 "scene/notes.txt": b"two views"}),
        "four.zip": _zip({f"v{i}.png": p for i, p in enumerate(four)}),
    }
