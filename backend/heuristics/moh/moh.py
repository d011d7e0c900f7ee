"""MoH: the two-level search. A meta-optimiser evolves optimiser programs; each optimiser evolves heuristics for several
tasks (problem sizes); its utility is the size-weighted sum of its per-task utilities; the best optimiser becomes the
next meta-optimiser.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH; Shi, Zhou, Song, Bi, Wu, Zhang;
arXiv 2505.20881). Implemented: optimisers as programs of stages (selection, variation pipeline, acceptance; the
number and order of stages open, :mod:`backend.heuristics.moh.optimiser`); the meta level, which interprets the best
optimiser found so far over a population of ``meta_population`` optimiser programs with a meta-level operator that
proposes structure (hand-written structural edits, or a language model writing programs:
:mod:`backend.heuristics.moh.meta_operators`); utility ``U(phi) = sum_i w_i U_i(phi)`` with ``U_i`` minus the mean
optimality gap (%) of the best heuristic ``phi`` found on task i and ``w_i`` proportional to the task's size. Equal
budgets, counted in task evaluations (one heuristic on one task's instance set), for the two ablations:
``single_size`` (the same meta search with the utility of one training size, which gets the whole per-optimiser
budget) and ``no_meta`` (the seed optimiser's fixed loop alone on the size-weighted gaps with the total budget of
MoH). The baseline ``tuned_constant`` is ``d_cur - c * avg_rest`` with ``c`` found by a line search on the same
training gaps (about 30 heuristic evaluations). The final heuristic of a search variant is, among its best
optimiser's per-task heuristics, the one with the lowest size-weighted gap on the training tasks.

Left out: by default no language model writes optimisers or heuristics (the meta operator is the hand-written edit
operator and the heuristic operator the program-space GP operator, so MoH is a two-level program search here; the
LM operators are options, capped in calls); the paper's idea texts (an individual is a program and its utility);
populations of 10 (the default meta population is 4 and the budget small, so that 20+ training seeds fit a CPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import Registry
from ...runtime import Progress, report
from .language import GRAMMARS, Node, parse, render, to_text
from .operators import GPOperator
from .optimiser import SEED_OPTIMISER, EditOperator, Optimiser, random_optimiser, run_loop, run_optimiser
from .problems import BinInstance, TSPInstance, instances, objective

SEED_HEURISTICS = {"tsp_construct": "d_cur", "tsp_gls": "(neg (div d_edge (add 1 pen)))",
                   "bpp_online": "(sub rest item)"}
TRAIN_SIZES = (20, 50, 100)
EVAL_SIZES = (200, 500, 1000)
EVAL_SEED = 10_000  # evaluation instances: seeds 10,000 and above, never trained on


@dataclass
class Task:
    """One training task: a problem at one size, its instances and their reference values (LKH-3 tour lengths or
    the L1 bin bound); ``gap(prog)`` is the mean optimality gap in %, cached by program text."""

    problem: str
    n: int
    insts: list
    refs: np.ndarray
    evals: int = 0
    _cache: dict = field(default_factory=dict, repr=False)

    def gap(self, prog: Node) -> float:
        self.evals += 1
        key = to_text(prog)
        if key not in self._cache:
            vals = np.array([objective(self.problem, prog, i) for i in self.insts])
            self._cache[key] = float(np.mean(100.0 * (vals / self.refs - 1.0))) if np.isfinite(vals).all() \
                else math.inf
        return self._cache[key]


def reference_value(problem: str, inst: TSPInstance | BinInstance) -> float:
    if problem == "bpp_online":
        return float(inst.l1)
    from .references import lkh

    return inst.length(lkh(inst))


def make_tasks(problem: str, sizes: tuple[int, ...], count: int, seed: int) -> list[Task]:
    out = []
    for n in sizes:
        insts = instances(problem, n, count, seed)
        out.append(Task(problem, int(n), insts, np.array([reference_value(problem, i) for i in insts])))
    return out


@dataclass(frozen=True)
class MoHConfig:
    """Defaults: the lab's training sizes, 2 instances per size, meta populations of 4 (the paper: 10), 2 meta
    iterations and 16 heuristic evaluations per task per optimiser (a CPU budget that lets 20+ seeds run)."""

    problem: str = "tsp_construct"
    sizes: tuple[int, ...] = TRAIN_SIZES
    train_instances: int = 2
    budget: int = 16  # heuristic evaluations per task per optimiser run
    meta_population: int = 4
    generations: int = 2  # meta iterations: (generations + 1) * meta_population optimiser evaluations in all
    single_size: int = 50
    seed: int = 0

    @property
    def optimiser_evaluations(self) -> int:
        return self.meta_population * (self.generations + 1)

    @property
    def task_budget(self) -> int:
        """Task evaluations every search variant may spend."""
        return self.optimiser_evaluations * self.budget * len(self.sizes)


@dataclass
class VariantResult:
    variant: str
    heuristic: str
    readable: str
    optimiser: str
    train_gaps: dict[str, float]
    history: list[dict]
    task_evals: int
    proposals: int
    failed: int
    operator: dict = field(default_factory=lambda: {"operator": "gp"})
    meta_operator: dict = field(default_factory=lambda: {"operator": "edits"})
    weighted_gap: float = math.nan

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def progress_curve(self, n_tasks: int, meta_population: int, budget: int) -> tuple[list[int], list[float]]:
        """(task evaluations spent, best weighted training gap so far) along the search."""
        return progress_curve(self.history, n_tasks, budget)


def progress_curve(history: list[dict], n_tasks: int, budget: int) -> tuple[list[int], list[float]]:
    """Meta variants: one point per optimiser evaluated (``budget x tasks`` task evaluations each); the fixed
    optimiser and the tuned constant: one point per heuristic evaluated (``tasks`` task evaluations each)."""
    if history and "optimiser_evaluation" in history[0]:
        return ([(h["optimiser_evaluation"] + 1) * budget * n_tasks for h in history],
                [h["best_weighted_gap"] for h in history])
    return [h["evaluation"] * n_tasks for h in history], [h["best_weighted_gap"] for h in history]


def weights_for(cfg: MoHConfig, single: bool = False) -> np.ndarray:
    """Size-weighted task weights, or one-hot on ``cfg.single_size`` (the single-size ablation)."""
    sizes = np.array(cfg.sizes, dtype=float)
    if single:
        if cfg.single_size not in cfg.sizes:
            raise InputError(f"The single-size ablation trains on {cfg.single_size}, which is not among the sizes "
                             f"{list(cfg.sizes)}.")
        return (sizes == cfg.single_size).astype(float)
    return sizes / sizes.sum()


def _utility(opt: Optimiser, tasks: list[Task], w: np.ndarray, cfg: MoHConfig, operator, seed: tuple) -> dict:  # noqa: ANN001
    """Run ``opt`` on every task with a nonzero weight; the budget of zero-weight tasks goes to the others."""
    grammar = GRAMMARS[cfg.problem]
    active = [i for i in range(len(tasks)) if w[i] > 0]
    per = cfg.budget * len(tasks) // len(active)
    out = {"per_task": {}, "heuristics": {}, "proposals": 0, "failed": 0}
    total = 0.0
    for i in active:
        rng = np.random.default_rng([*seed, i])
        log = run_optimiser(opt, tasks[i].gap, grammar, parse(SEED_HEURISTICS[cfg.problem], grammar), per, operator,
                            rng)
        out["per_task"][tasks[i].n] = log.best_fit
        out["heuristics"][tasks[i].n] = log.best
        out["proposals"] += log.proposals
        out["failed"] += log.failed
        total += w[i] * log.best_fit
    out["utility"] = -total
    return out


def _final_heuristic(heuristics: dict, tasks: list[Task], w_size: np.ndarray) -> tuple[Node, dict]:
    best, best_u, gaps = None, math.inf, {}
    for prog in heuristics.values():
        g = {str(t.n): t.gap(prog) for t in tasks}
        u = float(sum(wi * g[str(t.n)] for wi, t in zip(w_size, tasks)))
        if u < best_u:
            best, best_u, gaps = prog, u, g
    return best, gaps


def _weighted(gaps: dict, tasks: list[Task], w: np.ndarray) -> float:
    return float(sum(wi * gaps[str(t.n)] for wi, t in zip(w, tasks)))


def meta_search(cfg: MoHConfig, variant: str = "moh", tasks: list[Task] | None = None, operator=None,  # noqa: ANN001
                meta_operator=None, progress: Progress | None = None) -> VariantResult:  # noqa: ANN001
    """MoH (``variant="moh"``) or its single-size ablation: the two-level search. The meta level interprets the
    best optimiser found so far (the seed optimiser at the start) over a population of ``meta_population``
    optimiser programs, with ``meta_operator`` (structural edits or an LM) as its variation operator; each optimiser
    is scored by running it on the tasks (utility ``-sum_i w_i gap_i``)."""
    tasks = tasks or make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    for t in tasks:
        t.evals = 0
    operator = operator or GPOperator()
    meta_operator = meta_operator or EditOperator()
    single = VARIANTS.get(variant) is single_size_search
    w = weights_for(cfg, single)
    rng = np.random.default_rng([cfg.seed, 1 + int(single)])
    start = [SEED_OPTIMISER] + [random_optimiser(rng) for _ in range(cfg.meta_population - 1)]
    steps = cfg.optimiser_evaluations
    seen: dict[str, dict] = {}
    history: list[dict] = []
    best = {"o": SEED_OPTIMISER, "u": -math.inf, "r": None}
    counts = {"proposals": 0, "failed": 0}

    def fitness(o: Optimiser) -> float:
        k = len(history)
        if o.text() not in seen:
            r = _utility(o, tasks, w, cfg, operator, (cfg.seed, k))
            seen[o.text()] = r
            counts["proposals"] += r["proposals"]
            counts["failed"] += r["failed"]
        r = seen[o.text()]
        if hasattr(meta_operator, "gaps"):
            meta_operator.gaps[o.text()] = -r["utility"]
        if r["utility"] > best["u"]:
            best.update(o=o, u=r["utility"], r=r)
        history.append({"optimiser_evaluation": k, "program": o.text(), "structure": o.structure(),
                        "weighted_gap": -r["utility"], "best_weighted_gap": -best["u"],
                        "meta_optimiser": best["o"].text(),
                        "per_task": {str(n): float(v) for n, v in r["per_task"].items()},
                        "heuristics": {str(n): to_text(p) for n, p in r["heuristics"].items()}})
        report(progress, min(len(history) / steps, 1.0), f"{variant}: optimiser {len(history)}/{steps}")
        return -r["utility"]

    def meta_vary(op: str, parents: list[Optimiser], r: np.random.Generator) -> Optimiser | None:
        return meta_operator.propose(op, parents, r)

    run_loop(lambda: best["o"], fitness, start, steps, meta_vary, lambda i, d, r: random_optimiser(r),
             lambda o: o.text(), rng, population=cfg.meta_population)
    spent = sum(t.evals for t in tasks)
    prog, gaps = _final_heuristic(best["r"]["heuristics"], tasks, weights_for(cfg))
    return VariantResult(variant, to_text(prog), render(prog), best["o"].text(), gaps, history, spent,
                         counts["proposals"], counts["failed"], operator.stats(), meta_operator.stats(),
                         _weighted(gaps, tasks, weights_for(cfg)))


def no_meta(cfg: MoHConfig, tasks: list[Task] | None = None, operator=None,  # noqa: ANN001
            progress: Progress | None = None, **_: object) -> VariantResult:
    """The ablation without a meta level: the seed optimiser's fixed loop alone, fitness = size-weighted gap over
    every task, the same number of task evaluations as MoH."""
    tasks = tasks or make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    for t in tasks:
        t.evals = 0
    operator = operator or GPOperator()
    grammar = GRAMMARS[cfg.problem]
    w = weights_for(cfg)
    budget = cfg.task_budget // len(tasks)

    def fit(prog: Node) -> float:
        return float(sum(wi * t.gap(prog) for wi, t in zip(w, tasks)))

    rng = np.random.default_rng([cfg.seed, 3])
    log = run_optimiser(SEED_OPTIMISER, fit, grammar, parse(SEED_HEURISTICS[cfg.problem], grammar), budget, operator,
                        rng)
    report(progress, 1.0, "no meta level: done")
    stride = max(1, len(log.curve) // 50)
    history = [{"evaluation": i + 1, "best_weighted_gap": float(v)} for i, v in enumerate(log.curve)][::stride]
    gaps = {str(t.n): t.gap(log.best) for t in tasks}
    return VariantResult("no_meta", to_text(log.best), render(log.best), SEED_OPTIMISER.text(), gaps, history,
                         sum(t.evals for t in tasks), log.proposals, log.failed, operator.stats(),
                         {"operator": "none"}, _weighted(gaps, tasks, w))


TUNED_FORM = "(sub d_cur (mul {c} avg_rest))"
TUNED_GRID = tuple(round(0.1 * i, 2) for i in range(16))  # c = 0.0 .. 1.5


def tuned_constant(cfg: MoHConfig, tasks: list[Task] | None = None, progress: Progress | None = None,
                   **_: object) -> VariantResult:
    """The tuned-constant baseline: ``d_cur - c * avg_rest`` (the form most MoH runs converge to) with ``c`` found
    by a line search on the size-weighted training gap: a grid ``c = 0, 0.1, ..., 1.5``, then golden-section
    refinement (10 steps) in the bracket around the best grid point."""
    if cfg.problem != "tsp_construct":
        raise InputError("The tuned-constant baseline is a TSP-construction rule (d_cur - c * avg_rest).")
    tasks = tasks or make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    for t in tasks:
        t.evals = 0
    grammar = GRAMMARS[cfg.problem]
    w = weights_for(cfg)
    history: list[dict] = []
    best = {"c": 0.0, "g": math.inf}

    def f(c: float) -> float:
        c = round(float(c), 4)
        g = float(sum(wi * t.gap(parse(TUNED_FORM.format(c=c), grammar)) for wi, t in zip(w, tasks)))
        if g < best["g"]:
            best.update(c=c, g=g)
        history.append({"evaluation": len(history) + 1, "c": c, "weighted_gap": g, "best_weighted_gap": best["g"]})
        return g

    vals = [f(c) for c in TUNED_GRID]
    i = int(np.argmin(vals))
    lo, hi = TUNED_GRID[max(i - 1, 0)], TUNED_GRID[min(i + 1, len(TUNED_GRID) - 1)]
    phi = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(8):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - phi * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + phi * (hi - lo)
            f2 = f(x2)
    report(progress, 1.0, "tuned constant: done")
    prog = parse(TUNED_FORM.format(c=best["c"]), grammar)
    gaps = {str(t.n): t.gap(prog) for t in tasks}
    return VariantResult("tuned_constant", to_text(prog), render(prog), f"line search over c (c = {best['c']:g})",
                         gaps, history, sum(t.evals for t in tasks), len(history), 0, {"operator": "line search"},
                         {"operator": "none"}, _weighted(gaps, tasks, w))


def moh_search(cfg: MoHConfig, **kw: object) -> VariantResult:
    """MoH: the two-level search with the size-weighted utility."""
    return meta_search(cfg, "moh", **kw)


def single_size_search(cfg: MoHConfig, **kw: object) -> VariantResult:
    """The single-size ablation: the two-level search with the utility of one training size."""
    return meta_search(cfg, "single_size", **kw)


VARIANTS: Registry = Registry("MoH variant")
VARIANTS.add("moh", moh_search, label="MoH (size-weighted meta-optimisation)", kind="ours")
VARIANTS.add("single_size", single_size_search, label="Single-size utility", kind="ablation")
VARIANTS.add("no_meta", no_meta, label="No meta level (fixed optimiser)", kind="ablation")
VARIANTS.add("tuned_constant", tuned_constant, label="Tuned constant (d_cur - c * avg_rest)", kind="baseline")


def default_variants(problem: str) -> tuple[str, ...]:
    """Every variant that applies to ``problem`` (the tuned constant is a TSP-construction rule)."""
    return tuple(v for v in VARIANTS if VARIANTS.get(v) is not tuned_constant or problem == "tsp_construct")


def ours(variants) -> str | None:  # noqa: ANN001 - names of VARIANTS
    """The variant of ``variants`` that is the method itself (kind ``ours``), if any."""
    return next((v for v in variants if VARIANTS.kind(v) == "ours"), None)


def evolve(cfg: MoHConfig, variants: tuple[str, ...] | None = None, operator=None,  # noqa: ANN001
           meta_operator=None, progress: Progress | None = None) -> dict[str, VariantResult]:  # noqa: ANN001
    """Every variant (None = every one that applies) on the same training tasks (same instances and references),
    each with its own copy of the operators (an LM operator's call cap applies per variant)."""
    from ...runtime import sub_progress

    variants = default_variants(cfg.problem) if variants is None else tuple(variants)
    tasks = make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    out = {}
    for k, v in enumerate(variants):
        fresh = [Task(t.problem, t.n, t.insts, t.refs) for t in tasks]  # no cache shared between variants
        out[v] = VARIANTS.get(v)(cfg, tasks=fresh, operator=operator.fresh() if operator is not None else None,
                                 meta_operator=meta_operator.fresh() if meta_operator is not None else None,
                                 progress=sub_progress(progress, k / len(variants), (k + 1) / len(variants)))
    return out


# ------------------------------------------------------------------------------------------------ evaluation
def evaluate(problem: str, programs: dict[str, str], sizes: tuple[int, ...], count: int, seed: int = EVAL_SEED,
             references: tuple[str, ...] = (), ref_values: dict | None = None,
             progress: Progress | None = None) -> dict:
    """Mean gap (%) per program and reference at each size, on instances never trained on. ``ref_values``
    ``{size: [reference value per instance]}`` skips recomputing LKH-3 (or L1). Equal programs run once."""
    from .references import BIN_REFERENCES, TSP_REFERENCES

    grammar = GRAMMARS[problem]
    progs = {k: parse(v, grammar) for k, v in programs.items()}
    out: dict = {"sizes": list(sizes), "gaps": {k: [] for k in [*progs, *references]}, "per_instance": {},
                 "reference": "L1 lower bound" if problem == "bpp_online" else "LKH-3 (elkai)", "ref_values": {}}
    for si, n in enumerate(sizes):
        insts = instances(problem, n, count, seed)
        if ref_values and str(n) in ref_values:
            refs = np.array(ref_values[str(n)], dtype=float)
        else:
            refs = np.array([reference_value(problem, i) for i in insts])
        out["ref_values"][str(n)] = refs.tolist()
        done: dict[str, np.ndarray] = {}
        for k, p in progs.items():
            key = to_text(p)
            if key not in done:
                done[key] = np.array([objective(problem, p, i) for i in insts])
            vals = done[key]
            g = 100.0 * (vals / refs - 1.0)
            out["per_instance"].setdefault(k, {})[str(n)] = g.tolist()
            out["gaps"][k].append(float(g.mean()))
        for r in references:
            if problem == "bpp_online":
                vals = np.array([BIN_REFERENCES.get(r)(i) for i in insts], dtype=float)
            else:
                vals = np.array([i.length(TSP_REFERENCES.get(r)(i)) for i in insts])
            g = 100.0 * (vals / refs - 1.0)
            out["per_instance"].setdefault(r, {})[str(n)] = g.tolist()
            out["gaps"][r].append(float(g.mean()))
        report(progress, (si + 1) / len(sizes), f"evaluated size {n}")
    return out
