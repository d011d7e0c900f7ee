"""The inputs of STaMP: it reads only shared kinds (``text_corpus``: a UTF-8 text whose last 30 % is held out for
perplexity, :mod:`backend.compression.corpus`; ``model_folder``: a local model), so it declares no kind of its own.

``PRESETS``: the page's two runs that need no upload, as the values of its widgets (``ui.state.preset_choice``): a
light one (one window of 128 tokens, k = 4, about 10 s) and the full table (8 windows of 256 tokens, k = 8, the
SmoothQuant and A8 references too; a few minutes). Import-light: no torch.
"""

from __future__ import annotations

KINDS: tuple = ()

PRESETS: dict[str, dict[str, object]] = {
    "Light (1 window of 128 tokens, k = 4, about 10 s)": {"stamp_windows": 1, "stamp_seqlen": 128, "stamp_k": 4,
                                                          "stamp_extra": False},
    "Full table (8 windows of 256 tokens, k = 8, a few minutes)": {"stamp_windows": 8, "stamp_seqlen": 256,
                                                                    "stamp_k": 8, "stamp_extra": True},
}

__all__ = ["KINDS", "PRESETS"]
