"""The inputs of Soft Best-of-N: the ``candidates`` kind (a user's candidate answers), its examples, and the presets
the page and the CLI offer instead of an upload.

| kind | decoder | accepts | limits | read by |
|------|---------|---------|--------|---------|
| ``candidates`` | ``backend.alignment.softbon.softbon.read_candidates`` | UTF-8 text, answers split by blank lines | 0.5 MB, 2-64 answers of 2,000 characters | softbon page; ``softbon text --candidates`` |

``PRESETS``: the random instances of the page (``{name: InstanceConfig fields}``: reward hacking, a clean proxy, a
noisy proxy); ``EXAMPLE_CANDIDATES`` and ``EXAMPLE_REFERENCE``: the text mode's answers before any paste or upload.
"""

from __future__ import annotations

from ...io.registry import MB, InputKind, declare

KINDS: tuple[InputKind, ...] = (
    declare(
        __name__,
        name="candidates",
        what="candidate answers",
        decoder="backend.alignment.softbon.softbon:read_candidates",
        extensions=("txt",),
        max_bytes=MB // 2,
        limits="UTF-8 text, 2-64 answers separated by blank lines (or one per line), 2,000 characters each; 0.5 MB",
        family="text",
    ),
)

PRESETS: dict[str, dict[str, float]] = {
    "3% hackable items (reward hacking)": {"noise": 0.0, "hack_frac": 0.03},
    "Clean proxy (proxy = true reward)": {"noise": 0.0, "hack_frac": 0.0},
    "Noisy proxy (Gaussian noise 0.3)": {"noise": 0.3, "hack_frac": 0.0},
}

EXAMPLE_CANDIDATES = (
    "Paris is the capital of France.\n\nThe capital of France is Paris, on the Seine.\n\n"
    "France's capital? Definitely Lyon.\n\nParis.\n\nI am not sure, maybe Marseille or Paris.\n\n"
    "The capital of France is the capital of France."
)
EXAMPLE_REFERENCE = "The capital of France is Paris."


def candidates(seed: int = 0) -> bytes:
    """Three candidate answers separated by blank lines."""
    import numpy as np

    r = np.random.default_rng(seed)
    answers = ["Paris is the capital of France.", "The capital is Lyon.", "France's capital city is Paris.",
               "I am not sure."]
    order = r.permutation(len(answers))[:3]
    return "\n\n".join(answers[i] for i in order).encode()


def candidates_odd() -> dict[str, bytes]:
    """Valid-but-odd answer files: CRLF line ends, one answer per line, a single answer, formula-like answers."""
    return {"crlf.txt": b"First answer.\r\n\r\nSecond answer.\r\n", "one_per_line.txt": b"yes\nno\nmaybe\n",
            "one_answer.txt": b"Only one answer here.", "formula.txt": b"=1+1\n\n-2\n\n@home\n"}
