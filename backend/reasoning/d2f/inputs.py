"""D2F's inputs. It reads a question typed or picked from the presets, or an uploaded UTF-8 text of questions (one per
line, optionally ending with ``| answer``; the shared text upload of ``ui.inputs``), and declares no input kind of its
own (``KINDS = ()``).

``PRESETS``: the page's preset problems, (split, generator seed, count): four unseen problems of the training
distribution, then two of held-out templates and two with held-out numbers, each with 1-3 operations.
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: tuple[tuple[str, int, int], ...] = (("train", 99, 4), ("heldout_templates", 3, 2), ("heldout_numbers", 4, 2))
#: Operations per preset problem (min, max).
PRESET_OPS = (1, 3)


def preset_problems() -> dict[str, int]:
    """Question -> expected answer of every preset problem."""
    from ..tasks import generate

    return {p.question: p.answer for split, seed, n in PRESETS for p in generate(n, split, seed=seed, steps=PRESET_OPS)}


__all__ = ["KINDS", "PRESETS", "PRESET_OPS", "preset_problems"]
