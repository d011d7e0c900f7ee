"""Shared AppTest fixtures: open a page by its catalog id, and small upload payloads (a valid PNG, bytes that are no
image) that every page's upload test uses."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def page_path(id_: str) -> str:
    return str(ROOT / "app_pages" / f"{id_}.py")


def open_page(id_: str, timeout: float = 60) -> AppTest:
    """The page ``app_pages/<id>.py`` run once (nothing heavy runs on opening)."""
    at = AppTest.from_file(page_path(id_), default_timeout=timeout)
    at.run()
    return at


def png_bytes(seed: int = 0, size: tuple[int, int] = (96, 96)) -> bytes:
    """A small random RGB PNG."""
    import numpy as np
    from PIL import Image

    arr = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


NOT_AN_IMAGE = b"this is plain text, not an image" * 4


@dataclass
class Widget:
    """One upload widget of a page, for ``tests/app/test_inputs_pages.py`` (a bad then an odd corpus file).

    Each ``tests/app/test_page_<id>.py`` lists its page's uploads as ``UPLOADS = [Widget(...)]``. ``setup``: widget
    settings ``(accessor, key, value)`` that reveal the uploader; ``submit``: a button pressed before the page decodes
    the upload; ``form``: the uploader sits in a form; ``bad`` / ``odd``: corpus file names under
    ``tests/data/bad/<kind>/`` (for images, ``odd`` is ``rgba`` or ``gray16``)."""

    page: str
    kind: str
    key: str
    setup: list[tuple[str, str, object]] = field(default_factory=list)
    submit: str | None = None
    form: bool = False
    bad: str = ""
    odd: str = ""

    @property
    def id(self) -> str:
        return f"{self.page}-{self.key}"


def image_widget(page: str, key: str) -> Widget:
    """The shared ``ui.inputs.image_input(key, ...)`` widget: choose "Upload your own", then upload."""
    return Widget(page, "image", f"{key}_upload", [("selectbox", f"{key}_choice", "Upload your own")],
                  bad="bad_wrong_magic.png", odd="rgba")


@pytest.fixture
def page() -> Callable[..., AppTest]:
    """``page("softbon")`` -> the opened AppTest of that page."""
    return open_page
