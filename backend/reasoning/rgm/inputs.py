"""RGM's inputs. It reads a question typed in the tiny reasoner's grammar and declares no input kind of its own
(``KINDS = ()``). ``PRESETS``: the page's preset evaluations, name -> :class:`backend.reasoning.rgm.jobs.EvalConfig`
settings; the first reads the reasoner's samples from the T1 page's shipped candidate cache (the same problems,
N = 16 at temperature 0.8), so it opens without sampling."""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Unseen problems, 5-8 operations": {"split": "grammar", "problems": 40, "ops": (5, 8), "n": 16, "k": 8},
    "Held-out phrasings, 1-4 operations": {"split": "grammar_paraphrase", "problems": 40, "ops": (1, 4), "n": 16,
                                           "k": 8},
}
EXAMPLE_QUESTION = "A shop has 53 pens. It sells 17. It receives 6 boxes of 34. It sells 95. How many pens does it have now?"
