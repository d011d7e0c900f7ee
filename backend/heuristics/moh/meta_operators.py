"""Meta-level proposal operators of MoH: what writes a new optimiser program from one or two parents.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH, arXiv 2505.20881). In the paper
an LLM writes every new optimiser. Here two operators can propose an optimiser's *structure* (stages, their
selection, variation pipeline and acceptance, and every setting; :mod:`backend.heuristics.moh.optimiser`):

- ``edits`` (:class:`~backend.heuristics.moh.optimiser.EditOperator`): hand-written random structural edits (add,
  replace, drop, splice or reorder stages; swap a component; retune numbers). The default.
- ``lm`` (:class:`LMMetaOperator`): a causal LM (SmolLM2-135M-Instruct through ``backend.models.lm``; the optional
  Qwen2.5-Coder-1.5B-Instruct) is shown the language, the parents and their training gaps and writes a program;
  the first ``(optimiser ...)`` expression of its reply is parsed (values out of range are clamped) or the proposal
  fails. Calls are capped; past the cap the edit operator proposes. The counts say how many replies were valid
  programs new to both parents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...registry import Registry
from .operators import OPS, LMCalls, balanced
from .optimiser import ACCEPT, EDITS, MAX_STAGES, MAX_VARY, SELECT, EditOperator, Optimiser, parse_optimiser

PROMPT = """An optimiser program evolves scoring rules. It is an s-expression:
(optimiser (population P) (init D) (parsimony X) (restart R) STAGE ...)
with 1 to {stages} stages, each
(stage (select S) (vary V ...) (accept A) (children C) (every E))
S: {select}. V: 1 to {vary} of {ops}. A: {accept}.
Program A (training gap {ga}):
{a}
Program B (training gap {gb}):
{b}
Write a new optimiser program with a lower gap that {how}. Reply with the program only."""


def first_program(text: str) -> str | None:
    """The first balanced ``(optimiser ...)`` expression of ``text`` (unclosed: closed at the end), else None."""
    return balanced(text, text.find("(optimiser"), close=True)


@dataclass
class LMMetaOperator(LMCalls):
    """A language model writes optimiser programs (parsed, or a failed proposal); capped calls, then edits."""

    new: int = 0
    fallback: EditOperator = field(default_factory=EditOperator)
    gaps: dict = field(default_factory=dict)  # program text -> training gap, shown in the prompt when known

    def propose(self, op: str, parents: list[Optimiser], rng: np.random.Generator) -> Optimiser | None:
        if self.calls >= self.max_calls:
            return self.fallback.propose(op, parents, rng)
        a, b = parents[0], parents[1] if len(parents) > 1 else parents[0]
        reply, prog, err = self.ask(self.prompt(op, a, b),
                                    lambda r: parse_optimiser(first_program(r) or r[:300]))
        is_new = prog is not None and prog.text() not in (a.text(), b.text())
        self.keep({"reply": reply[:400], "parsed": prog is not None, "new": is_new, "why": err,
                   "program": prog.text() if prog is not None else None})
        self.new += int(is_new)
        return prog if is_new else None

    def prompt(self, op: str, a: Optimiser, b: Optimiser) -> str:
        def gap(o: Optimiser) -> str:
            g = self.gaps.get(o.text())
            return "unknown" if g is None else f"{g:.2f} %"

        return PROMPT.format(stages=MAX_STAGES, select=", ".join(SELECT), vary=MAX_VARY, ops=", ".join(OPS),
                             accept=", ".join(ACCEPT), a=a.text(), b=b.text(), ga=gap(a), gb=gap(b),
                             how=EDITS.get(op, "changes A"))

    def stats(self) -> dict:
        return {**self.counts(), "new": self.new, "valid_new_per_call": self.new / self.calls if self.calls else None,
                "edit_fallback_proposals": self.fallback.calls}


def lm_meta_operator(lm, max_calls: int = 20, max_new_tokens: int = 120) -> LMMetaOperator:  # noqa: ANN001
    """The LM meta operator over a loaded ``backend.models.lm.CausalLM`` (greedy replies)."""
    return LMMetaOperator(lambda p: lm.generate(p, max_new_tokens=max_new_tokens), max_calls=max_calls,
                          source=lm.source)


def smollm2_meta_operator(max_calls: int = 20, model: str | None = None, max_new_tokens: int = 120) -> LMMetaOperator:
    """The LM meta operator over ``backend.models.lm.load_causal_lm(model)`` (``None`` = the embedded SmolLM2)."""
    from ...models.lm import load_causal_lm

    return lm_meta_operator(load_causal_lm(model), max_calls, max_new_tokens)


META_OPERATORS: Registry = Registry("meta-level operator")
META_OPERATORS.add("edits", EditOperator, label="Hand-written structural edits", kind="ours")
META_OPERATORS.add("lm", smollm2_meta_operator, label="LM writes optimisers (SmolLM2-135M-Instruct)", kind="ablation")
