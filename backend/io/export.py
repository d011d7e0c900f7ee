"""CSV the lab writes (page downloads, ``--out`` files), safe to open in a spreadsheet.

A text cell that starts with ``=``, ``+``, ``-``, ``@`` (or a tab / carriage return, which some spreadsheets skip
before reading a formula) would be run as a formula (CSV injection): such cells get a leading apostrophe, which
spreadsheets show as text and hide. Numbers stay numbers, negative ones included, and so do text cells that are plain
numbers (``"-1.5"``). Column names are escaped the same way.
"""

from __future__ import annotations

from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and text.lower().lstrip("+-") not in ("inf", "infinity", "nan")


def escape_cell(value: Any) -> Any:
    """``value`` with a leading apostrophe when it is text that a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _is_number(value):
        return "'" + value
    return value


def safe_frame(df: Any) -> Any:
    """A copy of the pandas DataFrame ``df`` with every text cell and column name escaped (numbers untouched)."""
    out = df.copy()
    out.columns = [escape_cell(c) for c in out.columns]
    for col in range(out.shape[1]):
        s = out.iloc[:, col]
        if s.dtype == object or str(s.dtype) in ("string", "str", "category"):
            out.isetitem(col, s.astype(object).map(escape_cell))
    return out


def to_csv(df: Any, path: Any = None) -> str | None:
    """``df.to_csv(path, index=False)`` of :func:`safe_frame` (the text when ``path`` is None)."""
    return safe_frame(df).to_csv(path, index=False)
