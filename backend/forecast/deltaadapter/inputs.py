"""The inputs of delta-Adapter: the ``multiseries`` kind (a user's multichannel series) and the ``backbone_state`` kind
(a user's frozen forecaster), their examples (one small valid file and valid-but-odd variants, from which the
bad-input corpus and the fuzzing tests are built), and the series presets the page and the CLI offer instead of an
upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``multiseries`` | ``backend.forecast.deltaadapter.data.read_csv`` | CSV, time column then numeric channels | 10 MB, 20,000 rows, 1-16 channels, long enough for input + horizon + splits | deltaadapter page; ``deltaadapter run/calibrate/select --data FILE`` |
| ``backbone_state`` | ``backend.forecast.deltaadapter.backbones.read_state`` | safetensors of float tensors | 16 MB, 256 tensors, 8M values | deltaadapter page; ``deltaadapter ... --backbone-file`` |
| ``forecast_table`` | ``backend.forecast.deltaadapter.own.read_forecasts`` | CSV: time, actual, forecast, covariates | 10 MB, 120-20,000 rows, up to 16 covariates | deltaadapter page (Your forecasts); ``deltaadapter own --forecasts FILE`` |

``PRESETS``: :data:`backend.forecast.deltaadapter.interface.PRESETS` (the synthetic series with its documented
shift and two real series that ship inside statsmodels, each with shipped backbones).
"""

from __future__ import annotations

import numpy as np

from backend.io.registry import MB, InputKind, declare

from . import interface

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="multiseries", what="a multichannel series",
            decoder="backend.forecast.deltaadapter.data:read_csv", extensions=("csv", "txt"), max_bytes=10 * MB,
            limits="UTF-8 CSV: a header, a time column first, then 1-16 numeric channels (target first), no gaps; at "
                   "most 20,000 rows and 10 MB, at least 4 (input + horizon) + 3 (2 horizon + 8) rows", family="csv"),
    declare(__name__, name="backbone_state", what="a backbone state",
            decoder="backend.forecast.deltaadapter.backbones:read_state", extensions=("safetensors",),
            max_bytes=16 * MB,
            limits="a safetensors file of float tensors (a DLinear, PatchTST-style or MLP state_dict); at most 16 MB",
            family="archive"),
    declare(__name__, name="forecast_table", what="a table of forecasts",
            decoder="backend.forecast.deltaadapter.own:read_forecasts", extensions=("csv", "txt"), max_bytes=10 * MB,
            limits="UTF-8 CSV: a time column, the columns 'actual' and 'forecast' (else the 2nd and 3rd), then up to "
                   "16 numeric covariates; 120-20,000 rows, 10 MB", family="csv"),
)

PRESETS = interface.PRESETS


def _lines(rows: list[str], crlf: bool = False) -> bytes:
    return ("\r\n" if crlf else "\n").join(rows).encode("utf-8") + (b"\r\n" if crlf else b"\n")


def multiseries(seed: int = 0) -> bytes:
    """180 hourly rows, a daily target and two channels (the decoder's shortest input 24 and horizon 6)."""
    r = np.random.default_rng(seed)
    t = np.arange(180)
    y = np.sin(2 * np.pi * t / 24) + 0.1 * r.standard_normal(180)
    a, b = r.standard_normal(180), np.cos(2 * np.pi * t / 24) + 0.1 * r.standard_normal(180)
    rows = ["time,target,a,b"] + [f"2024-01-{1 + i // 24:02d} {i % 24:02d}:00,{y[i]:.3f},{a[i]:.3f},{b[i]:.3f}"
                                  for i in range(180)]
    return _lines(rows)


def multiseries_odd() -> dict[str, bytes]:
    """Valid-but-odd series: CRLF line ends, a byte-order mark, a numeric time column, one channel, and time stamps
    with UTC offsets that change at a daylight-saving switch (Europe/Berlin, 27 October 2024: the local hour 02:00
    comes twice, once at +02:00 and once at +01:00)."""
    import pandas as pd

    base = multiseries().decode().splitlines()
    numeric_time = ["step,target,a,b"] + [f"{i}," + ln.split(",", 1)[1] for i, ln in enumerate(base[1:])]
    one_channel = [",".join(ln.split(",")[:2]) for ln in base]
    local = pd.date_range("2024-10-24", periods=len(base) - 1, freq="h", tz="Europe/Berlin")
    dst = [base[0]] + [f"{t.isoformat()}," + ln.split(",", 1)[1] for t, ln in zip(local, base[1:], strict=True)]
    return {"crlf.csv": _lines(base, crlf=True), "bom.csv": b"\xef\xbb\xbf" + _lines(base),
            "numeric_time.csv": _lines(numeric_time), "one_channel.csv": _lines(one_channel),
            "daylight_saving.csv": _lines(dst)}


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
    """Valid-but-odd states: float16 tensors, the state of another model."""
    import torch
    from safetensors.torch import save

    return {"float16.safetensors": _state(0, "float16"),
            "other_model.safetensors": save({"w": torch.zeros(3, 3)})}


EXAMPLE_ROWS = 720  # the page's and the CLI's example table (the input kind's small example has 130)


def forecast_table(seed: int = 0, rows: int = 130) -> bytes:
    """``rows`` hourly steps: an actual series (daily cycle, slow trend, noise that grows at the daily peaks), a
    forecaster's one-step forecasts of it (damped and offset: 0.8 x the cycle + 0.3, its own noise) and one
    covariate (a temperature-like cycle)."""
    r = np.random.default_rng(seed)
    t = np.arange(rows)
    cycle = np.sin(2 * np.pi * t / 24)
    actual = 2.0 + cycle + 0.002 * t + (0.1 + 0.25 * (cycle > 0.5)) * r.standard_normal(rows)
    forecast = 2.3 + 0.8 * cycle + 0.002 * t + 0.1 * r.standard_normal(rows)
    temp = 15 + 5 * np.sin(2 * np.pi * (t - 3) / 24) + 0.5 * r.standard_normal(rows)
    stamps = [f"2024-03-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00" if i < 24 * 31 else str(i) for i in t]
    lines = ["time,actual,forecast,temperature"] + [f"{a},{b:.4f},{c:.4f},{d:.3f}"
                                                     for a, b, c, d in zip(stamps, actual, forecast, temp, strict=True)]
    return _lines(lines)


def forecast_table_odd() -> dict[str, bytes]:
    """Valid-but-odd forecast tables: CRLF line ends, columns named otherwise (second and third taken), no covariate,
    time stamps in a zone with daylight saving."""
    import pandas as pd

    base = forecast_table(1).decode().splitlines()
    renamed = ["when,observed,predicted,temperature"] + base[1:]
    bare = [",".join(ln.split(",")[:3]) for ln in base]
    local = pd.date_range("2024-10-20", periods=len(base) - 1, freq="h", tz="Europe/Berlin")
    dst = [base[0]] + [f"{ts.isoformat()}," + ln.split(",", 1)[1] for ts, ln in zip(local, base[1:], strict=True)]
    return {"crlf.csv": _lines(base, crlf=True), "renamed.csv": _lines(renamed), "no_covariates.csv": _lines(bare),
            "daylight_saving.csv": _lines(dst)}
