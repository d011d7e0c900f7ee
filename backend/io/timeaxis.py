"""One time axis from a column of time stamps as users' files write them: ISO dates and times, with or without a
UTC offset, the offset changing within the file (daylight saving), or plain increasing numbers.

:func:`parse_time_column` ``(values, column)`` -> :class:`TimeAxis`. Stamps with an offset are converted to UTC;
stamps without one are read as UTC and, when a file mixes both, the note says so. The original offsets are kept
for display (``zones``: the distinct offsets in file order, e.g. ``["+01:00", "+02:00"]``). Every failure is an
:class:`~backend.errors.InputError` naming the column and the first value that could not be read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

_OFFSET = re.compile(r"(Z|[+-]\d{2}:?\d{2})\s*$")


@dataclass(frozen=True)
class TimeAxis:
    """``order`` float64 [N]: seconds since the epoch (UTC) for time stamps, the numbers themselves for a numeric
    column; ``kind`` "numeric" or "datetime"; ``zones`` the distinct UTC offsets found, in file order; ``note`` a
    sentence for the page (empty when there is nothing to say)."""

    order: np.ndarray
    kind: str
    zones: tuple[str, ...]
    note: str

    @property
    def utc(self) -> list[str]:
        """The stamps as ISO strings in UTC (``kind`` "datetime"), or the numbers as text."""
        if self.kind == "numeric":
            return [f"{v:g}" for v in self.order]
        import pandas as pd

        return [t.isoformat() for t in pd.to_datetime(self.order, unit="s", utc=True)]


def _offset(text: str) -> str | None:
    m = _OFFSET.search(text.strip())
    if m is None or not re.search(r"\d[T ]\d|\d:\d", text):  # an offset needs a time of day before it
        return None
    z = m.group(1)
    return "+00:00" if z == "Z" else (z if ":" in z else f"{z[:3]}:{z[3:]}")


def parse_time_column(values: Sequence, column: str = "time") -> TimeAxis:
    """Read a time column: numbers (used as they are) or time stamps (to UTC seconds). Missing cells and values that
    are neither raise :class:`InputError`."""
    import pandas as pd

    col = pd.Series(list(values), dtype=object)
    if col.isna().any():
        raise InputError(f"The time column {column!r} has missing values (line {int(np.flatnonzero(col.isna())[0]) + 2}).")
    num = pd.to_numeric(col, errors="coerce")
    if num.notna().all():
        order = num.to_numpy(np.float64)
        if not np.isfinite(order).all():
            raise InputError(f"The time column {column!r} has infinite values.")
        return TimeAxis(order, "numeric", (), "")
    text = col.astype(str)
    try:
        parsed = pd.to_datetime(text, errors="coerce", format="mixed", utc=True)
    except (ValueError, TypeError, OverflowError) as err:
        raise InputError(f"The time column {column!r} could not be read as dates: {str(err).splitlines()[0][:160]}"
                         ) from None
    if parsed.isna().any():
        bad = text[parsed.isna()].iloc[0]
        raise InputError(f"The time column {column!r} must hold dates or numbers; {bad[:30]!r} (line "
                         f"{int(np.flatnonzero(parsed.isna())[0]) + 2}) is neither.")
    offsets = [_offset(t) for t in text]
    zones = tuple(dict.fromkeys(o for o in offsets if o is not None))
    order = (parsed - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(np.float64)
    notes = []
    if zones:
        notes.append(f"time stamps converted to UTC from offset{'s' if len(zones) > 1 else ''} {', '.join(zones)}")
    if zones and any(o is None for o in offsets):
        notes.append("stamps without an offset were read as UTC")
    return TimeAxis(order, "datetime", zones, "; ".join(notes))
