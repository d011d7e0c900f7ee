"""MoH's jobs: the entry points the page and the CLI call.

``run_solve(instance, SolveConfig)``: one instance (a TSP instance, random cities when None, or bin items) solved by a
heuristic program and the references (:mod:`.solve`). ``run_evolve(EvolveConfig)``: MoH and its ablations with equal
budgets and the tuned-constant baseline (:func:`.moh.evolve`), then their gaps at unseen sizes (:func:`.moh.evaluate`),
the meta operator's counts, the evolved optimiser programs and the search curves.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError
from ...runtime import CancelToken, Progress, sub_progress, timed
from .meta_operators import META_OPERATORS
from .moh import VARIANTS, MoHConfig, default_variants, evaluate, evolve
from .optimiser import EditOperator, parse_optimiser
from .problems import BinInstance, TSPInstance, random_tsp
from .references import CONSTRUCTIONS, RULES


@dataclass(frozen=True)
class SolveConfig:
    """One solve: the heuristic ``program`` (None = the shipped one of the problem), ``n`` random cities from
    ``seed`` when no instance is given, the TSP ``references`` run beside it (LKH-3 always)."""

    program: str | None = None
    n: int = 100
    seed: int = 0
    references: tuple[str, ...] = ("lkh",)

    def __post_init__(self) -> None:
        from .references import TSP_REFERENCES

        object.__setattr__(self, "references", tuple(TSP_REFERENCES.key(r) for r in self.references))


@dataclass(frozen=True)
class EvolveConfig:
    """One evolution: the search (``problem``, training ``sizes``, ``train_instances``, ``budget``,
    ``meta_population``, ``generations``, ``single_size``: the single-size ablation's size when it is a training size,
    else the middle one, ``seed``), the ``variants`` (None = every one that applies), the meta-level ``operator``
    (``edits``: hand-written structural edits, or ``lm``: SmolLM2 writes optimiser programs, ``lm_calls`` its cap),
    and the evaluation (``eval_sizes``, ``eval_instances``, ``references``: None = the problem's defaults)."""

    problem: str = "tsp_construct"
    sizes: tuple[int, ...] = (20, 50, 100)
    train_instances: int = 2
    budget: int = 16
    meta_population: int = 4
    generations: int = 2
    single_size: int = 50
    seed: int = 0
    variants: tuple[str, ...] | None = None
    operator: str = "edits"
    lm_calls: int = 20
    eval_sizes: tuple[int, ...] = (200, 500, 1000)
    eval_instances: int = 2
    references: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", tuple(int(s) for s in self.sizes))
        object.__setattr__(self, "eval_sizes", tuple(int(s) for s in self.eval_sizes))
        object.__setattr__(self, "variants", tuple(
            VARIANTS.key(v) for v in (default_variants(self.problem) if self.variants is None else self.variants)
            if str(v).strip()))
        if not set(self.variants) <= set(default_variants(self.problem)):
            raise InputError("The tuned-constant baseline (d_cur - c * avg_rest) is a TSP-construction rule.")
        if not all(20 <= s <= 1000 for s in self.sizes) or not all(200 <= s <= 1000 for s in self.eval_sizes):
            raise InputError("Training sizes are 20-1,000 and evaluation sizes 200-1,000.")
        if set(self.sizes) & set(self.eval_sizes):
            raise InputError("Evaluation sizes must differ from the training sizes.")
        for name, v, lo, hi in (("--generations", self.generations, 0, 50), ("--budget", self.budget, 4, 2000),
                                ("--meta-population", self.meta_population, 2, 16),
                                ("--train-instances", self.train_instances, 1, 32),
                                ("--eval-instances", self.eval_instances, 1, 16)):
            if not lo <= v <= hi:
                raise InputError(f"{name} is {v}; give {lo} to {hi}.")
        object.__setattr__(self, "operator", META_OPERATORS.key(self.operator))
        if self.single_size not in self.sizes:
            object.__setattr__(self, "single_size", self.sizes[len(self.sizes) // 2])

    def moh_config(self) -> MoHConfig:
        return MoHConfig(self.problem, self.sizes, int(self.train_instances), int(self.budget),
                         int(self.meta_population), int(self.generations), int(self.single_size), int(self.seed))

    def shown_references(self) -> tuple[str, ...]:
        if self.references is not None:
            return tuple(self.references)
        return RULES if self.problem == "bpp_online" else CONSTRUCTIONS


def run_solve(instance: TSPInstance | BinInstance | None, config: SolveConfig, progress: Progress | None = None,
              token: CancelToken | None = None) -> dict[str, object]:
    """Bin items: ``{kind: "bins", bins, l1, program}``; a TSP instance (None = ``config.n`` random cities):
    ``{kind: "tsp", name, n, coords, tours, lengths, gaps, ms, program}``."""
    from .shipped import default_program
    from .solve import solve_bins, solve_tsp

    if isinstance(instance, BinInstance):
        text = config.program or default_program("bpp_online")
        return {"kind": "bins", **solve_bins(instance, text)}
    tsp = instance if instance is not None else random_tsp(int(config.n), int(config.seed))
    text = config.program or default_program()
    out = solve_tsp(tsp, text, config.references, progress=progress)
    return {"kind": "tsp", "name": tsp.name, "n": tsp.n, "coords": tsp.coords.round(6).tolist(), **out}


def run_evolve(config: EvolveConfig, progress: Progress | None = None, token: CancelToken | None = None,
               lm=None) -> dict[str, object]:  # noqa: ANN001 - a loaded CausalLM for the lm operator (None = load)
    """The variants' results (``variants``: JSON of each), the evaluation (``sizes``, ``gaps``, ``reference``),
    the meta operator's counts per variant, the best optimisers' programs, the search ``curves`` and ``timing_s``."""
    from .meta_operators import lm_meta_operator

    cfg = config.moh_config()
    meta_operator = None
    if META_OPERATORS[config.operator] is not EditOperator:  # the LM: the loaded model when given
        meta_operator = lm_meta_operator(lm, max_calls=int(config.lm_calls)) if lm is not None else \
            META_OPERATORS[config.operator](max_calls=int(config.lm_calls))
    clock = timed()
    res = evolve(cfg, config.variants, meta_operator=meta_operator, progress=sub_progress(progress, 0.0, 0.85))
    evolve_s = clock()
    clock = timed()
    ev = evaluate(cfg.problem, {k: r.heuristic for k, r in res.items()}, config.eval_sizes,
                  int(config.eval_instances), references=config.shown_references(),
                  progress=sub_progress(progress, 0.85, 1.0))
    return {"problem": cfg.problem, "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.__dict__.items()},
            "operator": {"meta_operator": config.operator, "per_variant": {k: r.meta_operator for k, r in res.items()}},
            "optimisers": {k: parse_optimiser(r.optimiser).pretty() for k, r in res.items()
                           if r.optimiser.startswith("(optimiser")},
            "variants": {k: r.to_json() for k, r in res.items()},
            "evaluation": {"sizes": ev["sizes"], "gaps": ev["gaps"], "reference": ev["reference"]},
            "curves": {k: r.progress_curve(len(cfg.sizes), cfg.meta_population, cfg.budget) for k, r in res.items()},
            "timing_s": {"evolve": evolve_s, "evaluate": clock()}}
