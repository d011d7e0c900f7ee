"""The typed language of heuristic components and its sandboxed interpreter.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH; Shi, Zhou, Song, Bi, Wu, Zhang;
arXiv 2505.20881). In the paper a heuristic is Python code written by an LLM; here a heuristic is a program of a small
typed expression language, so that every proposal, from the program-space operator or a language model, is parsed
into a tree and interpreted with step limits (never ``eval`` of free text).

A heuristic is a *scoring program*: at every decision it gives each candidate a score, and the candidate with the
smallest score is taken (the next city of a tour, the edge a guided local search penalises, the bin an item goes to).

Types: ``V`` is a vector with one value per candidate (shape ``(k,)`` for ``k`` candidates), ``S`` a scalar. Every
operator is elementwise and broadcasts ``S`` against ``V``; a program must have type ``V`` (it must use a
per-candidate feature). Operators: ``add sub mul div min max`` (binary), ``neg abs sqrt log sq inv`` (unary, with
protected forms: ``div`` by a value near 0 gives the numerator, ``sqrt`` and ``log`` act on absolute values,
``log(x) = log(1 + |x|)``, ``inv(x) = 1 / (|x| + 1e-9)``), ``ifgt a b c d`` (``c`` where ``a > b`` else ``d``) and
numeric constants. Text form: an s-expression ``(add d_cur (mul 0.5 d_start))``; :func:`render` writes it infix.

Limits: at most ``MAX_NODES`` nodes, depth ``MAX_DEPTH``, ``MAX_TEXT`` characters of text; the interpreter charges
one step per vector element per node and raises :class:`StepLimit` past its budget (the evaluation counts the
heuristic as failed, never the job).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import choose

MAX_NODES = 48
MAX_DEPTH = 8
MAX_TEXT = 2000
BINARY = ("add", "sub", "mul", "div", "min", "max")
UNARY = ("neg", "abs", "sqrt", "log", "sq", "inv")
ARITY = {**{o: 2 for o in BINARY}, **{o: 1 for o in UNARY}, "ifgt": 4}
INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


@dataclass(frozen=True)
class Grammar:
    """The terminals of one problem: per-candidate features (``V``) and scalar features (``S``), each with a line of
    meaning (shown on the page and in the LM operator's prompt)."""

    name: str
    vec: dict[str, str]
    scal: dict[str, str]
    decision: str

    @property
    def terminals(self) -> tuple[str, ...]:
        return tuple(self.vec) + tuple(self.scal)

    def describe(self) -> str:
        rows = [f"  {k} (per candidate): {v}" for k, v in self.vec.items()]
        rows += [f"  {k} (scalar): {v}" for k, v in self.scal.items()]
        return "\n".join(rows)


GRAMMARS: dict[str, Grammar] = {
    "tsp_construct": Grammar(
        "tsp_construct",
        {"d_cur": "distance from the current city to the candidate",
         "d_start": "distance from the candidate back to the start city",
         "avg_rest": "mean distance from the candidate to the other unvisited cities",
         "nn_rest": "distance from the candidate to its nearest other unvisited city"},
        {"frac_left": "fraction of cities still unvisited", "scale": "mean nearest-neighbour distance of the instance",
         "min_cur": "smallest d_cur over the candidates"},
        "the unvisited city with the smallest score is visited next"),
    "tsp_gls": Grammar(
        "tsp_gls",
        {"d_edge": "length of the tour edge", "pen": "how often the edge has been penalised",
         "rank": "rank of the edge's far end among the near end's neighbours (0 = nearest), divided by 10"},
        {"scale": "mean nearest-neighbour distance of the instance", "iter_frac": "fraction of the search spent"},
        "the tour edge with the smallest score is penalised (guided local search)"),
    "bpp_online": Grammar(
        "bpp_online",
        {"rest": "remaining capacity of the bin before the item", "fill": "items already in the bin",
         "idx": "position of the bin in opening order, divided by the number of open bins"},
        {"item": "size of the arriving item", "cap": "bin capacity"},
        "the feasible open bin with the smallest score receives the item"),
}


@dataclass(frozen=True)
class Node:
    """One node of a program tree: an operator with arguments, a terminal name, or a constant."""

    op: str
    args: tuple[Node, ...] = ()
    value: float = 0.0

    def size(self) -> int:
        return 1 + sum(a.size() for a in self.args)

    def depth(self) -> int:
        return 1 + max((a.depth() for a in self.args), default=0)

    def nodes(self) -> list[Node]:
        out = [self]
        for a in self.args:
            out += a.nodes()
        return out


def const(v: float) -> Node:
    return Node("const", value=float(v))


def term(name: str) -> Node:
    return Node(f"${name}")


def op(name: str, *args: Node) -> Node:
    return Node(name, tuple(args))


def is_term(n: Node) -> bool:
    return n.op.startswith("$")


def term_name(n: Node) -> str:
    return n.op[1:]


# ------------------------------------------------------------------------------------------------ text form
def to_text(n: Node) -> str:
    """The s-expression of a program (parses back to the same tree)."""
    if n.op == "const":
        return _num(n.value)
    if is_term(n):
        return term_name(n)
    return "(" + " ".join([n.op, *(to_text(a) for a in n.args)]) + ")"


def _num(v: float) -> str:
    return f"{v:.4g}"


def render(n: Node) -> str:
    """A readable infix form, e.g. ``d_cur + 0.5 * d_start``."""

    def go(m: Node, parent_prec: int) -> str:
        if m.op == "const":
            return _num(m.value)
        if is_term(m):
            return term_name(m)
        if m.op in INFIX:
            prec = 1 if m.op in ("add", "sub") else 2
            left = go(m.args[0], prec)
            right = go(m.args[1], prec + (m.op in ("sub", "div")))
            s = f"{left} {INFIX[m.op]} {right}"
            return f"({s})" if prec < parent_prec else s
        if m.op == "neg":
            return f"-{go(m.args[0], 3)}"
        if m.op == "ifgt":
            a, b, c, d = (go(x, 0) for x in m.args)
            return f"({c} if {a} > {b} else {d})"
        return f"{m.op}({', '.join(go(x, 0) for x in m.args)})"

    return go(n, 0)


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse(text: str, grammar: Grammar) -> Node:
    """Parse an s-expression into a program of ``grammar``; InputError says what is wrong (unknown name, arity,
    type, size). LM output passes through here: a refusal is a failed proposal."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("The program is empty: write an s-expression such as (add d_cur 0.5).")
    if len(text) > MAX_TEXT:
        raise InputError(f"The program has {len(text)} characters; the limit is {MAX_TEXT}.")
    toks = _TOKEN.findall(text)
    depth = deepest = 0
    for t in toks:
        depth += (t == "(") - (t == ")")
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise InputError(f"The program is {deepest} levels deep; the limit is {MAX_DEPTH}.")
    pos = 0

    def read() -> Node:
        nonlocal pos
        if pos >= len(toks):
            raise InputError("The program ends early: a parenthesis is not closed.")
        t = toks[pos]
        pos += 1
        if t == ")":
            raise InputError("The program has an unexpected ')'.")
        if t != "(":
            return _atom(t, grammar)
        if pos >= len(toks):
            raise InputError("The program ends early after '('.")
        name = toks[pos].lower()
        pos += 1
        name = choose(name, ARITY, "operator")
        args = []
        while pos < len(toks) and toks[pos] != ")":
            args.append(read())
            if len(args) > 4:
                break
        if pos >= len(toks):
            raise InputError(f"The program ends early: ({name} ...) is not closed.")
        pos += 1
        if len(args) != ARITY[name]:
            raise InputError(f"{name} takes {ARITY[name]} argument(s), got {len(args)}.")
        return Node(name, tuple(args))

    node = read()
    if pos != len(toks):
        raise InputError("The program has text after its end; give one expression.")
    check(node, grammar)
    return node


def _atom(t: str, grammar: Grammar) -> Node:
    if t in grammar.terminals:
        return Node(f"${t}")
    try:
        v = float(t)
    except ValueError:
        return Node(f"${choose(t, grammar.terminals, 'name')}")
    if not math.isfinite(v):
        raise InputError(f"The constant {t!r} is not a finite number.")
    return const(v)


def type_of(n: Node, grammar: Grammar) -> str:
    """``"V"`` (per candidate) or ``"S"`` (scalar)."""
    if n.op == "const":
        return "S"
    if is_term(n):
        return "V" if term_name(n) in grammar.vec else "S"
    return "V" if any(type_of(a, grammar) == "V" for a in n.args) else "S"


def check(n: Node, grammar: Grammar) -> None:
    """Size, depth, names and the program type (must be ``V``)."""
    if n.size() > MAX_NODES:
        raise InputError(f"The program has {n.size()} nodes; the limit is {MAX_NODES}.")
    if n.depth() > MAX_DEPTH:
        raise InputError(f"The program is {n.depth()} levels deep; the limit is {MAX_DEPTH}.")
    for m in n.nodes():
        if is_term(m):
            choose(term_name(m), grammar.terminals, f"name of {grammar.name}")
    if type_of(n, grammar) != "V":
        raise InputError("The program gives every candidate the same score: use a per-candidate feature "
                         f"({', '.join(grammar.vec)}).")


def valid(n: Node, grammar: Grammar) -> bool:
    try:
        check(n, grammar)
    except InputError:
        return False
    return True


# ------------------------------------------------------------------------------------------------ interpreter
class StepLimit(RuntimeError):
    """The program used more interpreter steps than its budget."""


@dataclass
class Interpreter:
    """Evaluates a program on a feature dictionary, charging one step per element per node.

    ``env``: terminal name -> array of shape ``(k,)`` or a float. Missing features are computed lazily through
    ``lazy`` (so a program pays only for the features it reads)."""

    budget: int
    used: int = 0
    _k: int = field(default=1, repr=False)

    def run(self, n: Node, env: dict, k: int) -> np.ndarray:
        self._k = max(int(k), 1)
        out = self._eval(n, env)
        out = np.broadcast_to(np.asarray(out, dtype=float), (self._k,))
        return np.where(np.isfinite(out), out, np.inf)

    def _charge(self, x: object) -> None:
        self.used += self._k if isinstance(x, np.ndarray) else 1
        if self.used > self.budget:
            raise StepLimit(f"the program used more than {self.budget} interpreter steps")

    def _eval(self, n: Node, env: dict):  # noqa: ANN202 - float or (k,) array
        if n.op == "const":
            return n.value
        if is_term(n):
            v = env[term_name(n)]
            v = v() if callable(v) else v
            env[term_name(n)] = v
            self._charge(v)
            return v
        a = [self._eval(x, env) for x in n.args]
        with np.errstate(all="ignore"):
            r = _apply(n.op, a)
        self._charge(r)
        return r


def _apply(name: str, a: list):  # noqa: ANN202, C901 - one branch per operator
    if name == "add":
        return a[0] + a[1]
    if name == "sub":
        return a[0] - a[1]
    if name == "mul":
        return a[0] * a[1]
    if name == "div":
        den = np.asarray(a[1], dtype=float)
        safe = np.abs(den) > 1e-9
        return np.where(safe, np.asarray(a[0], dtype=float) / np.where(safe, den, 1.0), a[0])
    if name == "min":
        return np.minimum(a[0], a[1])
    if name == "max":
        return np.maximum(a[0], a[1])
    if name == "neg":
        return -np.asarray(a[0], dtype=float)
    if name == "abs":
        return np.abs(a[0])
    if name == "sqrt":
        return np.sqrt(np.abs(a[0]))
    if name == "log":
        return np.log1p(np.abs(a[0]))
    if name == "sq":
        return np.minimum(np.square(a[0]), 1e150)
    if name == "inv":
        return 1.0 / (np.abs(a[0]) + 1e-9)
    if name == "ifgt":
        return np.where(np.asarray(a[0]) > np.asarray(a[1]), a[2], a[3])
    raise KeyError(name)


# ------------------------------------------------------------------------------------------------ random programs
def random_program(grammar: Grammar, rng: np.random.Generator, depth: int, full: bool = False) -> Node:
    """A random tree of at most ``depth`` levels (``full``: every branch that deep), typed ``V``; ramped
    half-and-half initialisation calls it with depths 2..max and alternating ``full``."""
    for _ in range(50):
        n = _grow(grammar, rng, depth, full)
        if valid(n, grammar):
            return n
    return Node(f"${next(iter(grammar.vec))}")


def _grow(grammar: Grammar, rng: np.random.Generator, depth: int, full: bool) -> Node:
    if depth <= 1 or (not full and rng.random() < 0.3):
        return random_terminal(grammar, rng)
    r = rng.random()
    name = (rng.choice(BINARY) if r < 0.7 else rng.choice(UNARY) if r < 0.95 else "ifgt")
    return Node(str(name), tuple(_grow(grammar, rng, depth - 1, full) for _ in range(ARITY[str(name)])))


def random_terminal(grammar: Grammar, rng: np.random.Generator) -> Node:
    r = rng.random()
    if r < 0.6:
        return Node(f"${rng.choice(list(grammar.vec))}")
    if r < 0.8:
        return Node(f"${rng.choice(list(grammar.scal))}")
    return const(float(np.round(rng.choice([0.5, 1.0, 2.0, 0.1, 3.0]) * rng.choice([1, -1]) * rng.uniform(0.5, 1.5),
                                3)))
