"""The shipped MoH programs: ``assets/moh_programs.json``, made by ``python -m backend.train moh``.

The file holds, per training seed and variant (MoH, single-size utility, no meta level), the evolved heuristic
(s-expression and readable form), the winning optimiser program, its training gaps and meta-level progress, and the
evaluation at sizes 200-1000 (instances of seeds 10,000 and above, never trained on) with the LKH-3 reference lengths
and the references' gaps, for TSP construction and online bin packing. Loading checks the sha256 recorded in
``assets/manifest.json``.
"""

from __future__ import annotations

import json
from functools import lru_cache

from ..runtime import ASSETS

PATH = ASSETS / "moh_programs.json"
COMMAND = "python -m backend.train moh"
FALLBACK_PROGRAM = "d_cur"


@lru_cache(maxsize=2)
def _load(mtime: float) -> dict:  # noqa: ARG001 - the cache key
    from ..weights import check

    return json.loads(check(PATH, COMMAND).read_text())


def load() -> dict:
    """The shipped record (WeightsError naming the command if it is missing or changed)."""
    from ..weights import check

    return _load(check(PATH, COMMAND, verify=False).stat().st_mtime)


def available() -> bool:
    return PATH.is_file()


def default_program(problem: str = "tsp_construct") -> str:
    """The MoH heuristic of training seed 0 (the nearest-neighbour rule ``d_cur`` if nothing is shipped)."""
    if not available():
        return FALLBACK_PROGRAM if problem == "tsp_construct" else "(sub rest item)"
    rec = load()["problems"].get(problem)
    return rec["runs"][0]["variants"]["moh"]["heuristic"] if rec else FALLBACK_PROGRAM
