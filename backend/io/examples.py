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


# ------------------------------------------------------------------------------------------------------- radar
def _radar_frames(seed: int, t: int = 4, side: int = 16) -> np.ndarray:
    r = _rng(seed)
    yy, xx = np.mgrid[0:side, 0:side]
    return np.stack([np.clip(8 - np.hypot(yy - 6 - k, xx - 6 - k), 0, None) * r.uniform(0.5, 1.5)
                     for k in range(t)]).astype(np.float32)


def radar(seed: int = 0) -> bytes:
    """An NPZ radar sequence: 4 frames of 16 x 16 mm/h, 15 minutes apart."""
    buf = io.BytesIO()
    np.savez_compressed(buf, precip=_radar_frames(seed), timestep_min=np.float32(15.0), pixel_km=np.float32(4.0))
    return buf.getvalue()


def radar_odd() -> dict[str, bytes]:
    z = _zip({f"f{i:02d}.png": _png((f * 20).astype(np.uint8)) for i, f in enumerate(_radar_frames(2))})
    nc = io.BytesIO()
    _netcdf(nc, _radar_frames(3, 3), units="mm/h")
    times = io.BytesIO()
    np.savez(times, rr=_radar_frames(4, 3, 20).astype(np.float64), times_min=np.array([0.0, 10.0, 20.0]))
    return {"png_frames.zip": z, "classic.nc": nc.getvalue(), "times_min.npz": times.getvalue()}


def _netcdf(fh: io.BytesIO, frames: np.ndarray, units: str) -> None:
    import tempfile
    from pathlib import Path

    from scipy.io import netcdf_file

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.nc"
        with netcdf_file(path, "w") as nc:
            t, h, w = frames.shape
            nc.createDimension("time", t)
            nc.createDimension("y", h)
            nc.createDimension("x", w)
            v = nc.createVariable("time", "f4", ("time",))
            v[:] = np.arange(t, dtype=np.float32) * 15
            v = nc.createVariable("precip", "f4", ("time", "y", "x"))
            v[:] = frames
            v.units = units
        fh.write(path.read_bytes())


# ------------------------------------------------------------------------------------------------ trajectories
def trajectories(seed: int = 0) -> bytes:
    """A ``frame,id,x,y`` CSV: 3 pedestrians over 8 frames."""
    r = _rng(seed)
    rows = ["frame,id,x,y"]
    for f in range(8):
        for i in range(3):
            rows.append(f"{f},{i},{i * 1.5 + 0.3 * f + r.normal(0, 0.01):.3f},{2.0 - 0.1 * f * i:.3f}")
    return _lines(rows)


def trajectories_odd() -> dict[str, bytes]:
    base = trajectories(1).decode().splitlines()
    named = ["Frame,ID,X,Y,extra"] + [f"{ln},=HYPERLINK(\"x\")" for ln in base[1:]]
    return {"crlf.csv": _lines(base, crlf=True), "bom.csv": b"\xef\xbb\xbf" + _lines(base),
            "one_row.csv": _lines(base[:2]), "formula_and_case.csv": _lines(named),
            "text_ids.csv": _lines(["frame,id,x,y"] + [f"{f},-walker{i},{i + 0.2 * f},{f * 0.1}"
                                                       for f in range(4) for i in range(2)])}


# ---------------------------------------------------------------------------------------------- labelled_texts
def labelled_texts(seed: int = 0) -> bytes:
    """A ``text,label`` CSV: 12 short sentences of two classes."""
    r = _rng(seed)
    words = ["red", "blue", "cat", "dog", "runs", "sleeps", "today", "now"]
    rows = ["text,label"]
    for i in range(12):
        rows.append(" ".join(r.choice(words, 4)) + ("," + ("pos" if i % 2 else "neg")))
    return _lines(rows)


def labelled_texts_odd() -> dict[str, bytes]:
    base = labelled_texts(1).decode().splitlines()
    quoted = [base[0]] + [f'"{t}, quoted",{lab}' for t, lab in (ln.rsplit(",", 1) for ln in base[1:])]
    formula = [base[0]] + [f"=1+{i} {ln}" if i % 3 == 0 else ln for i, ln in enumerate(base[1:])]
    return {"crlf.csv": _lines(base, crlf=True), "one_row.csv": _lines(base[:2]), "quoted.csv": _lines(quoted),
            "formula_cells.csv": _lines(formula), "label_first.csv": _lines(
                ["label,text"] + [",".join(reversed(ln.rsplit(",", 1))) for ln in base[1:]])}


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


# --------------------------------------------------------------------------------------------- deltaadapter
def multiseries(seed: int = 0) -> bytes:
    """180 hourly rows, a daily target and two channels (the decoder's shortest input 24 and horizon 6)."""
    r = _rng(seed)
    t = np.arange(180)
    y = np.sin(2 * np.pi * t / 24) + 0.1 * r.standard_normal(180)
    a, b = r.standard_normal(180), np.cos(2 * np.pi * t / 24) + 0.1 * r.standard_normal(180)
    rows = ["time,target,a,b"] + [f"2024-01-{1 + i // 24:02d} {i % 24:02d}:00,{y[i]:.3f},{a[i]:.3f},{b[i]:.3f}"
                                  for i in range(180)]
    return _lines(rows)


def multiseries_odd() -> dict[str, bytes]:
    base = multiseries().decode().splitlines()
    numeric_time = ["step,target,a,b"] + [f"{i}," + ln.split(",", 1)[1] for i, ln in enumerate(base[1:])]
    one_channel = [",".join(ln.split(",")[:2]) for ln in base]
    return {"crlf.csv": _lines(base, crlf=True), "bom.csv": b"\xef\xbb\xbf" + _lines(base),
            "numeric_time.csv": _lines(numeric_time), "one_channel.csv": _lines(one_channel)}


def _state(seed: int, dtype: str = "float32") -> bytes:
    import torch
    from safetensors.torch import save

    g = torch.Generator().manual_seed(seed)
    n_in, n_out = 24 * 3, 6
    state = {"seasonal.weight": torch.randn(n_out, n_in, generator=g) * 0.01, "seasonal.bias": torch.zeros(n_out),
             "trend.weight": torch.randn(n_out, n_in, generator=g) * 0.01, "trend.bias": torch.zeros(n_out)}
    return save({k: v.to(getattr(torch, dtype)) for k, v in state.items()})


def backbone_state(seed: int = 0) -> bytes:
    """A DLinear state for input 24 x 3 channels, horizon 6."""
    return _state(seed)


def backbone_state_odd() -> dict[str, bytes]:
    import torch
    from safetensors.torch import save

    return {"float16.safetensors": _state(0, "float16"),
            "other_model.safetensors": save({"w": torch.zeros(3, 3)})}
