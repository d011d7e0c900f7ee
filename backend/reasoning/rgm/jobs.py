"""The pure entry points of RGM (the SPRM on the tiny reasoner): what the page, the CLI and the claim tests call.

- :func:`run_score` ``(ScoreConfig)`` -> :class:`ScoreResult`: one question, ``n`` sampled traces, each step's SPRM
  score (the shipped head trained with the SPR loss), every trace's score per aggregation and the trace each picks.
- :func:`run_eval` ``(EvalConfig)`` -> :class:`EvalResult`: traces of generated problems (from a candidate cache when
  it holds them); per loss and training seed, the AUROC with which step scores locate the first wrong step; best-of-k
  accuracy per aggregation against majority vote and an oracle; best-of-k per aggregation on all traces and on the
  traces of each problem's most common length (``by_length``), where a product ranks as the geometric mean does.

Configs are frozen and check themselves (:class:`backend.errors.InputError`); results are JSON-able dataclasses.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import choose
from ...runtime import ASSETS, CancelToken, Progress, checked, report
from ..tasks import HARD_OPS

HEADS = ASSETS / "rgm_heads.safetensors"
SEEDS = (0, 1, 2)
MAX_N = 32


def load_heads(path: Any = None) -> dict[str, Any]:
    """``{"<loss>_s<seed>": SPRMHead}`` from the shipped file (``python -m backend.train rgm``)."""
    from ... import weights
    from .sprm import SPRMHead

    p = path or HEADS
    if not p.is_file():
        raise InputError("The SPRM heads are missing: run `python -m backend.train rgm`.")
    tensors, meta = weights.load(p, made_by="python -m backend.train rgm")
    heads = {}
    for name in meta.extra["heads"]:
        h = SPRMHead(int(meta.config["features"]))
        h.load_state_dict({k.split("/", 1)[1]: v for k, v in tensors.items() if k.startswith(name + "/")})
        heads[name] = h.eval()
    return heads


def _reasoner(reasoner: Any) -> Any:
    if reasoner is not None:
        return reasoner
    from ...models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner()


@dataclass(frozen=True)
class ScoreConfig:
    """One question: ``n`` traces at ``temperature`` (seed ``seed``), scored by the head ``head``."""

    question: str
    n: int = 8
    temperature: float = 0.8
    seed: int = 0
    head: str = "spr_s0"

    def __post_init__(self) -> None:
        from ..lm import check_question

        object.__setattr__(self, "question", check_question(self.question, "type a question in the reasoner's "
                                                                           "grammar or pick a preset"))
        if not 1 <= self.n <= MAX_N:
            raise InputError(f"The number of traces must be 1-{MAX_N}; got {self.n}.")
        if not 0.0 < self.temperature <= 2.0:
            raise InputError(f"The sampling temperature must be in (0, 2]; got {self.temperature}.")


@dataclass
class ScoreResult:
    question: str
    domain: dict
    traces: list[dict]
    picks: dict[str, int]
    labels: dict[str, str]
    costs: dict[str, float]

    def to_dict(self) -> dict:
        return asdict(self)


def run_score(config: ScoreConfig, reasoner: Any = None, heads: dict | None = None,
              progress: Progress | None = None, token: CancelToken | None = None) -> ScoreResult:
    """See the module docstring."""
    from ..domain import domain
    from ..tasks import Problem
    from .data import collect
    from .fit import step_scores, trajectory_scores
    from .sprm import AGGREGATIONS

    progress = checked(progress, token)
    reasoner = _reasoner(reasoner)
    heads = heads if heads is not None else load_heads()
    head = heads[choose(config.head, list(heads), "SPRM head")]
    report(progress, 0.0, "Sampling traces")
    t0 = time.perf_counter()
    tr = collect(reasoner, [Problem(config.question, (), -1, "", (0, 0))], config.n, config.temperature, config.seed)
    t_gen = time.perf_counter() - t0
    report(progress, 0.7, "Scoring steps")
    t0 = time.perf_counter()
    sc = step_scores(head, tr)
    agg = {k: trajectory_scores(sc, tr, k)[0] for k in AGGREGATIONS}
    t_prm = time.perf_counter() - t0
    rows = [{"text": tr.texts[0][i], "answer": None if np.isnan(tr.final[0, i]) else int(tr.final[0, i]),
             "steps": [round(float(x), 4) for x in sc[i]], **{k: round(float(v[i]), 4) for k, v in agg.items()}}
            for i in range(config.n)]
    report(progress, 1.0, "done")
    return ScoreResult(config.question, domain(config.question).to_dict(), rows,
                       {k: int(np.argmax(v)) for k, v in agg.items()}, {k: AGGREGATIONS.label(k) for k in agg},
                       {"traces": config.n, "generation_s": round(t_gen, 3),
                        "sprm_ms_per_trace": round(1000 * t_prm / config.n, 3),
                        "sprm_parameters": int(sum(p.numel() for p in head.parameters()))})


@dataclass(frozen=True)
class EvalConfig:
    """Traces of ``problems`` problems of ``split`` (``ops`` operations, generator seed ``problem_seed``), ``n`` per
    problem at ``temperature`` (seed ``seed``)."""

    split: str = "grammar"
    problems: int = 40
    ops: tuple[int, int] = HARD_OPS
    n: int = 16
    temperature: float = 0.8
    problem_seed: int = 0
    seed: int = 0
    k: int = 8

    def __post_init__(self) -> None:
        from ..tasks import SPLITS

        object.__setattr__(self, "split", choose(self.split, SPLITS, "split"))
        if not 1 <= self.problems <= 200:
            raise InputError(f"The number of problems must be 1-200; got {self.problems}.")
        if not 1 <= self.n <= MAX_N or not 1 <= self.k <= self.n:
            raise InputError(f"Need 1 <= k <= n <= {MAX_N}; got k = {self.k}, n = {self.n}.")
        lo, hi = self.ops
        if not 1 <= lo <= hi <= 8:
            raise InputError(f"Operations must satisfy 1 <= low <= high <= 8; got {self.ops}.")
        object.__setattr__(self, "ops", (int(lo), int(hi)))


@dataclass
class EvalResult:
    config: dict
    locate_auroc: dict[str, float]
    ks: list[int]
    bon: dict[str, list[float]]
    labels: dict[str, str]
    length_correlation: float
    by_length: dict[str, dict[str, float]]
    pass_at_1: float
    strips: list[dict] = field(default_factory=list)
    #: per problem, best-of-``k`` of every aggregation on all traces and the majority vote of ``k`` samples (the
    #: paired intervals of the claims panel)
    per_problem: dict[str, list[float]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def eval_traces(config: EvalConfig, reasoner: Any, cache: Any = None) -> Any:
    """The traces :func:`run_eval` scores (samples read from ``cache`` when it holds them)."""
    from ..tasks import generate
    from .data import collect

    probs = generate(config.problems, config.split, seed=config.problem_seed, steps=config.ops)
    return collect(reasoner, probs, config.n, config.temperature, config.seed, cache=cache), probs


def run_eval(config: EvalConfig, reasoner: Any = None, heads: dict | None = None, cache: Any = None,
             progress: Progress | None = None, token: CancelToken | None = None) -> EvalResult:
    """See the module docstring."""
    from ..candidates import bon_at, vote_at
    from .fit import locate_auroc, step_scores, trajectory_scores
    from .sprm import AGGREGATIONS

    progress = checked(progress, token)
    reasoner = _reasoner(reasoner)
    heads = heads if heads is not None else load_heads()
    report(progress, 0.0, "Traces")
    tr, probs = eval_traces(config, reasoner, cache)
    report(progress, 0.6, "Scores")
    scores = {name: step_scores(h, tr) for name, h in heads.items()}
    auc = {name: round(locate_auroc(s, tr), 4) for name, s in scores.items()}
    ks = [k for k in (1, 2, 4, 8, 16, 32) if k <= config.n]
    y = tr.outcome.astype(float)
    main = scores.get("spr_s0") or next(iter(scores.values()))
    bon = {k: [round(float(v), 4) for v in bon_at(trajectory_scores(main, tr, k), y, ks)] for k in AGGREGATIONS}
    bon["majority"] = [round(float(v), 4) for v in vote_at(tr.final, tr.outcome, None, ks, draws=200,
                                                            seed=config.seed)]
    bon["oracle"] = [round(float(v), 4) for v in bon_at(y, y, ks)]
    lengths = tr.n_steps.astype(float).ravel()
    corr = float(np.corrcoef(lengths, y.ravel())[0, 1]) if lengths.std() > 0 and y.std() > 0 else float("nan")
    k = config.k
    traj = {name: trajectory_scores(main, tr, name) for name in AGGREGATIONS}
    gp: dict[str, dict[str, float]] = {"all traces": {n: float(bon_at(t, y, [k])[0]) for n, t in traj.items()}}
    per_problem = {n: [round(float(bon_at(t[i:i + 1], y[i:i + 1], [k])[0]), 4) for i in range(len(y))]
                   for n, t in traj.items()}
    per_problem["majority"] = [round(float(vote_at(tr.final[i:i + 1], tr.outcome[i:i + 1], None, [k], draws=200,
                                                   seed=config.seed)[0]), 4) for i in range(len(y))]
    mode = np.array([np.bincount(row).argmax() for row in tr.n_steps])
    same = tr.n_steps == mode[:, None]
    keep = np.flatnonzero(same.sum(1) >= k)
    if keep.size:
        gp[f"one length ({keep.size} problems)"] = {
            n: float(np.mean([bon_at(t[i][same[i]], y[i][same[i]], [k])[0] for i in keep])) for n, t in traj.items()}
    strips = []
    for i in range(min(4, len(probs))):
        for j in range(config.n):
            strips.append({"problem": i, "sample": j, "correct": bool(tr.outcome[i, j]),
                           "first_wrong": tr.first_wrong[i][j], "scores": [round(float(s), 4)
                                                                          for s in main[i * config.n + j]]})
    report(progress, 1.0, "done")
    labels = {k: AGGREGATIONS.label(k) for k in AGGREGATIONS} | {"majority": "Majority vote", "oracle": "Oracle"}
    gp = {name: {a: round(v, 4) for a, v in row.items()} for name, row in gp.items()}
    return EvalResult(asdict(config), auc, ks, bon, labels, round(corr, 4), gp, round(float(y.mean()), 4), strips,
                      per_problem)
