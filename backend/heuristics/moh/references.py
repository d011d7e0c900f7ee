"""Reference heuristics and bounds of the MoH page: the hand-written baselines the evolved heuristics are compared with.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH, arXiv 2505.20881). TSP:
nearest neighbour, greedy edge (shortest edges first, no city of degree 3, no subtour), farthest insertion (start
from city 0 and the city farthest from it; insert the city farthest from the tour at its cheapest position), 2-opt
descent from the nearest-neighbour tour, OR-Tools routing (path-cheapest-arc start and its default greedy-descent
local search, no metaheuristic: deterministic when it finishes inside its 60 s limit, which it does up to about 500
cities here) and LKH-3 through ``elkai`` (one run; the reference length every gap is measured against). Bin packing:
first fit, best fit and the L1 lower bound ``ceil(sum / capacity)``. A tour is a permutation ``(n,)`` of city
indices.
"""

from __future__ import annotations

import numpy as np

from ...registry import Registry
from .problems import BinInstance, TSPInstance, nearest_neighbour, two_opt


def greedy_edge(inst: TSPInstance) -> np.ndarray:
    n, D = inst.n, inst.dist
    iu, ju = np.triu_indices(n, 1)
    order = np.argsort(D[iu, ju], kind="stable")
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    deg = np.zeros(n, dtype=int)
    adj: list[list[int]] = [[] for _ in range(n)]
    added = 0
    for e in order:
        a, b = int(iu[e]), int(ju[e])
        if deg[a] >= 2 or deg[b] >= 2:
            continue
        ra, rb = find(a), find(b)
        if ra == rb:
            continue
        parent[ra] = rb
        deg[a] += 1
        deg[b] += 1
        adj[a].append(b)
        adj[b].append(a)
        added += 1
        if added == n - 1:
            break
    # the edges form one Hamiltonian path: walk it from one end
    start = int(np.flatnonzero(deg < 2)[0])
    tour, prev = [start], -1
    while len(tour) < n:
        nxt = next(x for x in adj[tour[-1]] if x != prev)
        prev = tour[-1]
        tour.append(nxt)
    return np.array(tour)


def farthest_insertion(inst: TSPInstance) -> np.ndarray:
    n, D = inst.n, inst.dist
    first = int(np.argmax(D[0]))
    tour = [0, first]
    in_tour = np.zeros(n, dtype=bool)
    in_tour[tour] = True
    mind = np.minimum(D[0], D[first])
    for _ in range(n - 2):
        c = int(np.argmax(np.where(in_tour, -1.0, mind)))
        t = np.array(tour)
        nt = np.roll(t, -1)
        cost = D[t, c] + D[c, nt] - D[t, nt]
        pos = int(np.argmin(cost))
        tour.insert(pos + 1, c)
        in_tour[c] = True
        mind = np.minimum(mind, D[c])
    return np.array(tour)


def nn_two_opt(inst: TSPInstance) -> np.ndarray:
    return two_opt(nearest_neighbour(inst), inst.dist)


def ortools_routing(inst: TSPInstance, time_limit_s: int = 60) -> np.ndarray:
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    n = inst.n
    mat = np.round(inst.dist / inst.dist.max() * 1e6).astype(np.int64)
    manager = pywrapcp.RoutingIndexManager(n, 1, 0)
    routing = pywrapcp.RoutingModel(manager)
    transit = routing.RegisterTransitMatrix(mat.tolist())
    routing.SetArcCostEvaluatorOfAllVehicles(transit)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.time_limit.seconds = int(time_limit_s)
    sol = routing.SolveWithParameters(params)
    idx, tour = routing.Start(0), []
    while not routing.IsEnd(idx):
        tour.append(manager.IndexToNode(idx))
        idx = sol.Value(routing.NextVar(idx))
    return np.array(tour)


def lkh(inst: TSPInstance, runs: int = 1) -> np.ndarray:
    import elkai

    c = inst.coords - inst.coords.min(0)
    c = c * (1e6 / max(float(c.max()), 1e-12))  # LKH rounds coordinates to integers: work on a 10^6 grid
    pts = {i: (float(x), float(y)) for i, (x, y) in enumerate(c)}
    tour = elkai.Coordinates2D(pts).solve_tsp(runs=int(runs))
    return np.array(tour[:-1] if len(tour) > inst.n else tour)


TSP_REFERENCES: Registry = Registry("TSP reference")
TSP_REFERENCES.add("nearest_neighbour", nearest_neighbour, label="Nearest neighbour", kind="reference")
TSP_REFERENCES.add("greedy_edge", greedy_edge, label="Greedy edge", kind="reference")
TSP_REFERENCES.add("farthest_insertion", farthest_insertion, label="Farthest insertion", kind="reference")
CONSTRUCTIONS = tuple(TSP_REFERENCES)  # the constructions, registered first
TSP_REFERENCES.add("two_opt", nn_two_opt, label="2-opt (from nearest neighbour)", kind="reference")
TSP_REFERENCES.add("ortools", ortools_routing, label="OR-Tools routing", kind="reference")
TSP_REFERENCES.add("lkh", lkh, label="LKH-3 (elkai)", kind="reference")
GAP_REFERENCE = "lkh"  # the reference every gap is measured against


def first_fit(inst: BinInstance) -> int:
    rest: list[float] = []
    for s in inst.items:
        for b, r in enumerate(rest):
            if r >= s - 1e-9:
                rest[b] -= s
                break
        else:
            rest.append(inst.cap - s)
    return len(rest)


def best_fit(inst: BinInstance) -> int:
    rest = np.empty(len(inst.items))
    nb = 0
    for s in inst.items:
        feas = np.flatnonzero(rest[:nb] >= s - 1e-9)
        if len(feas) == 0:
            rest[nb] = inst.cap - s
            nb += 1
        else:
            b = feas[int(np.argmin(rest[feas]))]
            rest[b] -= s
    return nb


def l1_bound(inst: BinInstance) -> int:
    return inst.l1


BIN_REFERENCES: Registry = Registry("bin-packing reference")
BIN_REFERENCES.add("first_fit", first_fit, label="First fit", kind="reference")
BIN_REFERENCES.add("best_fit", best_fit, label="Best fit", kind="reference")
RULES = tuple(BIN_REFERENCES)  # the online rules, registered before the bound
BIN_REFERENCES.add("l1", l1_bound, label="L1 lower bound", kind="reference")


def tsp_reference_lengths(inst: TSPInstance, names: tuple[str, ...] | list[str]) -> dict[str, float]:
    return {n: inst.length(TSP_REFERENCES.get(n)(inst)) for n in names}
