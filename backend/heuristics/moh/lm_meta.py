"""What the LM meta operator adds: per training seed, programs written by the language model against programs made
by the hand-written edit operator from the same two parents, scored by the same utility.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH, arXiv 2505.20881): an LLM writes
the optimisers. :func:`measure_seed` takes the two best optimiser programs of a seed's MoH run as parents A and B;
the LM operator (:class:`backend.heuristics.moh.meta_operators.LMMetaOperator`) is called ``calls`` times and the edit
operator makes ``calls`` proposals (the same variation kinds in the same order); every valid program new to both
parents is scored on the seed's training tasks (size-weighted gap of its best heuristics, the MoH utility), with the
same random streams for the k-th proposal of either operator. Parent A is re-scored with a stream of its own, so that
the comparison does not reuse the search's selected (optimistic) score. ``best_gap`` of an operator is the lowest gap
among its valid new programs, or parent A's re-scored gap when it gave none (the operator added nothing).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .meta_operators import LMMetaOperator
from .moh import MoHConfig, _utility, make_tasks, weights_for
from .operators import OPS, GPOperator
from .optimiser import EditOperator, parse_optimiser

KINDS = ("subtree", "point", "crossover", "const", "hoist")


def parents_of(history: list[dict]) -> list[tuple[str, float]]:
    """The two best distinct optimiser programs of a meta search's history, with their weighted gaps."""
    best: dict[str, float] = {}
    for h in history:
        best[h["program"]] = min(best.get(h["program"], np.inf), h["weighted_gap"])
    ranked = sorted(best.items(), key=lambda t: t[1])
    return ranked[:2] if len(ranked) > 1 else ranked * 2


def measure_seed(cfg: MoHConfig, history: list[dict], calls: int, generate: Callable[[str], str]) -> dict:
    """One seed's comparison (see the module text); the replies and programs are logged."""
    tasks = make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed)
    w = weights_for(cfg)
    (ta, ga), (tb, gb) = parents_of(history)
    a, b = parse_optimiser(ta), parse_optimiser(tb)

    def score(o, k: int) -> float:  # noqa: ANN001 - an Optimiser
        return float(-_utility(o, tasks, w, cfg, GPOperator(), (cfg.seed, 1000 + k))["utility"])

    parent_gap = score(a, 999)
    lm = LMMetaOperator(generate, max_calls=calls)
    lm.gaps.update({ta: ga, tb: gb})
    edits = EditOperator()
    out = {"seed": cfg.seed, "parents": [{"program": ta, "search_gap": ga}, {"program": tb, "search_gap": gb}],
           "parent_gap": parent_gap}
    for name, op in (("lm", lm), ("edits", edits)):
        rng = np.random.default_rng([cfg.seed, 77])
        props = []
        for k in range(calls):
            kind = KINDS[k % len(KINDS)]
            assert kind in OPS
            prog = op.propose(kind, [a, b], rng)
            entry = {"kind": kind, "program": None if prog is None else prog.text(),
                     "structure": None if prog is None else prog.structure(), "gap": None}
            if prog is not None:
                entry["gap"] = score(prog, k)
            props.append(entry)
        gaps = [p["gap"] for p in props if p["gap"] is not None]
        out[name] = {"proposals": props, "valid_new": len(gaps), "best_gap": min(gaps) if gaps else parent_gap,
                     "new_structures": len({p["structure"] for p in props if p["structure"]}
                                           - {a.structure(), b.structure()})}
    out["lm"]["replies"] = [s["reply"] for s in lm.samples]
    out["lm"]["parsed"] = lm.parsed
    out["lm"]["calls"] = lm.calls
    return out
