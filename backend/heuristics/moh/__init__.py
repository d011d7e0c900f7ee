"""MoH: meta-optimised heuristic generation for TSP and online bin packing.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (Shi et al., arXiv 2505.20881).
Heuristics are programs of a typed language, evolved by optimiser programs, which a meta-optimiser evolves; the
utility of an optimiser weighs its heuristics' gaps over several training sizes, and the heuristics are judged at
sizes never trained on.

| registry | name | what | citation |
|----------|------|------|----------|
| ``moh.VARIANTS`` | ``moh`` | two-level search, size-weighted utility over training sizes (ours) | MoH |
| | ``single_size`` | the same search, utility of one training size (ablation) | MoH ablation |
| | ``no_meta`` | the seed optimiser alone, size-weighted gaps, the same budget (ablation) | MoH ablation |
| ``references.TSP_REFERENCES`` | ``nearest_neighbour``, ``greedy_edge``, ``farthest_insertion`` | constructions | Rosenkrantz, Stearns, Lewis 1977 |
| | ``two_opt`` | 2-opt descent from nearest neighbour | Croes 1958 |
| | ``ortools`` | OR-Tools routing (path-cheapest-arc + greedy descent) | Google OR-Tools |
| | ``lkh`` | LKH-3 through ``elkai`` (the gap reference) | Helsgaun 2017 |
| ``references.BIN_REFERENCES`` | ``first_fit``, ``best_fit``, ``l1`` | online bin-packing rules and the L1 bound | Johnson 1974; Martello, Toth 1990 |
| ``operators.OPERATORS`` | ``gp`` | program-space mutation and crossover (default) | genetic programming, Koza 1992 |
| | ``lm`` | SmolLM2-135M-Instruct proposals parsed into the language | MoH's LLM operator |

Modules: ``language`` (the typed language and its step-limited interpreter), ``problems`` (instances, readers,
runners), ``references``, ``operators``, ``optimiser`` (optimiser programs and their interpreter), ``moh`` (the meta
level, the ablations, evaluation), ``shipped`` (the programs in ``assets/moh_programs.json``), ``solve`` (one
instance against the references), ``jobs`` (``run_solve``, ``run_evolve``), ``inputs`` (the ``tsplib`` and
``bin_items`` kinds), ``cli``.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "VARIANTS": "moh", "MoHConfig": "moh", "VariantResult": "moh", "evolve": "moh", "evaluate": "moh",
    "meta_search": "moh", "GRAMMARS": "language", "parse": "language", "render": "language",
    "TSPInstance": "problems", "BinInstance": "problems", "read_tsplib": "problems", "read_bin_items": "problems",
    "random_tsp": "problems", "TSP_REFERENCES": "references", "BIN_REFERENCES": "references",
    "OPERATORS": "operators", "solve_tsp": "solve", "solve_bins": "solve",
    "SolveConfig": "jobs", "EvolveConfig": "jobs", "run_solve": "jobs", "run_evolve": "jobs",
})
