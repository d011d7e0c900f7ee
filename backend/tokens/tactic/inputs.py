"""Tactic's inputs. It reads the shared ``text_corpus`` kind of ``backend/io`` (a UTF-8 text, at most 2 MB: the page's
upload and ``tactic run/ppl --text FILE``) and declares no kind of its own (``KINDS = ()``).

``PRESETS``: the texts offered without an upload (the page's text choice, the CLI's ``--preset``), name -> label:

- ``pydoc``: Python's reference documentation shipped with CPython, the first T tokens;
- ``license``: the GNU GPL v3 as Debian's base-files installs it (English legal prose, another kind of text);
- ``needle``: the same text with one planted passphrase sentence at a chosen depth and a question about it at the end;
- ``synthetic``: seeded synthetic q, k, v of SmolLM2-135M's shapes with planted sink and needle keys, one draw per
  chosen layer (no model; seconds; the comparison only, not the perplexity).

``SIZES``: the page's run sizes (context tokens, layers, decode queries), the light one first.
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, str] = {
    "pydoc": "Python reference docs",
    "license": "GNU GPL v3 (legal prose)",
    "needle": "needle in a haystack",
    "synthetic": "synthetic q, k, v (no model)",
}
MODEL_FREE = ("synthetic",)  # presets that need no language model

SIZES: dict[str, dict[str, Any]] = {
    "Light: 512 tokens, 4 layers, 16 queries": {"tokens": 512, "layers": (0, 5, 10, 15), "queries": 16},
    "Medium: 1K tokens, layers 0 / 9 / 19 / 29": {"tokens": 1024, "layers": (0, 9, 19, 29), "queries": 16},
    "Full: 2K tokens, 8 layers, 32 queries": {"tokens": 2048, "layers": (0, 4, 8, 12, 16, 20, 24, 29), "queries": 32},
}

__all__ = ["KINDS", "MODEL_FREE", "PRESETS", "SIZES"]
