"""Reading a caption file: CSV or Parquet (or a ZIP holding one), with its limits checked before decoding.

- CSV: UTF-8 by default (a byte-order mark allowed); another encoding only when the caller names it (``encoding``:
  one of :data:`ENCODINGS`), so a file in the wrong encoding is refused with a message instead of read as mojibake.
  A header row is required; every cell is read as text; comma, semicolon or tab separated (sniffed).
- Parquet: the row count and the uncompressed size are read from the footer first; only the caption column is read.
- ZIP: exactly one ``.csv`` or ``.parquet`` member, its declared size checked from the central directory
  (:func:`backend.io.archives.open_zip`: zip bombs are refused before inflating).
- The caption column: ``column`` when given, else the first of :data:`CAPTION_COLUMNS` present (any case), else the
  only text column. Other columns (an id, a URL, ...) are ignored. Empty captions are dropped and counted.

Every failure is an :class:`backend.errors.InputError` saying what to change.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from ...errors import InputError
from ...registry import choose

MB = 2**20
MAX_BYTES = 20 * MB
MAX_ROWS = 1_000_000
MAX_UNCOMPRESSED = 512 * MB
MAX_CAPTION_CHARS = 2_000
ENCODINGS = ("utf-8", "utf-16", "latin-1", "cp1252")
CAPTION_COLUMNS = ("caption", "captions", "text", "alt_text", "alttext", "alt", "description", "title", "prompt",
                   "sentence")
LIMITS = (f"CSV (UTF-8 unless another encoding is chosen) or Parquet, or a ZIP holding one of them; a header row "
          f"and a caption column (caption, text, alt_text, ... or the one named); at most {MAX_BYTES // MB} MB and "
          f"{MAX_ROWS:,} rows; captions longer than {MAX_CAPTION_CHARS:,} characters are cut")


@dataclass
class Captions:
    """The captions of a file: ``texts`` (non-empty, in file order), the column they came from, the file's columns,
    and the number of rows read and dropped as empty."""

    texts: list[str]
    column: str
    columns: list[str]
    rows: int
    empty: int
    source: str = "upload"
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        return {"source": self.source, "column": self.column, "columns": self.columns, "rows": self.rows,
                "empty": self.empty, "captions": len(self.texts), "notes": self.notes}


def read_captions(data: bytes, name: str = "the upload", column: str | None = None, encoding: str = "utf-8",
                  max_rows: int = MAX_ROWS) -> Captions:
    """Decode ``data`` (the bytes of a CSV, Parquet or ZIP file) into :class:`Captions` (module docstring)."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes). Upload a CSV or Parquet file of captions.")
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is {len(data) / MB:.1f} MB; the limit is {MAX_BYTES // MB} MB.")
    enc = str(encoding).strip().lower().replace("_", "-")
    enc = {"utf8": "utf-8", "latin1": "latin-1", "iso-8859-1": "latin-1", "utf16": "utf-16"}.get(enc, enc)
    enc = choose(enc, ENCODINGS, "encoding")
    if data[:4] == b"PK\x03\x04":
        data, name = _unzip(data, name)
    if data[:4] == b"PAR1":
        return _parquet(data, name, column, max_rows)
    if data[:2] in (b"\x1f\x8b", b"BZ") or data[:4] in (b"\x89PNG", b"\x93NUM"):
        raise InputError(f"{name} is a compressed or binary file, not a CSV. Upload the CSV itself, a Parquet file "
                         f"or a ZIP holding one.")
    return _csv(data, name, column, enc, max_rows)


def _unzip(data: bytes, name: str) -> tuple[bytes, str]:
    from ...io.archives import open_zip, read_member

    zf = open_zip(data, name, max_total=MAX_UNCOMPRESSED, max_members=16)
    members = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX")]
    tables = [i for i in members if i.filename.lower().endswith((".csv", ".parquet", ".txt", ".tsv"))]
    if len(tables) != 1:
        raise InputError(f"{name} must hold exactly one .csv or .parquet file; it holds "
                         f"{len(tables)} ({', '.join(i.filename for i in members[:5]) or 'nothing'}).")
    if tables[0].file_size > MAX_UNCOMPRESSED:
        raise InputError(f"{tables[0].filename} in {name} is {tables[0].file_size / MB:.0f} MB uncompressed; the "
                         f"limit is {MAX_UNCOMPRESSED // MB} MB.")
    return read_member(zf, tables[0], name), f"{name}:{tables[0].filename}"


def _pick(columns: list[str], column: str | None, name: str, text_columns: list[str]) -> str:
    if column:
        for c in columns:
            if c == column or c.strip().lower() == column.strip().lower():
                return c
        raise InputError(f"{name} has no column {column!r}; its columns are {', '.join(map(repr, columns[:20]))}.")
    lower = {c.strip().lower(): c for c in columns}
    for want in CAPTION_COLUMNS:
        if want in lower:
            return lower[want]
    if len(text_columns) == 1:
        return text_columns[0]
    raise InputError(f"{name} has no caption column (one of {', '.join(CAPTION_COLUMNS[:6])}, ...); its columns are "
                     f"{', '.join(map(repr, columns[:20]))}. Name the caption column (the Column box, or --column).")


def _finish(values: list, column: str, columns: list[str], name: str) -> Captions:
    texts, empty, cut = [], 0, 0
    for v in values:
        s = "" if v is None else str(v).strip()
        if not s:
            empty += 1
            continue
        if len(s) > MAX_CAPTION_CHARS:
            s, cut = s[:MAX_CAPTION_CHARS], cut + 1
        texts.append(s)
    if not texts:
        raise InputError(f"{name}: the column {column!r} holds no caption text (all {len(values):,} rows are empty).")
    notes = [f"{cut:,} captions longer than {MAX_CAPTION_CHARS:,} characters were cut."] if cut else []
    return Captions(texts, column, [str(c) for c in columns], len(values), empty, name, notes)


def _csv(data: bytes, name: str, column: str | None, enc: str, max_rows: int) -> Captions:
    import csv

    import pandas as pd

    if enc == "utf-8" and b"\x00" in data[:8192]:
        raise InputError(f"{name} holds NUL bytes: it is binary or UTF-16, not a UTF-8 CSV. Save it as UTF-8 (or "
                         f"choose its encoding) and retry.")
    try:
        text = data.decode("utf-8-sig" if enc == "utf-8" else enc)
    except UnicodeDecodeError as err:
        raise InputError(f"{name} is not valid {enc.upper()} (byte {err.start}). Save it as UTF-8, or choose its "
                         f"encoding ({', '.join(ENCODINGS[1:])}).") from None
    if "\x00" in text:
        raise InputError(f"{name} holds NUL characters; it is not a text CSV.")
    if not text.strip():
        raise InputError(f"{name} has no text.")
    first = text[:4096].splitlines()[0] if text.strip() else ""
    sep = max((",", ";", "\t"), key=first.count) if any(s in first for s in ",;\t") else ","
    if text.count("\n") > max_rows + 1:
        raise InputError(f"{name} has more than {max_rows:,} rows; the limit is {max_rows:,}. Split the file.")
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, quoting=csv.QUOTE_MINIMAL,
                         engine="c", on_bad_lines="error")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, csv.Error) as err:
        msg = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise InputError(f"{name} is not a readable CSV ({msg}). Check the quoting and the separator.") from None
    if len(df) > max_rows:
        raise InputError(f"{name} has {len(df):,} rows; the limit is {max_rows:,}. Split the file.")
    cols = [str(c) for c in df.columns]
    text_cols = [c for c in cols if not pd.to_numeric(df[c].head(200), errors="coerce").notna().all()]
    col = _pick(cols, column, name, text_cols)
    return _finish(df[col].tolist(), col, cols, name)


def _parquet(data: bytes, name: str, column: str | None, max_rows: int) -> Captions:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        meta = pf.metadata
        rows = int(meta.num_rows)
        size = sum(int(meta.row_group(i).total_byte_size) for i in range(meta.num_row_groups))
        cols = [str(c) for c in pf.schema_arrow.names]
        types = {str(f.name): f.type for f in pf.schema_arrow}
    except (pa.ArrowException, OSError, ValueError, IndexError, TypeError) as err:
        raise InputError(f"{name} is a damaged Parquet file ({str(err)[:160]}). Write it again and retry.") from None
    if rows > max_rows:
        raise InputError(f"{name} has {rows:,} rows; the limit is {max_rows:,}. Split the file.")
    if size > MAX_UNCOMPRESSED:
        raise InputError(f"{name} decompresses to {size / MB:.0f} MB; the limit is {MAX_UNCOMPRESSED // MB} MB.")
    text_cols = [c for c in cols if pa.types.is_string(types[c]) or pa.types.is_large_string(types[c])]
    col = _pick(cols, column, name, text_cols)
    if col not in text_cols:
        raise InputError(f"{name}: the column {col!r} holds {types[col]}, not text. Name the caption column.")
    try:
        values = pf.read(columns=[col]).column(0).to_pylist()
    except (pa.ArrowException, OSError, ValueError, IndexError, TypeError, MemoryError) as err:
        raise InputError(f"{name}: the column {col!r} cannot be read ({str(err)[:160]}).") from None
    return _finish(values, col, cols, name)


def to_parquet(texts: list[str], column: str = "caption") -> bytes:
    """``texts`` as a Parquet file with one string column (zstd), e.g. for the benchmark's million captions."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({column: pa.array(texts, pa.string())}), buf, compression="zstd")
    return buf.getvalue()
