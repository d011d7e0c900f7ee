"""SwiReasoning's inputs. It reads a question typed, picked from the presets or from an uploaded UTF-8 text of one
question per line (the shared text upload of ``ui.inputs``), and declares no input kind of its own (``KINDS = ()``).

``PRESETS``: the page's preset problems, split -> generator seed: two problems of each split, none drawn by
training (the generator's seeds differ per split).
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, int] = {"train": 99, "grammar": 7, "grammar_paraphrase": 7, "heldout_numbers": 7, "heldout_templates": 7,
                           "heldout": 7}

__all__ = ["KINDS", "PRESETS"]
