"""The diversified multinomial logit (DMNL) choice model, its diversity functions and assortment optimisation.

Paper: H. Ann, T. Hwang, M. Oh, "Diversified Multinomial Logit Contextual Bandits" (ICLR 2026). The learners that
use this model are in :mod:`backend.bandits.dmnl.agents`.

Choice model. A user shown an assortment ``S`` (at most ``K`` of ``N`` items, item features ``x_i`` in ``R^d``) buys
item ``i in S`` with probability::

    p(i | S) = exp(x_i . theta) / (exp(-lambda g(S)) + sum_{j in S} exp(x_j . theta))

and buys nothing otherwise; ``g`` is a monotone submodular diversity function with ``g(empty) = 0``. Multiplying
through by ``exp(lambda g(S))`` gives a plain MNL on the augmented features ``z_i(S) = [x_i, g(S)]`` with parameter
``w = [theta, lambda]``, which is how the learners estimate it. With unit revenues the expected reward is::

    R(S) = sum_{i in S} p(i | S) = E / (1 + E),   E = exp(lambda g(S)) sum_{i in S} exp(x_i . theta),

that is ``sigmoid(logsumexp(u_S) + lambda g(S))``: monotone in ``S``, so an optimal assortment has exactly ``K`` items
(when ``N >= K``). ``R`` is monotone submodular when ``g`` is, and greedy item-by-item construction reaches at least
``1 - 1/(e + 1)`` (about 0.731) of the optimum (the paper's approximation factor, better than the generic
``1 - 1/e``). The guarantee rests on bounded parameters; we check it where utilities lie in ``[-1, 1]`` and
``0 <= lambda <= 1`` (unit-norm features and preference, ``g`` in ``[0, 1]``). Outside that regime the sigmoid is
convex in its low range, ``R`` stops being submodular and greedy can fall below the bound: the hard instance of
:func:`hard_instance` at ``u = -6``, ``lambda = 6`` reaches 0.56 of the optimum.

Diversity functions (:data:`DIVERSITY`; each maps index sets to values in ``[0, 1]``):

- ``coverage``: category coverage with exponential decay: the k-th item of a category adds ``rho^(k-1) / K``, so
  ``g(S) = (1/K) sum_c (1 - rho^(n_c(S))) / (1 - rho)``; ``g = 1`` for ``K`` items of ``K`` distinct categories.
- ``facility``: facility location over the item features: ``g(S) = (1/N) sum_j max_{i in S} s_ij`` with the
  similarity ``s_ij = exp(-||f_i - f_j||^2 / h)`` (``h`` the median squared distance) of the items' base features.

Shapes: utilities ``u`` ``[N]`` (or ``[T, N]``), assortments are ``int`` index arrays ``[K]``, an enumeration is
``[M, K]`` with ``M = C(N, K)``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import Registry

APPROX = 1.0 - 1.0 / (math.e + 1.0)  # the greedy guarantee, about 0.731
MAX_ENUMERATION = 200_000  # assortments an exhaustive search may enumerate (C(20, 5) = 15,504; C(20, 7) = 77,520)


# ------------------------------------------------------------------------------------------------ diversity
@dataclass(frozen=True)
class Diversity:
    """A monotone submodular set function on item indices, vectorised over candidate additions.

    ``value(S)`` for one index set; ``gain_values(S, cand)`` gives ``g(S + {i})`` for every ``i`` in ``cand``
    (``[len(cand)]``); ``enumerate_values(subsets)`` gives ``g`` of every row of an ``[M, K]`` index array.
    """

    name: str
    n_items: int
    k: int
    categories: np.ndarray | None = None  # [N] int (coverage)
    rho: float = 0.5
    similarity: np.ndarray | None = field(default=None, repr=False)  # [N, N] in [0, 1] (facility)

    def value(self, S: np.ndarray | list[int]) -> float:
        S = np.asarray(S, dtype=np.int64)
        return float(self.enumerate_values(S[None, :])[0]) if len(S) else 0.0

    def gain_values(self, S: np.ndarray | list[int], cand: np.ndarray) -> np.ndarray:
        S = np.asarray(S, dtype=np.int64)
        cand = np.asarray(cand, dtype=np.int64)
        rows = np.concatenate([np.broadcast_to(S, (len(cand), len(S))), cand[:, None]], axis=1)
        return self.enumerate_values(rows)

    def enumerate_values(self, subsets: np.ndarray) -> np.ndarray:
        subsets = np.asarray(subsets, dtype=np.int64)
        if self.categories is not None:  # category coverage
            cats = self.categories[subsets]  # [M, m]
            n_cat = int(self.categories.max()) + 1
            counts = np.zeros((len(subsets), n_cat))
            np.add.at(counts, (np.repeat(np.arange(len(subsets)), subsets.shape[1]), cats.ravel()), 1.0)
            return ((1.0 - self.rho**counts) / (1.0 - self.rho)).sum(axis=1) / self.k
        assert self.similarity is not None
        return self.similarity[subsets].max(axis=1).mean(axis=1)


def coverage(categories: np.ndarray, k: int, rho: float = 0.5) -> Diversity:
    """Exponentially decaying category coverage (``0 < rho < 1``; ``rho -> 0`` counts distinct categories)."""
    if not 0.0 < rho < 1.0:
        raise InputError(f"The coverage decay rho must be in (0, 1) (got {rho}).")
    cats = np.unique(np.asarray(categories), return_inverse=True)[1].astype(np.int64)
    return Diversity("coverage", len(cats), int(k), categories=cats, rho=float(rho))


def facility(features: np.ndarray, k: int) -> Diversity:
    """Facility location on base item features ``[N, d]`` (Gaussian similarity, bandwidth the median distance)."""
    f = np.asarray(features, dtype=np.float64)
    d2 = ((f[:, None, :] - f[None, :, :]) ** 2).sum(-1)
    h = float(np.median(d2[np.triu_indices(len(f), 1)])) if len(f) > 1 else 1.0
    return Diversity("facility", len(f), int(k), similarity=np.exp(-d2 / max(h, 1e-12)))


@dataclass(frozen=True)
class DiversityFunction:
    """One entry of :data:`DIVERSITY`: ``build(categories=, features=, k=, rho=)`` makes the function for a catalogue
    (each builder reads what it needs), ``sample(rng, n, k)`` draws it on a random small instance of ``n`` items
    (the instances of :func:`random_instances_ratio`)."""

    build: Callable[..., Diversity]
    sample: Callable[[np.random.Generator, int, int], Diversity]

    def __call__(self, *, categories: np.ndarray, features: np.ndarray, k: int, rho: float = 0.5) -> Diversity:
        return self.build(categories=categories, features=features, k=k, rho=rho)


def _coverage_of(*, categories: np.ndarray, features: np.ndarray, k: int, rho: float) -> Diversity:  # noqa: ARG001
    return coverage(categories, k, rho)


def _facility_of(*, categories: np.ndarray, features: np.ndarray, k: int, rho: float) -> Diversity:  # noqa: ARG001
    return facility(features, k)


def _random_coverage(rng: np.random.Generator, n: int, k: int) -> Diversity:
    """2-4 categories, rho in (0.1, 0.9)."""
    return coverage(rng.integers(0, int(rng.integers(2, 5)), n), k, float(rng.uniform(0.1, 0.9)))


def _random_facility(rng: np.random.Generator, n: int, k: int) -> Diversity:
    """Standard normal features in R^3."""
    return facility(rng.standard_normal((n, 3)), k)


DIVERSITY: Registry[DiversityFunction] = Registry("diversity function")
DIVERSITY.add("coverage", DiversityFunction(_coverage_of, _random_coverage),
              label="Category coverage (exponential decay)", kind="ours",
              about="the k-th item of a category adds rho^(k-1)/K")
DIVERSITY.add("facility", DiversityFunction(_facility_of, _random_facility),
              label="Facility location (feature similarity)", kind="baseline",
              about="(1/N) sum_j max_{i in S} exp(-||f_i - f_j||^2 / h)")


def make_diversity(name: str, *, categories: np.ndarray, features: np.ndarray, k: int, rho: float = 0.5) -> Diversity:
    """The diversity function ``name`` of :data:`DIVERSITY` for one catalogue."""
    return DIVERSITY.get(name)(categories=categories, features=features, k=k, rho=rho)


# ------------------------------------------------------------------------------------------------ the model
def reward(u: np.ndarray, lam: float, g: np.ndarray | float) -> np.ndarray:
    """``R(S) = E / (1 + E)`` with ``log E = logsumexp(u_S) + lam g(S)``; ``u`` ``[..., m]`` (the utilities of the
    items in S), ``g`` broadcast to ``u.shape[:-1]``. Returns ``[...]``."""
    u = np.asarray(u, dtype=np.float64)
    top = u.max(axis=-1)
    lse = top + np.log(np.exp(u - top[..., None]).sum(axis=-1))
    return 1.0 / (1.0 + np.exp(-(lse + lam * np.asarray(g))))


def choice_probs(u_S: np.ndarray, lam: float, g: float) -> np.ndarray:
    """``[m + 1]``: the probability of each item of S (utilities ``u_S`` ``[m]``), then of buying nothing."""
    logits = np.concatenate([np.asarray(u_S, dtype=np.float64) + lam * g, [0.0]])
    logits -= logits.max()
    p = np.exp(logits)
    return p / p.sum()


def draw_choice(u_S: np.ndarray, lam: float, g: float, uniform: float) -> int:
    """The user's choice by inverse CDF of :func:`choice_probs` at ``uniform`` in [0, 1): the position in S of the
    item bought, or -1 for no purchase (a shared uniform per round pairs agents: common random numbers)."""
    p = choice_probs(u_S, lam, g)
    j = min(int(np.searchsorted(np.cumsum(p), uniform, side="right")), len(p) - 1)
    return j if j < len(u_S) else -1


def true_reward(u: np.ndarray, lam: float, div: Diversity, S: np.ndarray) -> float:
    """Expected reward of assortment ``S`` under utilities ``u`` ``[N]``."""
    S = np.asarray(S, dtype=np.int64)
    return float(reward(u[S], lam, div.value(S)))


# ------------------------------------------------------------------------------------------------ optimisation
GainFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Assortment:
    """An assortment and what finding it cost: ``evaluations`` counts value calls of candidate sets."""

    items: np.ndarray  # [K] int, in the order they were added
    value: float
    evaluations: int


def greedy(value_with: GainFn, n_items: int, k: int) -> Assortment:
    """Item-by-item construction: at each of ``k`` steps add the candidate maximising ``value_with(S, cand)``.

    ``value_with(S, cand)`` returns the value of ``S + {i}`` for every ``i`` in ``cand`` (``[len(cand)]``). Cost:
    ``sum_{j < k} (N - j)`` evaluations, ``O(N K)``. Ties go to the lowest index (deterministic).
    """
    S: list[int] = []
    free = np.ones(n_items, dtype=bool)
    evals, best_val = 0, 0.0
    for _ in range(min(k, n_items)):
        cand = np.flatnonzero(free)
        vals = value_with(np.asarray(S, dtype=np.int64), cand)
        evals += len(cand)
        j = int(np.argmax(vals))
        S.append(int(cand[j]))
        free[cand[j]] = False
        best_val = float(vals[j])
    return Assortment(np.asarray(S, dtype=np.int64), best_val, evals)


def n_subsets(n_items: int, k: int) -> int:
    return math.comb(n_items, min(k, n_items))


def all_subsets(n_items: int, k: int) -> np.ndarray:
    """Every size-``min(k, N)`` subset, ``[C(N, k), k]`` (lexicographic). InputError past :data:`MAX_ENUMERATION`."""
    m = n_subsets(n_items, k)
    if m > MAX_ENUMERATION:
        raise InputError(f"Exhaustive enumeration of C({n_items}, {k}) = {m:,} assortments is past the limit of "
                         f"{MAX_ENUMERATION:,}; use N <= 20 (K = 5) for the exhaustive variants.")
    return np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n_items), min(k, n_items))),
                       dtype=np.int64, count=m * min(k, n_items)).reshape(m, min(k, n_items))


def greedy_true(u: np.ndarray, lam: float, div: Diversity, k: int) -> Assortment:
    """Greedy on the known model (utilities ``u`` ``[N]``)."""

    def value_with(S: np.ndarray, cand: np.ndarray) -> np.ndarray:
        g = div.gain_values(S, cand)
        us = np.concatenate([np.broadcast_to(u[S], (len(cand), len(S))), u[cand][:, None]], axis=1)
        return reward(us, lam, g)

    return greedy(value_with, len(u), k)


def exhaustive_true(u: np.ndarray, lam: float, subsets: np.ndarray, g_all: np.ndarray) -> Assortment:
    """The optimum by enumeration; ``u`` ``[N]`` or ``[T, N]`` (then ``items`` is ``[T, K]`` and ``value`` ``[T]``)."""
    vals = reward(np.asarray(u)[..., subsets], lam, g_all)  # [M] or [T, M]
    best = np.argmax(vals, axis=-1)
    items = subsets[best]
    value = np.take_along_axis(vals, np.asarray(best)[..., None], -1)[..., 0] if vals.ndim > 1 else vals[best]
    return Assortment(items, value, int(subsets.shape[0]))


def hard_instance() -> tuple[np.ndarray, float, Diversity, int]:
    """A hand-built instance where greedy is strictly suboptimal (facility location over 8 customers, K = 2).

    Items 0 and 1 each cover one half of the customers fully; item 2 covers every customer at 0.6 and so has the best
    singleton value (g = 0.6 against 0.5). Greedy takes item 2 first and then a half (g = 0.8), while ``{0, 1}``
    covers everyone (g = 1). The utilities are equal and at the low end of the bounded regime (``u = -1``,
    ``lambda = 1``), where the reward is least saturated. Returns ``(u, lam, div, k)``.
    """
    sim = np.zeros((3, 8))
    sim[0, :4] = sim[1, 4:] = 1.0
    sim[2, :] = 0.6
    return np.full(3, -1.0), 1.0, Diversity("facility", 3, 2, similarity=sim), 2


# ------------------------------------------------------------------------------------------------ the guarantee
@dataclass
class RatioCheck:
    """Greedy value / enumerated optimum on random instances: ``ratios`` ``[n]``, their minimum, the bound."""

    ratios: np.ndarray
    suboptimal: int
    bound: float = APPROX

    def summary(self) -> dict[str, float]:
        return {"instances": len(self.ratios), "min_ratio": float(self.ratios.min()),
                "mean_ratio": float(self.ratios.mean()), "greedy_suboptimal": int(self.suboptimal),
                "bound": self.bound}


def random_instances_ratio(n_instances: int = 300, *, seed: int = 0, max_items: int = 10,
                           diversity: str = "both") -> RatioCheck:
    """Greedy vs exhaustive on random small instances in the bounded regime: ``|u| <= 1``, ``0 <= lambda <= 1``,
    N in 4..``max_items``, K in 2..4, each function of :data:`DIVERSITY` in turn (``diversity="both"``) or the one
    named: coverage (2-4 categories, rho in (0.1, 0.9)) or facility location (features in R^3)."""
    kinds = list(DIVERSITY.values()) if diversity == "both" else [DIVERSITY.get(diversity)]
    rng = np.random.default_rng([seed, 31])
    ratios, sub = [], 0
    for i in range(n_instances):
        n = int(rng.integers(4, max_items + 1))
        k = int(rng.integers(2, min(4, n - 1) + 1))
        u = rng.uniform(-1.0, 1.0, n)
        lam = float(rng.uniform(0.0, 1.0))
        div = kinds[i % len(kinds)].sample(rng, n, k)
        subsets = all_subsets(n, k)
        opt = exhaustive_true(u, lam, subsets, div.enumerate_values(subsets)).value
        got = greedy_true(u, lam, div, k).value
        ratios.append(got / opt)
        sub += got < opt - 1e-12
    return RatioCheck(np.asarray(ratios), sub)


@dataclass
class AdversarialCheck:
    """The worst greedy / optimum ratio an adversarial search found: ``ratio``, the instance (``u`` ``[N]``,
    ``lam``, the similarity ``[N, C]`` of a weighted-coverage diversity, ``k``), the greedy and optimal assortments,
    and the search's cost (``evaluations``; ``trace`` the best ratio after each restart)."""

    ratio: float
    u: np.ndarray
    lam: float
    similarity: np.ndarray
    k: int
    greedy_items: list[int]
    optimal_items: list[int]
    evaluations: int
    trace: list[float]
    bound: float = APPROX

    def summary(self) -> dict[str, object]:
        return {"min_ratio": self.ratio, "bound": self.bound, "evaluations": self.evaluations,
                "n_items": len(self.u), "k": self.k, "lam": self.lam, "u": [round(float(v), 4) for v in self.u],
                "greedy": self.greedy_items, "optimum": self.optimal_items}


def _ratio(u: np.ndarray, lam: float, sim: np.ndarray, k: int) -> tuple[float, Assortment, Assortment]:
    div = Diversity("facility", len(u), k, similarity=sim)
    subsets = all_subsets(len(u), k)
    opt = exhaustive_true(u, lam, subsets, div.enumerate_values(subsets))
    got = greedy_true(u, lam, div, k)
    return got.value / opt.value, got, opt


def adversarial_ratio(restarts: int = 30, steps: int = 120, *, seed: int = 0, n_items: tuple[int, int] = (3, 6),
                      customers: int = 6) -> AdversarialCheck:
    """Search for greedy's worst instance inside the bounded regime (``|u| <= 1``, ``0 <= lambda <= 1``, ``g`` in
    ``[0, 1]``): the diversity is a weighted coverage ``g(S) = (1/C) sum_j max_{i in S} s_ij`` with a free similarity
    matrix ``s`` in ``[0, 1]^(N x C)`` (monotone submodular; facility location and category coverage with rho -> 0
    are special cases). Each restart draws N, K and a random instance (the first starts from :func:`hard_instance`),
    then a (1+1) evolution strategy perturbs u, lambda and s (clipped to the regime; step size doubled after an
    improvement, shrunk after a failure) and keeps a change when greedy's ratio to the enumerated optimum does not
    rise. Deterministic for the seed."""
    rng = np.random.default_rng([seed, 53])
    best: tuple[float, np.ndarray, float, np.ndarray, int] | None = None
    trace: list[float] = []
    evals = 0
    for r in range(restarts):
        if r == 0:
            u0, lam0, div0, k = hard_instance()
            u, lam, sim = u0.copy(), lam0, np.asarray(div0.similarity, dtype=np.float64).copy()
            sim = np.pad(sim, ((0, 0), (0, max(0, customers - sim.shape[1]))))[:, :max(customers, sim.shape[1])]
        else:
            n = int(rng.integers(n_items[0], n_items[1] + 1))
            k = int(rng.integers(2, n))
            u, lam = rng.uniform(-1.0, 1.0, n), float(rng.uniform(0.0, 1.0))
            sim = rng.uniform(0.0, 1.0, (n, customers)) * (rng.random((n, customers)) < 0.5)
        cur = _ratio(u, lam, sim, k)[0]
        evals += 1
        sigma = 0.3
        for _ in range(steps):
            u2 = np.clip(u + sigma * rng.standard_normal(u.shape), -1.0, 1.0)
            lam2 = float(np.clip(lam + sigma * rng.standard_normal(), 0.0, 1.0))
            sim2 = np.clip(sim + sigma * rng.standard_normal(sim.shape), 0.0, 1.0)
            val = _ratio(u2, lam2, sim2, k)[0]
            evals += 1
            if val <= cur:
                u, lam, sim, cur = u2, lam2, sim2, val
                sigma = min(1.0, sigma * 2.0)
            else:
                sigma = max(1e-3, sigma * 0.85)
        if best is None or cur < best[0]:
            best = (cur, u, lam, sim, k)
        trace.append(float(best[0]))
    assert best is not None
    ratio, u, lam, sim, k = best
    _, got, opt = _ratio(u, lam, sim, k)
    return AdversarialCheck(float(ratio), u, float(lam), sim, k, sorted(got.items.tolist()),
                            sorted(opt.items.tolist()), evals, trace)
