"""Heuristic generation by meta-optimisation (MoH, "Generalizable Heuristic Generation Through LLMs with
Meta-Optimization", Shi et al., arXiv 2505.20881): programs of a typed language evolved by optimiser programs, which
a meta-optimiser evolves.

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
level, the ablations, evaluation), ``shipped`` (the programs in ``assets/moh_programs.json``), ``moh_cli``.
"""
