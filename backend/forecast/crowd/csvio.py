"""Trajectory CSV input/output in the common ``frame, id, x, y`` layout.

Upload format (documented in the page): a UTF-8 CSV with a header containing the columns ``frame``, ``id``, ``x``,
``y`` (any order, case-insensitive; other columns are ignored). ``frame`` is an integer frame number at ``fps`` frames
per second (default 12.5, i.e. 0.08 s); ``id`` names a pedestrian (number or text); ``x, y`` are metres. Each
pedestrian's track is resampled to 0.08 s steps by cubic interpolation (linear for tracks of fewer than 4 samples), as
SPDiff/STDDN do with GC's 0.8 s annotations; its destination is its last observed position. Tracks with a single
sample are dropped. Scenes from uploads have no walls.

Everything that is wrong with a file raises :class:`backend.errors.InputError` with a message saying what to fix.
"""

from __future__ import annotations

import csv
import io
import warnings

import numpy as np
import pandas as pd

from backend.errors import InputError
from backend.io import decode_text

from .data import DT, Clip

REQUIRED = ("frame", "id", "x", "y")
MAX_BYTES = 5 * 2**20
MAX_AGENTS = 600
MAX_SECONDS = 180.0
MAX_ABS_COORD = 1000.0  # metres
MAX_EXTENT = 200.0  # metres


def read_trajectories(data: bytes | str, fps: float = 1 / DT, name: str = "the upload",
                      max_seconds: float = MAX_SECONDS, max_agents: int = MAX_AGENTS) -> Clip:
    """Parse, validate and resample a ``frame, id, x, y`` CSV into a :class:`Clip` at 0.08 s steps."""
    if not (0.1 <= fps <= 100):
        raise InputError(f"The frame rate must be between 0.1 and 100 frames per second (got {fps:g}).")
    text = decode_text(data, MAX_BYTES, name) if isinstance(data, bytes) else data
    if not text.strip():
        raise InputError(f"{name} is empty.")
    try:
        header = next(csv.reader(io.StringIO(text.lstrip(), newline="")), [])
    except csv.Error as err:  # e.g. a carriage return inside an unquoted header field
        raise InputError(f"{name} has an unreadable header row ({err}). Use one line: frame,id,x,y") from None
    names = [h.strip().lower() for h in header]
    repeated = sorted({c for c in names if c in REQUIRED and names.count(c) > 1})
    if repeated:
        raise InputError(f"{name} names the column(s) {', '.join(repeated)} more than once; keep one of each.")
    try:
        with warnings.catch_warnings():
            # a row longer than the header would otherwise be truncated silently (index_col=False) or turned into
            # an index of thousands of levels (the default)
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(io.StringIO(text), skipinitialspace=True, dtype=str, keep_default_na=False,
                             index_col=False)
    except pd.errors.ParserWarning:
        raise InputError(f"{name} has rows with more fields than its header. Use one header row naming every "
                         "column.") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error) as err:
        raise InputError(f"{name} is not a readable CSV ({str(err).splitlines()[0]}). Use commas and one header row.") from None
    cols = {str(c).strip().lower(): c for c in df.columns}
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        found = ", ".join(map(str, df.columns)) or "none"
        raise InputError(f"{name} lacks the column(s) {', '.join(missing)}; found {found}. "
                         "The header must name frame, id, x and y.")
    df = df[[cols[c] for c in REQUIRED]]
    df.columns = list(REQUIRED)
    if len(df) == 0:
        raise InputError(f"{name} has a header but no rows.")
    df["id"] = df["id"].astype(str).str.strip()
    if (df["id"] == "").any():
        row = int(np.flatnonzero((df["id"] == "").to_numpy())[0]) + 2
        raise InputError(f"{name}: empty id on line {row}.")
    for c in ("frame", "x", "y"):
        num = pd.to_numeric(df[c].str.strip(), errors="coerce")
        bad = num.isna() | ~np.isfinite(num.to_numpy(dtype=float, na_value=np.nan))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{name}: column {c} has a non-numeric value {df[c].iloc[row]!r} on line {row + 2}. "
                             "Use plain numbers (a dot as decimal separator).")
        df[c] = num.astype(float)
    if not np.allclose(df["frame"], np.round(df["frame"])):
        raise InputError(f"{name}: frame numbers must be integers.")
    df["frame"] = np.round(df["frame"]).astype(np.int64)
    dup = df.duplicated(["frame", "id"], keep=False)
    if dup.any():
        r = df[dup].iloc[0]
        raise InputError(f"{name} has {int(dup.sum())} rows with a repeated (frame, id) pair, e.g. frame {r['frame']} "
                         f"id {r['id']}. Each pedestrian may appear once per frame.")
    if df["frame"].nunique() < 2:
        raise InputError(f"{name} has a single frame; a simulation needs trajectories over at least two frames.")
    xy = df[["x", "y"]].to_numpy()
    if np.abs(xy).max() > MAX_ABS_COORD:
        raise InputError(f"{name}: coordinates reach {np.abs(xy).max():.3g}; they must be metres within "
                         f"{MAX_ABS_COORD:g} of the origin (convert pixels or millimetres to metres).")
    extent = xy.max(0) - xy.min(0)
    if extent.max() > MAX_EXTENT:
        raise InputError(f"{name}: the scene spans {extent.max():.0f} m; the limit is {MAX_EXTENT:g} m.")
    f0 = int(df["frame"].min())
    seconds = (int(df["frame"].max()) - f0) / fps
    if seconds > max_seconds:
        raise InputError(f"{name} covers {seconds:.0f} s; the limit here is {max_seconds:g} s. Cut it shorter.")
    groups = {k: g.sort_values("frame") for k, g in df.groupby("id", sort=False) if len(g) >= 2}
    if not groups:
        raise InputError(f"{name}: every pedestrian appears in a single frame; tracks need at least two frames.")
    if len(groups) > max_agents:
        raise InputError(f"{name} has {len(groups)} pedestrians; the limit here is {max_agents}.")
    T = int(np.floor(seconds / DT + 1e-9)) + 1
    grid_t = np.arange(T) * DT
    pos = np.full((T, len(groups), 2), np.nan, np.float32)
    from scipy.interpolate import CubicSpline

    ids = []
    for n, (k, g) in enumerate(groups.items()):
        ids.append(k)
        t = (g["frame"].to_numpy() - f0) / fps
        sel = (grid_t >= t[0] - 1e-9) & (grid_t <= t[-1] + 1e-9)
        tt = grid_t[sel]
        for c, col in enumerate(("x", "y")):
            y = g[col].to_numpy()
            pos[sel, n, c] = CubicSpline(t, y)(tt) if len(t) >= 4 else np.interp(tt, t, y)
    last = np.array([g[["x", "y"]].to_numpy()[-1] for g in groups.values()], np.float32)
    pres = ~np.isnan(pos[..., 0])
    lo = np.nanmin(pos.reshape(-1, 2), 0) - 1.0
    hi = np.nanmax(pos.reshape(-1, 2), 0) + 1.0
    clip = Clip(pos, last[:, None, :], np.ones(len(groups), np.int64), np.where(pres, 0, -1).astype(np.int64), DT,
                None, name, (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])),
                {"ids": ids, "fps": fps, "rows": len(df), "source": "upload"})
    return clip


def clip_to_frame(clip: Clip, fps: float | None = None) -> pd.DataFrame:
    """A clip as a ``frame, id, x, y`` table (optionally subsampled to ``fps``)."""
    step = 1 if fps is None else max(1, int(round(1 / (fps * clip.dt))))
    ids = clip.meta.get("ids") or list(range(clip.num_agents))
    rows = []
    for t in range(0, clip.num_frames, step):
        for n in np.flatnonzero(clip.present[t]):
            x, y = clip.positions[t, n]
            rows.append((t // step, ids[n], round(float(x), 3), round(float(y), 3)))
    return pd.DataFrame(rows, columns=list(REQUIRED))


def rollouts_to_frame(clip: Clip, positions: dict[str, np.ndarray]) -> pd.DataFrame:
    """Long table ``method, frame, time_s, id, x, y`` of the ground truth and each method's rollout."""
    return trajectories_frame(clip.positions, positions, clip.dt, clip.meta.get("ids"))


def trajectories_frame(truth: np.ndarray, positions: dict[str, np.ndarray], dt: float,
                       ids: list | None = None) -> pd.DataFrame:
    """:func:`rollouts_to_frame` from the arrays: ``truth`` and each rollout ``[T, N, 2]`` (NaN where absent), the
    frame step ``dt`` in seconds and the agents' ids (default 0..N-1)."""
    ids = ids or list(range(truth.shape[1]))
    parts = []
    for method, pos in {"ground_truth": truth, **positions}.items():
        t, n = np.nonzero(~np.isnan(pos[..., 0]))
        parts.append(pd.DataFrame({"method": method, "frame": t, "time_s": np.round(t * dt, 3),
                                   "id": [ids[i] for i in n], "x": np.round(pos[t, n, 0], 3),
                                   "y": np.round(pos[t, n, 1], 3)}))
    return pd.concat(parts, ignore_index=True)
