"""Every upload widget of every page gets one bad and one valid-but-odd file from the corpus (``tests/data/bad``):
the bad one is refused with ``st.error`` carrying the decoder's message (no exception, no internal error), and the
odd one, uploaded next in the same session, is then accepted without an error: a refused file leaves the page usable.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from backend.errors import InputError
from backend.io import registry
from tests.app.conftest import open_page

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


@dataclass
class Widget:
    page: str
    kind: str
    key: str
    setup: list[tuple[str, str, object]] = field(default_factory=list)
    submit: str | None = None  # a button that must be pressed before the page decodes the upload
    form: bool = False  # the uploader sits in a form: its settings apply on submit, not on a rerun
    bad: str = ""
    odd: str = ""

    @property
    def id(self) -> str:
        return f"{self.page}-{self.key}"


def _image(page: str, key: str) -> Widget:
    return Widget(page, "image", f"{key}_upload", [("selectbox", f"{key}_choice", "Upload your own")],
                  bad="bad_wrong_magic.png", odd="rgba")


WIDGETS = [
    _image("attribution", "attr_img"), _image("illava", "illava_img"), _image("models", "models_vis"),
    _image("models", "models_cls"), _image("rewatermark", "rewatermark_img"),
    Widget("nowcast", "radar", "nowcast_upload", [("radio", "nowcast_src", "Upload radar")],
           bad="bad_npz_nan.npz", odd="odd_classic.nc"),
    Widget("crowd", "trajectories", "crowd_upload",
           [("selectbox", "crowd_source", "Upload your own CSV"),
            ("multiselect", "crowd_methods", ["constant_velocity"]), ("slider", "crowd_seconds", 5)],
           submit="FormSubmitter:crowd_form-Simulate", form=True,
           bad="bad_missing_columns.csv", odd="odd_crlf.csv"),
    Widget("futurefill", "series", "futurefill_upload", [("radio", "futurefill_source", "Upload a series")],
           bad="bad_latin1.txt", odd="odd_crlf.txt"),
    Widget("dada", "table", "dada_upload", [("selectbox", "dada_problem", "logistic / softmax"),
                                            ("radio", "dada_data", "Upload a CSV")],
           bad="bad_duplicate_columns.csv", odd="odd_crlf.csv"),
    Widget("dualrs", "points2d", "dualrs_upload", [("radio", "dualrs_source", "Upload a CSV")],
           bad="bad_inf_cell.csv", odd="odd_crlf.csv"),
    Widget("glot", "labelled_texts", "glot_upload", [("radio", "glot_csv_source", "Upload a CSV")],
           bad="bad_unclosed_quote.csv", odd="odd_crlf.csv"),
    Widget("pruning", "text_corpus", "pruning_upload", [("radio", "pruning_src", "Upload your own")],
           bad="bad_utf16.txt", odd="odd_crlf.txt"),
    Widget("softbon", "candidates", "softbon_upload", [("radio", "softbon_mode", "Your candidate answers (text)")],
           bad="bad_one_answer.txt", odd="odd_crlf.txt"),
    Widget("sigmark", "video", "sigmark_upload", [], submit="sigmark_extract", bad="bad_npz_rank3.npz",
           odd="odd_frames.zip"),
]


def test_every_page_upload_is_listed() -> None:
    """Each uploader key of the pages is in WIDGETS (a new page's upload gets its bad and odd file here)."""
    import ast

    keys = set()
    for page in (CORPUS.parents[2] / "pages").glob("*.py"):
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
