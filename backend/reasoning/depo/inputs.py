"""DEPO's inputs: the ``prompt_list`` kind (a user's prompts for the offline selector), its examples, and the presets.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``prompt_list`` | ``backend.reasoning.depo.prompts.decode_prompts`` | text (one prompt per line) or CSV with a prompt column, optional id and difficulty columns | 1 MB, 5-5,000 distinct prompts of at most 2,000 characters | depo page; ``depo select --prompts`` |

``PRESETS``: the selector's presets (the example prompt list, the light default; or the task pool of the training runs);
``EXAMPLE_PROMPTS``: the example list (mixed-topic questions in five groups of near-paraphrases, so a diverse subset
is visible on the map).
"""

from __future__ import annotations

from typing import Any

from ...io.registry import MB, InputKind, declare
from .prompts import LIMITS

KINDS: tuple[InputKind, ...] = (
    declare(__name__, name="prompt_list", what="a list of prompts", decoder="backend.reasoning.depo.prompts:decode_prompts",
            extensions=("txt", "csv"), max_bytes=1 * MB, limits=LIMITS, family="text"),
)

_TOPICS = {
    "arithmetic": ["What is {a} plus {b}?", "Compute {a} + {b}.", "Add {a} and {b}.", "Find the sum of {a} and {b}."],
    "shopping": ["Ana buys {a} pens at {b} dollars each. How much does she pay?",
                 "A book costs {b} dollars. What do {a} books cost?", "Ben pays for {a} apples at {b} cents each."],
    "geometry": ["A square has side {a}. What is its area?", "Find the perimeter of a rectangle {a} by {b}.",
                 "A triangle has base {a} and height {b}. What is its area?"],
    "travel": ["A train goes {a} km per hour for {b} hours. How far does it go?",
               "A cyclist rides {a} km a day for {b} days. What is the distance?"],
    "ages": ["Chen is {a} years old and Dara is {b} years older. How old is Dara?",
             "In {b} years Eli will be {a}. How old is Eli now?"],
}


def prompt_list(seed: int = 0) -> bytes:
    """The example prompt list: 60 questions over five topics (text, one per line)."""
    import random

    r = random.Random(seed)
    out = []
    for i in range(60):
        topic = list(_TOPICS)[i % len(_TOPICS)]
        out.append(r.choice(_TOPICS[topic]).format(a=r.randint(2, 60), b=r.randint(2, 30)))
    return ("\n".join(out) + "\n").encode()


def prompt_list_odd() -> dict[str, bytes]:
    """Valid but odd files: CRLF, blank lines and duplicates, a CSV with ids and difficulty, a BOM, tab-separated."""
    lines = prompt_list(1).decode().splitlines()
    csv_rows = ["id,question,difficulty"] + [f'q{i},"{q}",{(i % 10) / 10:.1f}' for i, q in enumerate(lines[:20])]
    return {"crlf.txt": "\r\n".join(lines).encode(),
            "blank_and_duplicates.txt": ("\n\n".join(lines[:10] + lines[:5]) + "\n\n").encode(),
            "with_difficulty.csv": ("\n".join(csv_rows) + "\n").encode(),
            "bom.txt": "\ufeff".encode() + "\n".join(lines[:12]).encode(),
            "tabs.csv": ("prompt\tid\n" + "\n".join(f"{q}\t{i}" for i, q in enumerate(lines[:8]))).encode()}


PRESETS: dict[str, dict[str, Any]] = {
    "Example prompt list (60 questions, five topics)": {"source": "example"},
    "Task pool of the training runs (240 generated problems, pass rates of the starting policy)": {"source": "pool"},
}

__all__ = ["KINDS", "PRESETS", "prompt_list", "prompt_list_odd"]
