"""Text uploads: UTF-8 only, size capped, no binary."""

from __future__ import annotations

from ..errors import InputError


def decode_text(data: bytes, max_bytes: int = 2 * 1024 * 1024, name: str = "the upload", min_chars: int = 1) -> str:
    """Decode an uploaded text file (UTF-8, BOM allowed). Raises InputError when empty, too large, binary or not UTF-8."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes).")
    if len(data) > max_bytes:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.1f} MB.")
    if b"\x00" in data[:8192]:
        raise InputError(
            f"{name} looks like a binary file, not text. Upload plain UTF-8 text (for example a .txt or .csv file)."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"{name} is not valid UTF-8 (byte {err.start}). Save it as UTF-8 text and retry.") from None
    if len(text.strip()) < min_chars:
        raise InputError(f"{name} has too little text: at least {min_chars} characters are needed.")
    return text
