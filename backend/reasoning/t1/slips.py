"""Candidate solutions with controlled errors, for T1's controlled comparison: gold solutions of the task generator
with one injected slip of a known kind.

- **arithmetic slip** (:func:`arithmetic_slip`): one step's result is wrong (off by a small amount, by a power of
  ten, or two digits swapped); every later step computes correctly from the wrong value, so the final answer is wrong
  and exactly one calculation fails a check;
- **logic slip** (:func:`logic_slip`): one step uses a wrong operation (``+`` for ``-``, ``+`` for ``*``, ``*`` for
  ``/``...) or a wrong quantity (another number of the question); every calculation is right, so no tool can see it;
  only the final answer is wrong.

Later steps read the slipped value wherever they used the original one (the generator's steps pass values forward);
a slip that would make a value negative, a division inexact or the answer right by accident is redrawn.
:func:`candidate_set` ``(problem, n, arithmetic, logic, seed)`` draws n candidates with those rates of each kind
(the rest gold). Deterministic for the seed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..tasks import Problem, format_solution

KINDS = ("gold", "arithmetic", "logic")
_STEP = re.compile(r"(\d+) ([-+*/]) (\d+) = (\d+)")


@dataclass(frozen=True)
class SlipCandidate:
    """One candidate: its text (tiny reasoner format), final answer, the kind of slip and the slipped step."""

    text: str
    answer: int
    kind: str
    step: int | None
    correct: bool


def _apply(op: str, a: int, b: int) -> int | None:
    if op == "/":
        return a // b if b and a % b == 0 else None
    return {"+": a + b, "-": a - b, "*": a * b}[op]


def _parse(p: Problem) -> list[list]:
    out = []
    for s in p.steps:
        m = _STEP.fullmatch(s)
        if not m:
            raise ValueError(f"not a generator step: {s!r}")
        out.append([int(m[1]), m[2], int(m[3]), int(m[4])])
    return out


def _replay(steps: list[list], i: int, new_step: list) -> list[list] | None:
    """The steps with step i replaced by ``new_step`` and every later step recomputed from the changed values."""
    changed = {steps[i][3]: new_step[3]} if steps[i][3] != new_step[3] else {}
    out = [list(s) for s in steps[:i]] + [list(new_step)]
    for a, op, b, c in steps[i + 1 :]:
        a2, b2 = changed.get(a, a), changed.get(b, b)
        c2 = _apply(op, a2, b2)
        if c2 is None or c2 < 0:
            return None
        if c2 != c:
            changed[c] = c2
        out.append([a2, op, b2, c2])
    return out


def _text(steps: list[list], answer: int) -> str:
    return format_solution(Problem("", tuple(f"{a} {op} {b} = {c}" for a, op, b, c in steps), answer, "", (0, 0)))


def arithmetic_slip(p: Problem, rng: random.Random, tries: int = 50) -> SlipCandidate | None:
    """One wrong result (see the module docstring); None when no slip fits."""
    steps = _parse(p)
    for _ in range(tries):
        i = rng.randrange(len(steps))
        a, op, b, c = steps[i]
        kind = rng.random()
        if kind < 0.5:
            wrong = c + rng.choice([-2, -1, 1, 2, 3])
        elif kind < 0.75 and c >= 10:
            wrong = c + rng.choice([-10, 10, -100, 100])
        else:
            digits = list(str(c))
            if len(digits) < 2:
                continue
            j = rng.randrange(len(digits) - 1)
            digits[j], digits[j + 1] = digits[j + 1], digits[j]
            wrong = int("".join(digits))
        if wrong == c or wrong < 0:
            continue
        new = _replay(steps, i, [a, op, b, wrong])
        if new is None or new[-1][3] == p.answer:
            continue
        return SlipCandidate(_text(new, new[-1][3]), new[-1][3], "arithmetic", i, False)
    return None


_SWAP = {"+": ("-", "*"), "-": ("+",), "*": ("+",), "/": ("*", "-")}


def logic_slip(p: Problem, rng: random.Random, tries: int = 50) -> SlipCandidate | None:
    """One wrong operation or quantity with every calculation right (see the module docstring); None when none fits."""
    steps = _parse(p)
    numbers = sorted({int(x) for x in re.findall(r"\d+", p.question)})
    for _ in range(tries):
        i = rng.randrange(len(steps))
        a, op, b, _ = steps[i]
        if rng.random() < 0.5:
            op2, b2 = rng.choice(_SWAP[op]), b
        else:
            others = [x for x in numbers if x != b]
            if not others:
                continue
            op2, b2 = op, rng.choice(others)
        c2 = _apply(op2, a, b2)
        if c2 is None or c2 < 0:
            continue
        new = _replay(steps, i, [a, op2, b2, c2])
        if new is None or new[-1][3] == p.answer:
            continue
        return SlipCandidate(_text(new, new[-1][3]), new[-1][3], "logic", i, False)
    return None


def gold(p: Problem) -> SlipCandidate:
    return SlipCandidate(format_solution(p), p.answer, "gold", None, True)


def candidate_set(p: Problem, n: int, arithmetic: float = 0.3, logic: float = 0.3, seed: int = 0) -> list[SlipCandidate]:
    """``n`` candidates for ``p``: each an arithmetic slip with probability ``arithmetic``, a logic slip with
    probability ``logic``, else the gold solution (also when no slip of the drawn kind fits)."""
    if not (0 <= arithmetic and 0 <= logic and arithmetic + logic <= 1):
        raise ValueError("slip rates must be >= 0 and sum to at most 1")
    rng = random.Random(f"{seed}|{p.question}")
    out = []
    for _ in range(n):
        u = rng.random()
        c = (arithmetic_slip(p, rng) if u < arithmetic else
             logic_slip(p, rng) if u < arithmetic + logic else None)
        out.append(c or gold(p))
    return out
