"""Series for the delta-Adapter page: the synthetic multichannel preset with a documented regime shift, two real series
that ship inside statsmodels, and the user's CSV; windows and the four chronological splits.

Every series is a :class:`Series` of shape ``(T, d)`` whose channel 0 is the forecast target (the "MS" setting of the
Time-Series-Library: all channels in, the target out). Windows are ``X (N, L, d)`` and ``Y (N, H, 1)``; values are
standardised with the mean and standard deviation of the backbone's training segment.

Splits (by the time of the first forecast step of a window; inputs may reach back into the previous segment):

* ``early``  the early regime (before ``shift_at``): the backbone trains on its first 85 %, ``early_val`` is the rest;
* ``adapt``  the first 40 % after the shift: every post-processor (adapter, mask, baseline, scale net) trains on it;
* ``val``    the next 20 %: early stopping and conformal calibration;
* ``test``   the last 40 %: every reported number.

The synthetic shift (:data:`SHIFT`) is fixed: at ``shift_at`` the daily amplitude of the target grows from 1.0 to 1.3,
the coefficient of the first leading channel from 0.8 to 1.1 and the target level rises by 0.3 (raw units; the target's
early standard deviation is about 1.3).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np

from backend.errors import InputError
from backend.io.timeaxis import parse_time_column

SHIFT = {"daily_amplitude": (1.0, 1.3), "lead_coef": (0.8, 1.1), "level": (0.0, 0.3)}
LEADS = (24, 36)  # the two informative channels lead the target by these many steps
SPLIT_FRACTIONS = {"adapt": 0.4, "val": 0.2, "test": 0.4}
MAX_ROWS = 20_000
MAX_CHANNELS = 16


@dataclass
class Series:
    """A multichannel series ``values (T, d)``, channel 0 the target; ``shift_at`` the first post-shift index."""

    name: str
    values: np.ndarray
    channels: list[str]
    shift_at: int
    lookback: int = 96
    horizon: int = 24
    times: list[str] = field(default_factory=list)
    planted: np.ndarray | None = None  # (L, d) bool: inputs the target truly depends on (synthetic only)
    noise_scale: np.ndarray | None = None  # (T,) true noise std of the target (synthetic only)
    about: str = ""

    @property
    def d(self) -> int:
        return int(self.values.shape[1])

    def summary(self) -> dict:
        return {"name": self.name, "length": int(self.values.shape[0]), "channels": self.channels,
                "shift_at": int(self.shift_at), "lookback": self.lookback, "horizon": self.horizon, "about": self.about}


def synthetic(length: int = 4000, seed: int = 0, lookback: int = 96, horizon: int = 24) -> Series:
    """Hourly series, 6 channels: target, two channels leading it by :data:`LEADS` steps, three AR(1) noise channels.

    target(t) = a(t) sin(2 pi t / 24) + 0.5 sin(2 pi t / 168) + b(t) s1(t - 24) + 0.6 s2(t - 36) + level(t)
    + sigma(t) e(t), with sigma(t) = 0.25 (1 + 0.8 sin(2 pi t / 24)) (heteroscedastic by time of day) and a, b, level
    switching at ``shift_at = 0.55 length`` as :data:`SHIFT` says."""
    rng = np.random.default_rng(seed)
    t = np.arange(length, dtype=np.float64)

    def ar1(phi: float, n: int) -> np.ndarray:
        e = rng.standard_normal(n)
        x = np.zeros(n)
        for i in range(1, n):
            x[i] = phi * x[i - 1] + np.sqrt(1 - phi**2) * e[i]
        return x

    s1, s2 = ar1(0.6, length), ar1(0.6, length)
    noise = np.stack([ar1(0.9, length) for _ in range(3)], 1)
    shift_at = int(0.55 * length)
    post = t >= shift_at
    amp = np.where(post, SHIFT["daily_amplitude"][1], SHIFT["daily_amplitude"][0])
    coef = np.where(post, SHIFT["lead_coef"][1], SHIFT["lead_coef"][0])
    level = np.where(post, SHIFT["level"][1], SHIFT["level"][0])
    daily = np.sin(2 * np.pi * t / 24)
    sigma = 0.25 * (1 + 0.8 * daily)
    y = (amp * daily + 0.5 * np.sin(2 * np.pi * t / 168) + coef * np.roll(s1, LEADS[0]) + 0.6 * np.roll(s2, LEADS[1])
         + level + sigma * rng.standard_normal(length))
    values = np.column_stack([y, s1, s2, noise]).astype(np.float32)
    planted = np.zeros((lookback, 6), bool)
    planted[:, 0] = True  # the target's own history (seasonality)
    for ch, lead in zip((1, 2), LEADS, strict=True):
        lags = np.arange(max(lead - horizon, 0), lead)  # lag 0 = the last input row
        planted[np.clip(lookback - 1 - lags, 0, lookback - 1), ch] = True
    return Series("synthetic", values[max(LEADS):], ["target", "lead24", "lead36", "noise1", "noise2", "noise3"],
                  shift_at - max(LEADS), lookback, horizon, planted=planted,
                  noise_scale=sigma[max(LEADS):].astype(np.float32),
                  about="hourly, daily + weekly seasonality, two leading channels, three noise channels, "
                        "heteroscedastic noise, shift at 55 %: daily amplitude 1.0 -> 1.3, lead coefficient 0.8 -> 1.1, "
                        "level +0.3")


def co2(lookback: int = 96, horizon: int = 24) -> Series:
    """statsmodels' weekly Mauna Loa CO2 record (1958-2001, 2,284 weeks, 59 gaps filled by linear interpolation),
    univariate; the early regime is its first half (the growth rate of the trend rises later)."""
    from statsmodels.datasets import co2 as ds

    df = ds.load_pandas().data.interpolate().bfill()
    v = df["co2"].to_numpy(np.float32)[:, None]
    return Series("co2", v, ["co2"], len(v) // 2, lookback, horizon,
                  times=[str(x.date()) for x in df.index],
                  about="weekly Mauna Loa CO2 (ppm), statsmodels.datasets.co2; early regime = first half")


def macro(lookback: int = 16, horizon: int = 4) -> Series:
    """statsmodels' US macro data (1959Q1-2009Q3): quarterly log-growth (in %) of real GDP, consumption, investment and
    disposable income, 202 quarters, target real GDP growth; early regime = first half (the Great Moderation follows)."""
    from statsmodels.datasets import macrodata as ds

    df = ds.load_pandas().data
    cols = ["realgdp", "realcons", "realinv", "realdpi"]
    v = (100 * np.diff(np.log(df[cols].to_numpy(np.float64)), axis=0)).astype(np.float32)
    times = [f"{int(y)}Q{int(q)}" for y, q in zip(df["year"][1:], df["quarter"][1:], strict=True)]
    return Series("macro", v, [f"{c} growth" for c in cols], len(v) // 2, lookback, horizon, times=times,
                  about="US quarterly log-growth of GDP, consumption, investment, income (statsmodels macrodata)")


def min_length(lookback: int, horizon: int) -> int:
    """Shortest series with enough windows in every split: early 4 (L + H), each post-shift split 2 H + 8."""
    return 4 * (lookback + horizon) + 3 * (2 * horizon + 8)


def read_frame(data: bytes, name: str, what: str, max_rows: int):  # noqa: ANN201 - a pandas DataFrame
    """A UTF-8 CSV upload as a DataFrame of at most ``max_rows + 1`` rows; InputError (naming ``what`` the CSV should
    hold) for other encodings, binary data and unreadable CSV."""
    import pandas as pd

    from ...io.text import decode_text

    text = decode_text(data, max_bytes=len(data) + 1, name=name, hint=f"Upload a UTF-8 CSV ({what}).")
    try:
        return pd.read_csv(io.StringIO(text), nrows=max_rows + 1)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as err:
        raise InputError(f"{name} is not a readable CSV: {str(err).splitlines()[0][:200]}") from None


def read_csv(data: bytes, name: str = "the upload", lookback: int = 24, horizon: int = 6,
             shift_fraction: float = 0.5) -> Series:
    """A user's CSV: a header row, a time column first (dates or numbers, increasing), then 1-16 numeric channels, the
    target first. Missing values, non-numeric cells, constant channels and series too short for the windows and
    splits (:func:`min_length`) raise InputError. The defaults of ``lookback``/``horizon`` are the shortest the page
    offers; the page and the CLI pass their own."""
    import pandas as pd

    if not 8 <= lookback <= 512 or not 1 <= horizon <= 192:
        raise InputError("Input length must be 8-512 and horizon 1-192 steps.")
    df = read_frame(data, name, "time column, then numeric channels", MAX_ROWS)
    if df.shape[1] < 2:
        raise InputError(f"{name} needs a time column and at least one numeric channel (found {df.shape[1]} column).")
    if df.shape[1] - 1 > MAX_CHANNELS:
        raise InputError(f"{name} has {df.shape[1] - 1} channels; the limit is {MAX_CHANNELS}.")
    if len(df) > MAX_ROWS:
        raise InputError(f"{name} has more than {MAX_ROWS:,} rows; cut it to the most recent {MAX_ROWS:,}.")
    need = min_length(lookback, horizon)
    if len(df) < need:
        raise InputError(f"{name} has {len(df)} rows; input {lookback} + horizon {horizon} with three post-shift "
                         f"splits need at least {need}. Upload a longer series or lower the input length.")
    chans = df.iloc[:, 1:]
    for c in chans.columns:
        col = pd.to_numeric(chans[c], errors="coerce")
        if col.isna().any():
            bad = chans[c][col.isna()]
            row = int(bad.index[0]) + 2
            what = "a missing value" if pd.isna(bad.iloc[0]) else f"the non-numeric value {str(bad.iloc[0])[:30]!r}"
            raise InputError(f"Column {c!r} has {what} at line {row}; fill or remove it (channels must be numeric).")
        if not np.isfinite(col.to_numpy(np.float64)).all():
            raise InputError(f"Column {c!r} has infinite values.")
        if float(col.std()) == 0.0:
            raise InputError(f"Column {c!r} is constant; remove it (a constant channel carries nothing to scale).")
        chans[c] = col
    time_col = df.iloc[:, 0]
    axis = parse_time_column(time_col, str(df.columns[0]))
    order = axis.order
    if not (np.diff(order) > 0).all():
        raise InputError(f"The time column {df.columns[0]!r} must be strictly increasing (sorted, no duplicates; "
                         "time stamps are compared in UTC).")
    values = chans.to_numpy(np.float32)
    shift_at = int(np.clip(shift_fraction, 0.2, 0.8) * len(values))
    return Series(str(name), values, [str(c) for c in chans.columns], shift_at, lookback, horizon,
                  times=[str(x) for x in time_col],
                  about=f"uploaded CSV, {len(values)} rows" + (f" ({axis.note})" if axis.note else ""))


def to_csv_bytes(s: Series) -> bytes:
    """The series as a CSV of the form :func:`read_csv` reads (a ``time`` column first)."""
    rows = ["time," + ",".join(s.channels)]
    times = s.times or [str(i) for i in range(len(s.values))]
    rows += [f"{t}," + ",".join(f"{v:.5g}" for v in r) for t, r in zip(times, s.values, strict=True)]
    return ("\n".join(rows) + "\n").encode()


@dataclass
class Windows:
    """Standardised windows of every split: ``x[split] (N, L, d)``, ``y[split] (N, H, 1)``, ``t0[split] (N,)`` the
    index of the first forecast step; ``mean``/``std`` per channel (from the backbone's training segment)."""

    x: dict[str, np.ndarray]
    y: dict[str, np.ndarray]
    t0: dict[str, np.ndarray]
    mean: np.ndarray
    std: np.ndarray
    lookback: int
    horizon: int

    def torch(self, split: str):
        import torch

        return torch.from_numpy(self.x[split]), torch.from_numpy(self.y[split])


def split_bounds(s: Series) -> dict[str, tuple[int, int]]:
    """Forecast-start ranges ``[a, b)`` of the splits (a window at ``t`` forecasts ``t .. t + H - 1``)."""
    n, L, H, k = len(s.values), s.lookback, s.horizon, s.shift_at
    cut = L + int(0.85 * (k - L))
    post = n - k
    a1 = k + int(SPLIT_FRACTIONS["adapt"] * post)
    a2 = a1 + int(SPLIT_FRACTIONS["val"] * post)
    return {"early": (L, cut - H + 1), "early_val": (cut, k - H + 1), "adapt": (k, a1 - H + 1),
            "val": (a1, a2 - H + 1), "test": (a2, n - H + 1)}


def make_windows(s: Series) -> Windows:
    """Every split's windows (stride 1), standardised by the ``early`` segment's statistics."""
    L, H = s.lookback, s.horizon
    if len(s.values) < min_length(L, H) or s.shift_at < 2 * (L + H):
        raise InputError(f"The series has {len(s.values)} steps (shift at {s.shift_at}); input {L} + horizon {H} "
                         f"need at least {min_length(L, H)} steps and {2 * (L + H)} before the shift.")
    b = split_bounds(s)
    seg = s.values[: b["early"][1] + H - 1]
    mean, std = seg.mean(0), seg.std(0)
    std = np.where(std > 0, std, 1.0).astype(np.float32)
    z = ((s.values - mean) / std).astype(np.float32)
    xs, ys, ts = {}, {}, {}
    for name, (a, c) in b.items():
        t0 = np.arange(a, c)
        if len(t0) < 2:
            raise InputError(f"The {name} split has no windows; use a longer series or a shorter input/horizon.")
        idx_x = t0[:, None] + np.arange(-L, 0)[None]
        idx_y = t0[:, None] + np.arange(H)[None]
        xs[name], ys[name], ts[name] = z[idx_x], z[idx_y][..., :1], t0
    return Windows(xs, ys, ts, mean.astype(np.float32), std, L, H)
