"""Input pickers: a preset or the user's own upload, decoded through ``backend.io`` (content sniffed, limits enforced).
Bad input is shown in the page with its message; the caller gets None.

Every upload names a registered input kind (:mod:`backend.io.registry`): ``upload(kind, ...)`` shows the uploader
with that kind's file types and size limit, ``decoded(kind, got, ...)`` decodes it with the kind's decoder, and
``file_input`` does both. ``tests/test_inputs.py`` fails when a page calls ``st.file_uploader`` or reads a file itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import streamlit as st
from PIL import Image

from backend.errors import InputError
from backend.io import ImageLimits
from backend.io import registry as inputs

from .state import bound

UPLOAD = "Upload your own"


def upload_bytes(label: str, key: str, types: list[str], max_mb: float, help: str = "") -> tuple[str, bytes] | None:
    """A file uploader with a size cap. Returns ``(file name, bytes)`` or None (nothing uploaded, or refused)."""
    f = st.file_uploader(label, type=types, key=key, help=help or f"At most {max_mb:g} MB.",
                         max_upload_size=max(1, math.ceil(max_mb)))
    if f is None:
        return None
    data = f.getvalue()
    if len(data) > max_mb * 2**20:
        st.error(f"{f.name} is {len(data) / 2**20:.1f} MB; the limit here is {max_mb:g} MB.")
        return None
    return f.name, data


def upload(kind: str, label: str, key: str, help: str = "") -> tuple[str, bytes] | None:
    """The uploader of a registered input kind: its file types, its size limit, its limits as the help text."""
    k = inputs.get(kind)
    return upload_bytes(label, key, list(k.extensions), k.max_mb, help or f"{k.limits}.")


def decoded(kind: str, got: tuple[str, bytes] | None, **options: object) -> object | None:
    """``got`` (from :func:`upload`) decoded as ``kind``; None when nothing was uploaded or the file is refused (the
    reason is shown with ``st.error``, and the next upload starts afresh)."""
    if got is None:
        return None
    name, data = got
    try:
        return inputs.decode(kind, data, name=name, **options)
    except InputError as err:
        st.error(str(err), icon=":material/error:")
        return None


def file_input(kind: str, label: str, key: str, help: str = "", **options: object) -> tuple[str, object] | None:
    """Upload and decode in one: ``(file name, decoded value)`` or None."""
    got = upload(kind, label, key, help)
    value = decoded(kind, got, **options)
    return None if got is None or value is None else (got[0], value)


def text_upload(key: str, help: str = "") -> tuple[str, str] | None:
    """A UTF-8 text upload (kind ``text_corpus``, at most 2 MB) with a caption of its size; ``(name, text)`` or None."""
    got = file_input("text_corpus", "UTF-8 text (.txt, .md), at most 2 MB", key, help=help)
    if got is not None:
        st.caption(f"{got[0]}: {len(got[1]):,} characters (about {len(got[1]) // 4:,} tokens).")
    return got


def skimage_presets() -> dict[str, Callable[[], Image.Image]]:
    """Photos that ship inside scikit-image (offline, public domain / CC0)."""

    def loader(name: str) -> Callable[[], Image.Image]:
        def load() -> Image.Image:
            from skimage import data

            return Image.fromarray(getattr(data, name)()).convert("RGB")

        return load

    return {n: loader(n) for n in ("chelsea", "astronaut", "coffee", "rocket", "camera")}


def image_input(
    key: str,
    presets: dict[str, Callable[[], Image.Image]] | None = None,
    limits: ImageLimits | None = None,
    label: str = "Image",
) -> tuple[str, Image.Image | None]:
    """A preset selector plus an upload option. Returns ``(label, image or None)``. The choice is bound to the URL
    (``<key>_choice``), so a shared link opens on the same preset photo; an upload never travels in a link."""
    presets = presets or skimage_presets()
    lim = limits or ImageLimits()
    choice = bound(st.selectbox, label, [*presets, UPLOAD], key=f"{key}_choice")
    if choice != UPLOAD:
        return choice, _preset(choice, presets)
    got = upload_bytes(
        "Upload an image", key=f"{key}_upload", types=list(inputs.get("image").extensions),
        max_mb=lim.max_bytes / 2**20, help=lim.describe(),
    )
    if got is None:
        st.caption(f"Limits: {lim.describe()}. The type is checked from the content, not the file name.")
        return UPLOAD, None
    return got[0], decoded("image", got, limits=lim)


def _preset(choice: str, presets: dict[str, Callable[[], Image.Image]]) -> Image.Image:
    return presets[choice]()


def multi_image_input(key: str, low: int, high: int, check: Callable[[int], None] | None = None,
                      limits: ImageLimits | None = None,
                      label: str = "Upload photos") -> tuple[list[str], list[Image.Image]] | None:
    """Several images at once: one uploader whose widget ``key`` ends in ``_upload``, each file decoded as the
    ``image`` kind (the lab's image rules), ``low``-``high`` of them. ``check(n)`` (the method's count rule, raising InputError) decides whether the count
    is acceptable: too many is shown with ``st.error``, too few with ``st.info`` (more may still come). Returns
    ``(names, images)`` or None (nothing, refused or too few)."""
    lim = limits or ImageLimits()
    files = st.file_uploader(label, type=list(inputs.get("image").extensions), key=key,
                             accept_multiple_files=True, help=f"{low}-{high} photos of one scene; {lim.describe()}.",
                             max_upload_size=max(1, math.ceil(lim.max_bytes / 2**20)))
    if not files:
        st.caption(f"Upload {low}-{high} photos of one scene. Limits per photo: {lim.describe()}. The type is checked "
                   "from the content, not the file name.")
        return None
    names, images = [], []
    for f in files:
        img = decoded("image", (f.name, f.getvalue()), limits=lim)
        if img is None:
            return None
        names.append(f.name)
        images.append(img)
    try:
        (check or _count_between(low, high))(len(images))
    except InputError as err:
        if len(images) < low:
            st.info(str(err), icon=":material/add_photo_alternate:")
        else:
            st.error(str(err), icon=":material/error:")
        return None
    return names, images


def _count_between(low: int, high: int) -> Callable[[int], None]:
    def check(n: int) -> None:
        if not low <= n <= high:
            raise InputError(f"Upload {low}-{high} images; got {n}.")

    return check
