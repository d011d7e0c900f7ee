"""Capacitated facility location, its modelling frameworks, and the three objectives MATHMO trades off.

Used by :mod:`backend.search.mathmo` (paper: "MATHMO: Automated Mathematical Modeling Through Adaptive Search",
ICLR 2026). A *framework* is a way of modelling and solving the problem; a *model* is a framework with its knobs set.

Instance: ``m`` candidate facilities (coordinates ``[m, 2]``, fixed opening cost ``f`` ``[m]``, capacity ``u``
``[m]``) and ``n`` customers (coordinates ``[n, 2]``, demand ``d`` ``[n]``); serving customer ``i`` wholly from
``j`` costs ``c_ij = d_i ||p_i - q_j||`` (splittable demand). A design is the set of open facilities.

Frameworks (:data:`FRAMEWORKS`; knob grids in :data:`KNOBS`):

- ``milp``: the exact MILP ``min sum f_j y_j + sum c_ij x_ij``, ``sum_j x_ij = 1``, ``sum_i d_i x_ij <= u_j y_j / (1 + margin)``,
  ``x_ij <= y_j``, ``y`` binary, solved by HiGHS (scipy's ``milp``) to a relative MIP gap (knob ``gap``).
- ``lp_round``: the LP relaxation (``y`` in [0, 1]) by HiGHS, then open every facility with ``y_j >= tau``.
- ``greedy_add``: open facilities one at a time by the largest cost saving (``order``: saving per unit of fixed cost
  or absolute saving) while a saving remains.
- ``greedy_drop``: start with every facility open, close by the largest saving.
- ``swap``: greedy_add, then up to ``iters`` best-improvement open/close swaps.
- ``cluster``: demand-weighted k-means of the customers into ``k`` clusters, the cheapest-to-reach facility of each.
- ``anneal``: simulated annealing over the open set from the greedy-add design (``temp``, ``steps``).

Every framework also takes the reserve knob ``margin`` (0 to 0.5 by 0.05): each open facility is planned to at most
``u_j / (1 + margin)`` (so the open capacity reaches ``(1 + margin)`` times the total demand; heuristics add
facilities by capacity per fixed cost until it does). The knobs lie on fine grids (:data:`KNOBS`): 803 models.

Objectives (all minimised, deterministic): ``cost``, the planned cost (fixed costs plus the optimal transport cost
given the open set and the reserve, one HiGHS LP, the same evaluator for every framework); ``effort``,
``log10(1 + work)`` with work the LP's simplex iterations (for the MILP: the root relaxation's iterations times
one plus the branch-and-bound nodes), or the number of designs the heuristic scored (each one greedy service of
every customer; a k-means pass counts as one); never wall time; ``robust``, the mean cost over 16 demand scenarios
(``d_i exp(0.25 xi - 0.03)``) when every customer keeps its planned shares and the load beyond a facility's full
capacity is unmet at 3x the largest unit distance. A larger reserve raises ``cost`` and lowers ``robust``.

The user's instance (input kind ``facility_csv``): a CSV with columns ``kind,x,y,amount,fixed_cost`` where ``kind`` is
``facility`` (``amount`` = capacity) or ``customer`` (``amount`` = demand, ``fixed_cost`` empty or 0).
"""

from __future__ import annotations

import io
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError

MAX_FACILITIES = 40
MAX_CUSTOMERS = 200
N_SCENARIOS = 16


@dataclass
class Instance:
    fac_xy: np.ndarray  # [m, 2]
    fixed: np.ndarray  # [m]
    capacity: np.ndarray  # [m]
    cust_xy: np.ndarray  # [n, 2]
    demand: np.ndarray  # [n]
    source: str
    cache: dict = field(default_factory=dict, repr=False, compare=False)  # designs and scores (evaluate)

    @property
    def m(self) -> int:
        return len(self.fixed)

    @property
    def n(self) -> int:
        return len(self.demand)

    @property
    def dist(self) -> np.ndarray:
        """``[n, m]`` Euclidean distances."""
        return np.linalg.norm(self.cust_xy[:, None, :] - self.fac_xy[None, :, :], axis=-1)

    @property
    def cost_matrix(self) -> np.ndarray:
        """``[n, m]``: the cost of serving customer i wholly from facility j."""
        return self.demand[:, None] * self.dist

    def summary(self) -> dict[str, object]:
        return {"source": self.source, "facilities": self.m, "customers": self.n,
                "total_demand": float(self.demand.sum()), "total_capacity": float(self.capacity.sum())}


def generate(m: int = 10, n: int = 30, seed: int = 0) -> Instance:
    """Facilities and clustered customers in the unit square; capacities sum to about 2.5x the demand, fixed costs of
    about a facility's capacity times the mean distance (an optimal design opens a few)."""
    if not 2 <= m <= MAX_FACILITIES or not 2 <= n <= MAX_CUSTOMERS:
        raise InputError(f"Use 2-{MAX_FACILITIES} facilities and 2-{MAX_CUSTOMERS} customers (got {m} and {n}).")
    rng = np.random.default_rng([seed, 41])
    centres = rng.uniform(0.15, 0.85, (4, 2))
    cust = np.clip(centres[rng.integers(0, 4, n)] + 0.12 * rng.standard_normal((n, 2)), 0, 1)
    demand = rng.integers(5, 36, n).astype(float)
    fac = rng.uniform(0, 1, (m, 2))
    cap = rng.uniform(0.6, 1.4, m)
    cap = np.round(cap / cap.sum() * 2.5 * demand.sum())
    fixed = np.round(rng.uniform(0.5, 1.5, m) * cap * float(np.mean(np.linalg.norm(cust[:, None] - fac[None],
                                                                                          axis=-1))))
    return Instance(fac, fixed, cap, cust, demand, f"generated m={m}, n={n}, seed={seed}")


def read_facility_csv(data: bytes, name: str = "the instance") -> Instance:
    """Decode ``kind,x,y,amount,fixed_cost`` rows (see the module docstring); InputError says what to fix."""
    if not data.strip():
        raise InputError(f"{name} is empty.")
    if len(data) > 2 * 2**20:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is 2 MB.")
    if b"\x00" in data[:4096]:
        raise InputError(f"{name} looks binary. Upload a UTF-8 CSV with the header kind,x,y,amount,fixed_cost.")
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(data), encoding="utf-8-sig", index_col=False)
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text.") from None
    except Exception as err:  # pandas parser errors
        raise InputError(f"Could not parse {name} as CSV ({err}).") from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    need = ["kind", "x", "y", "amount"]
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise InputError(f"{name} lacks the column(s) {', '.join(missing)}; the header is kind,x,y,amount,fixed_cost.")
    kind = frame["kind"].map(lambda v: str(v).strip().lower() if isinstance(v, str) else "")
    bad_kind = sorted(set(kind) - {"facility", "customer"})
    if "" in bad_kind:
        raise InputError(f"Some rows of {name} have no kind; each row is 'facility' or 'customer'.")
    if bad_kind:
        raise InputError(f"kind must be 'facility' or 'customer'; {name} also has {', '.join(bad_kind[:3])}.")
    cols = ["x", "y", "amount"] + (["fixed_cost"] if "fixed_cost" in frame.columns else [])
    num = frame[cols].apply(pd.to_numeric, errors="coerce")
    if "fixed_cost" in num:
        num.loc[kind == "customer", "fixed_cost"] = num.loc[kind == "customer", "fixed_cost"].fillna(0.0)
    else:
        num["fixed_cost"] = 0.0
    if num.isna().any().any() or not np.isfinite(num.to_numpy(dtype=float)).all():
        rows = np.flatnonzero(num.isna().any(axis=1).to_numpy() | ~np.isfinite(num.to_numpy(dtype=float)).all(1))
        raise InputError(f"{len(rows)} row(s) of {name} have missing, non-numeric or infinite values (first at data "
                         f"row {rows[0] + 1}).")
    if (num["amount"] <= 0).any():
        raise InputError("Every capacity and demand (the amount column) must be positive.")
    if (num["fixed_cost"] < 0).any():
        raise InputError("Fixed costs must not be negative.")
    fac, cus = num[kind == "facility"], num[kind == "customer"]
    if not 2 <= len(fac) <= MAX_FACILITIES or not 2 <= len(cus) <= MAX_CUSTOMERS:
        raise InputError(f"{name} has {len(fac)} facilities and {len(cus)} customers; use 2-{MAX_FACILITIES} and "
                         f"2-{MAX_CUSTOMERS}.")
    if fac["amount"].sum() < cus["amount"].sum():
        raise InputError(f"The facilities' capacity ({fac['amount'].sum():g}) is below the total demand "
                         f"({cus['amount'].sum():g}); no design can serve every customer.")
    return Instance(fac[["x", "y"]].to_numpy(float), fac["fixed_cost"].to_numpy(float), fac["amount"].to_numpy(float),
                    cus[["x", "y"]].to_numpy(float), cus["amount"].to_numpy(float),
                    f"{name}: {len(fac)} facilities, {len(cus)} customers")


# ------------------------------------------------------------------------------------------------ HiGHS models
def _solve_flp(inst: Instance, *, integer: bool, gap: float = 0.0, margin: float = 0.0,
               fixed_open: np.ndarray | None = None, plan: bool = False) -> tuple[np.ndarray, float, int]:
    """The facility-location model by HiGHS through scipy (``linprog(method="highs")`` / ``milp``), each facility
    planned to at most ``u_j / (1 + margin)`` (the reserve). Variables ``x`` (n*m, customer-major) then ``y`` (m);
    with ``fixed_open`` the ``y`` are fixed (a transport LP). Returns ``(y, objective, work)``: the LP's simplex
    iterations, or for the MILP the root relaxation's iterations times (1 + branch-and-bound nodes), a deterministic
    count of the solver's work; with ``plan`` the first item is the transport plan ``x`` ``[n, m]`` instead of ``y``.

    scipy's HiGHS is used rather than the ``highspy`` bindings: those clash with the HiGHS inside OR-Tools (which the
    MoH page loads) when both are imported into one server process."""
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp

    n, m = inst.n, inst.m
    nx = n * m
    cost = np.concatenate([inst.cost_matrix.ravel(), inst.fixed])
    # equalities: sum_j x_ij = 1
    eq = sparse.csr_matrix((np.ones(nx), (np.repeat(np.arange(n), m), np.arange(nx))), shape=(n, nx + m))
    # inequalities: sum_i d_i x_ij - u_j y_j / (1 + margin) <= 0; x_ij - y_j <= 0 (the strong formulation)
    cap_rows = np.concatenate([np.tile(np.arange(m), n), np.arange(m)])
    cap_cols = np.concatenate([np.arange(nx), nx + np.arange(m)])
    cap_vals = np.concatenate([np.repeat(inst.demand, m), -inst.capacity / (1.0 + margin)])
    cap = sparse.csr_matrix((cap_vals, (cap_rows, cap_cols)), shape=(m, nx + m))
    link = sparse.hstack([sparse.eye(nx), -sparse.csr_matrix(np.tile(np.eye(m), (n, 1)))]).tocsr()
    blocks, rhs = [cap, link], [np.zeros(m), np.zeros(nx)]
    ub = sparse.vstack(blocks).tocsr()
    b_ub = np.concatenate(rhs)
    y_lo = np.zeros(m) if fixed_open is None else fixed_open.astype(float)
    y_hi = np.ones(m) if fixed_open is None else fixed_open.astype(float)
    lo, hi = np.concatenate([np.zeros(nx), y_lo]), np.concatenate([np.ones(nx), y_hi])
    lp = linprog(cost, A_ub=ub, b_ub=b_ub, A_eq=eq, b_eq=np.ones(n), bounds=np.column_stack([lo, hi]),
                 method="highs")
    if lp.status != 0:
        return (np.zeros((n, m)) if plan else np.zeros(m)), math.inf, 0
    if plan:
        return np.asarray(lp.x[:nx]).reshape(n, m), float(lp.fun), int(lp.nit)
    if not integer or fixed_open is not None:
        return np.asarray(lp.x[nx:]), float(lp.fun), int(lp.nit)
    res = milp(cost, constraints=[LinearConstraint(eq, 1.0, 1.0), LinearConstraint(ub, -np.inf, b_ub)],
               integrality=np.concatenate([np.zeros(nx), np.ones(m)]), bounds=Bounds(lo, hi),
               options={"mip_rel_gap": float(gap), "presolve": True})
    if res.status != 0 or res.x is None:
        return np.zeros(m), math.inf, 0
    return np.asarray(res.x[nx:]), float(res.fun), int(lp.nit) * (1 + int(res.mip_node_count or 0))


def transport_plan(inst: Instance, open_: np.ndarray, margin: float = 0.0) -> tuple[float, np.ndarray]:
    """Fixed costs plus the optimal transport cost given the open set with each facility planned to at most
    ``u_j / (1 + margin)`` (one HiGHS LP), and the plan ``x`` ``[n, m]`` (fractions of each customer's demand);
    ``(inf, zeros)`` when infeasible."""
    if inst.capacity[open_].sum() < (1.0 + margin) * inst.demand.sum() - 1e-9:
        return math.inf, np.zeros((inst.n, inst.m))
    x, obj, _ = _solve_flp(inst, integer=False, margin=margin, fixed_open=open_.astype(bool), plan=True)
    return obj, x


def design_cost(inst: Instance, open_: np.ndarray, margin: float = 0.0) -> float:
    """The planned cost of :func:`transport_plan`."""
    return transport_plan(inst, open_, margin)[0]


def _greedy_serve(inst: Instance, open_: np.ndarray, demand: np.ndarray) -> tuple[float, int]:
    """Customers by decreasing demand, each to its cheapest open facility with capacity left (split when full);
    unmet demand at 3x the largest unit distance. Returns ``(cost, evaluations)``."""
    dist = inst.dist[:, open_]
    cap = inst.capacity[open_].astype(float).copy()
    penalty = 3.0 * float(inst.dist.max())
    cost = float(inst.fixed[open_].sum())
    evals = 0
    order = np.argsort(-demand, kind="stable")
    pref = np.argsort(dist, axis=1, kind="stable")
    for i in order:
        left = float(demand[i])
        for j in pref[i]:
            evals += 1
            if left <= 0:
                break
            take = min(left, cap[j])
            if take > 0:
                cost += take * dist[i, j]
                cap[j] -= take
                left -= take
        cost += left * penalty
    return cost, evals


def robust_cost(inst: Instance, open_: np.ndarray, plan: np.ndarray, seed: int = 0) -> float:
    """Mean cost over :data:`N_SCENARIOS` demand scenarios ``d_i exp(0.25 xi - 0.03)`` when every customer keeps its
    planned shares ``plan`` ``[n, m]``: fixed costs, transport of the scenario's demand, and the load a facility
    receives beyond its full capacity ``u_j`` unmet at 3x the largest unit distance. A plan that keeps a reserve
    (``margin``) overflows less."""
    if not np.isfinite(plan).all() or plan.sum() <= 0:
        return math.inf
    rng = np.random.default_rng([seed, 97])
    D = inst.demand[None] * np.exp(0.25 * rng.standard_normal((N_SCENARIOS, inst.n)) - 0.03)  # [S, n]
    load = D @ plan  # [S, m]
    transport = D @ (plan * inst.dist).sum(1)  # [S]
    over = np.clip(load - inst.capacity[None], 0.0, None).sum(1)
    return float(inst.fixed[open_].sum() + np.mean(transport + 3.0 * float(inst.dist.max()) * over))


def _ensure_margin(inst: Instance, open_: np.ndarray, margin: float) -> np.ndarray:
    open_ = open_.copy()
    need = (1 + margin) * inst.demand.sum()
    for j in np.argsort(inst.fixed / inst.capacity, kind="stable"):
        if inst.capacity[open_].sum() >= need - 1e-9:
            break
        open_[j] = True
    return open_


# ------------------------------------------------------------------------------------------------ frameworks
def _milp(inst: Instance, gap: float, margin: float) -> tuple[np.ndarray, int]:
    y, _, work = _solve_flp(inst, integer=True, gap=gap, margin=margin)
    return y > 0.5, work


def _lp_round(inst: Instance, tau: float, margin: float) -> tuple[np.ndarray, int]:
    y, _, work = _solve_flp(inst, integer=False, margin=margin)
    return _ensure_margin(inst, y >= tau, max(margin, 0.0)), work


def _heur_cost(inst: Instance, open_: np.ndarray) -> tuple[float, int]:
    """A heuristic's cost estimate of one design (greedy service); its work is one design evaluation."""
    if inst.capacity[open_].sum() < inst.demand.sum():
        return math.inf, 1
    return _greedy_serve(inst, open_, inst.demand)[0], 1


def _greedy_toggle(inst: Instance, open_: np.ndarray, order: str, opening: bool) -> tuple[np.ndarray, int]:
    """Toggle one facility at a time (open a closed one when ``opening``, else close an open one) by the largest
    saving (per unit of fixed cost when ``order == "per_fixed"``) while a saving remains."""
    cur, work = _heur_cost(inst, open_)
    while opening or open_.sum() > 1:
        best, best_j = 0.0, -1
        for j in np.flatnonzero(~open_ if opening else open_):
            trial = open_.copy()
            trial[j] = opening
            c, w = _heur_cost(inst, trial)
            work += w
            saving = cur - c
            score = saving / max(inst.fixed[j], 1e-9) if order == "per_fixed" else saving
            if saving > 1e-9 and score > best:
                best, best_j = score, j
        if best_j < 0:
            break
        open_[best_j] = opening
        cur = _heur_cost(inst, open_)[0]
    return open_, work


def _greedy_add(inst: Instance, order: str, margin: float) -> tuple[np.ndarray, int]:
    open_, work = _greedy_toggle(inst, _ensure_margin(inst, np.zeros(inst.m, bool), 0.0), order, opening=True)
    return _ensure_margin(inst, open_, margin), work


def _greedy_drop(inst: Instance, order: str, margin: float) -> tuple[np.ndarray, int]:
    open_, work = _greedy_toggle(inst, np.ones(inst.m, bool), order, opening=False)
    return _ensure_margin(inst, open_, margin), work


def _swap(inst: Instance, iters: int, margin: float) -> tuple[np.ndarray, int]:
    open_, work = _greedy_add(inst, "absolute", 0.0)
    cur = _heur_cost(inst, open_)[0]
    for _ in range(iters):
        best, move = 0.0, None
        for a in np.flatnonzero(open_):
            for b in np.flatnonzero(~open_):
                trial = open_.copy()
                trial[a], trial[b] = False, True
                c, w = _heur_cost(inst, trial)
                work += w
                if cur - c > best + 1e-9:
                    best, move = cur - c, (a, b)
        if move is None:
            break
        open_[move[0]], open_[move[1]] = False, True
        cur -= best
    return _ensure_margin(inst, open_, margin), work


def _cluster(inst: Instance, k: int, margin: float) -> tuple[np.ndarray, int]:
    """Cluster first: demand-weighted k-means of the customers (Lloyd, started from the ``k`` customers of largest
    demand, at most 20 passes), open the cheapest-to-reach facility of each cluster. Work: one design evaluation per
    Lloyd pass (each pass scores every customer against every centre) plus the final design."""
    k = max(1, min(int(k), inst.m))
    w = inst.demand
    centres = inst.cust_xy[np.argsort(-w, kind="stable")[:k]].copy()
    work = 1
    for _ in range(20):
        work += 1
        lab = np.argmin(np.linalg.norm(inst.cust_xy[:, None] - centres[None], axis=-1), axis=1)
        new = np.asarray([np.average(inst.cust_xy[lab == c], axis=0, weights=w[lab == c]) if (lab == c).any()
                          else centres[c] for c in range(k)])
        if np.allclose(new, centres):
            break
        centres = new
    open_ = np.zeros(inst.m, bool)
    for c in range(k):
        members = lab == c
        if not members.any():
            continue
        reach = (w[members, None] * inst.dist[members]).sum(0) + inst.fixed
        open_[int(np.argmin(np.where(open_, np.inf, reach)))] = True
    return _ensure_margin(inst, open_, margin), work


def _anneal(inst: Instance, temp: float, steps: int, margin: float) -> tuple[np.ndarray, int]:
    """Simulated annealing over the open set from the greedy-add design: ``steps`` random open/close flips, a worse
    design accepted with probability ``exp(-delta / (temp * cost))`` (temperature falling linearly to zero); the best
    design seen. Seeded by the knobs, so deterministic."""
    open_, work = _greedy_add(inst, "absolute", 0.0)
    rng = np.random.default_rng([int(steps), int(round(temp * 1e4)), 7])
    cur = _heur_cost(inst, open_)[0]
    best, best_open = cur, open_.copy()
    for t in range(int(steps)):
        trial = open_.copy()
        j = int(rng.integers(inst.m))
        trial[j] = not trial[j]
        c, w_ = _heur_cost(inst, trial)
        work += w_
        tau = temp * (1.0 - t / steps) * max(cur, 1e-9)
        if c < cur or (math.isfinite(c) and tau > 0 and rng.uniform() < math.exp(-(c - cur) / tau)):
            open_, cur = trial, c
            if cur < best:
                best, best_open = cur, open_.copy()
    return _ensure_margin(inst, best_open, margin), work


FRAMEWORKS = {"milp": _milp, "lp_round": _lp_round, "greedy_add": _greedy_add, "greedy_drop": _greedy_drop,
              "swap": _swap, "cluster": _cluster, "anneal": _anneal}
# Continuous knobs on fine grids: the margin in [0, 0.5] by 0.05, the rounding threshold in [0.05, 0.95] by 0.05, the
# MIP gap and the annealing temperature log-spaced.
MARGINS = tuple(round(0.05 * i, 2) for i in range(11))
KNOBS: dict[str, dict[str, tuple]] = {
    "milp": {"gap": (0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.0), "margin": MARGINS},
    "lp_round": {"tau": tuple(round(0.05 * i, 2) for i in range(1, 20)), "margin": MARGINS},
    "greedy_add": {"order": ("per_fixed", "absolute"), "margin": MARGINS},
    "greedy_drop": {"order": ("per_fixed", "absolute"), "margin": MARGINS},
    "swap": {"iters": (1, 2, 4, 8, 16, 32), "margin": MARGINS},
    "cluster": {"k": (2, 3, 4, 5, 6, 8), "margin": MARGINS},
    "anneal": {"temp": (0.002, 0.005, 0.01, 0.02, 0.05, 0.1), "steps": (10, 20, 40, 80, 160), "margin": MARGINS},
}
# Knobs applied after the framework's design (the capacity margin of the heuristics): the design before them is cached
# per instance, so a model that differs only in them is not solved again.
_POST = {"greedy_add", "greedy_drop", "swap", "cluster", "anneal"}


def all_models(frameworks: tuple[str, ...] | None = None) -> list[tuple[str, tuple]]:
    """Every (framework, knob values) of the grid, in a fixed order."""
    out = []
    for f in frameworks or tuple(FRAMEWORKS):
        for values in itertools.product(*KNOBS[f].values()):
            out.append((f, tuple(values)))
    return out


def _design(inst: Instance, framework: str, knobs: dict) -> tuple[np.ndarray, int]:
    """The framework's design and work, cached on the instance (heuristics: the design before the margin)."""
    cache = inst.cache.setdefault("design", {})
    if framework in _POST:
        base = {k: v for k, v in knobs.items() if k != "margin"}
        key = (framework, tuple(sorted(base.items())))
        if key not in cache:
            cache[key] = FRAMEWORKS[framework](inst, **base, margin=0.0)
        open_, work = cache[key]
        return _ensure_margin(inst, open_, knobs["margin"]), work
    if framework == "lp_round":  # one LP per margin; the threshold only rounds it
        key = ("lp", knobs["margin"])
        if key not in cache:
            cache[key] = _solve_flp(inst, integer=False, margin=knobs["margin"])
        y, _, work = cache[key]
        return _ensure_margin(inst, y >= knobs["tau"], max(knobs["margin"], 0.0)), work
    return FRAMEWORKS[framework](inst, **knobs)


def evaluate(inst: Instance, framework: str, values: tuple, seed: int = 0) -> dict[str, object]:
    """Run one model and score its design: ``cost``, ``effort`` (log10 of 1 + work), ``robust``, the open set.
    Design scores are cached on the instance by open set (they depend on the design only)."""
    knobs = dict(zip(KNOBS[framework], values))
    open_, work = _design(inst, framework, knobs)
    scores = inst.cache.setdefault(("scores", seed), {})
    key = (open_.tobytes(), knobs["margin"])
    if key not in scores:
        cost, plan = transport_plan(inst, open_, knobs["margin"])
        scores[key] = (cost, robust_cost(inst, open_, plan, seed) if math.isfinite(cost) else math.inf)
    cost, robust = scores[key]
    return {"framework": framework, "knobs": knobs, "open": np.flatnonzero(open_).tolist(), "cost": cost,
            "effort": math.log10(1.0 + work), "work": int(work), "robust": robust}
