"""Text uploads: UTF-8 only, size capped, no binary."""

from __future__ import annotations

from ..errors import InputError


def decode_text(data: bytes, max_bytes: int = 2 * 1024 * 1024, name: str = "the upload", min_chars: int = 1,
                hint: str = "") -> str:
    """Decode an uploaded text file (UTF-8, BOM allowed). Raises InputError when empty, too large, binary (a NUL byte
    anywhere: CSV and line readers fail on one) or not UTF-8; ``hint`` (what the file should hold) ends the message of
    a binary or non-UTF-8 file."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes).")
    if len(data) > max_bytes:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.1f} MB.")
    if b"\x00" in data:
        raise InputError(f"{name} looks binary (it holds NUL bytes), not text. "
                         + (hint or "Upload plain UTF-8 text (for example a .txt or .csv file)."))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"{name} is not valid UTF-8 (byte {err.start}). "
                         + (hint or "Save it as UTF-8 text and retry.")) from None
    if len(text.strip()) < min_chars:
        raise InputError(f"{name} has too little text: at least {min_chars} characters are needed.")
    return text
