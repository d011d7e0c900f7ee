"""The inputs of self-re-watermarking: it reads only the shared ``image`` kind (``backend.io``: PNG, JPEG, WebP), so
it declares no kind of its own. ``PRESETS``: the page's preset images, the held-out photos of
:mod:`backend.watermark.datasets` (never seen in training), by name; :func:`preset_image` loads one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backend.registry import choose
from backend.watermark.datasets import HELDOUT_PHOTOS

if TYPE_CHECKING:
    import numpy as np

KINDS: tuple = ()

PRESETS: tuple[str, ...] = HELDOUT_PHOTOS


def preset_image(name: str) -> np.ndarray:
    """The preset photo ``name`` as ``(H, W, 3)`` uint8 RGB."""
    from backend.watermark.datasets import load_photo

    return load_photo(choose(name, PRESETS, "preset image"))


__all__ = ["KINDS", "PRESETS", "preset_image"]
