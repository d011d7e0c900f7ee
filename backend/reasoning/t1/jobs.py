"""The pure entry points of T1: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_bon` ``(BonConfig)`` -> :class:`BonResult`: N candidates for each of a set of generated problems (the
  tiny reasoner's own samples, read from a candidate cache when it holds them, or gold solutions with injected
  slips), the tool's verdicts, the reward model's scores, every selector's accuracy at n = 1..N (and each exact
  selector's per problem at n = N, for paired comparisons), the tool's veto rates, the kinds of the model's wrong
  samples and the costs.
- :func:`run_question` ``(QuestionConfig)`` -> :class:`QuestionResult`: one question (typed, or pasted candidate
  solutions): its candidates with verdicts, scores and each selector's pick.

The configs are frozen and check themselves (:class:`backend.errors.InputError`); the results are small JSON-able
dataclasses. ``reasoner`` / ``rm`` / ``cache`` may be passed in already loaded (the page caches them); None loads
the shipped ones.
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

RM_WEIGHTS = ASSETS / "t1_rm.safetensors"
CACHE_FILE = ASSETS / "t1_candidates.jsonl.gz"
SOURCES = ("samples", "slips")
MAX_PROBLEMS, MAX_N = 200, 64
MAX_CANDIDATES_TEXT = 20_000


@dataclass(frozen=True)
class BonConfig:
    """Best-of-N over generated problems: ``problems`` of ``split`` with ``ops`` operations (generator seed
    ``problem_seed``), ``n`` candidates each from ``source`` (``samples``: the reasoner at ``temperature``, sampling
    seed ``seed``; ``slips``: gold solutions with ``arithmetic`` / ``logic`` slip rates), selectors' curves at
    n = 1..N (votes averaged over ``draws`` subsets)."""

    split: str = "grammar"
    problems: int = 40
    ops: tuple[int, int] = HARD_OPS
    n: int = 16
    source: str = "samples"
    temperature: float = 0.8
    arithmetic: float = 0.3
    logic: float = 0.3
    problem_seed: int = 0
    seed: int = 0
    draws: int = 200

    def __post_init__(self) -> None:
        from ..tasks import SPLITS

        object.__setattr__(self, "split", choose(self.split, SPLITS, "split"))
        object.__setattr__(self, "source", choose(self.source, SOURCES, "candidate source"))
        if not 1 <= self.problems <= MAX_PROBLEMS:
            raise InputError(f"The number of problems must be 1-{MAX_PROBLEMS}; got {self.problems}.")
        if not 1 <= self.n <= MAX_N:
            raise InputError(f"N (candidates per problem) must be 1-{MAX_N}; got {self.n}.")
        lo, hi = self.ops
        if not 1 <= lo <= hi <= 8:
            raise InputError(f"Operations must satisfy 1 <= low <= high <= 8; got {self.ops}.")
        object.__setattr__(self, "ops", (int(lo), int(hi)))
        if not 0.0 < self.temperature <= 2.0:
            raise InputError(f"The sampling temperature must be in (0, 2]; got {self.temperature}.")
        if not (0 <= self.arithmetic <= 1 and 0 <= self.logic <= 1 and self.arithmetic + self.logic <= 1):
            raise InputError("Slip rates must be between 0 and 1 and sum to at most 1.")
        if not 1 <= self.draws <= 5000:
            raise InputError(f"draws must be 1-5000; got {self.draws}.")


@dataclass
class BonResult:
    """Curves ``{selector: [accuracy at n = 1..N]}`` and what explains them (see :func:`run_bon`)."""

    config: dict
    ns: list[int]
    curves: dict[str, list[float]]
    labels: dict[str, str]
    pass_at_1: float
    false_veto_rate: float
    true_veto_rate: float
    wrong_kinds: dict[str, float]
    rm_auroc: float
    costs: dict[str, float]
    problems: list[dict] = field(default_factory=list)
    per_problem: dict[str, list[float]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def load_rm(path: Any = None) -> Any:
    """The shipped reward model (``python -m backend.train t1``) or another file of that script."""
    from ... import weights
    from .rm import RewardModel

    p = path or RM_WEIGHTS
    if not p.is_file():
        raise InputError("The T1 reward model is missing: run `python -m backend.train t1`.")
    tensors, _ = weights.load(p, made_by="python -m backend.train t1")
    return RewardModel.from_state(tensors)


def _reasoner(reasoner: Any) -> Any:
    if reasoner is not None:
        return reasoner
    from ...models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner()


def sample_candidates(reasoner: Any, questions: list[str], n: int, temperature: float, seed: int,
                      cache: Any = None, progress: Progress | None = None, token: CancelToken | None = None) -> list:
    """The candidate sets of ``questions`` (read from ``cache`` when it has them, else sampled and added)."""
    from ..candidates import CandidateCache
    from ..sampling import SamplingConfig

    cache = cache if cache is not None else CandidateCache(None)
    cfg = SamplingConfig(n=n, max_new_tokens=400, temperature=temperature)
    return cache.sample(reasoner, questions, cfg, seed=seed, progress=progress, cancel=token)


def _auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    from ..rgm.traces import auroc

    return auroc(scores.ravel(), labels.ravel())


def _score(config: BonConfig, reasoner: Any, rm: Any, cache: Any, progress: Progress | None,
           token: CancelToken | None) -> tuple:
    """The candidates of ``config`` with the tool's verdicts and the RM's scores, as :class:`CandidateScores`."""
    from ..tasks import MARKERS, extract_answer, generate
    from .rm import features
    from .select import CandidateScores
    from .slips import candidate_set
    from .tool import verify

    probs = generate(config.problems, config.split, seed=config.problem_seed, steps=config.ops)
    truth = [p.answer for p in probs]
    t0 = time.perf_counter()
    report(progress, 0.0, "Candidates")
    if config.source == "samples":
        sets = sample_candidates(reasoner, [p.question for p in probs], config.n, config.temperature, config.seed,
                                 cache, progress=None, token=token)
        texts = [[c.text for c in s.candidates] for s in sets]
        prompts = [[s.prompt_ids] * config.n for s in sets]
        cand_tokens: list = [[c.tokens for c in s.candidates] for s in sets]
        tokens = sum(len(t) for row in cand_tokens for t in row)
    else:
        sl = [candidate_set(p, config.n, config.arithmetic, config.logic, seed=config.seed) for p in probs]
        texts = [[c.text for c in row] for row in sl]
        prompts = [[p.question] * config.n for p in probs]
        cand_tokens = texts
        tokens = 0
    t_gen = time.perf_counter() - t0
    report(progress, 0.5, "Tool verdicts")
    t0 = time.perf_counter()
    verdicts = [[verify(t) for t in row] for row in texts]
    t_tool = time.perf_counter() - t0
    report(progress, 0.7, "Reward model")
    t0 = time.perf_counter()
    X = features(reasoner, [p for row in prompts for p in row], [c for row in cand_tokens for c in row])
    r = rm.score(X).reshape(len(probs), config.n)
    t_rm = time.perf_counter() - t0
    m = MARKERS["tinyreasoner"]
    answers = np.array([[np.nan if (a := extract_answer(t, m)) is None else float(a) for t in row] for row in texts])
    correct = np.array([[a == t for a in row] for row, t in zip(answers, truth, strict=True)])
    passed = np.array([[v.passed for v in row] for row in verdicts])
    return CandidateScores(passed, r, answers, correct), probs, texts, verdicts, (t_gen, t_tool, t_rm), tokens


def candidate_scores(config: BonConfig, reasoner: Any = None, rm: Any = None, cache: Any = None) -> Any:
    """The :class:`backend.reasoning.t1.select.CandidateScores` that :func:`run_bon` selects from."""
    reasoner = _reasoner(reasoner)
    rm = rm if rm is not None else load_rm()
    return _score(config, reasoner, rm, cache, None, None)[0]


def run_bon(config: BonConfig, reasoner: Any = None, rm: Any = None, cache: Any = None,
            progress: Progress | None = None, token: CancelToken | None = None) -> BonResult:
    """See the module docstring."""
    from .select import SELECTORS, curves

    progress = checked(progress, token)
    reasoner = _reasoner(reasoner)
    rm = rm if rm is not None else load_rm()
    c, probs, texts, verdicts, times, tokens = _score(config, reasoner, rm, cache, progress, token)
    t_gen, t_tool, t_rm = times
    truth = [p.answer for p in probs]
    passed, r, answers, correct = c.passed, c.rm, c.answers, c.correct
    report(progress, 0.85, "Curves")
    ns = list(range(1, config.n + 1))
    cv = curves(c, ns, draws=config.draws, seed=config.seed)
    wrong = ~correct
    n_cand = correct.size
    first = [{"question": probs[i].question, "answer": truth[i],
              "candidates": [{"text": texts[i][j], "answer": None if np.isnan(answers[i, j]) else int(answers[i, j]),
                              "correct": bool(correct[i, j]), "passed": bool(passed[i, j]),
                              "reason": verdicts[i][j].reason, "rm": round(float(r[i, j]), 4)}
                             for j in range(config.n)]} for i in range(min(3, len(probs)))]
    from .select import per_problem

    exact = {k: [round(float(x), 6) for x in per_problem(c, k, config.n)] for k in SELECTORS if SELECTORS.get(k).exact}
    report(progress, 1.0, "done")
    return BonResult(
        per_problem=exact,
        config=asdict(config), ns=ns, curves={k: [round(float(x), 4) for x in v] for k, v in cv.items()},
        labels={k: SELECTORS.label(k) for k in cv},
        pass_at_1=round(float(correct.mean()), 4),
        false_veto_rate=round(float((~passed & correct).sum() / max(1, correct.sum())), 4),
        true_veto_rate=round(float((~passed & wrong).sum() / max(1, wrong.sum())), 4),
        wrong_kinds={"arithmetic": round(float((~passed & wrong).sum() / max(1, wrong.sum())), 4),
                     "logic": round(float((passed & wrong).sum() / max(1, wrong.sum())), 4)},
        rm_auroc=round(_auroc(r, correct), 4),
        costs={"candidates": n_cand, "generated_tokens": tokens, "generation_s": round(t_gen, 3),
               "tool_ms_per_candidate": round(1000 * t_tool / n_cand, 3),
               "rm_ms_per_candidate": round(1000 * t_rm / n_cand, 3),
               "rm_parameters": int(rm.w.size + 1)},
        problems=first)


@dataclass(frozen=True)
class QuestionConfig:
    """One question: ``n`` candidates sampled at ``temperature`` (seed ``seed``), or the pasted ``candidates``
    (blocks separated by a blank line) scored as given; ``answer`` (optional) marks the right ones."""

    question: str
    n: int = 16
    temperature: float = 0.8
    seed: int = 0
    candidates: str = ""
    answer: int | None = None

    def __post_init__(self) -> None:
        from ..lm import check_question

        object.__setattr__(self, "question", check_question(self.question, "type a question in the reasoner's "
                                                                           "grammar or pick a preset"))
        if not 1 <= self.n <= MAX_N:
            raise InputError(f"N (candidates) must be 1-{MAX_N}; got {self.n}.")
        if not 0.0 < self.temperature <= 2.0:
            raise InputError(f"The sampling temperature must be in (0, 2]; got {self.temperature}.")
        if not isinstance(self.candidates, str) or len(self.candidates) > MAX_CANDIDATES_TEXT:
            raise InputError(f"Paste at most {MAX_CANDIDATES_TEXT:,} characters of candidates.")
        if self.candidates.strip() and not 1 <= len(split_candidates(self.candidates)) <= MAX_N:
            raise InputError(f"Paste 1-{MAX_N} candidates, separated by blank lines.")


def split_candidates(text: str) -> list[str]:
    """Candidate solutions of a pasted text: blocks separated by one or more blank lines."""
    import re

    return [b.strip() for b in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if b.strip()]


@dataclass
class QuestionResult:
    """The candidates of one question with their verdicts, scores, answers and each selector's pick (at n = N)."""

    question: str
    domain: dict
    answer: int | None
    candidates: list[dict]
    picks: dict[str, int | None]
    labels: dict[str, str]
    costs: dict[str, float]

    def to_dict(self) -> dict:
        return asdict(self)


def run_question(config: QuestionConfig, reasoner: Any = None, rm: Any = None, progress: Progress | None = None,
                 token: CancelToken | None = None) -> QuestionResult:
    """See the module docstring: the selectors' picks over all N candidates (BoN at n = N)."""
    from ..domain import domain
    from ..tasks import MARKERS
    from .rm import features
    from .select import SELECTORS
    from .tool import final_answer, verify

    progress = checked(progress, token)
    reasoner = _reasoner(reasoner)
    rm = rm if rm is not None else load_rm()
    t0 = time.perf_counter()
    report(progress, 0.0, "Candidates")
    if config.candidates.strip():
        texts = split_candidates(config.candidates)
        cand_ids: list[Any] = texts
        tokens = 0
    else:
        (s,) = sample_candidates(reasoner, [config.question], config.n, config.temperature, config.seed, None,
                                 token=token)
        texts = [c.text for c in s.candidates]
        cand_ids = [c.tokens for c in s.candidates]
        tokens = sum(len(c.tokens) for c in s.candidates)
    t_gen = time.perf_counter() - t0
    report(progress, 0.6, "Tool and reward model")
    t0 = time.perf_counter()
    verdicts = [verify(t) for t in texts]
    t_tool = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = rm.score(features(reasoner, [config.question] * len(texts), cand_ids))
    t_rm = time.perf_counter() - t0
    answers = [final_answer(t, MARKERS["tinyreasoner"]) for t in texts]
    rows = [{"text": t, "answer": a, "passed": v.passed, "reason": v.reason, "rm": round(float(s), 4),
             "correct": None if config.answer is None or a is None else _same(a, config.answer)}
            for t, a, v, s in zip(texts, answers, verdicts, r, strict=True)]
    passed = np.array([v.passed for v in verdicts], dtype=bool)
    ans = np.array([np.nan if a is None else _num(a) for a in answers])
    right = np.array([bool(row["correct"]) for row in rows])
    picks = {k: SELECTORS.get(k).pick(passed, np.asarray(r), ans, right) for k in SELECTORS}
    report(progress, 1.0, "done")
    return QuestionResult(config.question, domain(config.question).to_dict(), config.answer, rows, picks,
                          {k: SELECTORS.label(k) for k in SELECTORS},
                          {"candidates": len(rows), "generated_tokens": tokens, "generation_s": round(t_gen, 3),
                           "tool_ms_per_candidate": round(1000 * t_tool / max(1, len(rows)), 3),
                           "rm_ms_per_candidate": round(1000 * t_rm / max(1, len(rows)), 3)})


def _num(a: str) -> float:
    try:
        return float(a)
    except ValueError:
        return float("nan")


def _same(a: str, b: int) -> bool:
    from fractions import Fraction

    try:
        return Fraction(a) == Fraction(b)
    except (ValueError, ZeroDivisionError):
        return False
