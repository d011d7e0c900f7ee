"""The inputs of BAIT: no kind of its own (the user's image is the shared ``image`` kind, scaled down to at most
256 px a side before protection), and the presets the page and the CLI offer instead of an upload: the first 8 test
images of each source (:data:`backend.robustness.bait.data.SOURCES`), protected with that source's shipped
protectors.
"""

from __future__ import annotations

from ...io.registry import InputKind
from .data import SOURCES

KINDS: tuple[InputKind, ...] = ()
PRESETS: dict[str, str] = {f"Test images: {SOURCES.label(name)}": name for name in SOURCES}
