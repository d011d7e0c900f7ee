"""Optimiser programs: the lower level of MoH, a program that evolves heuristics for one task under a budget.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH, arXiv 2505.20881). In the paper
an optimiser is LLM-written Python code; here it is a program of a small typed language of evolutionary-search
components, interpreted by :func:`run_optimiser`::

    (optimiser (population 8) (init 3) (select tournament 3) (ops subtree 0.3 point 0.2 const 0.2 crossover 0.3
     hoist 0) (elite 1) (survival plus) (parsimony 0.001) (restart 0))

``population`` 2-16, ``init`` the largest depth of the ramped half-and-half start (2-5; the problem's seed heuristic
is always in the start population), ``select`` tournament k (2-5) / rank / truncation q (0.2-0.8), ``ops`` the
probabilities of the five operators of :mod:`backend.heuristics.moh.operators` (normalised), ``elite`` 0-3,
``survival`` plus (parents and children compete) or comma (children replace all but the elite), ``parsimony``
0-0.05 per node added to the gap when ranking, ``restart`` re-seeds all but the elite after that many generations
without improvement (0 = never). The same program, applied to optimiser programs, is the meta-optimiser.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ...errors import InputError
from .language import Node, parse, random_program, to_text
from .operators import OPS

SELECT = ("tournament", "rank", "truncation")
SURVIVAL = ("plus", "comma")


@dataclass(frozen=True)
class Optimiser:
    population: int = 8
    init: int = 3
    select: str = "tournament"
    select_arg: float = 3.0
    ops: tuple[float, ...] = (0.3, 0.2, 0.2, 0.3, 0.0)
    elite: int = 1
    survival: str = "plus"
    parsimony: float = 0.001
    restart: int = 0

    def text(self) -> str:
        sel = f"{self.select} {_g(self.select_arg)}" if self.select != "rank" else "rank"
        ops = " ".join(f"{o} {_g(p)}" for o, p in zip(OPS, self.ops))
        return (f"(optimiser (population {self.population}) (init {self.init}) (select {sel}) (ops {ops}) "
                f"(elite {self.elite}) (survival {self.survival}) (parsimony {_g(self.parsimony)}) "
                f"(restart {self.restart}))")

    def probs(self) -> np.ndarray:
        p = np.clip(np.array(self.ops, dtype=float), 0, None)
        return p / p.sum() if p.sum() > 0 else np.full(len(OPS), 1 / len(OPS))

    def as_dict(self) -> dict:
        return asdict(self)


def _g(v: float) -> str:
    return f"{v:.6g}"


SEED_OPTIMISER = Optimiser()


def clamp(o: Optimiser) -> Optimiser:
    """The nearest valid optimiser (every field within its range)."""
    arg = {"tournament": float(np.clip(round(o.select_arg), 2, 5)), "rank": 0.0,
           "truncation": float(np.clip(round(o.select_arg, 3), 0.2, 0.8))}[o.select]
    ops = tuple(float(np.clip(round(p, 3), 0, 1)) for p in o.ops)
    if sum(ops) <= 0:
        ops = SEED_OPTIMISER.ops
    pop = int(np.clip(o.population, 2, 16))
    return Optimiser(pop, int(np.clip(o.init, 2, 5)), o.select, arg, ops, int(np.clip(o.elite, 0, min(3, pop - 1))),
                     o.survival, float(np.clip(round(o.parsimony, 5), 0, 0.05)), int(np.clip(o.restart, 0, 10)))


def parse_optimiser(text: str) -> Optimiser:
    """Parse the text form; InputError names the component that is wrong."""
    if not isinstance(text, str) or len(text) > 1000 or not text.strip().startswith("(optimiser"):
        raise InputError("An optimiser program starts with (optimiser ...) and has at most 1,000 characters.")
    parts = dict(re.findall(r"\((population|init|select|ops|elite|survival|parsimony|restart)\s+([^()]*)\)", text))
    try:
        kw: dict = {}
        if "population" in parts:
            kw["population"] = int(parts["population"])
        if "init" in parts:
            kw["init"] = int(parts["init"])
        if "select" in parts:
            s = parts["select"].split()
            if s[0] not in SELECT:
                raise InputError(f"select must be one of {', '.join(SELECT)}.")
            kw["select"], kw["select_arg"] = s[0], float(s[1]) if len(s) > 1 else 0.0
        if "ops" in parts:
            toks = parts["ops"].split()
            got = dict(zip(toks[::2], map(float, toks[1::2])))
            if set(got) - set(OPS):
                raise InputError(f"ops names: {', '.join(OPS)}.")
            kw["ops"] = tuple(got.get(o, 0.0) for o in OPS)
        for k in ("elite", "restart"):
            if k in parts:
                kw[k] = int(parts[k])
        if "survival" in parts:
            if parts["survival"].strip() not in SURVIVAL:
                raise InputError(f"survival must be one of {', '.join(SURVIVAL)}.")
            kw["survival"] = parts["survival"].strip()
        if "parsimony" in parts:
            kw["parsimony"] = float(parts["parsimony"])
    except (ValueError, IndexError):
        raise InputError("An optimiser component has a value that is not a number.") from None
    o = clamp(replace(SEED_OPTIMISER, **kw))
    if not all(math.isfinite(p) for p in o.ops):
        raise InputError("Operator probabilities must be finite.")
    return o


# ------------------------------------------------------------------------------------------------ one run
@dataclass
class RunLog:
    """What one optimiser run did: the best program, its score, the best score after each evaluation."""

    best: Node
    best_fit: float
    curve: list[float] = field(default_factory=list)
    proposals: int = 0
    failed: int = 0


def select(o: Optimiser, ranked: list[tuple[float, Node]], rng: np.random.Generator) -> Node:
    """One parent from ``ranked`` (sorted best first)."""
    n = len(ranked)
    if o.select == "tournament":
        idx = rng.integers(n, size=min(int(o.select_arg), n))
        return ranked[int(idx.min())][1]
    if o.select == "rank":
        w = np.arange(n, 0, -1, dtype=float)
        return ranked[int(rng.choice(n, p=w / w.sum()))][1]
    top = max(1, int(round(o.select_arg * n)))
    return ranked[int(rng.integers(top))][1]


def run_optimiser(o: Optimiser, fitness, grammar, seed_program: Node, budget: int, operator,  # noqa: ANN001, C901
                  rng: np.random.Generator) -> RunLog:
    """Interpret optimiser ``o``: evolve programs of ``grammar`` minimising ``fitness(program)`` (a gap; ``inf`` for a
    failed program) with ``budget`` evaluations; every proposal, parsed or not, spends one."""
    spent = 0
    log = RunLog(seed_program, math.inf)

    def score(p: Node, f: float) -> float:
        return f + o.parsimony * p.size()

    def evaluate(p: Node | None) -> tuple[float, Node] | None:
        nonlocal spent
        spent += 1
        log.proposals += 1
        if p is None:
            log.failed += 1
            log.curve.append(log.best_fit)
            return None
        f = float(fitness(p))
        if f < log.best_fit:
            log.best, log.best_fit = p, f
        log.curve.append(log.best_fit)
        return (score(p, f), p)

    pop: list[tuple[float, Node]] = []

    def fill(programs: list[Node]) -> None:
        """Evaluate ``programs`` in order into the population while the budget lasts, then sort it."""
        for p in programs:
            if spent >= budget:
                break
            r = evaluate(p)
            if r is not None:
                pop.append(r)
        pop.sort(key=lambda t: t[0])

    fill([seed_program] + [random_program(grammar, rng, 2 + i % max(o.init - 1, 1), full=bool(i % 2))
                           for i in range(o.population - 1)])
    probs = o.probs()
    stale, best_seen = 0, log.best_fit
    while spent < budget and pop:
        children: list[tuple[float, Node]] = []
        n_child = max(1, o.population - (o.elite if o.survival == "comma" else 0))
        for _ in range(n_child):
            if spent >= budget:
                break
            op = OPS[int(rng.choice(len(OPS), p=probs))]
            parents = [select(o, pop, rng), select(o, pop, rng)]
            r = evaluate(operator.propose(op, parents, grammar, rng))
            if r is not None:
                children.append(r)
        if o.survival == "plus":
            pool = pop + children
        else:
            pool = pop[:o.elite] + children
        uniq: dict[str, tuple[float, Node]] = {}
        for s, p in sorted(pool, key=lambda t: t[0]):
            uniq.setdefault(to_text(p), (s, p))
        pop = list(uniq.values())[:o.population] or pop
        if log.best_fit < best_seen - 1e-12:
            best_seen, stale = log.best_fit, 0
        else:
            stale += 1
        if o.restart and stale >= o.restart:
            keep = pop[:max(o.elite, 1)]
            fresh = [random_program(grammar, rng, o.init, full=bool(i % 2)) for i in range(o.population - len(keep))]
            pop = keep
            fill(fresh)
            stale = 0
    return log


# ------------------------------------------------------------------------------------------------ meta operators
def mutate_optimiser(op: str, parents: list[Optimiser], rng: np.random.Generator) -> Optimiser:
    """The five operators applied to optimiser programs (a component is a subtree, a field a point)."""
    a = parents[0]
    d = asdict(a)
    if op == "crossover":
        b = asdict(parents[1] if len(parents) > 1 else a)
        d = {k: (b[k] if rng.random() < 0.5 else v) for k, v in d.items()}
        if d["select"] != a.select and d["select"] != b["select"]:
            d["select_arg"] = a.select_arg
        return clamp(Optimiser(**{**d, "ops": tuple(d["ops"])}))
    if op in ("subtree", "hoist"):  # resample one component
        k = str(rng.choice(["population", "init", "select", "ops", "elite", "survival", "parsimony", "restart"]))
        fresh = random_optimiser(rng)
        if k == "select":
            d["select"], d["select_arg"] = fresh.select, fresh.select_arg
        else:
            d[k] = getattr(fresh, k)
    elif op == "point":  # one discrete choice changes
        k = str(rng.choice(["select", "survival", "elite", "restart", "population"]))
        if k == "select":
            d["select"] = str(rng.choice([s for s in SELECT if s != a.select]))
            d["select_arg"] = {"tournament": 3.0, "rank": 0.0, "truncation": 0.5}[d["select"]]
        elif k == "survival":
            d["survival"] = "comma" if a.survival == "plus" else "plus"
        else:
            d[k] = int(d[k]) + int(rng.choice([-1, 1])) * (2 if k == "population" else 1)
    else:  # const: perturb the numbers
        d["ops"] = tuple(float(p * rng.lognormal(0, 0.4) + abs(rng.normal(0, 0.03))) for p in a.ops)
        d["parsimony"] = float(a.parsimony * rng.lognormal(0, 0.5))
        if a.select != "rank":
            d["select_arg"] = float(a.select_arg + rng.normal(0, 0.6 if a.select == "tournament" else 0.1))
    return clamp(Optimiser(**{**d, "ops": tuple(d["ops"])}))


def random_optimiser(rng: np.random.Generator) -> Optimiser:
    sel = str(rng.choice(SELECT))
    return clamp(Optimiser(int(rng.integers(3, 13)), int(rng.integers(2, 6)), sel,
                           {"tournament": float(rng.integers(2, 6)), "rank": 0.0,
                            "truncation": float(rng.uniform(0.2, 0.8))}[sel],
                           tuple(float(x) for x in rng.dirichlet(np.ones(len(OPS)))), int(rng.integers(0, 3)),
                           str(rng.choice(SURVIVAL)), float(rng.choice([0.0, 0.001, 0.005, 0.02])),
                           int(rng.choice([0, 0, 3, 6]))))


def parse_program(text: str, grammar) -> Node:  # noqa: ANN001
    return parse(text, grammar)
