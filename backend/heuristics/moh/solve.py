"""One instance solved by a heuristic program and the references, for the page and ``moh solve`` alike.

``solve_tsp``: the construction program's tour, the named references' tours (LKH-3 always, as the gap's base),
their lengths, gaps to LKH-3 in percent and milliseconds each. ``solve_bins``: bins used by the online packing
program, first fit and best fit, and the L1 lower bound.
"""

from __future__ import annotations

from ...errors import InputError
from ...runtime import Progress, report, timed
from .language import GRAMMARS, parse
from .problems import BinInstance, TSPInstance, construct_tour, pack_online
from .references import BIN_REFERENCES, GAP_REFERENCE, RULES, TSP_REFERENCES


def solve_tsp(inst: TSPInstance, program: str, references: tuple[str, ...] = ("lkh",),
              progress: Progress | None = None) -> dict[str, object]:
    """Tours ``{name: [city, ...]}``, ``lengths``, ``gaps`` (percent over LKH-3) and ``ms`` for ``moh`` (the
    program) and every reference (LKH-3 added when missing)."""
    prog = parse(program, GRAMMARS["tsp_construct"])
    clock = timed()
    try:
        tours = {"moh": construct_tour(prog, inst)}
    except Exception as err:  # noqa: BLE001 - the interpreter's step limit
        raise InputError(f"The program could not finish a tour: {err}.") from None
    ms = {"moh": 1000 * clock()}
    refs = tuple(dict.fromkeys((*references, GAP_REFERENCE)))
    for k, name in enumerate(refs):
        report(progress, (k + 1) / (len(refs) + 1), f"running {name}")
        clock = timed()
        tours[name] = TSP_REFERENCES.get(name)(inst)
        ms[name] = 1000 * clock()
    lengths = {k: inst.length(t) for k, t in tours.items()}
    return {"tours": {k: [int(c) for c in t] for k, t in tours.items()}, "lengths": lengths,
            "gaps": {k: 100 * (v / lengths["lkh"] - 1) for k, v in lengths.items()}, "ms": ms, "program": program}


def solve_bins(inst: BinInstance, program: str) -> dict[str, object]:
    """Bins used ``{moh, first_fit, best_fit}`` and the L1 bound of one online bin-packing instance."""
    prog = parse(program, GRAMMARS["bpp_online"])
    used = {"moh": int(pack_online(prog, inst)[0]), **{k: int(BIN_REFERENCES[k](inst)) for k in RULES}}
    return {"bins": used, "l1": int(inst.l1), "program": program}
