"""The ``element_records`` input: a small CSV of element-like records the methods predict for.

Columns (header row, case-insensitive; an ``id`` column and other extra columns are ignored): ``name``, ``symbol``,
``atomic_number``, ``period``, ``group`` (empty or 0 for none), ``block`` (s, p, d or f), ``atomic_weight``. UTF-8
(with or without a byte-order mark) or Latin-1; comma or semicolon separated; at most 10 rows and 64 KB.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from ...errors import InputError

MAX_BYTES = 64 * 1024
MAX_ROWS = 10
COLUMNS = ("name", "symbol", "atomic_number", "period", "group", "block", "atomic_weight")
LIMITS = ("CSV with a header row: name, symbol, atomic_number, period, group (empty for none), block (s/p/d/f), "
          f"atomic_weight; UTF-8 or Latin-1; comma or semicolon; at most {MAX_ROWS} rows, 64 KB")


def check_record(rec: dict) -> dict:
    """Validate a normalised record (keys name, symbol, z, period, group, block, weight); returns it."""
    for k in ("name", "symbol", "z", "period", "group", "block", "weight"):
        if k not in rec:
            raise InputError(f"A record lacks {k!r}.")
    if not str(rec["name"]).strip() or len(str(rec["name"])) > 40 or not str(rec["symbol"]).strip() or len(str(rec["symbol"])) > 4:
        raise InputError("name must be 1-40 characters and symbol 1-4 characters.")
    if not (1 <= int(rec["z"]) <= 200 and 1 <= int(rec["period"]) <= 9 and 0 <= int(rec["group"]) <= 18):
        raise InputError(f"{rec['name']}: atomic_number must be 1-200, period 1-9, group 0-18.")
    if rec["block"] not in ("s", "p", "d", "f"):
        raise InputError(f"{rec['name']}: block must be s, p, d or f; got {rec['block']!r}.")
    w = float(rec["weight"])
    if not math.isfinite(w) or not 0 < w < 1000:
        raise InputError(f"{rec['name']}: atomic_weight must be a number in (0, 1000).")
    return rec


def _num(value: str, col: str, line: int, name: str, integer: bool, allow_empty: bool = False) -> Any:
    v = str(value).strip()
    if not v:
        if allow_empty:
            return 0
        raise InputError(f"{name}, line {line}: the {col} cell is empty; every record needs {col}.")
    try:
        x = float(v.replace(",", ".")) if not integer else int(float(v))
    except ValueError:
        raise InputError(f"{name}, line {line}: {col} must be a number; got {v[:30]!r}.") from None
    if not math.isfinite(float(x)):
        raise InputError(f"{name}, line {line}: {col} must be finite; got {v[:30]!r}.")
    return x


def read_records(data: bytes, name: str = "the upload") -> list[dict]:
    """Decode a records CSV into normalised records (see the module docstring)."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes). Upload a CSV of element records.")
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is {len(data) / 1024:.0f} KB; the limit is 64 KB.")
    if data[:4] == b"PK\x03\x04" or data[:2] in (b"\x1f\x8b", b"BZ") or b"\x00" in data[:1024]:
        raise InputError(f"{name} is a compressed or binary file; upload the CSV itself.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    lines = text.splitlines()
    if not lines:
        raise InputError(f"{name} has no header row.")
    delim = ";" if lines[0].count(";") > lines[0].count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delim)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except (StopIteration, csv.Error) as err:
        raise InputError(f"{name} is not a readable CSV ({err}).") from None
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise InputError(f"{name} lacks the column(s) {', '.join(missing)}; it needs {', '.join(COLUMNS)} "
                         f"(it has {', '.join(header[:12]) or 'none'}).")
    col = {c: header.index(c) for c in COLUMNS}
    out: list[dict] = []
    try:
        for line, row in enumerate(reader, start=2):
            if not any(c.strip() for c in row):
                continue
            if len(out) >= MAX_ROWS:
                raise InputError(f"{name} has more than {MAX_ROWS} records; keep at most {MAX_ROWS}.")
            if len(row) < len(header):
                raise InputError(f"{name}, line {line}: {len(row)} cells for {len(header)} columns.")
            rec = {"name": row[col["name"]].strip()[:40], "symbol": row[col["symbol"]].strip()[:4],
                   "z": _num(row[col["atomic_number"]], "atomic_number", line, name, True),
                   "period": _num(row[col["period"]], "period", line, name, True),
                   "group": _num(row[col["group"]], "group", line, name, True, allow_empty=True),
                   "block": row[col["block"]].strip().lower()[:1],
                   "weight": _num(row[col["atomic_weight"]], "atomic_weight", line, name, False)}
            if not rec["name"] or not rec["symbol"]:
                raise InputError(f"{name}, line {line}: name and symbol must not be empty.")
            out.append(check_record(rec))
    except csv.Error as err:
        raise InputError(f"{name} is not a readable CSV ({err}).") from None
    if not out:
        raise InputError(f"{name} has a header but no records.")
    return out
