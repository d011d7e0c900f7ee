"""The shipped MoH logs: ``assets/moh_programs.json`` (``python -m backend.train moh --part search``) and
``assets/moh_lm.json`` (``python -m backend.train moh --part lm``).

The programs file holds, per training seed and variant (MoH, single-size utility, no meta level and, for TSP, the
tuned constant), the evolved heuristic (s-expression and readable form), the winning optimiser program, every
optimiser program the meta search scored with its training gaps, and the evaluation at sizes 200-1000 (instances of
seeds 10,000 and above, never trained on) with the LKH-3 reference lengths and the references' gaps, for TSP
construction and online bin packing. The LM file holds, per TSP seed, the LM meta operator's replies and programs
and the edit operator's programs from the same parents, with the training gap each reached. Loading checks the sha256
recorded in ``assets/manifest.json``.
"""

from __future__ import annotations

import json
from functools import lru_cache

from ...runtime import ASSETS

PATH = ASSETS / "moh_programs.json"
COMMAND = "python -m backend.train moh --part search"
FALLBACK_PROGRAM = "d_cur"


@lru_cache(maxsize=2)
def _load(mtime: float) -> dict:  # noqa: ARG001 - the cache key
    from ...weights import check

    return json.loads(check(PATH, COMMAND).read_text())


def load() -> dict:
    """The shipped record (WeightsError naming the command if it is missing or changed)."""
    from ...weights import check

    return _load(check(PATH, COMMAND, verify=False).stat().st_mtime)


def available() -> bool:
    return PATH.is_file()


def default_program(problem: str = "tsp_construct") -> str:
    """The MoH heuristic of training seed 0 (the nearest-neighbour rule ``d_cur`` if nothing is shipped)."""
    if not available():
        return FALLBACK_PROGRAM if problem == "tsp_construct" else "(sub rest item)"
    rec = load()["problems"].get(problem)
    return rec["runs"][0]["variants"]["moh"]["heuristic"] if rec else FALLBACK_PROGRAM


def paired(per_seed: dict[str, list], last: int, ours: str) -> list[dict]:
    """MoH against every other variant at the evaluation size of index ``last``: paired over the training seeds
    (``backend.stats.paired_ci`` of MoH's gap minus the other's; negative favours MoH) and MoH's wins."""
    import numpy as np

    from ...stats import paired_ci

    a = np.array([row[last] for row in per_seed[ours]])
    out = []
    for v, rows in per_seed.items():
        if v == ours:
            continue
        b = np.array([row[last] for row in rows])
        ci = paired_ci(a, b)
        out.append({"against": v, "mean_difference": float(ci.mean), "ci_low": float(ci.low), "ci_high": float(ci.high),
                    "wins": int((a < b).sum()), "seeds": int(len(a))})
    return out


def summary(problem: str = "tsp_construct", rec: dict | None = None) -> dict:
    """What the page shows of the shipped record: per variant the mean and per-seed gaps at the evaluation sizes,
    the references' gaps, the paired comparison at the largest size, the evolved heuristics of every seed with the
    training gap each reached and its gap at the largest size, seed 0's optimiser programs and its progress curves
    (best training gap against task evaluations spent)."""
    import numpy as np

    from .moh import ours, progress_curve
    from .optimiser import parse_optimiser

    rec = (rec or load())["problems"][problem]
    ev, cfg = rec["evaluation"], rec["config"]
    seeds = [r["seed"] for r in rec["runs"]]
    variants = list(rec["runs"][0]["variants"])
    per_seed = {v: [ev["gaps"][f"{v}_s{s}"] for s in seeds] for v in variants}
    mean = {v: [float(x) for x in np.mean(per_seed[v], axis=0)] for v in variants}
    refs = {k: g for k, g in ev["gaps"].items() if not any(k.startswith(f"{v}_s") for v in variants)}
    last = len(ev["sizes"]) - 1
    table = [{"seed": s, **{v: per_seed[v][i][last] for v in variants}} for i, s in enumerate(seeds)]
    n_tasks = len(cfg["sizes"])
    run0 = rec["runs"][0]
    curves = {v: progress_curve(run0["variants"][v]["history"], n_tasks, cfg["budget"]) for v in variants}
    programs = {v: {"seed": run0["seed"], "program": r["heuristic"], "readable": r["readable"],
                    "optimiser": (parse_optimiser(r["optimiser"]).pretty() if r["optimiser"].startswith("(optimiser")
                                  else r["optimiser"]),
                    "train_gaps": r["train_gaps"], "weighted_gap": r["weighted_gap"], "task_evals": r["task_evals"]}
                for v, r in run0["variants"].items()}
    evolved = [{"seed": run["seed"], "variant": v, "heuristic": r["readable"], "s-expression": r["heuristic"],
                "training gap (%)": r["weighted_gap"], f"gap@{ev['sizes'][last]} (%)": per_seed[v][i][last]}
               for i, run in enumerate(rec["runs"]) for v, r in run["variants"].items()]
    optimisers = []
    me = ours(variants)
    if me:
        seen: dict[str, dict] = {}
        for h in run0["variants"][me]["history"]:
            if h["program"] not in seen or h["weighted_gap"] < seen[h["program"]]["training gap (%)"]:
                seen[h["program"]] = {"structure": h["structure"], "training gap (%)": h["weighted_gap"],
                                      "program": h["program"]}
        optimisers = sorted(seen.values(), key=lambda d: d["training gap (%)"])
    return {"problem": problem, "sizes": ev["sizes"], "reference": ev["reference"], "seeds": seeds,
            "variants": variants, "mean": mean, "per_seed": per_seed, "references": refs, "paired": table,
            "stats": paired(per_seed, last, me) if me else [], "evolved": evolved,
            "optimisers": optimisers, "curves": curves, "programs": programs, "config": cfg, "count": ev["count"],
            "ref_values": ev["ref_values"], "train_seconds": [r["seconds"] for r in rec["runs"]]}


LM_PATH = ASSETS / "moh_lm.json"
LM_COMMAND = "python -m backend.train moh --part lm"


def lm_available() -> bool:
    return LM_PATH.is_file()


def load_lm() -> dict:
    """The LM meta-operator measurement (WeightsError naming the command if it is missing or changed)."""
    from ...weights import check

    return json.loads(check(LM_PATH, LM_COMMAND).read_text())


def lm_summary(rec: dict | None = None) -> dict:
    """Per seed: valid new programs of the LM and of the edit operator, the best training gap each reached (parent
    A's re-scored gap when it gave none); over seeds: the rates and the paired difference (LM minus edits)."""
    import numpy as np

    from ...stats import paired_ci

    rec = rec or load_lm()
    rows = [{"seed": s["seed"], "LM valid new": s["lm"]["valid_new"], "edits valid new": s["edits"]["valid_new"],
             "LM new structures": s["lm"]["new_structures"], "edits new structures": s["edits"]["new_structures"],
             "parent A gap (%)": s["parent_gap"], "LM best gap (%)": s["lm"]["best_gap"],
             "edits best gap (%)": s["edits"]["best_gap"]} for s in rec["seeds"]]
    calls = rec["calls_per_seed"] * len(rows)
    lm_b = np.array([r["LM best gap (%)"] for r in rows])
    ed_b = np.array([r["edits best gap (%)"] for r in rows])
    ci = paired_ci(lm_b, ed_b)
    return {"source": rec["source"], "calls": calls, "rows": rows,
            "lm_valid_new_per_call": sum(r["LM valid new"] for r in rows) / calls,
            "edits_valid_new_per_call": sum(r["edits valid new"] for r in rows) / calls,
            "lm_minus_edits": {"mean_difference": float(ci.mean), "ci_low": float(ci.low), "ci_high": float(ci.high),
                               "lm_better": int((lm_b < ed_b).sum()), "seeds": len(rows)},
            "samples": [(s["lm"]["replies"] or [""])[0] for s in rec["seeds"][:3]]}
