"""Procedural reasoning tasks with exact answers: multi-step arithmetic and word problems, each with a step-by-step
solution, difficulty knobs and a held-out split that differs from training by template and by number range.

Shared by the reasoning-decoder pages (SwiReasoning, D2F) and the pages that score or train reasoning (verifiers,
RLVR): one generator, so every page's "held-out accuracy" means the same thing.

- :func:`generate` ``(n, split, seed, steps=(1, 4))`` -> ``list[Problem]``; same arguments, same problems.
- Splits: ``train`` uses the templates of :data:`TRAIN_TEMPLATES` with operands in ``[1, 20]``; ``heldout`` uses the
  templates of :data:`HELDOUT_TEMPLATES` (never seen in training) together with operands in ``[21, 60]`` (a number range
  never seen in training); ``heldout_numbers`` keeps the training templates with the held-out range, and
  ``heldout_templates`` the held-out templates with the training range, so a failure can be attributed to one shift.
- :func:`format_solution` writes ``<think> step ; step </think> answer`` (or the per-model markers of
  :data:`MARKERS`); :func:`extract_answer` reads the integer a model's text ends with.

Every answer is a non-negative integer, every intermediate value too (subtractions are drawn so that they stay
non-negative, divisions so that they are exact).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import InputError


@dataclass(frozen=True)
class Markers:
    """How a model's reasoning is delimited: the thinking span and the phrase that announces the answer."""

    think_open: str = "<think>"
    think_close: str = "</think>"
    answer_prefix: str = "The final answer is"
    #: Width the numbers of the reasoning steps are zero-padded to (0: as they are). Padding puts digits of equal
    #: place at fixed distances in every step (``0086 + 0063 = 0149``), which is what lets a small model line up the
    #: digits of a sum or product; the answer after the reasoning is written plainly.
    pad: int = 0


#: Per-model markers. ``tinyreasoner`` is trained with ``<think>``/``</think>`` as single tokens, numbers of its steps
#: zero-padded to four digits (every value of its grammar is below :data:`MAX_VALUE`), and writes its answer
#: right after ``</think>`` (no answer phrase); SmolLM2 and
#: Qwen2.5-Coder have no thinking tokens, so plain-text markers their tokenizers split into ordinary tokens are used.
MARKERS: dict[str, Markers] = {
    "tinyreasoner": Markers(answer_prefix="", pad=4),
    "smollm2": Markers("Reasoning:", "Answer:", "The final answer is"),
    "qwen2.5-coder": Markers("<think>", "</think>", "The final answer is"),
}


@dataclass(frozen=True)
class Problem:
    """One task: the question, its solution steps (each ``expression = value``), the exact answer and its origin."""

    question: str
    steps: tuple[str, ...]
    answer: int
    template: str
    operand_range: tuple[int, int]
    meta: dict = field(default_factory=dict, compare=False)


TRAIN_RANGE = (1, 20)
HELDOUT_RANGE = (21, 60)
NAMES = ("Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lena")
ITEMS = ("pens", "apples", "cards", "stamps", "marbles", "books", "shells", "coins")


class _Draw:
    """Operands of one problem. ``mul`` draws factors from a smaller range so products stay readable.

    ``wide`` (the grammar splits) draws the number of digits uniformly (1 to the digits of ``hi``) and then the number, so one- and
    two-digit operands are equally common; otherwise operands are uniform in ``[lo, hi]``. ``style`` picks the
    phrasing of the question (an index into the template's row of :data:`PHRASINGS`)."""

    def __init__(self, rng: random.Random, lo: int, hi: int, wide: bool = False, style: int = 0):
        self.rng, self.lo, self.hi, self.wide, self.style = rng, lo, hi, wide, style

    def num(self) -> int:
        if self.wide:
            digits = self.rng.randint(1, len(str(self.hi)))
            return self.rng.randint(max(self.lo, 10 ** (digits - 1)), min(self.hi, 10 ** digits - 1))
        return self.rng.randint(self.lo, self.hi)

    def small(self) -> int:
        return self.rng.randint(2, max(3, min(9, self.hi // 4 + 2)))

    def name(self) -> str:
        return self.rng.choice(NAMES)

    def item(self) -> str:
        return self.rng.choice(ITEMS)

    def say(self, template: str, piece: str, **slots) -> str:
        """The ``piece`` of ``template``'s phrasing ``style`` with its slots filled."""
        return PHRASINGS[template][self.style][piece].format(**slots)

    def plus(self, value: int) -> tuple[str, int, int]:
        """(operator, operand, result) of an addition to ``value``; in the grammar splits one that would reach
        :data:`MAX_VALUE` becomes a subtraction."""
        b = self.num()
        if self.wide and value + b >= MAX_VALUE:
            b = self.minus(value)
            return "-", b, value - b
        return "+", b, value + b

    def minus(self, value: int) -> int:
        """A subtrahend that keeps ``value`` non-negative (wide: an operand of the range)."""
        if self.wide:
            return self.num() if value > self.hi else self.rng.randint(1, value)
        return self.rng.randint(self.lo, value) if value >= self.lo else value


#: The phrasings of each template: a row per style, each a dict of the pieces the template joins into a question.
#: The last row of each template is held out of training (split ``grammar_paraphrase``); row 0 is the phrasing of
#: the original five templates (splits ``train`` / ``heldout*``).
PHRASINGS: dict[str, list[dict[str, str]]] = {
    "chain": [
        {"q": "Compute {e}."}, {"q": "What is {e}?"}, {"q": "Calculate {e}."}, {"q": "{e} = ?"},
        {"q": "Evaluate {e}."},
    ],
    "expression": [
        {"q": "Compute {e}."}, {"q": "What is {e}?"}, {"q": "Calculate {e}."}, {"q": "{e} = ?"},
        {"q": "How much is {e}?"},
    ],
    "inventory": [
        {"start": "A shop has {v} {item}.", "sell": "It sells {b}.", "recv": "It receives {k} boxes of {n}.",
         "end": "How many {item} does it have now?"},
        {"start": "A store starts with {v} {item}.", "sell": "Then {b} are sold.",
         "recv": "Then {k} boxes of {n} arrive.", "end": "How many {item} are in the store?"},
        {"start": "There are {v} {item} in a warehouse.", "sell": "{b} are taken out.",
         "recv": "{k} crates with {n} each are added.", "end": "How many {item} are there at the end?"},
        {"start": "A library holds {v} {item}.", "sell": "It gives away {b}.", "recv": "It gets {k} packs of {n}.",
         "end": "How many {item} does the library hold now?"},
    ],
    "shopping": [
        {"part": "{q} {item} at {p} dollars each",
         "q": "{who} buys {parts} and pays with {paid} dollars. How much change does {who} get?"},
        {"part": "{q} {item} for {p} dollars each", "q": "{who} pays {paid} dollars for {parts}. What is the change?"},
        {"part": "{q} {item} costing {p} dollars apiece",
         "q": "With {paid} dollars, {who} buys {parts}. How many dollars are left?"},
        {"part": "{q} {item} priced at {p} dollars per piece",
         "q": "{who} hands over {paid} dollars to pay for {parts}. How much money comes back?"},
    ],
    "travel": [
        {"first": "drives {h} hours at {s} km per hour", "next": "then drives {h} hours at {s} km per hour",
         "q": "A car {legs}. How many km does it drive in all?"},
        {"first": "travels {h} hours at {s} km per hour", "next": "then {h} hours at {s} km per hour",
         "q": "A train {legs}. What distance does it cover in total?"},
        {"first": "rides for {h} hours at {s} km per hour", "next": "then for {h} hours at {s} km per hour",
         "q": "A cyclist {legs}. How far does the cyclist go?"},
        {"first": "flies {h} hours at a speed of {s} km per hour",
         "next": "next flies {h} hours at a speed of {s} km per hour",
         "q": "A plane {legs}. What is the total distance flown?"},
    ],
    "sharing": [
        {"part": "each gives away {x}",
         "q": "{people} friends share {total} {item} equally{tail}. How many does each friend have?"},
        {"part": "each loses {x}",
         "q": "{total} {item} are split equally among {people} children{tail}. How many does each child have left?"},
        {"part": "each team uses {x}",
         "q": "{people} teams divide {total} {item} evenly{tail}. How many {item} does each team keep?"},
        {"part": "each family donates {x}",
         "q": "{total} {item} are shared fairly by {people} families{tail}. How many remain with each family?"},
    ],
}
#: Bound on every value of the grammar splits (operands, intermediate results, answers are below it): a
#: multiplication that would pass it is drawn as an addition, an addition that would pass it as a subtraction.
MAX_VALUE = 10_000


def _chain(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """``start op a op b ...`` evaluated left to right (+, -, x); n operations, every intermediate result in brackets:
    ``((12 + 5) - 3) * 4``."""
    value = d.num()
    text, steps = str(value), []
    for _ in range(n):
        op = d.rng.choice("+-*")
        if op == "*" and (not d.wide or value * 9 < MAX_VALUE):
            b = d.small()
            new = value * b
        elif op == "-" and value > d.lo:
            b = d.minus(value)
            new = value - b
        else:
            op, b, new = d.plus(value)
        sym = {"+": "+", "-": "-", "*": "*"}[op]
        steps.append(f"{value} {sym} {b} = {new}")
        text = f"({text}) {sym} {b}" if steps[:-1] else f"{text} {sym} {b}"
        value = new
    return d.say("chain", "q", e=text), steps, value


def _expression(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """A plain arithmetic expression of n operations (+, -, x a one-digit factor, / an exact one-digit divisor)
    written with the usual precedence and only the brackets it needs, so that it is evaluated left to right."""
    value = d.num()
    text, steps, additive = str(value), [], False
    for _ in range(n):
        op = d.rng.choice("+-*/")
        divisors = [k for k in range(2, 10) if value % k == 0]
        if op == "*" and value * 9 < MAX_VALUE:
            b = d.small()
            new = value * b
        elif op == "/" and value > 1 and divisors:
            b = d.rng.choice(divisors)
            new = value // b
        elif op == "-" and value > 0:
            b = d.minus(value)
            new = value - b
        else:
            op, b, new = d.plus(value)
        if op in "*/" and additive:
            text = f"({text})"
        additive = op in "+-"
        steps.append(f"{value} {op} {b} = {new}")
        text = f"{text} {op} {b}"
        value = new
    return d.say("expression", "q", e=text), steps, value


def _inventory(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """A stock that changes by n events (sales, deliveries of boxes)."""
    item = d.item()
    value = d.num() if d.wide else d.num() + d.hi
    parts, steps = [d.say("inventory", "start", v=value, item=item)], []
    for _ in range(n):
        if d.rng.random() < 0.5 and value > d.lo:
            b = d.minus(value)
            parts.append(d.say("inventory", "sell", b=b))
            steps.append(f"{value} - {b} = {value - b}")
            value -= b
        else:
            boxes, per = d.small(), d.num()
            parts.append(d.say("inventory", "recv", k=boxes, n=per))
            steps.append(f"{boxes} * {per} = {boxes * per}")
            steps.append(f"{value} + {boxes * per} = {value + boxes * per}")
            value += boxes * per
    parts.append(d.say("inventory", "end", item=item))
    return " ".join(parts), steps, value


def _shopping(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """n kinds of items bought at a unit price, paid with a sum that covers them: the change."""
    who, costs, parts, steps = d.name(), [], [], []
    for _ in range(max(1, n)):
        q, p = d.small(), d.num()
        parts.append(d.say("shopping", "part", q=q, item=d.item(), p=p))
        steps.append(f"{q} * {p} = {q * p}")
        costs.append(q * p)
    total = costs[0]
    for c in costs[1:]:
        steps.append(f"{total} + {c} = {total + c}")
        total += c
    paid = (total // 10 + 1 + d.rng.randint(0, 3)) * 10
    steps.append(f"{paid} - {total} = {paid - total}")
    q = d.say("shopping", "q", who=who, parts=", ".join(parts), paid=paid)
    return q, steps, paid - total


def _travel(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """Legs at a speed for some hours; the total distance."""
    parts, steps, total = [], [], 0
    for i in range(max(1, n)):
        s, h = d.num(), d.small()
        parts.append(d.say("travel", "next" if i else "first", h=h, s=s))
        steps.append(f"{h} * {s} = {h * s}")
        if i:
            steps.append(f"{total} + {h * s} = {total + h * s}")
        total += h * s
    return d.say("travel", "q", legs=", ".join(parts)), steps, total


def _take_away(d: _Draw, value: int, n: int, phrase: str) -> tuple[list[str], list[str], int]:
    """n subtractions of up to half the current value (never below zero): phrases, steps, final value."""
    parts, steps = [], []
    for _ in range(max(0, n)):
        x = d.rng.randint(1, max(1, value // 2)) if value > 1 else 0
        parts.append(phrase.format(x))
        steps.append(f"{value} - {x} = {value - x}")
        value -= x
    return parts, steps, value


def _sharing(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """Equal sharing with an exact division, then (n - 1) eaten per person."""
    people, each = d.small(), d.num()
    total, item = people * each, d.item()
    phrase = PHRASINGS["sharing"][d.style]["part"].replace("{x}", "{}")
    parts, steps, value = _take_away(d, each, n - 1, phrase)
    steps.insert(0, f"{total} / {people} = {each}")
    tail = (", then " + ", then ".join(parts)) if parts else ""
    return d.say("sharing", "q", people=people, total=total, item=item, tail=tail), steps, value


def _ages(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """Ages related by differences; the sum of ages some years later."""
    a, gap, later = d.num(), d.num(), d.small()
    who, other = d.name(), d.name()
    b = a + gap
    steps = [f"{a} + {gap} = {b}", f"{a} + {b} = {a + b}"]
    total, people = a + b, 2
    extra = []
    for _ in range(max(0, n - 2)):
        g = d.num()
        c = b + g
        extra.append(f"a cousin is {g} years older than {other}")
        steps.append(f"{b} + {g} = {c}")
        steps.append(f"{total} + {c} = {total + c}")
        total, people = total + c, people + 1
    steps.append(f"{people} * {later} = {people * later}")
    steps.append(f"{total} + {people * later} = {total + people * later}")
    tail = (", " + ", ".join(extra)) if extra else ""
    q = (f"{who} is {a} years old and {other} is {gap} years older{tail}. "
         f"What is the sum of their ages in {later} years?")
    return q, steps, total + people * later


def _savings(d: _Draw, n: int) -> tuple[str, list[str], int]:
    """Weekly savings over some weeks, minus (n - 1) purchases it can afford."""
    who, per, weeks = d.name(), d.num(), d.small()
    value = per * weeks
    parts, steps, value = _take_away(d, value, n - 1, "spends {} dollars")
    steps.insert(0, f"{per} * {weeks} = {per * weeks}")
    tail = (" and then " + ", then ".join(parts)) if parts else ""
    q = f"{who} saves {per} dollars a week for {weeks} weeks{tail}. How many dollars are left?"
    return q, steps, value


TEMPLATES: dict[str, Callable[[_Draw, int], tuple[str, list[str], int]]] = {
    "chain": _chain, "expression": _expression, "inventory": _inventory, "shopping": _shopping, "travel": _travel,
    "sharing": _sharing, "ages": _ages, "savings": _savings,
}
TRAIN_TEMPLATES = ("chain", "inventory", "shopping", "travel", "sharing")
HELDOUT_TEMPLATES = ("ages", "savings")
#: The templates of the tiny reasoner's grammar: the five training templates and plain expressions.
GRAMMAR_TEMPLATES = ("expression",) + TRAIN_TEMPLATES
#: Operands of the grammar splits: one or two digits (each length equally likely). Three-digit operands with values
#: up to 100,000 are outside: a model of the tiny reasoner's size trained for an hour on one core got 0.53 of one- to
#: four-operation problems of that wider grammar right (its errors were results of four and five digits), short of
#: the 0.9 it is held to.
GRAMMAR_RANGE = (1, 99)
#: The grammar's hard half: five to eight operations, where the tiny reasoner's samples at temperature 0.8-1 are right
#: about six times in ten (at one to four operations nine in ten are), so verifiers and RL see right and wrong
#: candidates. The default difficulty of the pages that sample it (T1, RGM, Bridge, DEPO).
HARD_OPS = (5, 8)


@dataclass(frozen=True)
class Split:
    """What a split draws: its templates, the operand range, whether digit lengths are uniform (``wide``) and the
    phrasing rows of :data:`PHRASINGS` it may use."""

    templates: tuple[str, ...]
    operand_range: tuple[int, int]
    wide: bool = False
    styles: tuple[int, ...] = (0,)


def _train_styles(t: str) -> tuple[int, ...]:
    return tuple(range(len(PHRASINGS[t]) - 1))


SPLITS: dict[str, Split] = {
    "train": Split(TRAIN_TEMPLATES, TRAIN_RANGE),
    "heldout": Split(HELDOUT_TEMPLATES, HELDOUT_RANGE),
    "heldout_numbers": Split(TRAIN_TEMPLATES, HELDOUT_RANGE),
    "heldout_templates": Split(HELDOUT_TEMPLATES, TRAIN_RANGE),
    "grammar": Split(GRAMMAR_TEMPLATES, GRAMMAR_RANGE, wide=True, styles=(-1,)),
    "grammar_paraphrase": Split(GRAMMAR_TEMPLATES, GRAMMAR_RANGE, wide=True, styles=(-2,)),
}
#: What each split holds, in words (pages label their split pickers and presets with it).
SPLIT_LABELS = {
    "train": "unseen problems of the training templates and numbers",
    "heldout": f"held-out templates and numbers {HELDOUT_RANGE[0]}-{HELDOUT_RANGE[1]}",
    "heldout_numbers": f"held-out numbers {HELDOUT_RANGE[0]}-{HELDOUT_RANGE[1]}",
    "heldout_templates": "held-out templates",
    "grammar": "unseen problems of the grammar (expressions and word problems, numbers 1-99)",
    "grammar_paraphrase": "the grammar's problems in phrasings held out of training",
}
#: Seeds are offset per split, so the same seed never draws the same stream in two splits.
_SPLIT_OFFSET = {"train": 0, "heldout": 1_000_003, "heldout_numbers": 2_000_003, "heldout_templates": 3_000_017,
                 "grammar": 4_000_037, "grammar_paraphrase": 5_000_011}


def _styles(split: Split, template: str) -> tuple[int, ...]:
    """The phrasing rows ``split`` draws for ``template``: ``(-1,)`` = every training row, ``(-2,)`` = the held-out
    (last) row; templates without phrasings have one."""
    if template not in PHRASINGS:
        return (0,)
    if split.styles == (-1,):
        return _train_styles(template)
    if split.styles == (-2,):
        return (len(PHRASINGS[template]) - 1,)
    return split.styles


def generate(n: int, split: str = "train", seed: int = 0, steps: tuple[int, int] = (1, 4),
             templates: tuple[str, ...] | None = None, operand_range: tuple[int, int] | None = None) -> list[Problem]:
    """``n`` problems of ``split`` with a number of operations drawn uniformly in ``steps`` (inclusive).

    ``templates`` / ``operand_range`` override the split's (for a custom difficulty); unknown names raise
    :class:`InputError` listing the valid ones. ``meta`` holds ``ops`` and the phrasing row ``style``."""
    if split not in SPLITS:
        raise InputError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}.")
    lo_s, hi_s = steps
    if not 1 <= lo_s <= hi_s <= 8:
        raise InputError(f"steps must satisfy 1 <= low <= high <= 8, got {steps}.")
    spec = SPLITS[split]
    names = tuple(templates) if templates else spec.templates
    unknown = [t for t in names if t not in TEMPLATES]
    if unknown:
        raise InputError(f"Unknown template(s) {unknown}; choose from {', '.join(TEMPLATES)}.")
    lo, hi = operand_range or spec.operand_range
    if not 1 <= lo < hi <= 10_000:
        raise InputError(f"operand range must satisfy 1 <= low < high <= 10000, got {(lo, hi)}.")
    rng = random.Random(seed + _SPLIT_OFFSET[split])
    out = []
    for _ in range(n):
        name = rng.choice(names)
        k = rng.randint(lo_s, hi_s)
        styles = _styles(spec, name)
        style = rng.choice(styles) if len(styles) > 1 else styles[0]
        question, sol, answer = TEMPLATES[name](_Draw(rng, lo, hi, spec.wide, style), k)
        out.append(Problem(question, tuple(sol), int(answer), name, (lo, hi), {"ops": k, "style": style}))
    return out


def format_solution(p: Problem, markers: Markers = MARKERS["tinyreasoner"]) -> str:
    """``<think> s1 ; s2 ... </think> answer``: the training target of a reasoning LM (the steps' numbers
    zero-padded to ``markers.pad`` digits when it is set)."""
    steps = [pad_numbers(s, markers.pad) for s in p.steps] if markers.pad else p.steps
    return f"{markers.think_open} {' ; '.join(steps)} {markers.think_close} {p.answer}"


def pad_numbers(text: str, width: int) -> str:
    """``text`` with every whole number zero-padded to ``width`` digits (longer numbers are left as they are)."""
    return re.sub(r"\d+", lambda m: m.group().zfill(width), text)


_INT = re.compile(r"-?\d+")


def extract_answer(text: str, markers: Markers = MARKERS["tinyreasoner"]) -> int | None:
    """The integer that answers ``text``: the first one after the last end-of-thinking marker or answer phrase, else
    the last integer of the text; ``None`` when there is none."""
    cut = max(text.rfind(markers.think_close), text.rfind(markers.answer_prefix) if markers.answer_prefix else -1)
    if cut >= 0:
        m = _INT.search(text, cut)
        if m:
            return int(m.group())
    found = _INT.findall(text)
    return int(found[-1]) if found else None


def check_steps(p: Problem) -> bool:
    """Every step ``a op b = c`` is arithmetically right and the last value is the answer."""
    value = None
    for s in p.steps:
        m = re.fullmatch(r"(\d+) ([-+*/]) (\d+) = (\d+)", s)
        if not m:
            return False
        a, op, b, c = int(m[1]), m[2], int(m[3]), int(m[4])
        got = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b and a % b == 0 else None}[op]
        if got != c or c < 0:
            return False
        value = c
    return value == p.answer
