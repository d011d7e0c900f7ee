"""Proposal operators of the MoH search: the program-space GP operator (the default) and a language-model operator.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH, arXiv 2505.20881). In the paper
an LLM writes every new heuristic and optimiser. Here the operator is pluggable:

- :class:`GPOperator`: subtree mutation, point mutation, constant perturbation, subtree crossover and hoist over the
  typed language of :mod:`backend.heuristics.moh.language`; with it MoH is a two-level genetic programming search.
- :class:`LMOperator`: a causal LM (SmolLM2-135M-Instruct through ``backend.models.lm`` by default) is prompted with
  the language, the features and one or two parent programs; the first s-expression of its reply is parsed into the
  language or the proposal is counted as failed (never an error, never executed as code). Calls are capped; past the
  cap the GP operator proposes, and the counts say how many proposals each made. The parse rate is measured.

Both return a program tree or ``None`` (a failed proposal, which still spends one unit of the evaluation budget).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import Registry
from .language import (
    ARITY,
    BINARY,
    UNARY,
    Grammar,
    Node,
    const,
    is_term,
    parse,
    random_program,
    random_terminal,
    to_text,
    valid,
)

OPS = ("subtree", "point", "const", "crossover", "hoist")


def _replace(root: Node, target: int, new: Node) -> Node:
    """``root`` with its ``target``-th node (pre-order) replaced by ``new``."""
    count = -1

    def go(n: Node) -> Node:
        nonlocal count
        count += 1
        if count == target:
            return new
        if not n.args:
            return n
        return Node(n.op, tuple(go(a) for a in n.args), n.value)

    return go(root)


@dataclass
class GPOperator:
    """Mutation and crossover over program trees."""

    name: str = "gp"
    calls: int = 0
    failed: int = 0

    def fresh(self) -> GPOperator:
        return GPOperator()

    def stats(self) -> dict:
        return {"operator": "gp", "proposals": self.calls, "failed": self.failed}

    def propose(self, op: str, parents: list[Node], grammar: Grammar, rng: np.random.Generator) -> Node | None:
        self.calls += 1
        for _ in range(12):
            child = self._once(op, parents, grammar, rng)
            if child is not None and valid(child, grammar) and to_text(child) != to_text(parents[0]):
                return child
        self.failed += 1
        return None

    def _once(self, op: str, parents: list[Node], grammar: Grammar, rng: np.random.Generator) -> Node | None:
        a = parents[0]
        nodes = a.nodes()
        i = int(rng.integers(len(nodes)))
        if op == "subtree":
            return _replace(a, i, random_program(grammar, rng, int(rng.integers(1, 4))))
        if op == "point":
            n = nodes[i]
            if n.op == "const" or is_term(n):
                return _replace(a, i, random_terminal(grammar, rng))
            same = [o for o, k in ARITY.items() if k == ARITY[n.op] and o != n.op]
            if not same:
                return None
            return _replace(a, i, Node(str(rng.choice(same)), n.args))
        if op == "const":
            consts = [j for j, n in enumerate(nodes) if n.op == "const"]
            if not consts:  # graft a weighted term: x -> (add x (mul c t))
                t = random_terminal(grammar, rng)
                return Node("add", (a, Node("mul", (const(round(float(rng.normal(0, 0.5)), 3)), t))))
            j = int(rng.choice(consts))
            v = nodes[j].value
            return _replace(a, j, const(round(v * float(rng.lognormal(0, 0.4)) + float(rng.normal(0, 0.1)), 4)))
        if op == "crossover":
            b = parents[1] if len(parents) > 1 else parents[0]
            bn = b.nodes()
            return _replace(a, i, bn[int(rng.integers(len(bn)))])
        if op == "hoist":
            return nodes[i] if i > 0 else None
        raise KeyError(op)


PROMPT = """You design a scoring rule for {decision}.
Write ONE s-expression in prefix form. Operators: {ops}. Features:
{features}
Numbers are allowed. Example: (add d_cur (mul 0.5 d_start))
Parent rule A: {a}
Parent rule B: {b}
Write a new, better rule that {how}. Reply with the s-expression only."""

HOW = {"subtree": "changes one part of A", "point": "swaps one operator or feature of A",
       "const": "retunes the numbers of A", "crossover": "combines ideas of A and B", "hoist": "simplifies A"}
_SEXPR = re.compile(r"\([^\n]*")


def balanced(text: str, start: int, close: bool = False) -> str | None:
    """The parenthesised expression of ``text`` opening at ``start`` (-1: none). Unclosed at the end of the text:
    closed there when ``close``, else ``None``."""
    if start < 0:
        return None
    depth = 0
    for j, ch in enumerate(text[start:], start):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return text[start:j + 1]
    return text[start:] + ")" * depth if close else None


def first_sexpr(text: str) -> str | None:
    """The first balanced parenthesised expression in ``text`` (or a bare feature name), else ``None``."""
    return balanced(text, text.find("("))


@dataclass
class LMCalls:
    """What every language-model operator shares: the model (``generate``: prompt -> reply), the call cap and the
    counts of calls, parsed replies and failed proposals, and the first 8 replies kept as samples. Subclasses add
    their prompt, parser and fallback operator."""

    generate: Callable[[str], str]
    max_calls: int = 20
    name: str = "lm"
    source: str = ""
    calls: int = 0
    parsed: int = 0
    failed: int = 0
    samples: list[dict] = field(default_factory=list)

    def fresh(self):  # noqa: ANN201 - the same class
        """The same model with its own counts and call cap."""
        return type(self)(self.generate, max_calls=self.max_calls, source=self.source)

    @property
    def parse_rate(self) -> float | None:
        return self.parsed / self.calls if self.calls else None

    def ask(self, prompt: str, read: Callable[[str], object]) -> tuple[str, object, str | None]:
        """One counted call: ``(reply, read(reply) or None, the parse error or None)``; counts the reply as parsed or
        failed."""
        self.calls += 1
        reply = str(self.generate(prompt))
        try:
            got, err = read(reply), None
        except InputError as e:
            got, err = None, str(e)
        if got is None:
            self.failed += 1
        else:
            self.parsed += 1
        return reply, got, err

    def keep(self, sample: dict) -> None:
        if len(self.samples) < 8:
            self.samples.append(sample)

    def counts(self) -> dict:
        return {"operator": "lm", "source": self.source, "lm_calls": self.calls, "parsed": self.parsed,
                "failed": self.failed, "parse_rate": self.parse_rate, "max_calls": self.max_calls,
                "samples": self.samples}


@dataclass
class LMOperator(LMCalls):
    """A language model as the proposal operator (parsed into the language or a failed proposal)."""

    fallback: GPOperator = field(default_factory=GPOperator)

    def propose(self, op: str, parents: list[Node], grammar: Grammar, rng: np.random.Generator) -> Node | None:
        if self.calls >= self.max_calls:
            return self.fallback.propose(op, parents, grammar, rng)
        prompt = PROMPT.format(decision=grammar.decision, ops=", ".join(BINARY + UNARY + ("ifgt",)),
                               features=grammar.describe(), a=to_text(parents[0]),
                               b=to_text(parents[1] if len(parents) > 1 else parents[0]), how=HOW.get(op, "improves A"))

        def read(reply: str) -> Node:
            expr = first_sexpr(reply)
            return parse(expr if expr is not None else reply.strip().split("\n")[0][:200], grammar)

        reply, node, err = self.ask(prompt, read)
        self.keep({"reply": reply[:300], "parsed": node is not None, "why": err})
        return node

    def stats(self) -> dict:
        return {**self.counts(), "gp_fallback_proposals": self.fallback.calls}


def lm_operator(lm, max_calls: int = 20, max_new_tokens: int = 48) -> LMOperator:  # noqa: ANN001 - a CausalLM
    """The LM operator over a loaded ``backend.models.lm.CausalLM`` (greedy replies)."""
    return LMOperator(lambda p: lm.generate(p, max_new_tokens=max_new_tokens), max_calls=max_calls, source=lm.source)


def smollm2_operator(max_calls: int = 20, model: str | None = None, max_new_tokens: int = 48) -> LMOperator:
    """The LM operator over ``backend.models.lm.load_causal_lm(model)`` (``None`` = the embedded SmolLM2)."""
    from ...models.lm import load_causal_lm

    return lm_operator(load_causal_lm(model), max_calls, max_new_tokens)


OPERATORS: Registry = Registry("proposal operator")
OPERATORS.add("gp", GPOperator, label="GP operator (program-space mutation and crossover)", kind="ours")
OPERATORS.add("lm", smollm2_operator, label="LM operator (SmolLM2-135M-Instruct)", kind="ablation")


def summarise(per_variant: dict[str, dict]) -> dict:
    """The operator's counts over the variants of one evolution (each variant has its own copy and cap)."""
    stats = list(per_variant.values())
    if not stats or "lm_calls" not in stats[0]:
        return {"operator": "gp", "per_variant": per_variant}
    calls = sum(s["lm_calls"] for s in stats)
    parsed = sum(s["parsed"] for s in stats)
    return {"operator": "lm", "source": stats[0]["source"], "lm_calls": calls, "parsed": parsed,
            "failed": sum(s["failed"] for s in stats), "parse_rate": parsed / calls if calls else None,
            "max_calls": stats[0]["max_calls"], "gp_fallback_proposals": sum(s["gp_fallback_proposals"] for s in stats),
            "per_variant": per_variant}
