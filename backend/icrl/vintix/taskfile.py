"""The ``bandit_task`` input kind: a task for the ``vintix`` page and CLI as a small UTF-8 CSV with a header row.

Three layouts, told apart by the header:

* ``mean``: one arm mean per row, 2-10 rows, values in [-0.5, 1.5] -> :class:`tasks.KArmTask`;
* ``center,width[,height]``: one reward peak per row, 1-3 rows, centres in [-1, 1], widths in [0.02, 0.5], heights
  in (0, 2] (default 0.8) -> :class:`tasks.ContTask`;
* ``a,r``: a mean-reward curve, 8-2,001 rows, ``a`` strictly increasing in [-1, 1], ``r`` in [-1, 2] ->
  :class:`tasks.CurveTask` (linear in between).

Limits: 256 KB, text without NUL bytes. Anything else raises :class:`backend.errors.InputError` saying what to change.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from backend.errors import InputError

from . import tasks as T

LAYOUTS = "a header 'mean' (2-10 arm means), 'center,width[,height]' (1-3 peaks) or 'a,r' (a reward curve)"


def _floats(rows: list[list[str]], col: int, name: str, what: str) -> np.ndarray:
    out = []
    for i, row in enumerate(rows, start=2):
        cell = row[col].strip() if col < len(row) else ""
        try:
            v = float(cell)
        except ValueError:
            raise InputError(f"{name}, line {i}: {what} {cell!r} is not a number; use plain decimal numbers.") from None
        if not np.isfinite(v):
            raise InputError(f"{name}, line {i}: {what} must be finite.")
        out.append(v)
    return np.asarray(out)


def read_task_csv(data: bytes, name: str = "the upload"):
    """Decode a task CSV (see the module docstring) into a task object."""
    from ...io.text import decode_text

    text = decode_text(data, max_bytes=len(data) + 1, name=name, hint=f"Save it as a UTF-8 CSV with {LAYOUTS}.")
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
    except csv.Error as err:
        why = str(err).split(" - ")[0]
        raise InputError(f"{name} is not a readable CSV ({why}); save it as a UTF-8 CSV with one row per line.") from None
    if not rows:
        raise InputError(f"{name} is empty; give {LAYOUTS}.")
    header = [h.strip().lower() for h in rows[0]]
    body = rows[1:]
    if header[:1] == ["mean"]:
        if not 2 <= len(body) <= T.K_MAX:
            raise InputError(f"{name}: {len(body)} arm means; give 2 to {T.K_MAX} rows under the header 'mean'.")
        return T.KArmTask(T.validate_means(_floats(body, 0, name, "mean")))
    if header[:2] == ["center", "width"]:
        c, w = _floats(body, 0, name, "center"), _floats(body, 1, name, "width")
        h = _floats(body, 2, name, "height") if len(header) > 2 and header[2] == "height" else None
        return T.validate_peaks(c, w, h)
    if header[:2] == ["a", "r"]:
        if not 8 <= len(body) <= 2001:
            raise InputError(f"{name}: {len(body)} curve points; give 8 to 2,001 rows of a,r.")
        a, r = _floats(body, 0, name, "a"), _floats(body, 1, name, "r")
        if np.any(np.diff(a) <= 0):
            raise InputError(f"{name}: the column a must be strictly increasing; sort the rows and remove repeats.")
        if a.min() < -1 or a.max() > 1:
            raise InputError(f"{name}: actions a must lie in [-1, 1].")
        if r.min() < -1 or r.max() > 2:
            raise InputError(f"{name}: rewards r must lie in [-1, 2] (the model was pretrained on rewards in [0, 1]).")
        if np.ptp(r) < 1e-6:
            raise InputError(f"{name}: the reward curve is flat; it needs at least one peak.")
        return T.CurveTask(a, r)
    raise InputError(f"{name}: header {','.join(rows[0])!r} not understood; give {LAYOUTS}.")
