"""Problems of the MoH page: instances, their generators and readers, and the runners that apply a heuristic program.

Paper: "Generalizable Heuristic Generation Through LLMs with Meta-Optimization" (MoH, arXiv 2505.20881). Its tasks
here: TSP construction (a program chooses the next city, as the paper's ``select_next_node``), TSP improvement (a
program chooses the edges that guided local search penalises between 2-opt descents) and online bin packing (a
program chooses the bin of each arriving item, the FunSearch/EoH setting). Instances: uniform random cities in the
unit square (20..1000 cities) and Weibull(k = 3, scale 45) item sizes clipped to 1..100 with capacity 100 (20..1000
items); uploads: TSPLIB files (EUC_2D, CEIL_2D or ATT coordinates, checked here and read with ``tsplib95``,
installed without its dependencies because it pins networkx 2 while scikit-image needs 3; distances here are
Euclidean floats, not TSPLIB's rounded integers) and item-size CSVs. Shapes: ``coords (n, 2)``, ``dist (n, n)``, a
tour is a permutation ``(n,)`` of city indices; ``items (m,)``.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ...errors import InputError
from ...registry import choose
from .language import GRAMMARS, Interpreter, Node, StepLimit

MIN_CITIES, MAX_CITIES = 5, 1000
MIN_ITEMS, MAX_ITEMS = 5, 2000
STEPS_PER_CANDIDATE = 40  # interpreter steps per candidate per decision, averaged over a run
KNN = 10


@dataclass
class TSPInstance:
    """Cities in the plane; ``dist`` is the Euclidean matrix."""

    coords: np.ndarray
    name: str = "tsp"

    def __post_init__(self) -> None:
        self.coords = np.asarray(self.coords, dtype=float)
        check_coords(self.coords, self.name)

    @property
    def n(self) -> int:
        return len(self.coords)

    @cached_property
    def dist(self) -> np.ndarray:
        diff = self.coords[:, None, :] - self.coords[None, :, :]
        return np.sqrt((diff**2).sum(-1))

    @cached_property
    def knn(self) -> np.ndarray:
        """``(n, K)``: each city's nearest other cities, nearest first."""
        d = self.dist + np.diag(np.full(self.n, np.inf))
        k = min(KNN, self.n - 1)
        part = np.argpartition(d, k - 1, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(d, part, 1), axis=1, kind="stable")
        return np.take_along_axis(part, order, 1)

    @cached_property
    def scale(self) -> float:
        return float(self.dist[np.arange(self.n), self.knn[:, 0]].mean())

    def length(self, tour: np.ndarray) -> float:
        t = np.asarray(tour)
        return float(self.dist[t, np.roll(t, -1)].sum())


@dataclass
class BinInstance:
    """Items arriving online, packed into bins of capacity ``cap``."""

    items: np.ndarray
    cap: float = 100.0
    name: str = "bins"
    l1: int = field(init=False)

    def __post_init__(self) -> None:
        self.items = np.asarray(self.items, dtype=float)
        check_items(self.items, self.cap, self.name)
        self.l1 = int(math.ceil(self.items.sum() / self.cap - 1e-9))


def check_coords(coords: np.ndarray, name: str = "instance") -> None:
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise InputError(f"{name}: coordinates must be n rows of (x, y); got shape {coords.shape}.")
    if not np.isfinite(coords).all():
        bad = int(np.flatnonzero(~np.isfinite(coords).all(1))[0])
        raise InputError(f"{name}: city {bad + 1} has a coordinate that is NaN or infinite; give finite numbers.")
    n = len(coords)
    if not MIN_CITIES <= n <= MAX_CITIES:
        raise InputError(f"{name} has {n} cities; this page takes {MIN_CITIES} to {MAX_CITIES}.")
    if len(np.unique(coords, axis=0)) < 3:
        raise InputError(f"{name}: fewer than 3 distinct cities; give cities at different places.")


def check_items(items: np.ndarray, cap: float, name: str = "items") -> None:
    if not (math.isfinite(cap) and cap > 0):
        raise InputError(f"The bin capacity must be a positive number, got {cap}.")
    if items.ndim != 1:
        raise InputError(f"{name}: give one item size per row.")
    if not np.isfinite(items).all():
        raise InputError(f"{name}: item {int(np.flatnonzero(~np.isfinite(items))[0]) + 1} is NaN or infinite.")
    if (items <= 0).any():
        i = int(np.flatnonzero(items <= 0)[0])
        raise InputError(f"{name}: item {i + 1} has size {items[i]:g}; every item size must be positive.")
    if (items > cap).any():
        i = int(np.flatnonzero(items > cap)[0])
        raise InputError(f"{name}: item {i + 1} ({items[i]:g}) is larger than the bin capacity {cap:g}.")
    if not MIN_ITEMS <= len(items) <= MAX_ITEMS:
        raise InputError(f"{name} has {len(items)} items; this page takes {MIN_ITEMS} to {MAX_ITEMS}.")


# ------------------------------------------------------------------------------------------------ generators
def random_tsp(n: int, seed: int) -> TSPInstance:
    """``n`` cities uniform in the unit square."""
    if not 20 <= int(n) <= MAX_CITIES:
        raise InputError(f"Generated TSP sizes are 20 to {MAX_CITIES} cities, got {n}.")
    rng = np.random.default_rng([int(n), int(seed), 31])
    return TSPInstance(rng.random((int(n), 2)), name=f"uniform{n}_s{seed}")


def random_bins(n: int, seed: int, cap: float = 100.0) -> BinInstance:
    """``n`` Weibull(3, 45) item sizes, rounded and clipped to 1..cap."""
    if not 20 <= int(n) <= MAX_ITEMS:
        raise InputError(f"Generated bin-packing sizes are 20 to {MAX_ITEMS} items, got {n}.")
    rng = np.random.default_rng([int(n), int(seed), 37])
    items = np.clip(np.round(45.0 * rng.weibull(3.0, int(n))), 1, cap)
    return BinInstance(items, cap, name=f"weibull{n}_s{seed}")


def instances(problem: str, n: int, count: int, seed: int) -> list:
    make = random_bins if problem == "bpp_online" else random_tsp
    return [make(n, seed * 1000 + i) for i in range(count)]


# ------------------------------------------------------------------------------------------------ readers
def read_tsplib(data: bytes, name: str = "upload.tsp") -> TSPInstance:
    """A TSPLIB file (``NODE_COORD_SECTION`` with EUC_2D, CEIL_2D or ATT coordinates) -> :class:`TSPInstance`.

    The structure is checked first (``KEY : VALUE`` header lines, then ``index x y`` lines up to ``EOF`` or the next
    section, the size limit, the problem and edge-weight types), then ``tsplib95`` reads the coordinates."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text; give a TSPLIB .tsp file.") from None
    if "\0" in text:
        raise InputError(f"{name} contains NUL bytes; give a TSPLIB .tsp text file.")
    header: dict[str, str] = {}
    rows: dict[int, tuple[float, float]] = {}
    in_coords = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        up = line.upper()
        if up == "EOF":
            break
        if in_coords:
            if up.endswith("_SECTION"):
                break
            parts = line.split()
            try:
                idx, x, y = int(parts[0]), float(parts[1]), float(parts[2])
            except (ValueError, IndexError):
                raise InputError(f"{name} line {lineno}: {line[:40]!r} is not 'index x y'.") from None
            if len(parts) != 3:
                raise InputError(f"{name} line {lineno}: expected 'index x y' (two coordinates), got {len(parts)} "
                                 "fields.")
            if idx in rows:
                raise InputError(f"{name} line {lineno}: city {idx} is listed twice.")
            rows[idx] = (x, y)
            if len(rows) > MAX_CITIES:
                raise InputError(f"{name} has more than {MAX_CITIES} cities; this page takes {MIN_CITIES} to "
                                 f"{MAX_CITIES}.")
        elif up.startswith("NODE_COORD_SECTION"):
            in_coords = True
        elif up.endswith("_SECTION"):
            raise InputError(f"{name} has a {up.split()[0]} before any coordinates; give a TSPLIB file with a "
                             "NODE_COORD_SECTION (explicit distance matrices are not read here).")
        elif ":" in line:
            key, _, val = line.partition(":")
            header[key.strip().upper()] = val.strip()
        else:
            raise InputError(f"{name} line {lineno}: {line[:40]!r} is not a TSPLIB 'KEY : VALUE' header line.")
    if not in_coords:
        raise InputError(f"{name} has no NODE_COORD_SECTION; give a TSPLIB file with city coordinates.")
    typ = header.get("TYPE", "TSP").split()[0].upper() if header.get("TYPE") else "TSP"
    if typ != "TSP":
        raise InputError(f"{name} is of TYPE {typ}; this page reads symmetric TSP files (TYPE : TSP).")
    ewt = header.get("EDGE_WEIGHT_TYPE", "EUC_2D").upper()
    if ewt not in ("EUC_2D", "CEIL_2D", "ATT"):
        raise InputError(f"{name} has EDGE_WEIGHT_TYPE {ewt}; this page reads EUC_2D, CEIL_2D and ATT coordinates.")
    if not rows:
        raise InputError(f"{name} lists no city coordinates.")
    if "DIMENSION" in header:
        try:
            dim = int(header["DIMENSION"])
        except ValueError:
            raise InputError(f"{name}: DIMENSION {header['DIMENSION'][:20]!r} is not a whole number.") from None
        if dim != len(rows):
            raise InputError(f"{name} says DIMENSION {dim} but lists {len(rows)} cities.")
    check_coords(np.array([rows[k] for k in sorted(rows)], dtype=float), name)  # NaN, limits: named before parsing
    xy = _tsplib95_coords(text, name, len(rows))
    return TSPInstance(xy, name=header.get("NAME", name)[:60] or name)


def _tsplib95_coords(text: str, name: str, n: int) -> np.ndarray:
    """The coordinates as ``tsplib95`` reads them (the file has passed the checks above)."""
    import tsplib95

    try:
        prob = tsplib95.parse(text)
        coords = dict(prob.node_coords)
    except Exception as err:  # noqa: BLE001 - the parser raises many types on malformed text
        raise InputError(f"{name} is not a valid TSPLIB file ({type(err).__name__}: {str(err)[:120]}).") from None
    if len(coords) != n:
        raise InputError(f"{name}: {len(coords)} cities read of {n} listed; check the NODE_COORD_SECTION.")
    try:
        return np.array([list(coords[k])[:2] for k in sorted(coords)], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name}: every city needs two numeric coordinates.") from None


def read_bin_items(data: bytes, name: str = "items.csv", capacity: float = 100.0) -> BinInstance:
    """A CSV of item sizes (one column, optional header) -> :class:`BinInstance` with bin ``capacity``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text; give one item size per line.") from None
    if "\0" in text:
        raise InputError(f"{name} contains NUL bytes; give a text CSV of item sizes.")
    vals = []
    for i, line in enumerate(io.StringIO(text)):
        cell = line.strip().split(",")[0].strip().strip('"')
        if not cell:
            continue
        try:
            vals.append(float(cell))
        except ValueError:
            if i == 0 and not vals:
                continue  # a header
            raise InputError(f"{name} line {i + 1}: {cell[:30]!r} is not a number; give one item size per line.") \
                from None
        if len(vals) > MAX_ITEMS:
            raise InputError(f"{name} has more than {MAX_ITEMS} items; this page takes {MIN_ITEMS} to {MAX_ITEMS}.")
    if not vals:
        raise InputError(f"{name} has no item sizes; give one positive number per line.")
    return BinInstance(np.array(vals), float(capacity), name=name)


# ------------------------------------------------------------------------------------------------ runners
def construct_tour(prog: Node, inst: TSPInstance, start: int = 0) -> np.ndarray:
    """Build a tour with a construction program (the smallest score is visited next). Raises StepLimit."""
    n, D = inst.n, inst.dist
    interp = Interpreter(STEPS_PER_CANDIDATE * n * (n + 1) // 2 + 64 * n)
    mask = np.ones(n, dtype=bool)
    mask[start] = False
    sum_unv = D.sum(1) - D[:, start]
    tour = [start]
    cur = start
    knn = inst.knn
    for _ in range(n - 1):
        cand = np.flatnonzero(mask)
        k = len(cand)
        cur_ = cur

        def d_cur(c=cand, u=cur_):  # noqa: ANN001, ANN202
            return D[u, c]

        def nn_rest(c=cand, su=sum_unv, kk=k):  # noqa: ANN001, ANN202
            nb = knn[c]
            m = mask[nb]
            first = m.argmax(1)
            val = D[c, nb[np.arange(len(c)), first]]
            return np.where(m.any(1), val, su[c] / max(kk - 1, 1))

        env = {"d_cur": d_cur, "d_start": lambda c=cand: D[c, start],
               "avg_rest": lambda c=cand, su=sum_unv, kk=k: su[c] / max(kk - 1, 1), "nn_rest": nn_rest,
               "frac_left": k / n, "scale": inst.scale, "min_cur": lambda c=cand, u=cur_: float(D[u, c].min())}
        nxt = int(cand[int(np.argmin(interp.run(prog, env, k)))]) if k > 1 else int(cand[0])
        mask[nxt] = False
        sum_unv -= D[:, nxt]
        tour.append(nxt)
        cur = nxt
    return np.array(tour)


def pack_online(prog: Node, inst: BinInstance) -> tuple[int, np.ndarray]:
    """Pack items in arrival order with a bin-choice program; returns (bins used, bin index per item)."""
    m = len(inst.items)
    rest = np.empty(m)
    fill = np.zeros(m)
    nb = 0
    where = np.empty(m, dtype=int)
    interp = Interpreter(STEPS_PER_CANDIDATE * m * (m + 1) // 2 + 64 * m)
    for i, s in enumerate(inst.items):
        feas = np.flatnonzero(rest[:nb] >= s - 1e-9)
        if len(feas) == 0:
            b = nb
            rest[b] = inst.cap
            nb += 1
        elif len(feas) == 1:
            b = int(feas[0])
        else:
            env = {"rest": rest[feas], "fill": fill[feas], "idx": feas / nb, "item": float(s), "cap": inst.cap}
            b = int(feas[int(np.argmin(interp.run(prog, env, len(feas))))])
        rest[b] -= s
        fill[b] += 1
        where[i] = b
    return nb, where


def two_opt(tour: np.ndarray, D: np.ndarray, max_passes: int = 1000) -> np.ndarray:
    """2-opt descent to a local optimum: for each position the best reversal, applied if it shortens the tour."""
    t = np.array(tour)
    n = len(t)
    for _ in range(max_passes):
        improved = False
        for i in range(n - 2):
            a, b = t[i], t[i + 1]
            js = np.arange(i + 2, n if i > 0 else n - 1)
            if len(js) == 0:
                continue
            c, d = t[js], t[(js + 1) % n]
            delta = D[a, c] + D[b, d] - D[a, b] - D[c, d]
            j = int(np.argmin(delta))
            if delta[j] < -1e-10:
                jj = int(js[j])
                t[i + 1:jj + 1] = t[i + 1:jj + 1][::-1]
                improved = True
        if not improved:
            break
    return t


def nearest_neighbour(inst: TSPInstance, start: int = 0) -> np.ndarray:
    """The nearest-neighbour tour from ``start`` (a permutation of ``range(n)``): the start of every local search."""
    D = inst.dist
    mask = np.ones(inst.n, dtype=bool)
    mask[start] = False
    tour = [start]
    for _ in range(inst.n - 1):
        row = np.where(mask, D[tour[-1]], np.inf)
        nxt = int(np.argmin(row))
        mask[nxt] = False
        tour.append(nxt)
    return np.array(tour)


def gls_improve(prog: Node, inst: TSPInstance, iters: int = 30, alpha: float = 0.1,
                start: np.ndarray | None = None) -> np.ndarray:
    """Guided local search: 2-opt on distance + lambda * penalties; after each descent the program scores the tour's
    edges and the lowest-scored edges (n // 20, at least one) get a penalty. Returns the best tour under the real
    distances."""
    D, n = inst.dist, inst.n
    tour = two_opt(nearest_neighbour(inst) if start is None else np.asarray(start), D)
    best, best_len = tour.copy(), inst.length(tour)
    pen = np.zeros_like(D)
    lam = alpha * best_len / n
    rank = np.argsort(np.argsort(D, axis=1, kind="stable"), axis=1, kind="stable") - 1.0
    interp = Interpreter(STEPS_PER_CANDIDATE * n * iters + 64 * iters)
    m = max(1, n // 20)
    for it in range(iters):
        a, b = tour, np.roll(tour, -1)
        env = {"d_edge": D[a, b], "pen": pen[a, b], "rank": rank[a, b] / 10.0, "scale": inst.scale,
               "iter_frac": it / iters}
        pick = np.argsort(interp.run(prog, env, n), kind="stable")[:m]
        pen[a[pick], b[pick]] += 1
        pen[b[pick], a[pick]] += 1
        tour = two_opt(tour, D + lam * pen, max_passes=50)
        length = inst.length(tour)
        if length < best_len - 1e-12:
            best, best_len = tour.copy(), length
    return best


def objective(problem: str, prog: Node, inst) -> float:  # noqa: ANN001 - TSPInstance or BinInstance
    """Tour length or bins used; ``inf`` when the program runs out of interpreter steps."""
    try:
        if problem == "tsp_construct":
            return inst.length(construct_tour(prog, inst))
        if problem == "tsp_gls":
            return inst.length(gls_improve(prog, inst))
        return float(pack_online(prog, inst)[0])
    except StepLimit:
        return math.inf


def grammar(problem: str):  # noqa: ANN201 - a Grammar
    return GRAMMARS[choose(problem, GRAMMARS, "problem")]
