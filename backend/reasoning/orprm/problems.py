"""Operations-research word problems from templates, each with its five-tuple formulation and its exact optimum
(HiGHS through ``scipy.optimize.milp``).

Six families (:data:`FAMILIES`): production planning (an LP or, with whole units, an integer program), transportation,
0/1 knapsack, assignment, blending (an LP) and capacitated facility location (a MILP). The text states every number
with its entity and unit, the objective and each constraint in words; the problem's ``form`` is what the text
states, written as a formulation, so that the gates and the process reward model read "the statement" from it
(standing in for an LLM that reads the text).

- :func:`generate` ``(n, seed, families)`` -> list[:class:`Problem`]: problem i is drawn from
  ``numpy.random.default_rng([seed, i])``, its family cycles through ``families``; every problem is feasible and
  bounded by construction and solved once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...errors import InputError
from .formulation import check, compile_model, solve

PRODUCTS = ["chairs", "tables", "desks", "shelves", "stools", "cabinets"]
ONE = {"chairs": "chair", "tables": "table", "desks": "desk", "shelves": "shelf", "stools": "stool",
       "cabinets": "cabinet"}
RESOURCES = [("wood", "kg"), ("labour", "hours"), ("machine_time", "hours"), ("paint", "litres")]
PLANTS = ["Avon", "Brook", "Cedar", "Dover"]
CITIES = ["Ely", "Fife", "Gent", "Hull", "Ilford"]
ITEMS = ["tent", "stove", "rope", "lamp", "radio", "map", "kit", "boots", "jacket", "filter"]
WORKERS = ["Ana", "Ben", "Cleo", "Dev", "Eve"]
TASKS = ["audit", "build", "code", "design", "edit"]
INGREDIENTS = ["oats", "corn", "soy", "barley", "wheat"]
NUTRIENTS = [("protein", "g"), ("fibre", "g"), ("fat", "g")]


@dataclass(frozen=True)
class Problem:
    """One word problem: ``family``, ``text``, the stated ``form`` (checked, with ``label`` = the optimum), the
    exact ``optimum`` and an optimal solution ``x`` (in the order of the compiled model's variables). Treat it as
    read-only: :func:`make` caches problems."""

    id: str
    family: str
    text: str
    form: dict
    optimum: float
    x: tuple[float, ...]


def _p(over: list[str], values: np.ndarray | list) -> dict:
    return {"over": over, "values": np.asarray(values, dtype=float).tolist()}


def _list(xs: list[str]) -> str:
    return ", ".join(xs[:-1]) + " and " + xs[-1] if len(xs) > 1 else xs[0]


def production(rng: np.random.Generator) -> tuple[str, dict]:
    nP, nR = int(rng.integers(2, 5)), int(rng.integers(2, 4))
    P = list(rng.choice(PRODUCTS, nP, replace=False))
    R = [RESOURCES[i] for i in sorted(rng.choice(len(RESOURCES), nR, replace=False))]
    profit = rng.integers(20, 90, nP)
    use = rng.integers(1, 9, (nR, nP))
    avail = rng.integers(40, 160, nR) * 2
    whole = bool(rng.random() < 0.6)
    market = rng.integers(5, 40, nP)
    lines = [f"A workshop makes {_list(P)}."]
    lines += [f"Each {ONE[p]} earns a profit of ${profit[j]}." for j, p in enumerate(P)]
    for i, (r, unit) in enumerate(R):
        lines.append(f"{r.replace('_', ' ').capitalize()}: " + ", ".join(
            f"{use[i, j]} {unit} per {ONE[p]}" for j, p in enumerate(P))
                     + f"; at most {avail[i]} {unit} are available.")
    lines.append("The market takes at most " + ", ".join(f"{market[j]} {p}" for j, p in enumerate(P)) + ".")
    lines.append(("Only whole units can be made. " if whole else "Fractional batches are allowed. ")
                 + "How many of each should be made to maximise profit?")
    form = {"sets": {"P": P, "R": [r for r, _ in R]},
            "parameters": {"profit": _p(["P"], profit), "use": _p(["R", "P"], use), "avail": _p(["R"], avail),
                           "market": _p(["P"], market)},
            "variables": [{"name": "x", "over": ["P"], "domain": "integer" if whole else "continuous", "lb": 0}],
            "objective": {"sense": "max", "terms": [{"var": "x", "coef": "profit"}]},
            "constraints": [{"name": "capacity", "over": ["R"], "terms": [{"var": "x", "coef": "use"}], "sense": "<=",
                             "rhs": "avail"},
                            {"name": "market", "over": ["P"], "terms": [{"var": "x", "coef": 1}], "sense": "<=",
                             "rhs": "market"}]}
    return " ".join(lines), form


def transportation(rng: np.random.Generator) -> tuple[str, dict]:
    nS, nD = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    S = list(rng.choice(PLANTS, nS, replace=False))
    D = list(rng.choice(CITIES, nD, replace=False))
    demand = rng.integers(10, 60, nD)
    supply = rng.multinomial(int(demand.sum() * rng.uniform(1.1, 1.5)), np.ones(nS) / nS) + 5
    cost = rng.integers(2, 20, (nS, nD))
    trucks = bool(rng.random() < 0.5)
    lines = [f"Plants {_list(S)} ship goods to {_list(D)}."]
    lines += [f"Plant {s} can supply at most {supply[i]} tonnes." for i, s in enumerate(S)]
    lines += [f"{d} needs at least {demand[j]} tonnes." for j, d in enumerate(D)]
    lines.append("Shipping costs per tonne: " + "; ".join(
        f"{s} to {d} ${cost[i, j]}" for i, s in enumerate(S) for j, d in enumerate(D)) + ".")
    lines.append(("Goods travel in whole tonnes. " if trucks else "")
                 + "Find the shipping plan of least total cost.")
    form = {"sets": {"S": S, "D": D},
            "parameters": {"supply": _p(["S"], supply), "demand": _p(["D"], demand), "cost": _p(["S", "D"], cost)},
            "variables": [{"name": "x", "over": ["S", "D"], "domain": "integer" if trucks else "continuous",
                           "lb": 0}],
            "objective": {"sense": "min", "terms": [{"var": "x", "coef": "cost"}]},
            "constraints": [{"name": "supply", "over": ["S"], "terms": [{"var": "x", "coef": 1}], "sense": "<=",
                             "rhs": "supply"},
                            {"name": "demand", "over": ["D"], "terms": [{"var": "x", "coef": 1}], "sense": ">=",
                             "rhs": "demand"}]}
    return " ".join(lines), form


def knapsack(rng: np.random.Generator) -> tuple[str, dict]:
    n = int(rng.integers(4, 8))
    items = list(rng.choice(ITEMS, n, replace=False))
    value = rng.integers(5, 60, n)
    weight = rng.integers(1, 15, n)
    cap = int(weight.sum() * rng.uniform(0.35, 0.65))
    k = int(rng.integers(2, n))
    lines = ["A hiker packs a rucksack."]
    lines += [f"The {it} weighs {weight[i]} kg and is worth {value[i]} points." for i, it in enumerate(items)]
    lines.append(f"The rucksack holds at most {cap} kg and at most {k} items; each item is taken or left. "
                 "Which items maximise the total worth?")
    form = {"sets": {"I": items},
            "parameters": {"value": _p(["I"], value), "weight": _p(["I"], weight), "cap": cap, "k": k},
            "variables": [{"name": "take", "over": ["I"], "domain": "binary", "lb": 0}],
            "objective": {"sense": "max", "terms": [{"var": "take", "coef": "value"}]},
            "constraints": [{"name": "weight", "terms": [{"var": "take", "coef": "weight"}], "sense": "<=",
                             "rhs": "cap"},
                            {"name": "count", "terms": [{"var": "take", "coef": 1}], "sense": "<=", "rhs": "k"}]}
    return " ".join(lines), form


def assignment(rng: np.random.Generator) -> tuple[str, dict]:
    n = int(rng.integers(3, 5))
    W = list(rng.choice(WORKERS, n, replace=False))
    T = list(rng.choice(TASKS, n, replace=False))
    time_ = rng.integers(2, 30, (n, n))
    lines = [f"Workers {_list(W)} are assigned to tasks {_list(T)}, one task each and one worker per task."]
    lines += [f"{w} needs " + ", ".join(f"{time_[i, j]} hours for {t}" for j, t in enumerate(T)) + "."
              for i, w in enumerate(W)]
    lines.append("Each pairing is chosen or not. Minimise the total hours.")
    form = {"sets": {"W": W, "T": T},
            "parameters": {"hours": _p(["W", "T"], time_)},
            "variables": [{"name": "assign", "over": ["W", "T"], "domain": "binary", "lb": 0}],
            "objective": {"sense": "min", "terms": [{"var": "assign", "coef": "hours"}]},
            "constraints": [{"name": "one_task", "over": ["W"], "terms": [{"var": "assign", "coef": 1}],
                             "sense": "==", "rhs": 1},
                            {"name": "one_worker", "over": ["T"], "terms": [{"var": "assign", "coef": 1}],
                             "sense": "==", "rhs": 1}]}
    return " ".join(lines), form


def blending(rng: np.random.Generator) -> tuple[str, dict]:
    nI, nN = int(rng.integers(3, 6)), int(rng.integers(2, 4))
    I_ = list(rng.choice(INGREDIENTS, nI, replace=False))
    N = NUTRIENTS[:nN]
    cost = rng.integers(2, 15, nI)
    content = rng.integers(1, 30, (nN, nI))
    batch = int(rng.integers(5, 20)) * 10
    mix = rng.dirichlet(np.ones(nI)) * batch
    need = np.floor(content @ mix * rng.uniform(0.7, 0.95, nN))
    lines = [f"A feed mill blends {batch} kg of feed from {_list(I_)}."]
    lines += [f"{i.capitalize()} costs ${cost[j]} per kg." for j, i in enumerate(I_)]
    for k, (nu, unit) in enumerate(N):
        lines.append(f"Per kg, the {nu} content is " + ", ".join(f"{content[k, j]} {unit} in {i}"
                                                                 for j, i in enumerate(I_))
                     + f"; the batch needs at least {int(need[k])} {unit} of {nu}.")
    lines.append("Find the cheapest blend.")
    form = {"sets": {"I": I_, "N": [n for n, _ in N]},
            "parameters": {"cost": _p(["I"], cost), "content": _p(["N", "I"], content), "need": _p(["N"], need),
                           "batch": batch},
            "variables": [{"name": "kg", "over": ["I"], "domain": "continuous", "lb": 0}],
            "objective": {"sense": "min", "terms": [{"var": "kg", "coef": "cost"}]},
            "constraints": [{"name": "nutrients", "over": ["N"], "terms": [{"var": "kg", "coef": "content"}],
                             "sense": ">=", "rhs": "need"},
                            {"name": "batch_size", "terms": [{"var": "kg", "coef": 1}], "sense": "==",
                             "rhs": "batch"}]}
    return " ".join(lines), form


def facility(rng: np.random.Generator) -> tuple[str, dict]:
    nF, nC = int(rng.integers(2, 4)), int(rng.integers(3, 5))
    F = list(rng.choice(PLANTS, nF, replace=False))
    C = list(rng.choice(CITIES, nC, replace=False))
    demand = rng.integers(10, 50, nC)
    cap = rng.integers(int(demand.sum() * 0.5), int(demand.sum() * 1.1) + 1, nF)
    cap[int(rng.integers(nF))] = max(cap.max(), int(demand.sum()))  # one site can serve everyone: feasible
    fixed = rng.integers(50, 300, nF)
    ship = rng.integers(1, 12, (nF, nC))
    lines = [f"A firm may open depots at {_list(F)} to serve {_list(C)}."]
    lines += [f"Opening {f} costs ${fixed[i]} and gives a capacity of {cap[i]} units." for i, f in enumerate(F)]
    lines += [f"{c} orders {demand[j]} units." for j, c in enumerate(C)]
    lines.append("Shipping costs per unit: " + "; ".join(f"{f} to {c} ${ship[i, j]}" for i, f in enumerate(F)
                                                        for j, c in enumerate(C)) + ".")
    lines.append("Each depot is opened or not; only open depots ship, within capacity. Every order is met. "
                 "Minimise opening plus shipping cost.")
    form = {"sets": {"F": F, "C": C},
            "parameters": {"fixed": _p(["F"], fixed), "capacity": _p(["F"], cap), "demand": _p(["C"], demand),
                           "ship": _p(["F", "C"], ship)},
            "variables": [{"name": "open", "over": ["F"], "domain": "binary", "lb": 0},
                          {"name": "x", "over": ["F", "C"], "domain": "continuous", "lb": 0}],
            "objective": {"sense": "min", "terms": [{"var": "open", "coef": "fixed"}, {"var": "x", "coef": "ship"}]},
            "constraints": [{"name": "serve", "over": ["C"], "terms": [{"var": "x", "coef": 1}], "sense": ">=",
                             "rhs": "demand"},
                            {"name": "depot_capacity", "over": ["F"], "terms": [
                                {"var": "x", "coef": 1}, {"var": "open", "coef": "neg_capacity"}],
                             "sense": "<=", "rhs": 0}]}
    form["parameters"]["neg_capacity"] = _p(["F"], -cap)  # x[f, .] - capacity[f] open[f] <= 0
    return " ".join(lines), form


FAMILIES: dict[str, Callable[[np.random.Generator], tuple[str, dict]]] = {
    "production": production, "transportation": transportation, "knapsack": knapsack, "assignment": assignment,
    "blending": blending, "facility": facility,
}


def families(names: str | list[str] = "all") -> list[str]:
    """``all`` or a comma-separated list / list of family names."""
    from ...registry import choose

    if isinstance(names, str):
        names = list(FAMILIES) if names.strip().lower() == "all" else [s for s in names.split(",") if s.strip()]
    out = [choose(n, FAMILIES, "problem family") for n in names]
    if not out:
        raise InputError("Choose at least one problem family.")
    return list(dict.fromkeys(out))


@lru_cache(maxsize=4096)
def make(family: str, seed: int, index: int) -> Problem:
    """Problem ``index`` of ``family`` from ``default_rng([seed, index])``, solved exactly."""
    rng = np.random.default_rng([seed, index])
    text, form = FAMILIES[family](rng)
    form = check(form, f"the {family} template")
    sol = solve(compile_model(form))
    if sol.status != "optimal" or sol.objective is None:  # pragma: no cover - the templates are feasible
        raise RuntimeError(f"{family} problem {seed}/{index} is {sol.status}: {sol.message}")
    opt = round(sol.objective, 6)
    form["label"] = opt
    return Problem(f"{family}-{seed}-{index}", family, text, form, opt, tuple(float(v) for v in sol.x))


def generate(n: int, seed: int = 0, fams: str | list[str] = "all") -> list[Problem]:
    """``n`` problems cycling through ``fams`` (see the module docstring)."""
    names = families(fams)
    return [make(names[i % len(names)], seed, i) for i in range(n)]
