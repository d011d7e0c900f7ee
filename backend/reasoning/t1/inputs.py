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
    "Own samples, 5-8 operations (unseen problems)": {"split": "grammar", "problems": 40, "ops": (5, 8), "n": 16},
    "Own samples, held-out phrasings": {"split": "grammar_paraphrase", "problems": 40, "ops": (1, 4), "n": 16},
    "Gold solutions with arithmetic and logic slips": {"split": "grammar", "problems": 40, "ops": (1, 4), "n": 16,
                                                       "source": "slips", "arithmetic": 0.3, "logic": 0.3},
    "Gold solutions with logic slips only": {"split": "grammar", "problems": 40, "ops": (1, 4), "n": 16,
                                             "source": "slips", "arithmetic": 0.0, "logic": 0.6},
}

#: Pasted candidates for the page's example, in the reasoner's format (steps' numbers zero-padded to four digits, the
#: answer plain; the tool reads the padded numbers as the same integers): the second has an arithmetic slip, the
#: third a logic slip.
EXAMPLE_QUESTION = "Compute (12 + 5) * 3 - 4."
EXAMPLE_CANDIDATES = ("<think> 0012 + 0005 = 0017 ; 0017 * 0003 = 0051 ; 0051 - 0004 = 0047 </think> 47\n\n"
                      "<think> 0012 + 0005 = 0017 ; 0017 * 0003 = 0041 ; 0041 - 0004 = 0037 </think> 37\n\n"
                      "<think> 0012 + 0005 = 0017 ; 0017 + 0003 = 0020 ; 0020 - 0004 = 0016 </think> 16")
