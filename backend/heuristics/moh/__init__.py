"""MoH: meta-optimised heuristic generation for TSP and online bin packing.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (Shi et al., arXiv 2505.20881).
Heuristics are programs of a typed language, evolved by optimiser programs (lists of stages, each a selection, a
variation pipeline and an acceptance rule), which a meta level builds and evolves; the utility of an optimiser weighs
its heuristics' gaps over several training sizes, and the heuristics are judged at sizes never trained on.

| registry | name | what | citation |
|----------|------|------|----------|
| ``moh.VARIANTS`` | ``moh`` | two-level search, size-weighted utility over training sizes (ours) | MoH |
| | ``single_size`` | the same search, utility of one training size (ablation) | MoH ablation |
| | ``no_meta`` | the seed optimiser alone, size-weighted gaps, the same budget (ablation) | MoH ablation |
| | ``tuned_constant`` | ``d_cur - c * avg_rest``, c by line search on the training gaps (baseline) | the evolved form |
| ``references.TSP_REFERENCES`` | ``nearest_neighbour``, ``greedy_edge``, ``farthest_insertion`` | constructions | Rosenkrantz, Stearns, Lewis 1977 |
| | ``two_opt`` | 2-opt descent from nearest neighbour | Croes 1958 |
| | ``ortools`` | OR-Tools routing (path-cheapest-arc + greedy descent) | Google OR-Tools |
| | ``lkh`` | LKH-3 through ``elkai`` (the gap reference) | Helsgaun 2017 |
| ``references.BIN_REFERENCES`` | ``first_fit``, ``best_fit``, ``l1`` | online bin-packing rules and the L1 bound | Johnson 1974; Martello, Toth 1990 |
| ``operators.OPERATORS`` | ``gp`` | heuristic level: program-space mutation and crossover (default) | genetic programming, Koza 1992 |
| | ``lm`` | heuristic level: SmolLM2-135M-Instruct proposals parsed into the language | MoH's LLM operator |
| ``meta_operators.META_OPERATORS`` | ``edits`` | meta level: hand-written structural edits of optimiser programs (default) | ours |
| | ``lm`` | meta level: SmolLM2-135M-Instruct writes optimiser programs | MoH's LLM meta-optimiser |

Modules: ``language`` (the typed language and its step-limited interpreter), ``problems`` (instances, readers,
runners), ``references``, ``operators``, ``optimiser`` (optimiser programs, their interpreter and the structural
edits), ``meta_operators`` (what proposes optimiser programs), ``moh`` (the meta level, the ablations, the tuned
constant, evaluation), ``lm_meta`` (what the LM meta operator adds), ``shipped`` (``assets/moh_programs.json`` and
``assets/moh_lm.json``), ``solve`` (one
instance against the references), ``jobs`` (``run_solve``, ``run_evolve``), ``inputs`` (the ``tsplib`` and
``bin_items`` kinds), ``cli``.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "VARIANTS": "moh", "MoHConfig": "moh", "VariantResult": "moh", "evolve": "moh", "evaluate": "moh",
    "meta_search": "moh", "GRAMMARS": "language", "parse": "language", "render": "language",
    "TSPInstance": "problems", "BinInstance": "problems", "read_tsplib": "problems", "read_bin_items": "problems",
    "random_tsp": "problems", "TSP_REFERENCES": "references", "BIN_REFERENCES": "references",
    "OPERATORS": "operators", "META_OPERATORS": "meta_operators", "Optimiser": "optimiser",
    "parse_optimiser": "optimiser", "solve_tsp": "solve", "solve_bins": "solve",
    "SolveConfig": "jobs", "EvolveConfig": "jobs", "run_solve": "jobs", "run_evolve": "jobs",
})
