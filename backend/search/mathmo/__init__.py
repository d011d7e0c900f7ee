"""MATHMO: bi-level search over modelling frameworks and models for a multi-objective Pareto front.

Paper: "MATHMO: Automated Mathematical Modeling Through Adaptive Search" (ICLR 2026; the catalog names no arXiv id).
An upper-level Pareto-UCB bandit picks a modelling framework each round, a proposal operator suggests ``l`` models of
it, and a k-nearest-neighbours surrogate runs the proposal with the largest predicted hypervolume gain.

Implemented: capacitated facility location with seven frameworks (exact MILP and LP relaxation with rounding by
HiGHS, greedy add / drop, swap local search, cluster-first k-means, simulated annealing) whose knobs lie on fine grids
(803 models), three objectives (planned cost, solver effort, cost under perturbed demand; ``facility``), hypervolume
and the Pareto-UCB rules (``pareto``), the search, its operators, strategies, the baselines random search and
discrete NSGA-II (pymoo) on the same models, the paired-seed comparison with intervals and the per-round gain of an
operator's proposals (``bilevel``), the recorded model spaces and LM transcripts the claims replay (``logs``), the
jobs (``jobs``). Left out: the paper's LLM writing model code; the default operator mutates one knob of the
framework's best model, and the ``lm`` operator asks a local causal LM for knob settings (an unparsable reply is a
failed proposal, counted in the parse rate; a round whose proposals all fail falls back to a random model and is
counted apart).

| name | label | kind | what |
|------|-------|------|------|
| ``pareto-ucb`` | MATHMO: Pareto-UCB + surrogate (ours) | ours | strategy: Pareto-UCB upper level, surrogate picks |
| ``random-framework`` | Random framework | ablation | strategy: a framework uniformly at random, surrogate picks |
| ``flat`` | Flat search (no upper level) | ablation | strategy: proposals from every framework, surrogate picks |
| ``no-surrogate`` | Pareto-UCB without surrogate | ablation | strategy: Pareto-UCB, a random proposal runs |
| ``random-search`` | Random search (uniform over the models) | baseline | strategy: models uniformly at random |
| ``nsga2`` | NSGA-II (pymoo, discrete) | baseline | strategy: integer-coded NSGA-II over the models |
| ``grid`` | Grid mutation (replaces the LLM) | ours | operator: one knob of a front model to a neighbouring value |
| ``lm`` | Local causal LM (SmolLM2 by default) | baseline | operator: ``name=value`` knob lines from a causal LM |

(``bilevel.STRATEGIES``, ``bilevel.OPERATORS``.)

Shapes: objective vectors ``[3]`` (cost, effort, robust), fronts ``[n, 3]``; an instance has facilities ``[m, 2]``
coordinates, ``[m]`` fixed costs and capacities, customers ``[n, 2]`` coordinates and ``[n]`` demands.
``run_search`` / ``run_grid`` return JSON-able summaries (hypervolume curves, chosen models, fronts as lists).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "STRATEGIES": "bilevel", "OPERATORS": "bilevel", "OBJECTIVES": "bilevel", "MathmoConfig": "bilevel",
    "Space": "bilevel", "Strategy": "bilevel", "search": "bilevel", "compare": "bilevel", "paired": "bilevel",
    "to_json": "bilevel", "parse_knobs": "bilevel", "SearchResult": "bilevel", "BASELINES": "bilevel",
    "logged_space": "bilevel", "proposal_gains": "bilevel", "nsga2_search": "bilevel", "random_search": "bilevel",
    "Instance": "facility", "FRAMEWORKS": "facility", "KNOBS": "facility", "generate": "facility",
    "read_facility_csv": "facility", "hypervolume": "pareto", "ParetoUCB": "pareto",
    "SearchConfig": "jobs", "GridConfig": "jobs", "run_search": "jobs", "run_grid": "jobs",
})
