"""Is a question inside the tiny reasoner's documented grammar? :func:`domain` ``(question)`` -> :class:`Domain`.

The grammar (:mod:`backend.reasoning.tasks`, splits ``grammar`` / ``grammar_paraphrase``) is what the tiny reasoner
is trained and measured on:

- **expressions**: ``Compute E.``, ``What is E?``, ``Calculate E.``, ``E = ?`` or ``E`` alone, where E has 1-8
  operations on whole numbers of one or two digits (:data:`~backend.reasoning.tasks.GRAMMAR_RANGE`), ``+`` and ``-``
  with any such number, ``*`` and ``/`` with a one-digit number (2-9; divisions exact), bracketed so that the usual
  precedence evaluates it left to right (``(12 + 5) * 3 - 4``), with every intermediate value from 0 to 9,999
  (:data:`~backend.reasoning.tasks.MAX_VALUE`);
- **word problems** of the four word-problem templates (a shop's stock, shopping change, distance over legs of a
  trip, equal sharing) in their training phrasings (:data:`backend.reasoning.tasks.PHRASINGS`, all rows but the
  last), 1-8 events, numbers below 10,000.

Anything else is still answered by the pages, labelled ``out of domain`` with the reason (the phrasings held out of
training included: they measure how far the model carries beyond its grammar). Matching is on whole words and
numbers after collapsing white space; it does not check a word problem's arithmetic.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from .tasks import GRAMMAR_RANGE, ITEMS, MAX_VALUE, NAMES, PHRASINGS

IN, OUT = "in domain", "out of domain"
#: The grammar in words, for the pages.
GRAMMAR_MD = """The tiny reasoner is trained on one documented grammar; a question inside it is labelled *in domain*:

- **Expressions** such as `Compute (12 + 5) * 3 - 4.`, `What is 45 - 78 + 99?`, `Calculate 96 / 4 * 7.`,
  `12 + 33 = ?` or the expression alone: 1-8 operations on whole numbers of one or two digits; `+` and `-`
  with any such number, `*` and `/` by one digit (2-9, divisions exact); brackets such that the usual precedence
  evaluates it left to right (so `12 + 34 * 5` is outside); every intermediate value from 0 to 9,999.
- **Word problems** of four kinds, 1-8 events, in the phrasings it was trained on: a shop's stock
  (`A shop has 53 pens. It sells 17. It receives 6 boxes of 3. How many pens does it have now?`), change after
  shopping (`Ana buys 3 pens at 4 dollars each and pays with 20 dollars. How much change does Ana get?`), the
  distance of a trip in legs (`A car drives 2 hours at 60 km per hour, then drives 3 hours at 45 km per hour. How
  many km does it drive in all?`) and equal sharing (`4 friends share 48 apples equally, then each gives away 3.
  How many does each friend have?`), each with three phrasings; a fourth phrasing of each is held out of training.

Anything else is still answered, labelled *out of domain*: rephrased questions, other kinds of problems,
larger numbers (three-digit operands are outside: a model of this size trained for an hour does not reach its
accuracy targets on them), usual precedence the model does not follow. In its reasoning the model writes
every number with four digits (`0086 + 0063 = 0149`), which lines up the digits of equal place. The accuracy per difficulty and split is measured by
`python -m backend.reasoning.reasoner_eval`."""
MAX_OPS = 8


@dataclass(frozen=True)
class Domain:
    """``label`` is ``in domain`` or ``out of domain``; ``template`` the grammar's form that matched (or None);
    ``ops`` its number of operations or events; ``reason`` one sentence for the page and the CLI."""

    label: str
    template: str | None
    ops: int | None
    reason: str

    @property
    def in_domain(self) -> bool:
        return self.label == IN

    def to_dict(self) -> dict:
        return asdict(self)


_NUM = r"\d{1,6}"
_SLOTS = {"item": "(?:" + "|".join(ITEMS) + ")", "who": "(?:" + "|".join(NAMES) + ")", "e": "(.+?)"}


def _rx(piece: str) -> str:
    """A phrasing piece as a regex: numbers for numeric slots, the word lists for names and items."""
    out, pos = [], 0
    for m in re.finditer(r"\{(\w+)\}", piece):
        out.append(re.escape(piece[pos : m.start()]))
        out.append(_SLOTS.get(m.group(1), _NUM))
        pos = m.end()
    out.append(re.escape(piece[pos:]))
    return "".join(out)


def _count(rx: str, text: str) -> int:
    return len(re.findall(rx, text))


def _word_problem(q: str) -> Domain | None:
    """The training phrasing a word problem matches, with its number of events; None when none matches."""
    for name in ("inventory", "shopping", "travel", "sharing"):
        for row in PHRASINGS[name][:-1]:
            if name == "inventory":
                event = f"(?:{_rx(row['sell'])}|{_rx(row['recv'])})"
                m = re.fullmatch(f"{_rx(row['start'])}((?: {event})+) {_rx(row['end'])}", q)
                n = _count(event, m.group(1)) if m else 0
            elif name == "shopping":
                part = _rx(row["part"])
                pattern = _rx(row["q"].replace("{parts}", "\0")).replace(re.escape("\0"), f"({part}(?:, {part})*)")
                m = re.fullmatch(pattern, q)
                n = _count(part, m.group(1)) if m else 0
            elif name == "travel":
                legs = f"({_rx(row['first'])}(?:, {_rx(row['next'])})*)"
                m = re.fullmatch(_rx(row["q"].replace("{legs}", "\0")).replace(re.escape("\0"), legs), q)
                n = 1 + _count(", " + _rx(row["next"]), m.group(1)) if m else 0
            else:
                tail = f"((?:, then {_rx(row['part'])})*)"
                m = re.fullmatch(_rx(row["q"].replace("{tail}", "\0")).replace(re.escape("\0"), tail), q)
                n = 1 + _count(", then " + _rx(row["part"]), m.group(1)) if m else 0
            if m:
                if n > MAX_OPS:
                    return Domain(OUT, name, n, f"A {name} problem with {n} events; the grammar has 1-{MAX_OPS}.")
                return Domain(IN, name, n, f"A {name} problem with {n} event(s) in a training phrasing.")
    return None


_EXPR_FORMS = ("Compute {e}.", "What is {e}?", "Calculate {e}.", "{e} = ?", "{e}")  # the training rows, and E alone
_TOKEN = re.compile(r"\s*(\d+|[-+*/()])")


def _tokens(e: str) -> list[str] | None:
    out, pos = [], 0
    e = e.strip()
    while pos < len(e):
        m = _TOKEN.match(e, pos)
        if not m:
            return None
        out.append(m.group(1))
        pos = m.end()
    return out


def _parse(toks: list[str]) -> object:
    """Recursive descent with the usual precedence: a tree of ``(op, left, right)`` and ints; raises ValueError."""
    pos = 0

    def atom():
        nonlocal pos
        if pos >= len(toks):
            raise ValueError("The expression ends early.")
        t = toks[pos]
        pos += 1
        if t == "(":
            v = expr()
            if pos >= len(toks) or toks[pos] != ")":
                raise ValueError("A bracket is not closed.")
            pos += 1
            return v
        if t.isdigit():
            return int(t)
        raise ValueError(f"Unexpected {t!r}.")

    def term():
        nonlocal pos
        v = atom()
        while pos < len(toks) and toks[pos] in "*/":
            op = toks[pos]
            pos += 1
            v = (op, v, atom())
        return v

    def expr():
        nonlocal pos
        v = term()
        while pos < len(toks) and toks[pos] in "+-":
            op = toks[pos]
            pos += 1
            v = (op, v, term())
        return v

    tree = expr()
    if pos != len(toks):
        raise ValueError(f"Unexpected {toks[pos]!r}.")
    return tree


def _operand(x: int) -> bool:
    return GRAMMAR_RANGE[0] <= x <= GRAMMAR_RANGE[1]


def _too_big(x: int) -> str:
    return f"The number {x} is outside the grammar's operands, {GRAMMAR_RANGE[0]}-{GRAMMAR_RANGE[1]}."


def _chain(tree: object) -> tuple[int, int] | str:
    """(number of operations, value) of a left-deep tree whose right operands are numbers in the grammar's ranges,
    or the reason it is not one."""
    if isinstance(tree, int):
        return (0, tree) if _operand(tree) else _too_big(tree)
    op, left, right = tree
    if not isinstance(right, int):
        return "It is not evaluated left to right (a bracket or a product on the right of an operation)."
    sub = _chain(left)
    if isinstance(sub, str):
        return sub
    n, v = sub
    if op in "*/" and not 2 <= right <= 9:
        return f"'{op} {right}': multiplications and divisions in the grammar are by one digit, 2-9."
    if op in "+-" and not _operand(right):
        return _too_big(right)
    new = {"+": v + right, "-": v - right, "*": v * right, "/": v // right}[op]
    if op == "/" and v % right:
        return f"{v} / {right} is not a whole number."
    if not 0 <= new < MAX_VALUE:
        return f"An intermediate value ({new}) is outside 0-{MAX_VALUE - 1:,}."
    return n + 1, new


def _expression(q: str) -> Domain | None:
    for form in _EXPR_FORMS:
        m = re.fullmatch(_rx(form), q)
        if not m:
            continue
        toks = _tokens(m.group(1))
        if not toks or not any(t in "+-*/" for t in toks):
            continue
        try:
            tree = _parse(toks)
        except ValueError as e:
            return Domain(OUT, "expression", None, f"Not a well-formed expression: {e}")
        got = _chain(tree)
        if isinstance(got, str):
            return Domain(OUT, "expression", None, got)
        n, _ = got
        if not 1 <= n <= MAX_OPS:
            return Domain(OUT, "expression", n, f"An expression of {n} operations; the grammar has 1-{MAX_OPS}.")
        return Domain(IN, "expression", n, f"An expression of {n} operation(s) in the grammar.")
    return None


def domain(question: str) -> Domain:
    """Where ``question`` stands against the grammar (see the module docstring)."""
    q = " ".join(str(question).split())
    found = _expression(q) or _word_problem(q)
    if found is not None:
        return found
    return Domain(OUT, None, None, "It matches none of the grammar's expressions or word-problem phrasings.")
