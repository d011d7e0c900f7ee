"""The three data gates of OR-PRM, applied to a written formulation against its problem's statement.

| name | label | kind | what |
|------|-------|------|------|
| ``execution`` | Gate 1: the model executes | ours | it compiles (names, dimensions, numbers) and HiGHS returns an optimum (not infeasible, unbounded or an error) |
| ``feasibility`` | Gate 2: constraints hold, label reproduced | ours | the solver's solution satisfies every constraint, bound and integrality the problem states, and the recorded optimum equals the stated objective at that solution |
| ``judge`` | Gate 3: structural judge | ours | sets, parameter names and shapes, variable domains, objective sense and terms, and each constraint block (name, index, sense, terms) agree with the statement; parameter values are not read |

(:data:`GATES`, in pipeline order.) In the paper an LLM (Qwen3-8B) checks the solution against the constraints and
GPT-4o judges the formulation; here gate 2 evaluates the solution on the stated model and gate 3 is a structural
comparison standing in for the LLM judge: like an LLM reading the model, it sees structure and misses numbers.

Why gates 1 and 2 catch every corrupted label of a missing constraint or of a misrecorded optimum: a formulation
with a constraint left out is a relaxation of the stated model, so its optimum differs from the true one only if
its solution breaks a stated constraint (gate 2) or it is unbounded (gate 1); a misrecorded optimum differs from
the stated objective at the formulation's own solution (gate 2). Dropping integrality is a relaxation too; making a
continuous block integer, a unit error or a swap can tighten the model, and then a feasible, consistently recorded
but wrong optimum passes both (the table of the page shows which gate catches what, and what none does).

- :func:`audit` ``(stated, form)`` -> :class:`Audit`: every gate's verdict (each gate judged on its own), the first
  gate that rejects (the pipeline's verdict), the solution and the seconds each gate took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import Registry
from .formulation import Model, Solution, compile_model, solve, violations

REL_TOL = 1e-6


@dataclass
class Context:
    """What the gates share for one formulation: its compiled model and solution (computed once)."""

    stated: dict
    form: dict
    model: Model | None = None
    solution: Solution | None = None
    error: str = ""
    stated_model: Model | None = None
    x_stated: np.ndarray | None = None
    map_error: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    def solved(self) -> Solution | None:
        if self.solution is None and not self.error:
            t0 = time.perf_counter()
            try:
                self.model = compile_model(self.form)
            except (InputError, KeyError, ValueError, IndexError) as err:
                self.error = f"does not compile: {str(err)[:160]}"
                return None
            self.solution = solve(self.model)
            self.seconds["solve"] = time.perf_counter() - t0
        return self.solution

    def mapped(self) -> np.ndarray | None:
        """The solution as values of the statement's variables (None with ``map_error`` when they differ)."""
        if self.x_stated is not None or self.map_error:
            return self.x_stated
        sol = self.solved()
        if sol is None or sol.x is None or self.model is None:
            self.map_error = "no solution to check"
            return None
        self.stated_model = compile_model(self.stated)
        parts = []
        for v in self.stated["variables"]:
            s0, shape = self.stated_model.blocks[v["name"]]
            got = self.model.blocks.get(v["name"])
            if got is None or got[1] != shape:
                self.map_error = f"the variable {v['name']} of the statement is missing or has another shape"
                return None
            parts.append(sol.x[got[0] : got[0] + int(np.prod(shape, dtype=int))])
        self.x_stated = np.concatenate(parts)
        return self.x_stated


def execution_gate(ctx: Context) -> tuple[bool, str]:
    sol = ctx.solved()
    if sol is None:
        return False, ctx.error
    if sol.status != "optimal":
        return False, f"{sol.status}: {sol.message[:120]}"
    return True, f"optimal, objective {sol.objective:.6g}"


def constraints_gate(ctx: Context) -> tuple[bool, str]:
    x = ctx.mapped()
    if x is None:
        return False, ctx.map_error
    m = ctx.stated_model
    assert m is not None
    broken = violations(m, x)
    if broken:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        return False, f"the solution breaks {broken[0]}{more}"
    value = float(m.c @ x)
    label = ctx.form.get("label")
    if label is None:
        return True, f"feasible; stated objective {value:.6g} (no recorded optimum to compare)"
    if abs(float(label) - value) > REL_TOL * max(1.0, abs(value)):
        return False, f"the recorded optimum {float(label):.6g} is not the stated objective at the solution ({value:.6g})"
    return True, f"feasible; the recorded optimum {float(label):.6g} is reproduced"


def _terms(terms: list[dict]) -> list[tuple[str, Any]]:
    return sorted((t["var"], str(t["coef"]) if isinstance(t["coef"], str) else float(t["coef"])) for t in terms)


def judge_gate(ctx: Context) -> tuple[bool, str]:
    """The structural comparison (see the module docstring); the first difference is the reason."""
    st, fm = ctx.stated, ctx.form
    if st["sets"] != fm.get("sets"):
        return False, "the index sets differ from the problem's entities"
    for p, v in st["parameters"].items():
        got = fm["parameters"].get(p)
        if got is None or got["over"] != v["over"]:
            return False, f"the parameter {p} is missing or indexed differently"
    fv = {v["name"]: v for v in fm["variables"]}
    for v in st["variables"]:
        got = fv.get(v["name"])
        if got is None or got["over"] != v["over"]:
            return False, f"the variable {v['name']} is missing or indexed differently"
        if got["domain"] != v["domain"]:
            return False, f"the variable {v['name']} is {got['domain']}, the problem asks for {v['domain']} values"
    if fm["objective"]["sense"] != st["objective"]["sense"]:
        return False, (f"the objective is to {fm['objective']['sense']}imise, the problem asks to "
                       f"{st['objective']['sense']}imise")
    if _terms(fm["objective"]["terms"]) != _terms(st["objective"]["terms"]):
        return False, "the objective's terms differ from the problem's"
    fc = {c["name"]: c for c in fm["constraints"]}
    for c in st["constraints"]:
        got = fc.get(c["name"])
        if got is None:
            return False, f"the constraint {c['name']} that the problem states is missing"
        if got["over"] != c["over"] or got["sense"] != c["sense"] or _terms(got["terms"]) != _terms(c["terms"]):
            return False, f"the constraint {c['name']} differs in its index, sense or terms"
    extra = [c for c in fc if c not in {x["name"] for x in st["constraints"]}]
    if extra:
        return False, f"the constraint {extra[0]} is not in the problem"
    return True, "the structure matches the problem's entities"


GATES: Registry[Callable[[Context], tuple[bool, str]]] = Registry("gate")
GATES.add("execution", execution_gate, label="Gate 1: the model executes", kind="ours", color="#1f77b4")
GATES.add("feasibility", constraints_gate, label="Gate 2: constraints hold, label reproduced", kind="ours",
          color="#2ca02c")
GATES.add("judge", judge_gate, label="Gate 3: structural judge", kind="ours", color="#ff7f0e")


@dataclass
class Audit:
    """``passed[gate]`` and ``reasons[gate]`` for every gate (each judged on its own), ``first_reject`` (the
    pipeline's verdict: the first gate in order that rejects, None when all pass), ``objective`` (the solver's, None
    when it does not solve), ``x`` (the solution) and ``seconds`` per gate."""

    passed: dict[str, bool]
    reasons: dict[str, str]
    first_reject: str | None
    objective: float | None
    x: np.ndarray | None
    seconds: dict[str, float]


def audit(stated: dict, form: dict, ctx: Context | None = None) -> Audit:
    """Every gate on ``form`` against the problem's statement ``stated`` (both checked formulations); ``ctx`` shares
    the solution with the process reward model's features."""
    ctx = ctx if ctx is not None else Context(stated, form)
    passed, reasons, secs = {}, {}, {}
    for name in GATES:
        t0 = time.perf_counter()
        passed[name], reasons[name] = GATES.get(name)(ctx)
        secs[name] = time.perf_counter() - t0
    first = next((g for g in GATES if not passed[g]), None)
    sol = ctx.solution
    return Audit(passed, reasons, first, None if sol is None else sol.objective,
                 None if sol is None else sol.x, secs)


def context(stated: dict, form: dict, solution: Solution | None = None) -> Context:
    """A :class:`Context` shared by the gates and the process reward model's features; ``solution`` (already
    computed, e.g. by the modeller) is used instead of solving again."""
    ctx = Context(stated, form)
    if solution is not None:
        try:
            ctx.model = compile_model(form)
            ctx.solution = solution
        except (InputError, KeyError, ValueError, IndexError) as err:
            ctx.error = f"does not compile: {str(err)[:160]}"
    return ctx
