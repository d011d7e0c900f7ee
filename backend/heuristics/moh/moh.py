"""MoH: the two-level search. A meta-optimiser evolves optimiser programs; each optimiser evolves heuristics for several
tasks (problem sizes); its utility is the size-weighted sum of its per-task utilities; the best optimiser becomes the
next meta-optimiser.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH; Shi, Zhou, Song, Bi, Wu, Zhang;
arXiv 2505.20881). Implemented: the meta level (a population of optimiser programs, ``meta_population`` candidates
proposed per iteration by the current meta-optimiser's own selection, operator mix, elitism and survival; utility
``U(phi) = sum_i w_i U_i(phi)`` with ``U_i`` minus the mean optimality gap (%) of the best heuristic ``phi`` found on
task i and ``w_i`` proportional to the task's size; the best optimiser becomes the next meta-optimiser), the lower
level (:func:`backend.heuristics.moh.optimiser.run_optimiser`), and two ablations with equal evaluation
budgets (counted in task evaluations, one heuristic on one task's instance set): ``single_size`` (the same meta search
with the utility of one training size, which gets the whole per-optimiser budget) and ``no_meta`` (the seed optimiser
alone, evolving heuristics for the size-weighted sum of the tasks' gaps with the total budget of MoH). The final
heuristic of a variant is, among its best optimiser's per-task heuristics, the one with the lowest size-weighted gap on
the training tasks.

Left out: the LLM writes neither optimisers nor heuristics by default (the proposal operator is the program-space GP
operator, so MoH is a two-level genetic programming search here; the SmolLM2 operator of
:mod:`backend.heuristics.moh.operators` can propose heuristics, capped); the paper's idea texts (an individual here is a
program and its utility); populations of 10 (the default is 6, a CPU budget).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import Registry
from ...runtime import Progress, report
from .language import GRAMMARS, Node, parse, render, to_text
from .operators import OPS, GPOperator
from .optimiser import SEED_OPTIMISER, Optimiser, mutate_optimiser, random_optimiser, run_optimiser, select
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
    """Defaults: the lab's training sizes, populations of 6 (the paper: 10) and a CPU-sized budget."""

    problem: str = "tsp_construct"
    sizes: tuple[int, ...] = TRAIN_SIZES
    train_instances: int = 4
    budget: int = 40  # heuristic evaluations per task per optimiser run
    meta_population: int = 6
    generations: int = 4  # meta iterations
    single_size: int = 50
    seed: int = 0


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

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def progress_curve(self, n_tasks: int, meta_population: int, budget: int) -> tuple[list[int], list[float]]:
        """(task evaluations spent, best weighted gap so far) along the search: per evaluation for the fixed
        optimiser, per meta iteration (``meta_population x budget x tasks`` evaluations each) otherwise."""
        if VARIANTS.get(self.variant) is no_meta:
            return [h["evaluation"] * n_tasks for h in self.history], [h["best_weighted_gap"] for h in self.history]
        return ([(h["iteration"] + 1) * meta_population * budget * n_tasks for h in self.history],
                [-h["best_utility"] for h in self.history])


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


def meta_search(cfg: MoHConfig, variant: str = "moh", tasks: list[Task] | None = None, operator=None,  # noqa: ANN001
                progress: Progress | None = None) -> VariantResult:
    """MoH (``variant="moh"``) or its single-size ablation: the two-level search."""
    tasks = tasks or make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    for t in tasks:
        t.evals = 0
    operator = operator or GPOperator()
    single = VARIANTS.get(variant) is single_size_search
    w = weights_for(cfg, single)
    rng = np.random.default_rng([cfg.seed, 1 + int(single)])
    start = [SEED_OPTIMISER] + [random_optimiser(rng) for _ in range(cfg.meta_population - 1)]
    pop = []
    steps = cfg.meta_population * (cfg.generations + 1)
    done = 0
    proposals = failed = 0
    for j, o in enumerate(start):
        r = _utility(o, tasks, w, cfg, operator, (cfg.seed, 0, j))
        pop.append((r["utility"], o, r))
        proposals += r["proposals"]
        failed += r["failed"]
        done += 1
        report(progress, done / steps, f"{variant}: optimiser {done}/{steps}")
    pop.sort(key=lambda t: -t[0])
    history = [_hist(0, pop)]
    for g in range(1, cfg.generations + 1):
        meta = pop[0][1]  # the best optimiser is the meta-optimiser
        ranked = [(-u, o) for u, o, _ in pop]
        probs = meta.probs()
        children = []
        for j in range(cfg.meta_population):
            op = OPS[int(rng.choice(len(OPS), p=probs))]
            child = mutate_optimiser(op, [select(meta, ranked, rng), select(meta, ranked, rng)], rng)
            r = _utility(child, tasks, w, cfg, operator, (cfg.seed, g, j))
            children.append((r["utility"], child, r))
            proposals += r["proposals"]
            failed += r["failed"]
            done += 1
            report(progress, done / steps, f"{variant}: meta iteration {g}, optimiser {j + 1}")
        pool = pop + children if meta.survival == "plus" else pop[:max(meta.elite, 1)] + children
        pool.sort(key=lambda t: -t[0])
        pop = pool[:cfg.meta_population]
        history.append(_hist(g, pop))
    spent = sum(t.evals for t in tasks)
    best_u, best_o, best_r = pop[0]
    prog, gaps = _final_heuristic(best_r["heuristics"], tasks, weights_for(cfg))
    return VariantResult(variant, to_text(prog), render(prog), best_o.text(), gaps, history, spent, proposals,
                         failed, operator.stats())


def _hist(g: int, pop: list) -> dict:
    return {"iteration": g, "best_utility": float(pop[0][0]), "mean_utility": float(np.mean([u for u, *_ in pop])),
            "meta_optimiser": pop[0][1].text(), "best_per_task": {str(k): float(v) for k, v in
                                                                  pop[0][2]["per_task"].items()}}


def no_meta(cfg: MoHConfig, tasks: list[Task] | None = None, operator=None,  # noqa: ANN001
            progress: Progress | None = None) -> VariantResult:
    """The ablation without a meta level: the seed optimiser alone, fitness = size-weighted gap over every task,
    the same number of task evaluations as MoH."""
    tasks = tasks or make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    for t in tasks:
        t.evals = 0
    operator = operator or GPOperator()
    grammar = GRAMMARS[cfg.problem]
    w = weights_for(cfg)
    total_task_evals = cfg.meta_population * (cfg.generations + 1) * cfg.budget * len(tasks)
    budget = total_task_evals // len(tasks)

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
                         sum(t.evals for t in tasks), log.proposals, log.failed, operator.stats())


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


def evolve(cfg: MoHConfig, variants: tuple[str, ...] | None = None, operator=None,  # noqa: ANN001
           progress: Progress | None = None) -> dict[str, VariantResult]:
    """Every variant (None = all of ``VARIANTS``) on the same training tasks (same instances and references), each
    with its own copy of the operator (an LM operator's call cap applies per variant)."""
    from ...runtime import sub_progress

    variants = tuple(VARIANTS) if variants is None else tuple(variants)

    tasks = make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    out = {}
    for k, v in enumerate(variants):
        fresh = [Task(t.problem, t.n, t.insts, t.refs) for t in tasks]  # no cache shared between variants
        out[v] = VARIANTS.get(v)(cfg, tasks=fresh, operator=operator.fresh() if operator is not None else None,
                                 progress=sub_progress(progress, k / len(variants), (k + 1) / len(variants)))
    return out


# ------------------------------------------------------------------------------------------------ evaluation
def evaluate(problem: str, programs: dict[str, str], sizes: tuple[int, ...], count: int, seed: int = EVAL_SEED,
             references: tuple[str, ...] = (), ref_values: dict | None = None,
             progress: Progress | None = None) -> dict:
    """Mean gap (%) per program and reference at each size, on instances never trained on. ``ref_values``
    ``{size: [reference value per instance]}`` skips recomputing LKH-3 (or L1)."""
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
        for k, p in progs.items():
            vals = np.array([objective(problem, p, i) for i in insts])
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
