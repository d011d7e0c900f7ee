"""The inputs of the nowcast: the ``radar`` kind (a user's radar sequence), its examples (one small valid file and
valid-but-odd variants, from which the bad-input corpus and the fuzzing tests are built), and the synthetic cases the
page offers instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``radar`` | ``backend.forecast.nowcast.io.load_radar`` | NPZ, NetCDF classic, ZIP of PNG | 20 MB (160 MB unpacked), 3-96 frames, 0-500 mm/h | nowcast page; ``nowcast run --input`` |

``PRESETS``: named seeds of the synthetic world (``python -m backend nowcast run --case seed=<seed>``), cases
outside the training seeds 1000+ and the validation seeds 5000+.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np

from ...io.registry import MB, InputKind, declare

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="radar", what="a radar sequence", decoder="backend.forecast.nowcast.io:load_radar",
            extensions=("npz", "nc", "zip"), max_bytes=20 * MB,
            limits="NPZ, NetCDF classic or a ZIP of PNG frames; at most 20 MB, 3-96 frames of 16-1024 px, 0-500 mm/h",
            family="archive"),
)

PRESETS: dict[str, int] = {"Mixed rain, moving north-east (seed 13)": 13, "Showers developing (seed 6)": 6,
                           "New convective cells (seed 4)": 4, "Widespread heavy rain (seed 14)": 14,
                           "Stratiform rain (seed 0)": 0}


def _radar_frames(seed: int, t: int = 4, side: int = 16) -> np.ndarray:
    r = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:side, 0:side]
    return np.stack([np.clip(8 - np.hypot(yy - 6 - k, xx - 6 - k), 0, None) * r.uniform(0.5, 1.5)
                     for k in range(t)]).astype(np.float32)


def _png(arr: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    """A deflated ZIP with fixed timestamps (the same bytes on every run)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _netcdf(frames: np.ndarray, units: str) -> bytes:
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
        return path.read_bytes()


def radar(seed: int = 0) -> bytes:
    """An NPZ radar sequence: 4 frames of 16 x 16 mm/h, 15 minutes apart."""
    buf = io.BytesIO()
    np.savez_compressed(buf, precip=_radar_frames(seed), timestep_min=np.float32(15.0), pixel_km=np.float32(4.0))
    return buf.getvalue()


def radar_odd() -> dict[str, bytes]:
    """Valid-but-odd sequences: a ZIP of PNG frames, NetCDF classic, an NPZ with ``rr`` and ``times_min``."""
    z = _zip({f"f{i:02d}.png": _png((f * 20).astype(np.uint8)) for i, f in enumerate(_radar_frames(2))})
    times = io.BytesIO()
    np.savez(times, rr=_radar_frames(4, 3, 20).astype(np.float64), times_min=np.array([0.0, 10.0, 20.0]))
    return {"png_frames.zip": z, "classic.nc": _netcdf(_radar_frames(3, 3), units="mm/h"),
            "times_min.npz": times.getvalue()}
