"""The inputs of watermark attribution: it reads only the shared ``image`` kind (``backend.io``: PNG, JPEG, WebP),
so it declares no kind of its own; the users database is a file the service keeps (``--db``), not an upload.
``PRESETS``: the page's preset images, the held-out photos of :mod:`backend.watermark.datasets` (never seen in
training), by name; :func:`preset_image` loads one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.registry import choose
from backend.watermark.datasets import HELDOUT_PHOTOS

if TYPE_CHECKING:
    import numpy as np

KINDS: tuple = ()

PRESETS: tuple[str, ...] = HELDOUT_PHOTOS

# the settings of the page's live evaluation (held-out images of at least 256 px so the classical backend reads them,
# seed 3; 200 clean decodes of 256-288 px; 1,000 users), beside the attack, its first three sweep strengths and the
# number of images the page picks
LIVE_SWEEP: dict[str, object] = {"users": 1000, "clean": 200, "image_seed": 3, "min_side": 256,
                                 "clean_side": (256, 288)}


def preset_image(name: str) -> np.ndarray:
    """The preset photo ``name`` as ``(H, W, 3)`` uint8 RGB."""
    from backend.watermark.datasets import load_photo

    return load_photo(choose(name, PRESETS, "preset image"))


__all__ = ["KINDS", "LIVE_SWEEP", "PRESETS", "preset_image"]
