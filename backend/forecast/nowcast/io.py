"""Radar uploads (validated, then resampled to the model's grid and time step) and forecast export.

Accepted layouts (the type is sniffed from the bytes, never from the file name):

- **NPZ** (``numpy.savez``; pickles are refused): ``precip`` (T, H, W) rain rate in mm/h, oldest frame first;
  ``timestep_min`` (scalar, minutes between frames; or ``times_min``, (T,) minutes, evenly spaced); optional
  ``pixel_km`` (scalar, default 4).
- **NetCDF classic** (NetCDF-3, e.g. ``xarray.Dataset.to_netcdf(format="NETCDF3_CLASSIC")``): a variable ``precip``
  (or ``rainrate``/``rr``) with dimensions (time, y, x) in mm/h (``units`` "mm/h" or "mm h-1"; "dBZ" is converted with
  Marshall-Palmer Z = 200 R^1.6); a variable ``time`` in minutes (evenly spaced) or a global attribute
  ``timestep_min``; optional global attribute ``pixel_km``. NetCDF-4/HDF5 files are refused with a hint.
- **PNG stack**: a ZIP of grayscale PNG frames, ordered by file name, rain = grey level x ``png_scale`` (mm/h per grey
  level, stated by the user; default 0.25, so 255 = 63.75 mm/h), with the time step and pixel size stated by the user.

Limits: at most 20 MB, 3-96 frames, 16-1024 px per side, 5-60 minutes per frame, values in [0, 500] mm/h, no NaNs.
NPZ and ZIP archives may expand to at most 160 MB, checked from their headers before anything is decompressed
(:mod:`backend.io.archives`). Every violation raises ``InputError`` with what to change.

Resampling to the model (``to_model_grid``): the centre square is cropped, resized to 64 x 64 with anti-aliasing
(the pixel size becomes side x pixel_km / 64), and frames are interpolated linearly in time to 15-minute steps.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...io.archives import ZIP_ERRORS, load_npz, open_zip, read_member

MAX_BYTES = 20 * 2**20
MAX_FRAMES = 96
MIN_FRAMES = 3
MIN_SIDE, MAX_SIDE = 16, 1024
MAX_RATE = 500.0
STEP_RANGE = (5.0, 60.0)
MAX_UNPACKED = 8 * MAX_BYTES  # uncompressed bytes of an NPZ or a PNG ZIP, checked from the archive's headers
LIMITS_TEXT = (f"NPZ, NetCDF classic, or a ZIP of PNG frames; at most {MAX_BYTES // 2**20} MB, {MIN_FRAMES}-"
               f"{MAX_FRAMES} frames of {MIN_SIDE}-{MAX_SIDE} px, {STEP_RANGE[0]:g}-{STEP_RANGE[1]:g} min apart, "
               f"rain rate in mm/h (0-{MAX_RATE:g})")


@dataclass
class RadarSequence:
    """frames: (T, H, W) mm/h oldest first; timestep_min; pixel_km; notes: what was read or changed."""

    frames: np.ndarray
    timestep_min: float
    pixel_km: float
    notes: list[str] = field(default_factory=list)


def sniff(data: bytes) -> str | None:
    if data[:6] == b"\x93NUMPY":
        return "NPY"
    if data[:4] == b"PK\x03\x04":
        try:  # a damaged archive is still a ZIP: the loader says what is wrong with it
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                names = z.namelist()
        except ZIP_ERRORS:
            return "ZIP"
        return "NPZ" if names and all(n.endswith(".npy") for n in names) else "ZIP"
    if data[:4] in (b"CDF\x01", b"CDF\x02"):
        return "NETCDF3"
    if data[:8] == b"\x89HDF\r\n\x1a\n":
        return "HDF5"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "PNG"
    return None


def load_radar(data: bytes, name: str = "upload", timestep_min: float | None = None, pixel_km: float | None = None,
               png_scale: float = 0.25) -> RadarSequence:
    """Decode and validate an uploaded radar sequence (see the module docstring for the layouts)."""
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {MAX_BYTES // 2**20} MB. Crop or "
                         "subsample it.")
    if not data:
        raise InputError(f"{name} is empty.")
    kind = sniff(data)
    if kind == "NPZ":
        seq = _load_npz(data, name)
    elif kind == "NETCDF3":
        seq = _load_netcdf(data, name)
    elif kind == "ZIP":
        seq = _load_png_zip(data, name, png_scale)
    elif kind == "HDF5":
        raise InputError(f"{name} is NetCDF-4/HDF5, which this server cannot read. Save it as NetCDF classic "
                         "(xarray: to_netcdf(format='NETCDF3_CLASSIC')) or as NPZ.")
    elif kind in ("PNG", "NPY"):
        raise InputError(f"{name} is a single {kind}; a sequence is needed: upload a ZIP of PNG frames or an NPZ "
                         "with a `precip` array of shape (T, H, W).")
    else:
        raise InputError(f"{name} is not NPZ, NetCDF classic or a ZIP of PNG frames (checked from its content).")
    if timestep_min is not None and seq.timestep_min is None:
        seq.timestep_min = float(timestep_min)
    if pixel_km is not None and seq.pixel_km is None:
        seq.pixel_km = float(pixel_km)
    if seq.pixel_km is None:
        seq.pixel_km = 4.0
        seq.notes.append("no pixel size given: assumed 4 km")
    if seq.timestep_min is None:
        raise InputError("The time step between frames is not stated: give `timestep_min` (NPZ), a `time` variable "
                         "(NetCDF) or the time step field of the page.")
    validate(seq)
    return seq


def validate(seq: RadarSequence) -> None:
    """Rank, size, frame count, NaNs, negative or absurd values, time step: InputError with what to change."""
    f = seq.frames
    if f.ndim != 3:
        raise InputError(f"The radar array must have rank 3 (time, y, x); got shape {tuple(f.shape)}.")
    t, h, w = f.shape
    if t < MIN_FRAMES:
        raise InputError(f"The sequence has {t} frame(s); motion estimation needs at least {MIN_FRAMES}.")
    if t > MAX_FRAMES:
        raise InputError(f"The sequence has {t} frames; the limit is {MAX_FRAMES}.")
    if not (MIN_SIDE <= h <= MAX_SIDE and MIN_SIDE <= w <= MAX_SIDE):
        raise InputError(f"Frames are {h} x {w} px; each side must be {MIN_SIDE}-{MAX_SIDE} px.")
    if f.dtype.kind not in "fiu":
        raise InputError(f"The radar array must hold real numbers; got {f.dtype}.")
    if np.isnan(f).any():
        raise InputError(f"The radar array has {int(np.isnan(f).sum())} NaN values; fill missing data (e.g. with 0) "
                         "before uploading.")
    if not np.isfinite(f).all():
        raise InputError("The radar array has infinite values.")
    if (f < 0).any():
        raise InputError(f"The radar array has negative rain rates (minimum {float(f.min()):.3g}); rain rate must be "
                         ">= 0 mm/h (dBZ or dBR fields must be converted first).")
    if float(f.max()) > MAX_RATE:
        raise InputError(f"The largest value is {float(f.max()):.0f}; rain rates above {MAX_RATE:g} mm/h are not "
                         "physical. Are the units mm/h (not dBZ x 10 or mm per day)?")
    if not STEP_RANGE[0] <= seq.timestep_min <= STEP_RANGE[1]:
        raise InputError(f"Frames {seq.timestep_min:g} min apart; the time step must be {STEP_RANGE[0]:g}-"
                         f"{STEP_RANGE[1]:g} min.")
    if not 0.1 <= seq.pixel_km <= 50:
        raise InputError(f"Pixel size {seq.pixel_km:g} km is outside 0.1-50 km.")


def _regular_step(times: np.ndarray, what: str) -> float:
    times = np.asarray(times, np.float64).ravel()
    if times.size < 2:
        raise InputError(f"{what} needs at least two times to give the time step.")
    d = np.diff(times)
    if (d <= 0).any():
        raise InputError(f"{what} is not increasing: order the frames oldest first.")
    if np.ptp(d) > 1e-3 * max(1.0, float(np.median(d))):
        raise InputError(f"{what} has mismatched time steps ({', '.join(f'{x:g}' for x in np.unique(d)[:5])} min); "
                         "frames must be evenly spaced.")
    return float(d[0])


def _scalar(z: dict[str, np.ndarray], key: str, name: str) -> float:
    """A real number stored as an NPZ array (0-d or the first element)."""
    a = np.asarray(z[key])
    if a.size == 0 or a.dtype.kind not in "fiu":
        raise InputError(f"`{key}` in {name} must be a real number; got an array of {a.dtype} with {a.size} "
                         "element(s).")
    return float(a.ravel()[0])


def _load_npz(data: bytes, name: str) -> RadarSequence:
    z = load_npz(data, name, max_array_bytes=MAX_UNPACKED, max_total=MAX_UNPACKED)
    keys = set(z)
    arr_key = next((k for k in ("precip", "rainrate", "rr", "R") if k in keys), None)
    if arr_key is None:
        raise InputError(f"{name} has no `precip` array (found: {', '.join(sorted(keys)) or 'nothing'}).")
    frames = np.asarray(z[arr_key])
    step = None
    if "timestep_min" in keys:
        step = _scalar(z, "timestep_min", name)
    elif "times_min" in keys:
        if z["times_min"].dtype.kind not in "fiu":
            raise InputError(f"`times_min` in {name} must hold numbers (minutes); got {z['times_min'].dtype}.")
        step = _regular_step(z["times_min"], "`times_min`")
    if frames.ndim == 3 and "times_min" in keys and len(np.asarray(z["times_min"]).ravel()) != frames.shape[0]:
        raise InputError("`times_min` and `precip` disagree on the number of frames.")
    px = _scalar(z, "pixel_km", name) if "pixel_km" in keys else None
    return RadarSequence(frames.astype(np.float32) if frames.dtype.kind in "fiu" else frames, step, px,
                         [f"NPZ array `{arr_key}`"])


def _load_netcdf(data: bytes, name: str) -> RadarSequence:
    from scipy.io import netcdf_file

    try:
        with netcdf_file(io.BytesIO(data), "r", mmap=False) as nc:
            var = next((nc.variables[k] for k in ("precip", "rainrate", "rr") if k in nc.variables), None)
            if var is None:
                raise InputError(f"{name} has no `precip` variable (found: {', '.join(nc.variables) or 'nothing'}).")
            frames = np.array(var[:], dtype=np.float64)
            units = (var.units.decode() if isinstance(getattr(var, "units", b""), bytes)
                     else str(getattr(var, "units", ""))).strip().lower()
            fill = getattr(var, "_FillValue", None)
            if fill is not None:
                frames[frames == fill] = np.nan
            step = None
            if "time" in nc.variables:
                step = _regular_step(np.array(nc.variables["time"][:]), "The `time` variable")
            elif hasattr(nc, "timestep_min"):
                step = float(np.ravel(nc.timestep_min)[0])
            px = float(np.ravel(nc.pixel_km)[0]) if hasattr(nc, "pixel_km") else None
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - scipy raises many types on broken files
        raise InputError(f"{name} could not be read as NetCDF classic ({type(err).__name__}).") from None
    notes = [f"NetCDF variable in {units or 'unstated units (assumed mm/h)'}"]
    if units in ("dbz",):
        frames = np.where(np.isfinite(frames), (10 ** (frames / 10) / 200.0) ** (1 / 1.6), frames)
        frames[frames < 0.05] = 0.0
        notes.append("dBZ converted to mm/h with Z = 200 R^1.6")
    elif units and units not in ("mm/h", "mm h-1", "mm hr-1", "mm/hr", "mm h**-1"):
        raise InputError(f"Units {units!r} are not supported; give rain rate in mm/h (or reflectivity in dBZ).")
    return RadarSequence(frames.astype(np.float32), step, px, notes)


def _load_png_zip(data: bytes, name: str, scale: float) -> RadarSequence:
    if not 0 < scale <= 10:
        raise InputError("The PNG scale must be between 0 and 10 mm/h per grey level.")
    frames = []
    with open_zip(data, name, MAX_UNPACKED) as z:
        infos = sorted((i for i in z.infolist() if not i.is_dir() and i.filename.lower().endswith(".png")),
                       key=lambda i: i.filename)
        if not infos:
            raise InputError(f"{name} holds no PNG frames.")
        if len(infos) > MAX_FRAMES:
            raise InputError(f"{name} holds {len(infos)} PNG frames; the limit is {MAX_FRAMES}.")
        for info in infos:
            raw = read_member(z, info, name)
            if raw[:8] != b"\x89PNG\r\n\x1a\n":
                raise InputError(f"{info.filename} is not a PNG (checked from its content).")
            frames.append(_png_frame(raw, info.filename))
    shapes = {f.shape for f in frames}
    if len(shapes) != 1:
        raise InputError(f"The PNG frames differ in size ({', '.join(f'{h}x{w}' for h, w in sorted(shapes))}).")
    return RadarSequence(np.stack(frames) * scale, None, None,
                         [f"{len(frames)} PNG frames, {scale:g} mm/h per grey level"])


def _png_frame(raw: bytes, member: str) -> np.ndarray:
    """One grayscale frame of a PNG stack; the size is read from the header before any pixel is decoded."""
    from PIL import Image

    try:
        img = Image.open(io.BytesIO(raw), formats=["PNG"])
        if img.width > MAX_SIDE or img.height > MAX_SIDE:
            raise InputError(f"{member} is {img.width} x {img.height} px; the limit is {MAX_SIDE} per side.")
        img.load()
        return np.asarray(img.convert("L") if img.mode not in ("L", "I;16", "I") else img, np.float32)
    except InputError:
        raise
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as err:
        raise InputError(f"{member} could not be decoded as PNG ({type(err).__name__}); it looks truncated or "
                         "corrupt.") from None


# ----------------------------------------------------------------------------------------------- resampling
def to_model_grid(seq: RadarSequence, size: int = 64, timestep_min: float = 15.0) -> RadarSequence:
    """Centre-crop to a square, resize to ``size`` px (anti-aliased), interpolate linearly to ``timestep_min``."""
    from skimage.transform import resize

    f = seq.frames.astype(np.float32)
    notes = list(seq.notes)
    t, h, w = f.shape
    side = min(h, w)
    if h != w:
        y0, x0 = (h - side) // 2, (w - side) // 2
        f = f[:, y0:y0 + side, x0:x0 + side]
        notes.append(f"centre-cropped {h} x {w} to {side} x {side} px")
    px = seq.pixel_km
    if side != size:
        f = np.stack([resize(fr, (size, size), order=1, anti_aliasing=side > size, preserve_range=True) for fr in f])
        px = seq.pixel_km * side / size
        notes.append(f"resized {side} x {side} px of {seq.pixel_km:g} km to {size} x {size} px of {px:.3g} km "
                     f"(the model was trained on 4 km pixels)")
    if abs(seq.timestep_min - timestep_min) > 1e-6:
        times = np.arange(t) * seq.timestep_min
        new_t = np.arange(0, times[-1] + 1e-6, timestep_min)
        if len(new_t) < MIN_FRAMES:
            raise InputError(f"At {timestep_min:g}-minute steps the sequence has only {len(new_t)} frame(s) "
                             f"({(t - 1) * seq.timestep_min:g} min in all); motion estimation needs {MIN_FRAMES}.")
        idx = np.clip(np.searchsorted(times, new_t, side="right") - 1, 0, t - 2)
        frac = ((new_t - times[idx]) / seq.timestep_min)[:, None, None]
        f = (1 - frac) * f[idx] + frac * f[idx + 1]
        notes.append(f"interpolated {t} frames {seq.timestep_min:g} min apart to {len(new_t)} frames {timestep_min:g} "
                     "min apart (linear in time)")
    f = np.maximum(f, 0).astype(np.float32)
    return RadarSequence(f, timestep_min, px, notes)


def split_sequence(frames: np.ndarray, n_inputs: int = 4, hold_out: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Inputs and (optional) truth: with ``hold_out`` and more than ``n_inputs`` frames, the first ``n_inputs`` are the
    inputs and the rest (up to 32) the truth to verify against; otherwise the last ``n_inputs`` frames, no truth."""
    if frames.shape[0] < n_inputs:
        pad = np.repeat(frames[:1], n_inputs - frames.shape[0], axis=0)
        return np.concatenate([pad, frames]), None
    if hold_out and frames.shape[0] > n_inputs:
        return frames[:n_inputs], frames[n_inputs:n_inputs + 32]
    return frames[-n_inputs:], None


# --------------------------------------------------------------------------------------------------- export
def forecast_npz(run, include_ensembles: bool = False) -> bytes:
    """The forecasts of a ``pipeline.NowcastRun`` as NPZ bytes: ``<method>_rain`` (T, H, W) mm/h, ``<method>_probs``
    (T, K, H, W) where probabilistic, ``thresholds_mmh``, ``leads_min``, ``inputs`` and ``truth`` when known."""
    from .verify import THRESHOLDS_MMH

    arrays = {"thresholds_mmh": np.asarray(THRESHOLDS_MMH, np.float32),
              "leads_min": np.asarray(run.leads_min, np.float32), "inputs": run.inputs.astype(np.float32),
              "pixel_km": np.float32(run.pixel_km), "timestep_min": np.float32(run.timestep_min)}
    if run.truth is not None:
        arrays["truth"] = run.truth.astype(np.float32)
    for name, fc in run.forecasts.items():
        if fc.rain is not None:
            arrays[f"{name}_rain"] = np.asarray(fc.rain, np.float32)
        if fc.probs is not None:
            arrays[f"{name}_probs"] = np.asarray(fc.probs, np.float16)
        if include_ensembles and fc.ensemble is not None:
            arrays[f"{name}_members"] = np.asarray(fc.ensemble, np.float16)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def forecast_netcdf(run) -> bytes:
    """The same content as NetCDF classic (dimensions lead, threshold, y, x), written with scipy."""
    import tempfile
    from pathlib import Path

    from scipy.io import netcdf_file

    from .verify import THRESHOLDS_MMH

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "forecast.nc"
        with netcdf_file(path, "w") as nc:
            t, (h, w) = run.n_leads, run.inputs.shape[-2:]
            nc.createDimension("lead", t)
            nc.createDimension("threshold", len(THRESHOLDS_MMH))
            nc.createDimension("y", h)
            nc.createDimension("x", w)
            nc.title = "Method Lab nowcast (RainPro-8 miniature)"
            nc.pixel_km = float(run.pixel_km)
            nc.timestep_min = float(run.timestep_min)
            v = nc.createVariable("lead", "f4", ("lead",))
            v[:] = np.asarray(run.leads_min, np.float32)
            v.units = "minutes"
            v = nc.createVariable("threshold", "f4", ("threshold",))
            v[:] = np.asarray(THRESHOLDS_MMH, np.float32)
            v.units = "mm/h"
            if run.truth is not None:
                v = nc.createVariable("truth", "f4", ("lead", "y", "x"))
                v[:] = run.truth.astype(np.float32)
                v.units = "mm/h"
            for name, fc in run.forecasts.items():
                if fc.rain is not None:
                    v = nc.createVariable(f"{name}_rain", "f4", ("lead", "y", "x"))
                    v[:] = np.asarray(fc.rain, np.float32)
                    v.units = "mm/h"
                if fc.probs is not None:
                    v = nc.createVariable(f"{name}_prob", "f4", ("lead", "threshold", "y", "x"))
                    v[:] = np.asarray(fc.probs, np.float32)
                    v.units = "1"
        return path.read_bytes()


def example_npz(seed: int = 3, n_frames: int = 12) -> bytes:
    """A valid upload example (radar of a synthetic case, NPZ layout above) for the page's download and the tests."""
    from .synthetic import make_case

    c = make_case(seed)
    buf = io.BytesIO()
    np.savez_compressed(buf, precip=c.radar[:n_frames], timestep_min=np.float32(15.0), pixel_km=np.float32(4.0))
    return buf.getvalue()
