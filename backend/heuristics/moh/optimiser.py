"""Optimiser programs: the lower level of MoH, a program that evolves heuristics for one task under a budget.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH, arXiv 2505.20881). In the paper
an optimiser is LLM-written Python code with no predefined evolutionary loop; here it is a program of a small
language of search *stages*, interpreted by :func:`run_loop`. A program is a population setting and a list of 1 to
``MAX_STAGES`` stages; one generation runs every stage in order, and a stage composes a selection, a variation
pipeline and an acceptance rule::

    (optimiser (population 8) (init 3) (parsimony 0.001) (restart 0)
      (stage (select tournament 3) (vary crossover subtree) (accept plus) (children 4))
      (stage (select best) (vary const) (accept anneal 0.5) (children 2) (every 2)))

- ``select``: ``tournament k`` (k 2-5), ``rank``, ``truncation q`` (0.2-0.8), ``best``, ``uniform``;
- ``vary``: a pipeline of 1 to ``MAX_VARY`` of the five operators of :mod:`backend.heuristics.moh.operators`
  (``subtree point const crossover hoist``), applied in order to the selected parent (crossover takes a second
  parent); a step that cannot make a new program is skipped, and the child fails when every step fails;
- ``accept``: ``plus`` (children and population compete, the best survive), ``comma e`` (the children replace all but
  the ``e`` best, e 0-3), ``parent`` (a child replaces its own parent when better: local search), ``worst`` (a child
  replaces the worst member when better), ``anneal T`` (a child replaces its parent when better, or with probability
  ``exp(-delta / T)``, T 0.05-5 gap points);
- ``children`` 1-16 per run of the stage, ``every`` 1-4 (the stage runs on every ``every``-th generation);
- ``population`` 2-16, ``init`` the largest depth of the ramped half-and-half start (2-5; the problem's seed
  heuristic always starts in the population), ``parsimony`` 0-0.05 per node added to the gap when ranking,
  ``restart`` re-seeds all but the best after that many generations without improvement (0 = never).

The meta level may change all of this: the number, order and content of the stages and every setting. Fixed (not
part of a program): the heuristic language, the runner that scores a heuristic, the evaluation budget and the seed
heuristic. The same interpreter, run over optimiser programs with structural edits as its variation operators, is the
meta-optimiser (:mod:`backend.heuristics.moh.moh`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ...errors import InputError
from .language import Node, parse, random_program, to_text
from .operators import OPS

SELECT = ("tournament", "rank", "truncation", "best", "uniform")
ACCEPT = ("plus", "comma", "parent", "worst", "anneal")
MAX_STAGES = 4
MAX_VARY = 3
MAX_TEXT = 1500


@dataclass(frozen=True)
class Stage:
    """One stage of a generation: selection, variation pipeline, acceptance."""

    select: str = "tournament"
    select_arg: float = 3.0
    vary: tuple[str, ...] = ("subtree",)
    accept: str = "plus"
    accept_arg: float = 0.0
    children: int = 4
    every: int = 1

    def text(self) -> str:
        sel = f"{self.select} {_g(self.select_arg)}" if self.select in ("tournament", "truncation") else self.select
        acc = f"{self.accept} {_g(self.accept_arg)}" if self.accept in ("comma", "anneal") else self.accept
        out = f"(stage (select {sel}) (vary {' '.join(self.vary)}) (accept {acc}) (children {self.children})"
        return out + (f" (every {self.every}))" if self.every != 1 else ")")


@dataclass(frozen=True)
class Optimiser:
    """An optimiser program: population settings and its stages."""

    population: int = 8
    init: int = 3
    parsimony: float = 0.001
    restart: int = 0
    stages: tuple[Stage, ...] = (Stage(),)

    def text(self) -> str:
        return (f"(optimiser (population {self.population}) (init {self.init}) (parsimony {_g(self.parsimony)}) "
                f"(restart {self.restart}) " + " ".join(s.text() for s in self.stages) + ")")

    def pretty(self) -> str:
        """The text form with one stage per line (for the page)."""
        head = (f"(optimiser (population {self.population}) (init {self.init}) (parsimony {_g(self.parsimony)}) "
                f"(restart {self.restart})")
        return "\n".join([head, *(f"  {s.text()}" for s in self.stages)]) + ")"

    def structure(self) -> str:
        """The loop's shape without its numbers, e.g. ``tournament>crossover+subtree>plus | best>const>anneal``."""
        return " | ".join(f"{s.select}>{'+'.join(s.vary)}>{s.accept}" for s in self.stages)


def _g(v: float) -> str:
    return f"{v:.4g}"


# the fixed loop of the no-meta ablation and the meta level's start: a plain generational GP with a fixed mix
SEED_OPTIMISER = Optimiser(8, 3, 0.001, 0, (
    Stage("tournament", 3.0, ("crossover",), "plus", 0.0, 3),
    Stage("tournament", 3.0, ("subtree",), "plus", 0.0, 3),
    Stage("tournament", 3.0, ("const",), "plus", 0.0, 2)))


def clamp_stage(s: Stage) -> Stage:
    arg = {"tournament": float(np.clip(round(s.select_arg), 2, 5)),
           "truncation": float(np.clip(round(s.select_arg, 3), 0.2, 0.8))}.get(s.select, 0.0)
    acc = {"comma": float(np.clip(round(s.accept_arg), 0, 3)),
           "anneal": float(np.clip(round(s.accept_arg, 3), 0.05, 5.0))}.get(s.accept, 0.0)
    vary = tuple(v for v in s.vary if v in OPS)[:MAX_VARY] or ("subtree",)
    return Stage(s.select, arg, vary, s.accept, acc, int(np.clip(s.children, 1, 16)), int(np.clip(s.every, 1, 4)))


def clamp(o: Optimiser) -> Optimiser:
    """The nearest valid program (every setting within its range, 1 to ``MAX_STAGES`` stages)."""
    stages = tuple(clamp_stage(s) for s in o.stages[:MAX_STAGES]) or SEED_OPTIMISER.stages[:1]
    return Optimiser(int(np.clip(o.population, 2, 16)), int(np.clip(o.init, 2, 5)),
                     float(np.clip(round(o.parsimony, 5), 0, 0.05)), int(np.clip(o.restart, 0, 10)), stages)


_PART = re.compile(r"\((population|init|parsimony|restart|select|vary|accept|children|every)\s+([^()]*)\)")


def parse_optimiser(text: str) -> Optimiser:
    """Parse the text form; InputError names the component that is wrong. Values out of range are clamped."""
    if not isinstance(text, str) or len(text) > MAX_TEXT or "(optimiser" not in text:
        raise InputError(f"An optimiser program is (optimiser ... (stage ...)) in at most {MAX_TEXT} characters.")
    body = text[text.index("(optimiser"):]
    chunks = body.split("(stage")
    head = dict(_PART.findall(chunks[0]))
    kw: dict = {}
    try:
        for k, cast in (("population", int), ("init", int), ("parsimony", float), ("restart", int)):
            if k in head:
                kw[k] = cast(float(head[k].split()[0]))
        stages = [_parse_stage(c) for c in chunks[1:]]
    except InputError:
        raise
    except (ValueError, IndexError):
        raise InputError("An optimiser component has a value that is not a number.") from None
    if not stages:
        raise InputError("An optimiser program needs at least one (stage (select ...) (vary ...) (accept ...)).")
    if len(stages) > MAX_STAGES:
        raise InputError(f"An optimiser program has at most {MAX_STAGES} stages; got {len(stages)}.")
    o = clamp(Optimiser(**{**SEED_OPTIMISER.__dict__, **kw, "stages": tuple(stages)}))
    if not math.isfinite(o.parsimony):
        raise InputError("parsimony must be a finite number.")
    return o


def _parse_stage(chunk: str) -> Stage:
    parts = dict(_PART.findall(chunk))
    for k in ("select", "vary", "accept"):
        if k not in parts:
            raise InputError(f"A stage needs ({k} ...).")
    sel = parts["select"].split()
    if not sel or sel[0] not in SELECT:
        raise InputError(f"select must be one of {', '.join(SELECT)}.")
    vary = parts["vary"].split()
    if not vary or any(v not in OPS for v in vary):
        raise InputError(f"vary lists operators among {', '.join(OPS)}.")
    if len(vary) > MAX_VARY:
        raise InputError(f"vary has at most {MAX_VARY} operators.")
    acc = parts["accept"].split()
    if not acc or acc[0] not in ACCEPT:
        raise InputError(f"accept must be one of {', '.join(ACCEPT)}.")
    default_sel = {"tournament": 3.0, "truncation": 0.5}.get(sel[0], 0.0)
    default_acc = {"comma": 1.0, "anneal": 0.5}.get(acc[0], 0.0)
    return Stage(sel[0], float(sel[1]) if len(sel) > 1 else default_sel, tuple(vary), acc[0],
                 float(acc[1]) if len(acc) > 1 else default_acc,
                 int(float(parts.get("children", "4").split()[0])), int(float(parts.get("every", "1").split()[0])))


# ------------------------------------------------------------------------------------------------ the interpreter
@dataclass
class RunLog:
    """What one run did: the best individual, its score, the best score after each evaluation."""

    best: object
    best_fit: float
    curve: list[float] = field(default_factory=list)
    proposals: int = 0
    failed: int = 0
    generations: int = 0


def select(sel: str, arg: float, ranked: list, rng: np.random.Generator) -> int:
    """The index of one parent in ``ranked`` (sorted best first)."""
    n = len(ranked)
    if sel == "tournament":
        return int(rng.integers(n, size=min(int(arg), n)).min())
    if sel == "rank":
        w = np.arange(n, 0, -1, dtype=float)
        return int(rng.choice(n, p=w / w.sum()))
    if sel == "truncation":
        return int(rng.integers(max(1, int(round(arg * n)))))
    if sel == "best":
        return 0
    return int(rng.integers(n))


def run_loop(program: Callable[[], Optimiser] | Optimiser, fitness: Callable, start: list, budget: int,  # noqa: C901
             vary: Callable, fresh: Callable, key: Callable, rng: np.random.Generator,
             size: Callable = lambda x: 0, population: int | None = None) -> RunLog:
    """Interpret an optimiser program over any individuals.

    ``program``: the program, or a function giving the program of the next generation (the meta level: the best
    optimiser so far); ``fitness(x)`` (lower is better, ``inf`` for a failed individual); ``start``: the first
    individuals (evaluated in order, the rest of the population from ``fresh(i, depth, rng)``); ``vary(op, parents,
    rng)`` -> an individual or ``None``; ``key(x)`` a text that identifies an individual; ``size(x)`` for the
    parsimony term; ``population`` overrides the program's. Every proposal, made or failed, spends one of ``budget``.
    """
    get = program if callable(program) else (lambda: program)
    spent = 0
    log = RunLog(start[0], math.inf)

    def evaluate(x: object) -> float | None:
        nonlocal spent
        spent += 1
        log.proposals += 1
        if x is None:
            log.failed += 1
            log.curve.append(log.best_fit)
            return None
        f = float(fitness(x))
        if f < log.best_fit:
            log.best, log.best_fit = x, f
        log.curve.append(log.best_fit)
        return f

    prog = get()
    pop_n = population or prog.population

    def score(x: object, f: float) -> float:
        return f + prog.parsimony * size(x)

    pop: list[tuple[float, float, object]] = []  # (score, fitness, individual), sorted best first

    def add_all(items: list) -> None:
        for x in items:
            if spent >= budget:
                break
            f = evaluate(x)
            if f is not None:
                pop.append((score(x, f), f, x))
        pop.sort(key=lambda t: t[0])

    add_all(list(start) + [fresh(i, 2 + i % max(prog.init - 1, 1), rng) for i in range(max(pop_n - len(start), 0))])
    stale, best_seen, gen = 0, log.best_fit, 0
    while spent < budget and pop:
        prog = get()
        for st in prog.stages:
            if gen % st.every or spent >= budget or not pop:
                continue
            children = []
            for _ in range(st.children):
                if spent >= budget:
                    break
                i = select(st.select, st.select_arg, pop, rng)
                j = select(st.select, st.select_arg, pop, rng)
                x = _pipeline(st.vary, [pop[i][2], pop[j][2]], vary, rng)
                f = evaluate(x)
                if f is None:
                    continue
                child = (score(x, f), f, x)
                if st.accept in ("plus", "comma"):
                    children.append(child)
                elif st.accept == "worst":
                    if child[0] < pop[-1][0]:
                        pop[-1] = child
                        pop.sort(key=lambda t: t[0])
                else:  # parent, anneal: the child competes with its own parent
                    d = child[0] - pop[i][0]
                    if d < 0 or (st.accept == "anneal" and math.isfinite(d)
                                 and rng.random() < math.exp(-d / max(st.accept_arg, 1e-9))):
                        pop[i] = child
                        pop.sort(key=lambda t: t[0])
            if st.accept == "plus":
                pool = pop + children
            elif st.accept == "comma":
                pool = pop[:int(st.accept_arg)] + children if children else pop
            else:
                pool = pop
            uniq: dict[str, tuple] = {}
            for t in sorted(pool, key=lambda t: t[0]):
                uniq.setdefault(key(t[2]), t)
            pop = list(uniq.values())[:pop_n] or pop
        gen += 1
        log.generations = gen
        if log.best_fit < best_seen - 1e-12:
            best_seen, stale = log.best_fit, 0
        else:
            stale += 1
        if prog.restart and stale >= prog.restart and spent < budget:
            pop = pop[:1]
            add_all([fresh(i, prog.init, rng) for i in range(pop_n - 1)])
            stale = 0
    return log


def _pipeline(ops: tuple[str, ...], parents: list, vary: Callable, rng: np.random.Generator) -> object | None:
    """Apply the variation steps in order; a step that fails is skipped; None when all fail."""
    cur, made = parents[0], False
    for op in ops:
        got = vary(op, [cur, parents[1]], rng)
        if got is not None:
            cur, made = got, True
    return cur if made else None


def run_optimiser(o: Optimiser, fitness: Callable, grammar, seed_program: Node, budget: int,  # noqa: ANN001
                  operator, rng: np.random.Generator) -> RunLog:
    """Interpret optimiser ``o`` on heuristics of ``grammar``: minimise ``fitness(program)`` (a gap; ``inf`` for a
    failed program) with ``budget`` evaluations, proposals from ``operator`` (the GP or LM heuristic operator)."""
    return run_loop(o, fitness, [seed_program], budget,
                    lambda op, parents, r: operator.propose(op, parents, grammar, r),
                    lambda i, depth, r: random_program(grammar, r, depth, full=bool(i % 2)), to_text, rng,
                    size=lambda p: p.size())


# ------------------------------------------------------------------------------------------------ random programs
def random_stage(rng: np.random.Generator) -> Stage:
    sel = str(rng.choice(SELECT))
    acc = str(rng.choice(ACCEPT))
    k = int(rng.integers(1, MAX_VARY + 1))
    return clamp_stage(Stage(sel, {"tournament": float(rng.integers(2, 6)), "truncation": float(rng.uniform(0.2, 0.8))}
                             .get(sel, 0.0), tuple(str(rng.choice(OPS)) for _ in range(k)), acc,
                             {"comma": float(rng.integers(0, 3)), "anneal": float(rng.choice([0.1, 0.5, 2.0]))}
                             .get(acc, 0.0), int(rng.integers(1, 7)), int(rng.choice([1, 1, 1, 2, 3]))))


def random_optimiser(rng: np.random.Generator) -> Optimiser:
    return clamp(Optimiser(int(rng.integers(3, 13)), int(rng.integers(2, 6)),
                           float(rng.choice([0.0, 0.001, 0.005, 0.02])), int(rng.choice([0, 0, 3, 6])),
                           tuple(random_stage(rng) for _ in range(int(rng.integers(1, MAX_STAGES + 1))))))


# ------------------------------------------------------------------------------------------------ structural edits
EDITS = {"subtree": "replace a stage by a new random one, or add one", "point": "swap one component of a stage "
         "(its selection, one variation step or its acceptance rule)", "const": "retune the numbers",
         "crossover": "splice the stages of two programs", "hoist": "drop a stage or a variation step"}


@dataclass
class EditOperator:
    """The hand-written meta-level operator: random structural edits of optimiser programs (one per ``EDITS``
    kind). It can add, drop, splice and reorder stages and change any component, so the loop's structure is open;
    the edits are hand-written and random, not designed by a model."""

    name: str = "edits"
    calls: int = 0
    failed: int = 0

    def fresh(self) -> EditOperator:
        return EditOperator()

    def stats(self) -> dict:
        return {"operator": "edits", "proposals": self.calls, "failed": self.failed}

    def propose(self, op: str, parents: list[Optimiser], rng: np.random.Generator) -> Optimiser | None:
        self.calls += 1
        for _ in range(12):
            child = edit(op, parents, rng)
            if child.text() != parents[0].text():
                return child
        self.failed += 1
        return None


def edit(op: str, parents: list[Optimiser], rng: np.random.Generator) -> Optimiser:  # noqa: C901
    a = parents[0]
    stages = list(a.stages)
    i = int(rng.integers(len(stages)))
    if op == "subtree":
        if len(stages) < MAX_STAGES and rng.random() < 0.5:
            stages.insert(int(rng.integers(len(stages) + 1)), random_stage(rng))
        else:
            stages[i] = random_stage(rng)
    elif op == "crossover":
        b = parents[1] if len(parents) > 1 else a
        cut_a = int(rng.integers(1, len(a.stages) + 1))
        cut_b = int(rng.integers(len(b.stages) + 1))
        stages = list(a.stages[:cut_a]) + list(b.stages[cut_b:])
        if rng.random() < 0.3:
            return clamp(replace(b, stages=tuple(stages)))
    elif op == "hoist":
        s = stages[i]
        if len(s.vary) > 1 and (len(stages) == 1 or rng.random() < 0.5):
            v = list(s.vary)
            v.pop(int(rng.integers(len(v))))
            stages[i] = replace(s, vary=tuple(v))
        elif len(stages) > 1:
            stages.pop(i)
        elif len(stages) > 0:
            stages = [random_stage(rng)]
    elif op == "point":
        s = stages[i]
        what = str(rng.choice(["select", "vary", "accept", "order"]))
        if what == "select":
            sel = str(rng.choice([x for x in SELECT if x != s.select]))
            stages[i] = replace(s, select=sel, select_arg={"tournament": 3.0, "truncation": 0.5}.get(sel, 0.0))
        elif what == "accept":
            acc = str(rng.choice([x for x in ACCEPT if x != s.accept]))
            stages[i] = replace(s, accept=acc, accept_arg={"comma": 1.0, "anneal": 0.5}.get(acc, 0.0))
        elif what == "vary":
            v = list(s.vary)
            j = int(rng.integers(len(v) + 1))
            if j < len(v) and (len(v) >= MAX_VARY or rng.random() < 0.5):
                v[j] = str(rng.choice(OPS))
            else:
                v.insert(min(j, len(v)), str(rng.choice(OPS)))
            stages[i] = replace(s, vary=tuple(v))
        elif len(stages) > 1:
            j = int(rng.integers(len(stages)))
            stages[i], stages[j] = stages[j], stages[i]
    else:  # const
        s = stages[i]
        stages[i] = replace(s, children=int(s.children + rng.choice([-2, -1, 1, 2])),
                            select_arg=s.select_arg + rng.normal(0, 0.6 if s.select == "tournament" else 0.1),
                            accept_arg=s.accept_arg * float(rng.lognormal(0, 0.5)) + (rng.normal(0, 0.5)
                                                                                     if s.accept == "comma" else 0),
                            every=int(s.every + rng.choice([-1, 0, 0, 1])))
        k = str(rng.choice(["population", "init", "parsimony", "restart"]))
        if k == "parsimony":
            a = replace(a, parsimony=float(max(a.parsimony, 1e-4) * rng.lognormal(0, 0.7)))
        else:
            a = replace(a, **{k: int(getattr(a, k) + rng.choice([-2, -1, 1, 2]))})
    return clamp(replace(a, stages=tuple(stages)))


def parse_program(text: str, grammar) -> Node:  # noqa: ANN001
    return parse(text, grammar)
