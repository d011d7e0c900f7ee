"""The inputs of STaMP: it reads only shared kinds (``text_corpus``: a UTF-8 text whose last 30 % is held out for
perplexity, :mod:`backend.compression.corpus`; ``model_folder``: a local model), so it declares no kind of its own.

``PRESETS``: the page's two runs that need no upload, as the values of its widgets (``ui.state.preset_choice``): a
light one (one window of 128 tokens, k = 4, about 10 s) and the full table (8 windows of 256 tokens, k = 8, the
SmoothQuant and A8 references too; a few minutes). Import-light: no torch.

``licence_text()``: a second built-in text of another kind than the Python reference docs, English legal prose: the
licence texts every Debian system ships in ``/usr/share/common-licenses`` (base-files), joined in a fixed order (about
170,000 characters, about 38,000 SmolLM2 tokens); None where they are missing.
"""

from __future__ import annotations

from pathlib import Path

KINDS: tuple = ()

LICENCE_DIR = Path("/usr/share/common-licenses")
# distinct texts only (GPL, LGPL and GFDL are links to one of these; GFDL-1.2 and LGPL-2 repeat GFDL-1.3 / LGPL-2.1)
LICENCE_FILES: tuple[str, ...] = ("GPL-3", "GPL-2", "LGPL-2.1", "LGPL-3", "Apache-2.0", "MPL-2.0", "MPL-1.1",
                                  "GFDL-1.3", "Artistic", "CC0-1.0", "GPL-1")
LICENCE_NAME = "Debian's common-licenses (English legal prose)"


def licence_text() -> str | None:
    """The licence texts of :data:`LICENCE_FILES` joined by blank lines, or None when the folder is missing."""
    parts = [(LICENCE_DIR / n).read_text(encoding="utf-8", errors="replace").strip()
             for n in LICENCE_FILES if (LICENCE_DIR / n).is_file()]
    return "\n\n".join(parts) if len(parts) == len(LICENCE_FILES) else None

PRESETS: dict[str, dict[str, object]] = {
    "Light (1 window of 128 tokens, k = 4, about 10 s)": {"stamp_windows": 1, "stamp_seqlen": 128, "stamp_k": 4,
                                                          "stamp_extra": False},
    "Full table (8 windows of 256 tokens, k = 8, a few minutes)": {"stamp_windows": 8, "stamp_seqlen": 256,
                                                                    "stamp_k": 8, "stamp_extra": True},
}

__all__ = ["KINDS", "LICENCE_FILES", "LICENCE_NAME", "PRESETS", "licence_text"]
