"""Small valid files for every registered input kind (:mod:`backend.io.registry`), and valid-but-odd variants.

``example(seed)`` returns the bytes of one small file the kind's decoder accepts; ``odd()`` returns ``{file name:
bytes}`` of valid files with unusual properties (one pixel, 16-bit, RGBA, one row, CRLF line ends, a byte-order mark,
cells that look like spreadsheet formulas) that the decoder must either process or refuse with an ``InputError``.
The bad-input corpus (``tests/data/bad/make_corpus.py``) and the fuzzing tests mutate these. All are a few KB at most.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _png(arr: np.ndarray, mode: str | None = None) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    (Image.fromarray(arr, mode) if mode else Image.fromarray(arr)).save(buf, format="PNG")
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    """A deflated ZIP with fixed timestamps (the same bytes on every run)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


# ------------------------------------------------------------------------------------------------------- image
def image(seed: int = 0) -> bytes:
    """A 24 x 20 RGB PNG of smooth random colour."""
    r = _rng(seed)
    base = r.integers(0, 256, (3, 4, 3)).astype(np.float64)
    arr = np.kron(base, np.ones((8, 6, 1)))[:20, :24]
    return _png(arr.clip(0, 255).astype(np.uint8))


def image_odd() -> dict[str, bytes]:
    r = _rng(1)
    gray16 = (r.integers(0, 65536, (20, 20))).astype(np.uint16)
    rgba = r.integers(0, 256, (20, 20, 4), dtype=np.uint8)
    rgba[..., 3] = 0
    from PIL import Image

    jpg = io.BytesIO()
    Image.fromarray(r.integers(0, 256, (20, 20, 3), dtype=np.uint8)).save(jpg, format="JPEG", quality=80)
    pal = io.BytesIO()
    Image.fromarray(r.integers(0, 256, (20, 20, 3), dtype=np.uint8)).convert("P").save(pal, format="PNG")
    return {"one_pixel.png": _png(np.zeros((1, 1, 3), np.uint8)), "gray16.png": _png(gray16),
            "rgba_transparent.png": _png(rgba), "photo.jpg": jpg.getvalue(), "palette.png": pal.getvalue(),
            "gray8.png": _png(r.integers(0, 256, (20, 20), dtype=np.uint8))}


# ------------------------------------------------------------------------------------------------------- video
def video(seed: int = 0) -> bytes:
    """A lossless NPZ video: 6 frames of 16 x 16 RGB (the page's own download layout)."""
    r = _rng(seed)
    v = np.repeat(r.integers(0, 256, (1, 16, 16, 3), dtype=np.uint8), 6, axis=0)
    buf = io.BytesIO()
    np.savez_compressed(buf, video=v, fps=np.float32(8.0))
    return buf.getvalue()


def video_odd() -> dict[str, bytes]:
    z = _zip({f"frame_{i:03d}.png": _png(np.full((16, 16, 3), 40 * i, np.uint8)) for i in range(5)})
    from PIL import Image

    g = io.BytesIO()
    ims = [Image.fromarray(np.full((16, 16, 3), 50 * i, np.uint8)) for i in range(5)]
    ims[0].save(g, format="GIF", save_all=True, append_images=ims[1:], duration=100)
    return {"frames.zip": z, "tiny.gif": g.getvalue()}


# ------------------------------------------------------------------------------------------------- text_corpus
def text_corpus(seed: int = 0) -> bytes:
    """A few paragraphs of plain English."""
    r = _rng(seed)
    words = "the model reads a short text and the lab prunes heads while keeping what matters most".split()
    paras = [" ".join(r.choice(words, 40)).capitalize() + "." for _ in range(4)]
    return "\n\n".join(paras).encode()


def text_corpus_odd() -> dict[str, bytes]:
    t = text_corpus(1).decode()
    return {"crlf.txt": t.replace("\n", "\r\n").encode(), "bom.txt": b"\xef\xbb\xbf" + t.encode(),
            "unicode.md": "# Überschrift\n\nZürich, 東京, emoji 🙂, =SUM(A1) stays text.\n".encode(),
            "one_char.txt": b"a"}


# ------------------------------------------------------------------------------------------------ model_folder
def model_config(seed: int = 0) -> bytes:
    """The ``config.json`` of a model folder (the folder kinds' corpus files are config files)."""
    return json.dumps({"model_type": "bert", "hidden_size": 32 + seed, "num_hidden_layers": 2}).encode()


def model_config_odd() -> dict[str, bytes]:
    return {"crlf.json": b'{\r\n  "model_type": "bert"\r\n}\r\n', "bom.json": b'\xef\xbb\xbf{"model_type": "gpt2"}',
            "no_model_type.json": b"{}"}
