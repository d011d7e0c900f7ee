"""MATHMO's bi-level search over modelling frameworks and models for a multi-objective Pareto front.

Paper: "MATHMO: Automated Mathematical Modeling Through Adaptive Search" (ICLR 2026). The problem, its frameworks
and objectives are in :mod:`backend.search.mathmo.facility`; Pareto tools in :mod:`backend.search.mathmo.pareto`.

Each round (20 by default):

1. Upper level, **Pareto-UCB** over frameworks: rewards are ``1 - normalised objective`` per objective
   (normalised by the running ideal and nadir of every model run so far); an unseen framework is played first; the
   framework is drawn among the non-dominated UCB vectors.
2. Lower level: the **proposal operator** proposes ``l`` models of that framework not run yet.
3. A **surrogate** (k-nearest neighbours on the model's features: framework one-hot plus knob positions) predicts
   each proposal's objective vector; the proposal with the largest predicted hypervolume gain over the current front
   runs (executed for real: HiGHS or the heuristic, then scored).

The operator is pluggable (:data:`OPERATORS`). ``grid`` (the CPU default) replaces the paper's LLM: it mutates one
knob of the framework's best model to a neighbouring value and fills up with random unrun models. ``lm`` asks a local
causal LM (the embedded SmolLM2 by default) for knob settings as ``name=value`` lines; a line that does not parse into
the framework's knob grid is a failed proposal (counted; the parse rate is reported), never an error. The result
always names the operator that ran.

Strategies (:data:`STRATEGIES`): ``pareto-ucb`` (ours), the ablations ``random-framework`` (framework uniformly at
random, same lower level), ``flat`` (no upper level: proposals from every framework), ``no-surrogate`` (Pareto-UCB, a
random proposal runs), and the baselines that use no part of MATHMO (:data:`BASELINES`): ``random-search`` (models
uniformly at random) and ``nsga2`` (a discrete NSGA-II by pymoo over the same models, the budget counted in distinct
model runs). Paired seeds: every strategy of a seed searches the same instance; model evaluations are deterministic
and cached, so strategies differ only in what they choose to run; :func:`paired` gives the paired differences with
their intervals (:func:`backend.stats.paired_ci`). :func:`proposal_gains` measures an operator round by round: the
hypervolume its model added against a random model of the same framework and the grid operator's pick from the same
state, with the rounds that fell back marked.

Metric: the hypervolume of the models run, in objectives normalised by the ideal and nadir of the whole model space
(evaluated once per instance for the metric only, or served from the recorded log; the search never sees it),
reference point 1.1 per objective, reported as a fraction of the space front's hypervolume.

Shapes: objective vectors ``[3]`` (cost, effort, robust), fronts ``[n, 3]``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from ...errors import InputError, JobCancelled
from ...registry import Registry
from ...runtime import CancelToken, Progress, report
from . import facility as F
from .pareto import ParetoUCB, hv_gain, hypervolume, nondominated

OBJECTIVES = ("cost", "effort", "robust")
REF = 1.1
LM_TOKENS = 40  # new tokens per LM operator call


@dataclass
class MathmoConfig:
    rounds: int = 20
    proposals: int = 3  # l
    neighbours: int = 3  # kNN surrogate
    c: float = 1.0
    d: float = 0.5
    operator: str = "grid"


# ------------------------------------------------------------------------------------------------ the model space
class Space:
    """The instance's model grid with cached, deterministic evaluations."""

    def __init__(self, inst: F.Instance, seed: int = 0):
        self.inst, self.seed = inst, seed
        self.models = F.all_models()
        self.index = {m: i for i, m in enumerate(self.models)}
        self.frameworks = list(F.FRAMEWORKS)
        self._cache: dict[int, dict[str, object]] = {}
        self._grid: tuple[np.ndarray, np.ndarray, float] | None = None
        self.grid_seconds = 0.0

    def prefill(self, rows: list[dict[str, object]]) -> None:
        """Serve the model runs from ``rows`` (one per model of :attr:`models`, in order, as :meth:`evaluate` returns
        them: a recorded log of this instance) instead of running them."""
        if len(rows) != len(self.models):
            raise ValueError(f"the log has {len(rows)} models; the space has {len(self.models)}")
        for i, row in enumerate(rows):
            f, values = self.models[i]
            if row["framework"] != f or tuple(row["knobs"].values()) != values:
                raise ValueError(f"model {i} of the log is {row['framework']} {row['knobs']}, not {f} {values}")
            self._cache[i] = dict(row)

    def evaluate(self, i: int) -> dict[str, object]:
        if i not in self._cache:
            f, values = self.models[i]
            clock = time.perf_counter()
            r = F.evaluate(self.inst, f, values, seed=self.seed)
            self._cache[i] = {**r, "seconds": time.perf_counter() - clock}
        return self._cache[i]

    def objectives(self, i: int) -> np.ndarray:
        r = self.evaluate(i)
        return np.asarray([r[o] for o in OBJECTIVES], dtype=float)

    def features(self, i: int) -> np.ndarray:
        f, values = self.models[i]
        onehot = np.zeros(len(self.frameworks))
        onehot[self.frameworks.index(f)] = 1.0
        knobs = [list(opts).index(v) / max(1, len(opts) - 1) for opts, v in zip(F.KNOBS[f].values(), values)]
        slots = max(len(k) for k in F.KNOBS.values())  # knob positions padded to the most knobs of a framework
        return np.concatenate([onehot, knobs, np.zeros(slots - len(knobs))])

    def of_framework(self, f: str) -> list[int]:
        if not hasattr(self, "_by_fw"):
            self._by_fw = {g: [i for i, (h, _) in enumerate(self.models) if h == g] for g in self.frameworks}
        return list(self._by_fw[f])

    def grid(self, progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray, float]:
        """Ideal and nadir of the whole grid (feasible models) and its front's normalised hypervolume."""
        if self._grid is None:
            clock = time.perf_counter()
            objs = []
            for i in range(len(self.models)):
                objs.append(self.objectives(i))
                report(progress, (i + 1) / len(self.models), f"grid model {i + 1} of {len(self.models)}")
            objs_m = np.asarray(objs)
            self.grid_seconds = time.perf_counter() - clock
            ok = np.all(np.isfinite(objs_m), axis=1)
            if not ok.any():
                raise InputError("No model of the grid found a feasible design for this instance.")
            lo, hi = objs_m[ok].min(0), objs_m[ok].max(0)
            self._grid = (lo, hi, 0.0)
            self._grid = (lo, hi, hypervolume(self.normalise(objs_m, lo, hi), np.full(3, REF)))
        return self._grid

    @staticmethod
    def normalise(objs_m: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        N = (np.asarray(objs_m, dtype=float) - lo) / np.where(hi > lo, hi - lo, 1.0)
        return np.where(np.isfinite(N), N, REF)


def logged_space(seed: int, inst: F.Instance | None = None) -> Space:
    """The space of the paired instance ``seed`` (``facility.generate(10, 30, seed)`` unless ``inst`` is given),
    served from the recorded log (:mod:`.logs`) when it holds this instance, else run on demand."""
    from . import logs

    inst = inst if inst is not None else F.generate(*logs.SIZE, seed)
    space = Space(inst, seed)
    rows = logs.logged_rows(inst, seed)
    if rows is not None:
        space.prefill(rows)
    return space


# ------------------------------------------------------------------------------------------------ operators
@dataclass
class Proposals:
    models: list[int]
    attempted: int
    parsed: int


def _best_of(space: Space, done: list[int], rng: np.random.Generator) -> int | None:
    if not done:
        return None
    objs_m = np.asarray([space.objectives(i) for i in done])
    lo, hi = np.nanmin(np.where(np.isfinite(objs_m), objs_m, np.nan), 0), np.nanmax(np.where(np.isfinite(objs_m), objs_m, np.nan), 0)
    front = nondominated(Space.normalise(objs_m, lo, hi))
    return done[int(front[int(rng.integers(len(front)))])]


def grid_operator(space: Space, framework: str | None, done: set[int], n_props: int, rng: np.random.Generator,
                  **_: object) -> Proposals:
    """Mutate one knob of a non-dominated model run so far (of the framework, or of any framework when flat) to a
    neighbouring grid value; fill with random models not run yet."""
    pool = space.of_framework(framework) if framework else list(range(len(space.models)))
    free = [i for i in pool if i not in done]
    out: list[int] = []
    base = _best_of(space, [i for i in pool if i in done], rng)
    if base is not None:
        f, values = space.models[base]
        names = list(F.KNOBS[f])
        for j in rng.permutation(len(names)):
            opts = F.KNOBS[f][names[j]]
            pos = list(opts).index(values[j])
            for step in rng.permutation([-1, 1]):
                if 0 <= pos + step < len(opts):
                    cand = list(values)
                    cand[j] = opts[pos + step]
                    i = space.index[(f, tuple(cand))]
                    if i not in done and i not in out:
                        out.append(i)
            if len(out) >= n_props:
                break
    rest = [i for i in free if i not in out]
    rng.shuffle(rest)
    out = (out + rest)[:n_props]
    return Proposals(out, len(out), len(out))


_LINE = re.compile(r"([a-z_]+)\s*[=:]\s*([A-Za-z_0-9.]+)")


def parse_knobs(text: str, framework: str) -> tuple | None:
    """``name=value`` pairs of a framework's knobs, each value on its grid; None when anything is missing or off-grid."""
    found = dict(_LINE.findall(text))
    values = []
    for name, opts in F.KNOBS[framework].items():
        if name not in found:
            return None
        raw = found[name]
        match = [o for o in opts if str(o) == raw or (not isinstance(o, str) and _num(raw) == o)]
        if not match:
            return None
        values.append(match[0])
    return tuple(values)


def _num(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def lm_operator(space: Space, framework: str | None, done: set[int], n_props: int, rng: np.random.Generator,
                generate: Callable[[str], str] | None = None, **_: object) -> Proposals:
    """Ask the LM ``generate(prompt) -> text`` for ``n_props`` knob settings; unparsable or repeated ones fail."""
    if generate is None:
        raise InputError("The LM operator needs a language model; choose the grid operator or load a model.")
    fws = [framework] if framework else list(space.frameworks)
    out: list[int] = []
    parsed = 0
    for a in range(n_props):
        f = fws[a % len(fws)]
        names = list(F.KNOBS[f])
        tried = [space.models[i][1] for i in done if space.models[i][0] == f][-4:]
        knob_lines = "\n".join(f"{k}: one of {', '.join(map(str, v))}" for k, v in F.KNOBS[f].items())
        tried_text = "; ".join(" ".join(f"{k}={x}" for k, x in zip(names, t)) for t in tried) or "nothing"
        example = "\n".join(f"{k}={v[len(v) // 2]}" for k, v in F.KNOBS[f].items())
        prompt = (f"Choose one value for each knob of the '{f}' model of a facility-location problem.\n"
                  f"{knob_lines}\nAlready tried: {tried_text}\nReply with exactly {len(names)} lines, like:\n"
                  f"{example}")
        values = parse_knobs(generate(prompt), f)
        if values is None:
            continue
        parsed += 1
        i = space.index[(f, values)]
        if i not in done and i not in out:
            out.append(i)
    return Proposals(out, n_props, parsed)


OPERATORS: Registry[Callable[..., Proposals]] = Registry("proposal operator")
OPERATORS.add("grid", grid_operator, label="Grid mutation (replaces the LLM)", kind="ours")
OPERATORS.add("lm", lm_operator, label="Local causal LM (SmolLM2 by default)", kind="baseline")


# ------------------------------------------------------------------------------------------------ surrogate
def knn_predict(space: Space, done: list[int], cand: list[int], k: int) -> np.ndarray:
    """Mean objective vectors of the ``k`` nearest models run so far (feature space), ``[len(cand), 3]``."""
    X = np.asarray([space.features(i) for i in done])
    Y = np.asarray([space.objectives(i) for i in done])
    out = []
    for c in cand:
        d = np.linalg.norm(X - space.features(c), axis=1)
        nn = np.argsort(d, kind="stable")[: min(k, len(done))]
        out.append(Y[nn].mean(0))
    return np.asarray(out)


# ------------------------------------------------------------------------------------------------ strategies
@dataclass
class SearchResult:
    strategy: str
    operator: str
    chosen: list[int]
    frameworks: list[str]
    hv: list[float]  # normalised HV of the models run after each round, as a fraction of the grid front's
    proposals_attempted: int = 0
    proposals_parsed: int = 0
    fallbacks: int = 0
    sources: list[str] = field(default_factory=list)  # per round: "operator" (a proposal ran) or "fallback"
    seconds: float = 0.0  # wall time of the search itself (model runs served from the cache are not re-timed)
    rows: list[dict[str, object]] = field(default_factory=list)

    @property
    def final_hv(self) -> float:
        return self.hv[-1] if self.hv else 0.0

    @property
    def parse_rate(self) -> float:
        return self.proposals_parsed / self.proposals_attempted if self.proposals_attempted else float("nan")


def search(space: Space, strategy: str = "pareto-ucb", cfg: MathmoConfig | None = None, seed: int = 0,
           generate: Callable[[str], str] | None = None, cancel: CancelToken | None = None) -> SearchResult:
    """One search run of ``cfg.rounds`` model executions."""
    cfg = cfg or MathmoConfig()
    key = STRATEGIES.key(strategy)
    strat = STRATEGIES[key]
    op = OPERATORS.get(cfg.operator)
    if not 1 <= cfg.rounds <= len(space.models):
        raise InputError(f"Rounds must be 1 to {len(space.models)} (the size of the model grid); got {cfg.rounds}.")
    if not 1 <= cfg.proposals <= 10:
        raise InputError(f"The proposals per round l must be 1 to 10 (got {cfg.proposals}).")
    rng = np.random.default_rng([seed, 61])
    lo, hi, grid_hv = space.grid()
    ucb = ParetoUCB(space.frameworks, len(OBJECTIVES), cfg.c, cfg.d)
    done: list[int] = []
    res = SearchResult(key, "none" if strat.whole else cfg.operator, [], [], [])
    def record(pick: int) -> None:
        done.append(pick)
        res.chosen.append(pick)
        res.frameworks.append(space.models[pick][0])
        objs_m = Space.normalise(np.asarray([space.objectives(i) for i in done]), lo, hi)
        res.hv.append(hypervolume(objs_m, np.full(3, REF)) / grid_hv if grid_hv > 0 else 0.0)

    if strat.whole is not None:
        for pick in strat.whole(space, cfg.rounds, rng, cancel):
            res.sources.append("strategy")
            record(pick)
        res.rows = [{**space.evaluate(i), "round": r + 1} for r, i in enumerate(res.chosen)]
        return res
    for _r in range(cfg.rounds):
        if cancel is not None and cancel.cancelled:
            raise JobCancelled("cancelled")
        open_fw = [f for f in space.frameworks if any(i not in done for i in space.of_framework(f))]
        fw = strat(space, ucb, done, open_fw, rng)
        props = op(space, fw, set(done), cfg.proposals, rng, generate=generate)
        res.proposals_attempted += props.attempted
        res.proposals_parsed += props.parsed
        cands = props.models
        res.sources.append("operator" if cands else "fallback")
        if not cands:  # every proposal failed: a random unrun model of the framework keeps the round
            res.fallbacks += 1
            pool = [i for i in (space.of_framework(fw) if fw else range(len(space.models))) if i not in done]
            cands = [pool[int(rng.integers(len(pool)))]]
        if not strat.surrogate or not done:
            pick = cands[int(rng.integers(len(cands)))]
        else:
            pick = _surrogate_pick(space, done, cands, cfg.neighbours)
        record(pick)
    res.rows = [{**space.evaluate(i), "round": r + 1} for r, i in enumerate(res.chosen)]
    return res


def _refresh_rewards(space: Space, ucb: ParetoUCB, done: list[int]) -> None:
    ucb.rewards = {f: [] for f in space.frameworks}
    if not done:
        return
    objs_m = np.asarray([space.objectives(i) for i in done])
    finite = np.where(np.isfinite(objs_m), objs_m, np.nan)
    lo, hi = np.nanmin(finite, 0), np.nanmax(finite, 0)
    R = 1.0 - np.clip(Space.normalise(objs_m, lo, hi), 0.0, 1.0)
    for i, r in zip(done, R):
        ucb.rewards[space.models[i][0]].append(r)


def _surrogate_pick(space: Space, done: list[int], cands: list[int], k: int) -> int:
    objs_m = np.asarray([space.objectives(i) for i in done])
    finite = np.where(np.isfinite(objs_m), objs_m, np.nan)
    lo, hi = np.nanmin(finite, 0), np.nanmax(finite, 0)
    front = Space.normalise(objs_m, lo, hi)
    pred = Space.normalise(knn_predict(space, done, cands, k), lo, hi)
    ref = np.full(3, REF)
    gains = [hv_gain(front, p, ref) for p in pred]
    return cands[int(np.argmax(gains))]


def pareto_ucb_level(space: Space, ucb: ParetoUCB, done: list[int], open_fw: list[str],
                     rng: np.random.Generator) -> str | None:
    """The upper level: Pareto-UCB over the frameworks with a model not run yet."""
    _refresh_rewards(space, ucb, done)
    ucb.arms = open_fw
    return ucb.choose(rng)


def random_level(space: Space, ucb: ParetoUCB, done: list[int], open_fw: list[str],  # noqa: ARG001
                 rng: np.random.Generator) -> str | None:
    """A framework uniformly at random among those with a model not run yet."""
    return open_fw[int(rng.integers(len(open_fw)))]


def no_level(space: Space, ucb: ParetoUCB, done: list[int], open_fw: list[str],  # noqa: ARG001
             rng: np.random.Generator) -> str | None:
    """No upper level: the operator proposes from every framework."""
    return None


def random_search(space: Space, rounds: int, rng: np.random.Generator, cancel: CancelToken | None = None,
                  ) -> list[int]:
    """Random search: ``rounds`` models of the whole space uniformly at random, without replacement."""
    return [int(i) for i in rng.permutation(len(space.models))[:rounds]]


NSGA2_POP = 8  # population
NSGA2_OFFSPRING = 4  # offspring per generation: 8 + 3 x 4 = 20 model runs at the default budget
_LEVELS = 20  # each knob slot is an integer 0..19, read as the knob's position ``v * len(options) // 20``


def nsga2_search(space: Space, rounds: int, rng: np.random.Generator, cancel: CancelToken | None = None,
                 ) -> list[int]:
    """Discrete NSGA-II (pymoo) over the same model space: integer variables (the framework, then one slot per knob,
    read as the knob's grid position), integer sampling, SBX crossover and polynomial mutation with rounding,
    duplicates eliminated; the objectives are the models' (cost, effort, robust). The budget is ``rounds`` distinct
    model runs; an individual that decodes to a model already run costs nothing. Returns the models in the order
    they ran."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.problem import Problem
    from pymoo.core.termination import NoTermination
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.repair.rounding import RoundingRepair
    from pymoo.operators.sampling.rnd import IntegerRandomSampling

    slots = max(len(F.KNOBS[f]) for f in space.frameworks)
    problem = Problem(n_var=1 + slots, n_obj=len(OBJECTIVES), xl=np.zeros(1 + slots),
                      xu=np.asarray([len(space.frameworks) - 1] + [_LEVELS - 1] * slots, dtype=float), vtype=int)
    algo = NSGA2(pop_size=NSGA2_POP, n_offsprings=NSGA2_OFFSPRING, sampling=IntegerRandomSampling(),
                 crossover=SBX(prob=0.9, eta=15, vtype=float, repair=RoundingRepair()),
                 mutation=PM(eta=20, vtype=float, repair=RoundingRepair()), eliminate_duplicates=True)
    algo.setup(problem, termination=NoTermination(), seed=int(rng.integers(2**31 - 1)), verbose=False)

    def decode(x: np.ndarray) -> int:
        f = space.frameworks[int(round(x[0]))]
        opts = list(F.KNOBS[f].values())
        values = tuple(o[min(len(o) - 1, int(round(v)) * len(o) // _LEVELS)] for o, v in zip(opts, x[1:]))
        return space.index[(f, values)]

    done: list[int] = []
    for _gen in range(500):
        if len(done) >= rounds:
            break
        if cancel is not None and cancel.cancelled:
            raise JobCancelled("cancelled")
        pop = algo.ask()
        objs = []
        for x in pop.get("X"):
            i = decode(np.asarray(x, dtype=float))
            if i not in done and len(done) < rounds:
                done.append(i)
            o = space.objectives(i)
            objs.append(np.where(np.isfinite(o), o, 1e30))
        pop.set("F", np.asarray(objs, dtype=float))  # the objectives are the logged models': told, not computed
        algo.tell(infills=pop)
    if len(done) < rounds:  # the population converged on models already run: random unrun models fill the budget
        rest = [i for i in rng.permutation(len(space.models)) if i not in done]
        done += [int(i) for i in rest[: rounds - len(done)]]
    return done


@dataclass(frozen=True)
class Strategy:
    """A search strategy: ``upper(space, ucb, done, open_fw, rng) -> framework or None`` (None = every framework),
    and whether the surrogate picks among the proposals (else a random proposal runs); or ``whole(space, rounds, rng,
    cancel) -> models in the order they ran``, a strategy that needs no proposal operator (random search, NSGA-II)."""

    upper: Callable[..., str | None] | None = None
    surrogate: bool = True
    whole: Callable[..., list[int]] | None = None

    def __call__(self, space: Space, ucb: ParetoUCB, done: list[int], open_fw: list[str],
                 rng: np.random.Generator) -> str | None:
        return self.upper(space, ucb, done, open_fw, rng)


STRATEGIES: Registry[Strategy] = Registry("search strategy")
STRATEGIES.add("pareto-ucb", Strategy(pareto_ucb_level), label="MATHMO: Pareto-UCB + surrogate (ours)", kind="ours")
STRATEGIES.add("random-framework", Strategy(random_level), label="Random framework", kind="ablation")
STRATEGIES.add("flat", Strategy(no_level), label="Flat search (no upper level)", kind="ablation")
STRATEGIES.add("no-surrogate", Strategy(pareto_ucb_level, surrogate=False), label="Pareto-UCB without surrogate",
               kind="ablation")
STRATEGIES.add("random-search", Strategy(whole=random_search), label="Random search (uniform over the models)",
               kind="baseline")
STRATEGIES.add("nsga2", Strategy(whole=nsga2_search), label="NSGA-II (pymoo, discrete)", kind="baseline")
BASELINES = tuple(STRATEGIES.names("baseline"))  # the strategies that use no part of MATHMO


def compare(space: Space, strategies: list[str] | None = None, cfg: MathmoConfig | None = None, seed: int = 0,
            generate: Callable[[str], str] | None = None, progress: Progress | None = None,
            cancel: CancelToken | None = None) -> dict[str, SearchResult]:
    """Every strategy on the same instance and seed."""
    names = [STRATEGIES.key(s) for s in (strategies or list(STRATEGIES))]
    space.grid(progress=None)
    out = {}
    for j, s in enumerate(names):
        clock = time.perf_counter()
        out[s] = search(space, s, cfg, seed=seed, generate=generate, cancel=cancel)
        out[s].seconds = time.perf_counter() - clock
        report(progress, (j + 1) / len(names), f"{STRATEGIES.label(s)} done")
    return out


def to_json(space: Space, results: dict[str, SearchResult], cfg: MathmoConfig) -> dict[str, object]:
    """A small JSON-able summary: per strategy its HV curve and chosen models; the grid's ideal/nadir and front."""
    lo, hi, grid_hv = space.grid()
    allO = np.asarray([space.objectives(i) for i in range(len(space.models))])
    N = Space.normalise(allO, lo, hi)
    grid_front = nondominated(N).tolist()
    return {"config": asdict(cfg), "grid_seconds": space.grid_seconds, "instance": space.inst.summary(), "objectives": list(OBJECTIVES),
            "ideal": lo.tolist(), "nadir": hi.tolist(), "grid_hv": grid_hv, "grid_front": grid_front,
            "models": [{"framework": f, "knobs": dict(zip(F.KNOBS[f], v))} for f, v in space.models],
            "strategies": {s: {"label": STRATEGIES.label(s), "operator": r.operator, "hv": r.hv,
                               "final_hv": r.final_hv, "chosen": r.chosen, "frameworks": r.frameworks,
                               "parse_rate": r.parse_rate if r.proposals_attempted else None,
                               "fallbacks": r.fallbacks, "sources": r.sources,
                               "front": nondominated(N[r.chosen]).tolist() if r.chosen else [],
                               "seconds": r.seconds,
                               "rows": [{k: v for k, v in row.items()} for row in r.rows]}
                           for s, r in results.items()}}


def paired(make_space: Callable[[int], Space], seeds: int, strategies: list[str] | None = None,
           cfg: MathmoConfig | None = None, progress: Progress | None = None,
           cancel: CancelToken | None = None) -> dict[str, object]:
    """Every strategy on ``seeds`` paired instances (seed s: the space ``make_space(s)``, search seed s): final
    hypervolumes, their mean and standard error, and per strategy the paired difference of the first strategy (ours)
    minus it with its 95 % interval (:func:`backend.stats.paired_ci`)."""
    from ...stats import paired_ci

    names = [STRATEGIES.key(s) for s in (strategies or list(STRATEGIES))]
    finals: dict[str, list[float]] = {s: [] for s in names}
    for seed in range(seeds):
        space = make_space(seed)
        for s, r in compare(space, names, cfg, seed=seed, cancel=cancel).items():
            finals[s].append(r.final_hv)
        report(progress, (seed + 1) / seeds, f"seed {seed + 1} of {seeds}")
    first = np.asarray(finals[names[0]])
    summary = {}
    for s, v in finals.items():
        ci = paired_ci(first, v) if s != names[0] and len(v) > 1 else None
        summary[s] = {"mean": float(np.mean(v)), "sem": float(np.std(v, ddof=1) / np.sqrt(len(v))) if len(v) > 1
                      else 0.0, "first_minus": ci.mean if ci else 0.0,
                      "first_minus_low": ci.low if ci else 0.0, "first_minus_high": ci.high if ci else 0.0,
                      "wins_over_first": float(np.mean(np.asarray(v) > first + 1e-12))}
    return {"seeds": seeds, "first": names[0], "finals": finals, "summary": summary}


def proposal_gains(space: Space, res: SearchResult, proposals: int = 3, neighbours: int = 3,
                   seed: int = 0) -> list[dict[str, object]]:
    """Per round of ``res``: the hypervolume its model added to the models run before it (fraction of the grid
    front's), beside two counterfactuals from the same state: the mean gain of a uniformly random unrun model of the
    same framework (exact, over every such model), and the gain of the model the grid operator + surrogate would have
    run (``proposals`` proposals). ``source`` says whether the operator's proposal ran or the round fell back."""
    lo, hi, grid_hv = space.grid()
    N = Space.normalise(np.asarray([space.objectives(i) for i in range(len(space.models))]), lo, hi)
    ref = np.full(3, REF)
    out = []
    for r, pick in enumerate(res.chosen):
        before = res.chosen[:r]
        front = N[before] if before else np.zeros((0, 3))
        base = hypervolume(front, ref) if before else 0.0

        def gain(i: int, front: np.ndarray = front, base: float = base) -> float:
            return (hypervolume(np.vstack([front, N[i][None]]), ref) - base) / grid_hv

        f = space.models[pick][0]
        pool = [i for i in space.of_framework(f) if i not in before]
        uniq, inverse = np.unique(N[pool].round(12), axis=0, return_inverse=True)
        first_of = {int(u): pool[k] for k, u in reversed(list(enumerate(np.ravel(inverse))))}
        # a candidate that a model already run weakly dominates adds nothing: no hypervolume to compute
        covered = (np.any(np.all(front[None, :, :] <= uniq[:, None, :], axis=2), axis=1) if len(front)
                   else np.zeros(len(uniq), bool))
        gains_u = np.asarray([0.0 if covered[u] else gain(first_of[u]) for u in range(len(uniq))])
        rand_gain = float(gains_u[np.ravel(inverse)].mean())
        props = grid_operator(space, f, set(before), proposals, np.random.default_rng([seed, r, 67])).models
        alt = props[0] if not before else _surrogate_pick(space, before, props, neighbours)
        out.append({"round": r + 1, "source": res.sources[r] if r < len(res.sources) else "", "framework": f,
                    "gain": gain(pick), "random_gain": rand_gain, "grid_gain": gain(alt)})
    return out
