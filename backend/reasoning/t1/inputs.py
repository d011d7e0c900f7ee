"""T1's inputs. It reads a question typed in the tiny reasoner's grammar, or candidate solutions pasted or uploaded
as UTF-8 text (one candidate per block, blocks separated by a blank line; the shared text upload of ``ui.inputs``),
and declares no input kind of its own (``KINDS = ()``).

``PRESETS``: the page's preset runs, name -> :class:`backend.reasoning.t1.jobs.BonConfig` settings. The ones whose
candidates are the reasoner's samples are read from the shipped cache (``python -m backend.train t1``).
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Own samples, 1-4 operations (unseen problems)": {"split": "grammar", "problems": 40, "ops": (1, 4), "n": 16},
    "Own samples, held-out phrasings": {"split": "grammar_paraphrase", "problems": 40, "ops": (1, 4), "n": 16},
    "Gold solutions with arithmetic and logic slips": {"split": "grammar", "problems": 40, "ops": (1, 4), "n": 16,
                                                       "source": "slips", "arithmetic": 0.3, "logic": 0.3},
    "Gold solutions with logic slips only": {"split": "grammar", "problems": 40, "ops": (1, 4), "n": 16,
                                             "source": "slips", "arithmetic": 0.0, "logic": 0.6},
}

#: Pasted candidates for the page's example (the second has an arithmetic slip, the third a logic slip).
EXAMPLE_QUESTION = "Compute (12 + 5) * 3 - 4."
EXAMPLE_CANDIDATES = ("<think> 12 + 5 = 17 ; 17 * 3 = 51 ; 51 - 4 = 47 </think> 47\n\n"
                      "<think> 12 + 5 = 17 ; 17 * 3 = 41 ; 41 - 4 = 37 </think> 37\n\n"
                      "<think> 12 + 5 = 17 ; 17 + 3 = 20 ; 20 - 4 = 16 </think> 16")
