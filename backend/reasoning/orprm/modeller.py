"""A stochastic modeller: it writes a problem's five-tuple with realistic flaws at tunable rates, standing in for an
LLM modeller. It makes both the noisy "existing dataset" (one formulation and recorded optimum per problem) and the
N candidate formulations per problem of best-of-N.

A written formulation carries at most one flaw; the kind is drawn with the given rates (the rest is clean). Each
flaw returns the changed formulation and the modelling step where it enters (the first flawed step, the one the
step labels turn to 0 at):

| name | label | kind | what |
|------|-------|------|------|
| ``wrong_sense`` | Wrong objective sense | reference | max <-> min (step: objective) |
| ``missing_constraint`` | Missing constraint | reference | one constraint block left out (step: where it belongs) |
| ``unit_error`` | Unit error | reference | one parameter scaled by 10, 100, 1/10 or 60 (hours for minutes...) (step: parameters) |
| ``wrong_optimum`` | Wrong recorded optimum | reference | the formulation is right, the recorded optimum is not (step: solution) |
| ``wrong_domain`` | Wrong variable domain | reference | integrality dropped (or a continuous block made integer) (step: variables) |
| ``swapped`` | Swapped coefficients | reference | two entries of one parameter exchanged (step: parameters) |

(:data:`FLAWS`; the process reward model trains on :data:`TRAIN` and is evaluated on :data:`HELDOUT`.) The recorded
optimum of a written formulation is its own solver optimum (the wrong-optimum flaw perturbs it); a formulation that
does not solve records the problem's optimum (written down independently).

- :func:`write` ``(problem, kind, rng)`` -> :class:`Written`;
- :func:`kinds` ``(spec)`` -> the flaw kinds of ``all`` / ``train`` / ``heldout`` / a comma-separated list;
- :func:`draw_kinds` ``(rng, n, rate, kinds)`` -> n kinds (None = clean), each flawed with probability ``rate``,
  the kind uniform among ``kinds``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...errors import InputError
from ...registry import Registry
from .formulation import Solution, compile_model, solve
from .problems import Problem


@dataclass(frozen=True)
class Written:
    """A formulation the modeller wrote: ``form`` (with its recorded ``label``), the ``flaw`` kind (None: clean),
    the index of the first flawed step in :func:`backend.reasoning.orprm.formulation.steps` (None: clean),
    ``answer`` (its recorded optimum, None when the formulation does not solve) and its ``solution``."""

    form: dict
    flaw: str | None
    flaw_step: int | None
    answer: float | None
    solution: Solution
    variant: str | None = None

    @property
    def status(self) -> str:
        return self.solution.status


REDUNDANT = "_nonnegative"


def _constraint_step(form: dict, block: int) -> int:
    return 4 + block  # sets, parameters, variables, objective, then one step per constraint block


def flip_sense(form: dict, rng: np.random.Generator) -> int:
    form["objective"]["sense"] = "min" if form["objective"]["sense"] == "max" else "max"
    return 3


def drop_constraint(form: dict, rng: np.random.Generator) -> int:
    stated = [i for i, c in enumerate(form["constraints"]) if not c["name"].endswith(REDUNDANT)]
    i = stated[int(rng.integers(len(stated)))]
    del form["constraints"][i]
    return _constraint_step(form, i)


def _numeric_params(form: dict) -> list[str]:
    """The parameters the model uses that hold a non-zero number."""
    used = {t["coef"] for t in form["objective"]["terms"]}
    for c in form["constraints"]:
        used |= {t["coef"] for t in c["terms"]} | {c["rhs"]}
    for v in form["variables"]:
        used |= {v["lb"], v["ub"]}
    return [p for p, v in form["parameters"].items()
            if p in used and np.any(np.asarray(v["values"], dtype=float) != 0)]


def unit_error(form: dict, rng: np.random.Generator) -> int:
    p = str(rng.choice(_numeric_params(form)))
    factor = float(rng.choice([10.0, 100.0, 0.1, 60.0]))
    v = form["parameters"][p]
    v["values"] = (np.asarray(v["values"], dtype=float) * factor).round(6).tolist()
    return 1


def wrong_optimum(form: dict, rng: np.random.Generator) -> int:
    return len(form["constraints"]) + 4  # the solution step; the label is perturbed in write()


def wrong_domain(form: dict, rng: np.random.Generator) -> int:
    whole = [v for v in form["variables"] if v["domain"] != "continuous"]
    if whole:
        v = whole[int(rng.integers(len(whole)))]
        v["domain"] = "continuous"  # a binary block keeps lb 0 and loses its upper bound 1
    else:
        form["variables"][int(rng.integers(len(form["variables"])))]["domain"] = "integer"
    return 2


def swap_coefficients(form: dict, rng: np.random.Generator) -> int:
    cands = [p for p in _numeric_params(form) if np.unique(np.asarray(form["parameters"][p]["values"])).size > 1]
    p = str(rng.choice(cands))
    v = np.asarray(form["parameters"][p]["values"], dtype=float)
    flat = v.ravel()
    while True:
        i, j = rng.choice(flat.size, 2, replace=False)
        if flat[i] != flat[j]:
            break
    flat[i], flat[j] = flat[j], flat[i]
    form["parameters"][p]["values"] = flat.reshape(v.shape).tolist()
    return 1


FLAWS: Registry[Callable[[dict, np.random.Generator], int]] = Registry("flaw kind")
FLAWS.add("wrong_sense", flip_sense, label="Wrong objective sense", kind="reference", color="#d62728")
FLAWS.add("missing_constraint", drop_constraint, label="Missing constraint", kind="reference", color="#ff7f0e")
FLAWS.add("unit_error", unit_error, label="Unit error", kind="reference", color="#9467bd")
FLAWS.add("wrong_optimum", wrong_optimum, label="Wrong recorded optimum", kind="reference", color="#8c564b")
FLAWS.add("wrong_domain", wrong_domain, label="Wrong variable domain", kind="reference", color="#e377c2")
FLAWS.add("swapped", swap_coefficients, label="Swapped coefficients", kind="reference", color="#17becf")

#: The kinds the process reward model is trained on.
TRAIN: Registry[Callable[[dict, np.random.Generator], int]] = Registry("training flaw kind")
TRAIN.add("wrong_sense", flip_sense, label="Wrong objective sense", kind="reference")
TRAIN.add("missing_constraint", drop_constraint, label="Missing constraint", kind="reference")
TRAIN.add("unit_error", unit_error, label="Unit error", kind="reference")
TRAIN.add("wrong_optimum", wrong_optimum, label="Wrong recorded optimum", kind="reference")

#: The kinds held out of its training (the best-of-N claim's candidates carry only these).
HELDOUT: Registry[Callable[[dict, np.random.Generator], int]] = Registry("held-out flaw kind")
HELDOUT.add("wrong_domain", wrong_domain, label="Wrong variable domain", kind="reference")
HELDOUT.add("swapped", swap_coefficients, label="Swapped coefficients", kind="reference")

#: The kinds whose corrupted labels the execution and constraint gates must all reject (relaxations of the stated
#: model and misrecorded optima; see :mod:`backend.reasoning.orprm.gates`).
COVERED: Registry[Callable[[dict, np.random.Generator], int]] = Registry("covered flaw kind")
COVERED.add("missing_constraint", drop_constraint, label="Missing constraint", kind="reference")
COVERED.add("wrong_optimum", wrong_optimum, label="Wrong recorded optimum", kind="reference")

GROUPS = {"all": FLAWS, "train": TRAIN, "heldout": HELDOUT}


def kinds(spec: str) -> list[str]:
    """The flaw kinds of ``spec``: a group (``all``, ``train``, ``heldout``) or a comma-separated list of names."""
    from ...registry import choose

    s = str(spec).strip().lower()
    if not s:
        raise InputError("Choose at least one flaw kind (or all / train / heldout).")
    if "," not in s and s in GROUPS:
        return list(GROUPS[choose(s, GROUPS, "flaw group")])
    return list(dict.fromkeys(FLAWS.key(k) for k in s.split(",") if k.strip()))


def draw_kinds(rng: np.random.Generator, n: int, rate: float, names: list[str]) -> list[str | None]:
    """``n`` kinds: flawed with probability ``rate``, the kind uniform among ``names``."""
    flawed = rng.random(n) < rate
    pick = rng.integers(len(names), size=n)
    return [names[int(k)] if f else None for f, k in zip(flawed, pick, strict=True)]


def _perturb(value: float, rng: np.random.Generator) -> float:
    """A misrecorded optimum: a dropped or doubled digit, a sign slip or a 2-30 % miscount."""
    r = float(rng.random())
    if r < 0.25 and abs(value) >= 10:
        out = round(value / 10, 6)
    elif r < 0.5:
        out = round(value * 10, 6) if value else 10.0
    else:
        out = round(value * (1 + float(rng.choice([-1, 1])) * float(rng.uniform(0.02, 0.3))), 2)
    return out if abs(out - value) > 1e-3 * max(1.0, abs(value)) else value + max(1.0, 0.1 * abs(value))


def reorder_blocks(form: dict, rng: np.random.Generator) -> None:
    """Equivalent: the constraint blocks in another order."""
    cons = form["constraints"]
    if len(cons) > 1:
        order = rng.permutation(len(cons))
        if (order == np.arange(len(cons))).all():
            order = order[::-1]
        form["constraints"] = [cons[int(i)] for i in order]


def scale_block(form: dict, rng: np.random.Generator) -> None:
    """Equivalent: one constraint block written in other units (every coefficient and the right-hand side times a
    factor, as new parameters); the stated parameters stay listed."""
    con = form["constraints"][int(rng.integers(len(form["constraints"])))]
    f = float(rng.choice([2.0, 10.0, 100.0]))
    tag = {2.0: "x2", 10.0: "x10", 100.0: "x100"}[f]

    def scaled(ref: object) -> object:
        if not isinstance(ref, str):
            return float(ref) * f
        new = f"{ref}_{tag}"
        p = form["parameters"][ref]
        form["parameters"][new] = {"over": list(p["over"]),
                                   "values": (np.asarray(p["values"], dtype=float) * f).round(6).tolist()}
        return new

    for t in con["terms"]:
        t["coef"] = scaled(t["coef"])
    con["rhs"] = scaled(con["rhs"])


def redundant_bound(form: dict, rng: np.random.Generator) -> None:
    """Equivalent: the lower bound of one variable block repeated as a constraint block."""
    v = form["variables"][int(rng.integers(len(form["variables"])))]
    if v["lb"] is None:
        return
    form["constraints"].append({"name": f"{v['name']}{REDUNDANT}", "over": list(v["over"]),
                                "terms": [{"var": v["name"], "coef": 1.0}], "sense": ">=", "rhs": v["lb"]})


#: Equivalent rewritings a modeller makes of a right formulation (they change no optimum, but the text of steps).
VARIANTS = {"reordered": reorder_blocks, "rescaled": scale_block, "redundant": redundant_bound}


@lru_cache(maxsize=8192)
def _solve_json(text: str) -> Solution:
    return solve(compile_model(json.loads(text)))


def solve_cached(form: dict) -> Solution:
    """The solution of ``form`` (its label ignored), memoised: flawed formulations recur across candidates."""
    return _solve_json(json.dumps({k: v for k, v in form.items() if k != "label"}, sort_keys=True))


def write(problem: Problem, kind: str | None, rng: np.random.Generator, variation: float = 0.0) -> Written:
    """The problem's stated formulation with the flaw ``kind`` (None: clean) and its recorded optimum; with
    probability ``variation`` it is first rewritten in an equivalent way (:data:`VARIANTS`)."""
    form = copy.deepcopy(problem.form)
    variant = None
    if variation > 0 and float(rng.random()) < variation:
        variant = list(VARIANTS)[int(rng.integers(len(VARIANTS)))]
        VARIANTS[variant](form, rng)
    step = FLAWS.get(kind)(form, rng) if kind is not None else None
    if kind is None and variant is None:
        sol = Solution("optimal", problem.optimum, np.asarray(problem.x), "optimal", 0.0)
    else:
        sol = solve_cached(form)
    answer = None if sol.status != "optimal" else round(float(sol.objective), 6)
    label = problem.optimum if answer is None else answer
    if kind is not None and FLAWS.get(kind) is wrong_optimum:
        label = _perturb(label, rng)
        answer = label
    form["label"] = label
    return Written(form, kind, step, answer, sol, variant)
