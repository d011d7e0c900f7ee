"""Heuristic generation by meta-optimisation.

Method packages: ``moh`` (MoH: heuristics as programs of a typed language, evolved by optimiser programs that a
meta-optimiser evolves; TSP construction, TSP guided local search and online bin packing). Nothing is shared
between methods yet.
"""
