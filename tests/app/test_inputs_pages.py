"""Every upload widget of every page gets one bad and one valid-but-odd file from the corpus (``tests/data/bad``):
the bad one is refused with ``st.error`` carrying the decoder's message (no exception, no internal error), and the
odd one, uploaded next in the same session, is then accepted without an error: a refused file leaves the page usable.
"""

from __future__ import annotations

import importlib
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from backend.errors import InputError
from backend.io import registry
from tests.app.conftest import Widget, open_page

CORPUS = Path(__file__).resolve().parents[1] / "data" / "bad"


def _image_odd(mode: str) -> bytes:
    """A 128 x 128 16-bit grayscale or RGBA PNG (large enough for every page's minimum side)."""
    rng = np.random.default_rng(5)
    if mode == "I;16":
        img = Image.fromarray(rng.integers(0, 65536, (128, 128)).astype(np.uint16))
    else:
        arr = rng.integers(0, 256, (128, 128, 4), dtype=np.uint8)
        arr[..., 3] = np.linspace(0, 255, 128, dtype=np.uint8)[None, :]
        img = Image.fromarray(arr, "RGBA")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _widgets() -> list[Widget]:
    """Every page's ``UPLOADS`` (declared in ``tests/app/test_page_<id>.py``)."""
    out: list[Widget] = []
    for f in sorted(Path(__file__).parent.glob("test_page_*.py")):
        out += getattr(importlib.import_module(f"tests.app.{f.stem}"), "UPLOADS", [])
    return out


WIDGETS = _widgets()


def test_every_page_upload_is_listed() -> None:
    """Each uploader key of the pages is listed in the ``UPLOADS`` of its page's AppTest module."""
    import ast

    keys = set()
    for page in (CORPUS.parents[2] / "app_pages").glob("*.py"):
        for node in ast.walk(ast.parse(page.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "image_input":
                keys.add(f"{node.args[0].value}_upload")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith("_upload"):
                keys.add(node.value)
    assert keys == {w.key for w in WIDGETS}


def _file(w: Widget, which: str) -> tuple[str, bytes]:
    name = getattr(w, which)
    if w.kind == "image" and which == "odd":
        return f"odd_{name}.png", _image_odd("RGBA" if name == "rgba" else "I;16")
    return name, (CORPUS / w.kind / name).read_bytes()


def _upload(at, w: Widget, name: str, data: bytes):
    at.file_uploader(key=w.key).set_value((name, data, "application/octet-stream"))
    if w.submit:
        at.button(key=w.submit).click()
    return at.run()


@pytest.mark.parametrize("w", WIDGETS, ids=[w.id for w in WIDGETS])
def test_bad_then_odd_upload(w: Widget) -> None:
    bad_name, bad = _file(w, "bad")
    with pytest.raises(InputError) as refused:
        registry.decode(w.kind, bad, name=bad_name)
    at = open_page(w.page, timeout=120)
    for method, key, value in w.setup:  # one rerun each (a choice may reveal the next widget), except in a form
        getattr(at, method)(key=key).set_value(value)
        if not w.form:
            at.run()
    assert not at.exception, at.exception
    at = _upload(at, w, bad_name, bad)
    assert not at.exception, at.exception
    messages = [e.value for e in at.error]
    fragment = max(str(refused.value).split(bad_name), key=len).strip()[:40]  # pages may name the file otherwise
    assert any(fragment in m for m in messages), (fragment, messages)
    assert not any(m.startswith("Internal error") for m in messages), messages
    odd_name, odd = _file(w, "odd")
    at = _upload(at, w, odd_name, odd)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
