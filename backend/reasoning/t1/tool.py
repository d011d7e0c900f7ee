"""T1's tool verifier: every calculation of a candidate solution re-checked by a sandboxed evaluator.

The tool reads a candidate's steps, writes a *check program* from them (one ``assert <expression> == <value>`` per
step, and one that the final answer equals the last step's value), and runs it in :func:`run_program`, a restricted
interpreter over Python's ``ast``: it walks only whole-number and decimal constants, ``+ - * / // %``, unary signs,
brackets and ``==`` comparisons inside ``assert`` statements, and refuses anything else by name (calls, names,
attributes, powers, loops...). It never calls ``eval``, ``exec`` or ``compile`` on model text. Limits
(:class:`Limits`) bound the program's length, its nesting depth, the number of operations and the size of every
number (digits), so a hostile program is vetoed with a reason instead of hanging or exhausting memory. Arithmetic is
exact (``fractions.Fraction``), so ``7 / 2 = 3.5`` checks and ``7 / 2 = 3`` does not.

- :func:`extract_steps` ``(text)`` -> the ``expression = value`` calculations of free text (the tiny reasoner's
  ``a op b = c ; ...`` steps, or a pasted solution's sentences; ``x`` and the signs ``×``, ``÷``, ``−`` are read as
  operators);
- :func:`check_program` ``(steps, answer)`` -> the program text; :func:`run_program` ``(program)`` -> per-assert
  results;
- :func:`verify` ``(text, markers)`` -> :class:`Verdict`: ``passed`` (the tool's f in {0, 1}: no failed check; a
  candidate without any calculation passes, flagged ``checked = 0``), the failing steps and the reason.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from fractions import Fraction

MAX_TEXT_CHARS = 20_000


@dataclass(frozen=True)
class Limits:
    """What the sandbox allows: program characters, AST depth, arithmetic operations and digits of any number."""

    max_chars: int = MAX_TEXT_CHARS
    max_depth: int = 40
    max_ops: int = 5_000
    max_digits: int = 40


class ToolError(ValueError):
    """A check program the sandbox refuses (its message is the veto's reason)."""


@dataclass(frozen=True)
class Check:
    """One assert of the check program: its source line, whether it holds, and why not."""

    source: str
    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class Verdict:
    """The tool's verdict on one candidate: ``passed`` is the tool's f(x, y) in {0, 1}."""

    passed: bool
    checked: int
    failed: tuple[int, ...]
    reason: str
    program: str
    checks: tuple[Check, ...] = field(default=(), repr=False)


_ALLOWED_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}


class _Interpreter:
    def __init__(self, limits: Limits):
        self.limits, self.ops = limits, 0

    def _size(self, v: Fraction) -> Fraction:
        for part in (v.numerator, v.denominator):
            if abs(part).bit_length() > 3.33 * self.limits.max_digits:
                raise ToolError(f"a number of more than {self.limits.max_digits} digits")
        return v

    def value(self, node: ast.AST, depth: int = 0) -> Fraction:
        if depth > self.limits.max_depth:
            raise ToolError(f"nested deeper than {self.limits.max_depth} levels")
        self.ops += 1
        if self.ops > self.limits.max_ops:
            raise ToolError(f"more than {self.limits.max_ops} operations")
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            if isinstance(node.value, int) and abs(node.value).bit_length() > 3.33 * self.limits.max_digits:
                raise ToolError(f"a number of more than {self.limits.max_digits} digits")
            return self._size(Fraction(str(node.value)) if isinstance(node.value, float) else Fraction(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            v = self.value(node.operand, depth + 1)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _ALLOWED_BIN:
            a, b = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and b == 0:
                raise ToolError("a division by zero")
            if isinstance(node.op, ast.Add):
                r = a + b
            elif isinstance(node.op, ast.Sub):
                r = a - b
            elif isinstance(node.op, ast.Mult):
                r = a * b
            elif isinstance(node.op, ast.Div):
                r = a / b
            elif isinstance(node.op, ast.FloorDiv):
                r = Fraction(a // b)
            else:
                r = a % b
            return self._size(r)
        what = type(node.op).__name__ if isinstance(node, (ast.BinOp, ast.UnaryOp)) else type(node).__name__
        raise ToolError(f"'{what}' is not allowed (only numbers, + - * / // %, brackets)")


def run_program(program: str, limits: Limits = Limits()) -> list[Check]:
    """Run a check program of ``assert <expr> == <expr>`` lines in the sandbox; :class:`ToolError` when it is
    refused as a whole (too long, does not parse, a statement other than such an assert)."""
    if not isinstance(program, str):
        raise ToolError("the check program is not text")
    if len(program) > limits.max_chars:
        raise ToolError(f"the check program has {len(program):,} characters; at most {limits.max_chars:,}")
    try:
        tree = ast.parse(program, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise ToolError(f"the check program does not parse ({type(e).__name__})") from None
    out = []
    lines = program.splitlines()
    for stmt in tree.body:
        src = lines[stmt.lineno - 1].strip() if 0 < stmt.lineno <= len(lines) else ""
        if not (isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1
                and isinstance(stmt.test.ops[0], ast.Eq)):
            raise ToolError(f"only 'assert <expression> == <expression>' statements are allowed: {src[:80]!r}")
        it = _Interpreter(limits)
        try:
            left = it.value(stmt.test.left)
            right = it.value(stmt.test.comparators[0])
        except ToolError as e:
            out.append(Check(src, False, str(e)))
            continue
        except RecursionError:
            out.append(Check(src, False, "nested too deeply"))
            continue
        out.append(Check(src, left == right, "" if left == right else f"{_show(left)} is not {_show(right)}"))
    return out


def _show(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{float(v):.6g}"


_OPS = {"x": "*", "×": "*", "·": "*", "÷": "/", "−": "-", "–": "-", ":": "/"}
_NUM = r"\d+(?:\.\d+)?"
_STEP = re.compile(rf"(\(?\s*{_NUM}(?:\s*\)?\s*[-+*/x×·÷−–]\s*\(?\s*{_NUM}\s*\)?)+)\s*=\s*(-?{_NUM})")


def extract_steps(text: str) -> list[tuple[str, str]]:
    """The ``(expression, claimed value)`` calculations of ``text``, in order, operators normalised."""
    out = []
    for m in _STEP.finditer(text.replace(",", "")):
        expr = m.group(1)
        for k, v in _OPS.items():
            expr = expr.replace(k, v)
        expr = " ".join(expr.split())
        if expr.count("(") != expr.count(")"):
            expr = expr.replace("(", "").replace(")", "")
        out.append((_LEADING_ZEROS.sub("", expr), _LEADING_ZEROS.sub("", m.group(2))))
    return out


#: Leading zeros of a whole number (the tiny reasoner writes ``0086``); Python refuses them in a literal.
_LEADING_ZEROS = re.compile(r"(?<![\d.])0+(?=\d)")


_ANSWER_NUM = re.compile(rf"-?{_NUM}")


def final_answer(text: str, markers) -> str | None:
    """The candidate's final answer as written (decimals kept): the first number after its last end-of-thinking
    marker or answer phrase ("answer is"), else its last number."""
    flat = text.replace(",", "")
    cuts = [flat.rfind(m) + len(m) for m in (markers.think_close, markers.answer_prefix, "answer is") if m and m in flat]
    if cuts:
        m = _ANSWER_NUM.search(flat, max(cuts))
        if m:
            return m.group()
    found = _ANSWER_NUM.findall(flat)
    return found[-1] if found else None


def check_program(steps: list[tuple[str, str]], answer: int | str | None = None) -> str:
    """One ``assert`` per step, and ``assert <answer> == <last value>`` when an answer is given."""
    lines = [f"assert {e} == {v}" for e, v in steps]
    if answer is not None and steps:
        lines.append(f"assert {answer} == {steps[-1][1]}")
    return "\n".join(lines)


def verify(text: str, markers=None, limits: Limits = Limits()) -> Verdict:
    """The tool's verdict on a candidate's text (its reasoning and final answer; see the module docstring)."""
    from ..tasks import MARKERS

    if not isinstance(text, str):
        return Verdict(False, 0, (), "the candidate is not text", "")
    if len(text) > limits.max_chars:
        return Verdict(False, 0, (), f"the candidate has {len(text):,} characters; at most {limits.max_chars:,}", "")
    markers = markers or MARKERS["tinyreasoner"]
    steps = extract_steps(text)
    answer = final_answer(text, markers) if steps else None
    program = check_program(steps, answer)
    if not steps:
        return Verdict(True, 0, (), "no calculation to check", program)
    try:
        checks = run_program(program, limits)
    except ToolError as e:
        return Verdict(False, 0, (), str(e), program)
    failed = tuple(i for i, c in enumerate(checks) if not c.ok)
    if not failed:
        return Verdict(True, len(checks), (), "every calculation checks", program, tuple(checks))
    first = checks[failed[0]]
    what = "the final answer" if failed[0] == len(steps) else f"step {failed[0] + 1}"
    return Verdict(False, len(checks), failed, f"{what}: {first.source.removeprefix('assert ')} fails "
                   f"({first.reason})", program, tuple(checks))
