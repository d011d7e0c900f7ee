"""Bridge's inputs: a question typed in the tiny reasoner's grammar (no upload; the question box states its limit
of 4,000 characters), so it declares no input kind of its own (``KINDS = ()``).

``PRESETS``: the page's width-scaling runs, name -> :class:`backend.reasoning.bridge.jobs.ScalingConfig` settings;
``QUESTIONS``: example questions for the side-by-side samples.
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[Any, ...] = ()

PRESETS: dict[str, dict[str, Any]] = {
    "Shipped evaluation: 24 held-out problems, 3 training seeds": {"source": "log", "problems": 24},
    "Sample now: 6 held-out problems, training seed 0": {"source": "live", "problems": 6, "widths": (1, 2, 4, 8),
                                                          "checkpoints": (0,), "modes": "bridge,independent"},
}

QUESTIONS: tuple[str, ...] = (
    "What is (6 + 85) + 64?",
    "Compute (9 + 5 - 12) * 2.",
    "Calculate (95 - 88) * 7 + 60.",
    "A shop has 5 coins. It receives 5 boxes of 16. It sells 82. It sells 1. How many coins does it have now?",
)
