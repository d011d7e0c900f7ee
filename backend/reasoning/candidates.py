"""A candidate cache for best-of-N: sample N candidates per problem once, score any verifier over them, and read
BoN@n and weighted-BoN@n curves exactly from the cache.

Cache (:class:`CandidateCache`): a JSONL file (gzip-compressed when its name ends in ``.gz``), one line per (model,
settings, seed, problem) holding all N candidates of that problem, keyed by :func:`cache_key`, the sha256 of the
canonical JSON of the four. The model is
named by :func:`model_id` (its adapter's name and a sha256 of its weights), the settings are the
:class:`backend.reasoning.sampling.SamplingConfig`. Each candidate keeps its text, token ids, finish reason,
per-token log-probabilities and entropies (6 significant digits), and per-step metadata (the steps end at the
tokens that complete one of the config's ``boundaries``; each step: token range, text, summed log-probability, mean
entropy).
:meth:`CandidateCache.sample` samples only the problems the file lacks, in one batch (:func:`backend.reasoning.
sampling.sample`), and appends them.

Curves (the maths of :mod:`backend.alignment.softbon`, applied to the cache): for each problem, the N cached
candidates with verifier scores s and values v (e.g. 1 if the answer is right):

- BoN@n (:func:`bon_at`): the expected value of the best-scored candidate of a subset of size n drawn uniformly from
  the N without replacement, ties split uniformly. Exact: a score level v with m candidates above a count a of
  lower-scored ones is the subset's maximum with probability (C(a + m, n) - C(a, n)) / C(N, n), shared equally by its
  m candidates (softbon's ``bon_policy`` with hypergeometric counts in place of powers).
- weighted-BoN@n (:func:`weighted_bon_at`): the subset's candidate is chosen with probability softmax(beta s) over
  the subset (soft Best-of-N). Exact up to quadrature: the exponential race of softbon gives
  P(i) = C(N, n)^-1 integral_0^inf w_i exp(-w_i t) e_{n-1}({exp(-w_j t)}_{j != i}) dt, w = exp(beta (s - max s)),
  e_k the elementary symmetric polynomial (the sum over the subsets that hold i); integrated in log t with the
  trapezoid rule of softbon (error ~1e-12). beta = inf is BoN, beta = 0 the mean.
- majority and weighted-majority vote (:func:`vote_at`): averaged over seeded subsets (a vote depends on the whole
  subset), exact at n = N.
- ``replace=True``: n draws with replacement from the N (i.i.d. from the cache's empirical distribution): softbon's
  ``bon_policy`` / ``sbon_policy`` with a uniform reference over the N candidates.

Curves average over problems. Shapes: scores, values [P, N].
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..runtime import CancelToken, Progress
from .sampling import SamplingConfig, adapter, sample, step_ends

FORMAT = 1
#: Samples per batch of :meth:`CandidateCache.sample` (the problems it lacks are sampled in batches of this many rows).
BATCH_SAMPLES = 1024


@dataclass
class Candidate:
    """One cached sample: text, tokens, why it ended, per-token log-probabilities / entropies, and its steps."""

    text: str
    tokens: list[int]
    finish_reason: str
    logprobs: list[float]
    entropies: list[float]
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def logprob(self) -> float:
        return float(sum(self.logprobs))


@dataclass
class CandidateSet:
    """The N candidates of one problem with what made them."""

    key: str
    problem: str
    model: str
    settings: dict[str, Any]
    seed: int
    prompt_ids: list[int]
    candidates: list[Candidate]

    def to_json(self) -> str:
        d = asdict(self) | {"format": FORMAT}
        return json.dumps(d, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CandidateSet:
        cands = [Candidate(**c) for c in d["candidates"]]
        return cls(d["key"], d["problem"], d["model"], d["settings"], int(d["seed"]), list(d["prompt_ids"]), cands)


def model_id(model: Any) -> str:
    """``<adapter name>@<sha256 of the weights, 16 hex>``: names a model by what it computes."""
    import torch

    lm = adapter(model)
    h = hashlib.sha256()
    for name, t in sorted(lm.model.state_dict().items()):
        h.update(name.encode())
        h.update(str(tuple(t.shape)).encode())
        h.update(t.detach().to(torch.float32).contiguous().numpy().tobytes())
    return f"{lm.name}@{h.hexdigest()[:16]}"


def cache_key(model: str, settings: SamplingConfig | dict[str, Any], seed: int, problem: str) -> str:
    """sha256 of the canonical JSON of (model, settings, seed, problem)."""
    s = settings.to_dict() if isinstance(settings, SamplingConfig) else dict(settings)
    body = json.dumps({"model": model, "settings": s, "seed": int(seed), "problem": problem}, sort_keys=True,
                      ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _g6(x: float) -> float:
    """``x`` to 6 significant digits (what the cache stores of log-probabilities and entropies)."""
    return float(f"{x:.6g}")


def _read(path: Path) -> str:
    if path.suffix == ".gz":
        import gzip

        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    return path.read_text(encoding="utf-8")


def _append(path: Path, text: str) -> None:
    """Append lines (a ``.gz`` file gets one more gzip member; readers see one stream)."""
    if path.suffix == ".gz":
        import gzip

        with gzip.open(path, "at", encoding="utf-8", compresslevel=9) as f:
            f.write(text)
        return
    with path.open("a", encoding="utf-8") as f:
        f.write(text)


def _steps(lm: Any, toks: list[int], logprobs: list[float], entropies: list[float],
           boundaries: tuple[str, ...]) -> list[dict[str, Any]]:
    out, start = [], 0
    for end in step_ends(lm, toks, boundaries):
        seg = slice(start, end + 1)
        out.append({"start": start, "end": end + 1, "text": lm.decode(toks[seg]),
                    "logprob": float(sum(logprobs[seg])),
                    "entropy": float(np.mean(entropies[seg])) if end + 1 > start else 0.0})
        start = end + 1
    return out


class CandidateCache:
    """Candidate sets in a JSONL file (see the module docstring); ``path=None`` keeps them in memory only."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        self.sets: dict[str, CandidateSet] = {}
        if self.path is not None and self.path.is_file():
            for i, line in enumerate(_read(self.path).splitlines()):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                    if d.get("format") != FORMAT:
                        raise ValueError(f"format {d.get('format')!r}")
                    cs = CandidateSet.from_dict(d)
                except (ValueError, KeyError, TypeError) as err:
                    raise InputError(f"Line {i + 1} of the candidate cache {self.path.name} is not a candidate set "
                                     f"({err}); delete the file or that line.") from None
                self.sets[cs.key] = cs

    def __len__(self) -> int:
        return len(self.sets)

    def get(self, key: str) -> CandidateSet | None:
        return self.sets.get(key)

    def sample(self, model: Any, problems: Sequence[str], config: SamplingConfig, seed: int = 0,
               name: str | None = None, progress: Progress | None = None,
               cancel: CancelToken | None = None) -> list[CandidateSet]:
        """The candidate sets of ``problems`` (one per problem, in order): read from the cache, the missing ones
        sampled in batches of up to :data:`BATCH_SAMPLES` samples and appended. ``name``: the model's id (default :func:`model_id`)."""
        if isinstance(problems, str) or not problems:
            raise InputError("Give the problems as a non-empty list of questions.")
        lm = adapter(model)
        mid = name or model_id(lm)
        keys = [cache_key(mid, config, seed, str(p)) for p in problems]
        missing = list(dict.fromkeys(k for k in keys if k not in self.sets))
        chunk = max(1, BATCH_SAMPLES // config.n)
        for c0 in range(0, len(missing), chunk):
            part = missing[c0 : c0 + chunk]
            todo = [str(problems[keys.index(k)]) for k in part]
            res = sample(lm, todo, config, seed, progress=progress, cancel=cancel)
            lines = []
            for b, (k, prob) in enumerate(zip(part, todo, strict=True)):
                cands = []
                for i in range(config.n):
                    toks = res.tokens(b, i)
                    n = len(toks)
                    lp = [_g6(x) for x in res.logprobs[b, i, :n].tolist()]
                    ent = [_g6(x) for x in res.entropies[b, i, :n].tolist()]
                    cands.append(Candidate(res.text[b][i], toks, res.finish_reason[b][i], lp, ent,
                                           _steps(lm, toks, lp, ent, config.boundaries)))
                cs = CandidateSet(k, prob, mid, config.to_dict(), int(seed), res.prompt_ids[b], cands)
                self.sets[k] = cs
                lines.append(cs.to_json())
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                _append(self.path, "".join(line + "\n" for line in lines))
        return [self.sets[k] for k in keys]


def score(sets: Sequence[CandidateSet], verifier: Callable[[str, Candidate], float]) -> np.ndarray:
    """[P, N] scores of ``verifier(problem, candidate)`` over the cached candidates (all sets need the same N)."""
    ns = {len(s.candidates) for s in sets}
    if len(ns) != 1:
        raise InputError(f"All candidate sets need the same N to score together; got {sorted(ns)}.")
    out = np.array([[float(verifier(s.problem, c)) for c in s.candidates] for s in sets], dtype=float)
    if not np.isfinite(out).all():
        raise InputError("The verifier returned a score that is not a finite number.")
    return out


def correctness(sets: Sequence[CandidateSet], answers: Sequence[int | None], markers: Any = None) -> np.ndarray:
    """[P, N] 1.0 where the candidate's final answer (:func:`backend.reasoning.tasks.extract_answer`) is right."""
    from .tasks import MARKERS, extract_answer

    m = markers or MARKERS["tinyreasoner"]
    if len(answers) != len(sets):
        raise InputError(f"Give one answer per problem: {len(answers)} answers for {len(sets)} problems.")
    return np.array([[float(extract_answer(c.text, m) == a) for c in s.candidates] for s, a in zip(sets, answers,
                                                                                               strict=True)])


# ---------------------------------------------------------------------------------------------------------- curves


def _check(scores: Any, values: Any, ns: Sequence[int] | None) -> tuple[np.ndarray, np.ndarray, list[int]]:
    s = np.asarray(scores, dtype=float)
    v = np.asarray(values, dtype=float)
    if s.ndim == 1:
        s, v = s[None], v[None] if v.ndim == 1 else v
    if s.ndim != 2 or s.shape != v.shape or s.shape[1] < 1:
        raise InputError(f"Scores and values must both be [problems, N]; got {s.shape} and {v.shape}.")
    if not (np.isfinite(s).all() and np.isfinite(v).all()):
        raise InputError("Scores and values must be finite numbers.")
    N = s.shape[1]
    ns = list(range(1, N + 1)) if ns is None else [int(n) for n in ns]
    bad = [n for n in ns if not 1 <= n <= N]
    if bad:
        raise InputError(f"n must be from 1 to N = {N} (the cached candidates); got {bad}.")
    return s, v, ns


def bon_choice(scores: np.ndarray, n: int) -> np.ndarray:
    """[N] probability that each candidate is BoN's choice from a uniform size-n subset (ties split uniformly)."""
    N = scores.size
    levels, inverse = np.unique(scores, return_inverse=True)
    count = np.bincount(inverse, minlength=levels.size)
    below = np.concatenate([[0], np.cumsum(count)[:-1]])
    total = math.comb(N, n)
    p_level = np.array([(math.comb(int(a + m), n) - math.comb(int(a), n)) / total for a, m in zip(below, count,
                                                                                                   strict=True)])
    return p_level[inverse] / count[inverse]


def soft_bon_choices(scores: np.ndarray, ns: Sequence[int], beta: float, h: float = 0.1) -> np.ndarray:
    """[len(ns), N] probability that each candidate is soft BoN's choice (softmax(beta s) over a uniform size-n
    subset); see the module docstring for the integral."""
    N = scores.size
    if beta == 0:
        return np.full((len(ns), N), 1.0 / N)
    levels = np.unique(scores)
    gap = float(np.diff(levels).min()) if levels.size > 1 else math.inf
    if not math.isfinite(beta) or beta * gap > 40.0 + math.log(N):
        return np.stack([bon_choice(scores, n) for n in ns])
    lw = beta * (scores - scores.max())                       # log weights <= 0
    grid = np.arange(-36.0 + float((-lw).min()), 4.0 + float((-lw).max()) + h, h)   # s = log t
    u = grid[None, :] + lw[:, None]                           # [N, G]
    with np.errstate(over="ignore", under="ignore"):
        x = np.exp(-np.exp(u))                                # exp(-w_j t)
        kernel = np.exp(u - np.exp(u))                        # w_i t exp(-w_i t)
    k_max = max(ns) - 1
    e = np.zeros((N, k_max + 1, grid.size))                   # e[i, k] = e_k of the x_j, j != i
    e[:, 0] = 1.0
    for j in range(N):
        upd = x[j][None, None, :] * e[:, :-1]
        upd[j] = 0.0                                          # candidate j is left out of its own polynomial
        e[:, 1:] += upd
    out = np.empty((len(ns), N))
    for r, n in enumerate(ns):
        p = h * (kernel * e[:, n - 1]).sum(-1) / math.comb(N, n)
        out[r] = p / p.sum()                                  # removes the ~1e-13 quadrature error in total mass
    return out


def _curve(scores: Any, values: Any, ns: Sequence[int] | None, beta: float, replace: bool) -> np.ndarray:
    from ..alignment.softbon import softbon

    s, v, ns = _check(scores, values, ns)
    if not (beta >= 0):
        raise InputError(f"beta must be >= 0 (0 = the mean, inf = BoN); got {beta!r}.")
    rows = []
    for sp, vp in zip(s, v, strict=True):
        if replace:
            ref = np.full(sp.size, 1.0 / sp.size)
            pol = np.stack([softbon.bon_policy(ref, sp, n) if not math.isfinite(beta)
                            else softbon.sbon_policy(ref, sp, n, beta) for n in ns])
        elif math.isfinite(beta):
            pol = soft_bon_choices(sp, ns, beta)
        else:
            pol = np.stack([bon_choice(sp, n) for n in ns])
        rows.append(pol @ vp)
    return np.mean(rows, axis=0)


def bon_at(scores: Any, values: Any, ns: Sequence[int] | None = None, replace: bool = False) -> np.ndarray:
    """BoN@n for each n of ``ns`` (default 1..N), averaged over problems: [len(ns)]."""
    return _curve(scores, values, ns, math.inf, replace)


def weighted_bon_at(scores: Any, values: Any, ns: Sequence[int] | None = None, beta: float = 1.0,
                    replace: bool = False) -> np.ndarray:
    """Weighted (soft, softmax(beta score)) BoN@n for each n of ``ns``, averaged over problems: [len(ns)]."""
    return _curve(scores, values, ns, float(beta), replace)


def vote_at(answers: Any, correct: Any, weights: Any = None, ns: Sequence[int] | None = None, draws: int = 400,
            seed: int = 0) -> np.ndarray:
    """Majority-vote accuracy at each n (default 1..N), averaged over problems: [len(ns)].

    ``answers`` [P, N] floats (NaN: no answer), ``correct`` [P, N] bool, ``weights`` [P, N] (None: one vote each;
    e.g. verifier scores for a weighted vote). For a uniform subset of size n the answer with the largest total weight
    wins, ties split uniformly among the tied answers; candidates without an answer never win. A vote depends on the
    whole subset, so each n averages ``draws`` seeded subsets per problem (exact at n = N), vectorised over them."""
    a_all = np.asarray(answers, dtype=float)
    y_all = np.asarray(correct, dtype=bool)
    P, N = a_all.shape
    w_all = np.ones((P, N)) if weights is None else np.asarray(weights, dtype=float)
    ns = list(range(1, N + 1)) if ns is None else [int(n) for n in ns]
    if y_all.shape != a_all.shape or w_all.shape != a_all.shape or not all(1 <= n <= N for n in ns):
        raise InputError(f"answers, correct and weights must be [problems, N] and 1 <= n <= N = {N}.")
    rng = np.random.default_rng(seed)
    out = np.zeros(len(ns))
    for p in range(P):
        a = a_all[p]
        ok = ~np.isnan(a)
        labels, lab = np.unique(a[ok], return_inverse=True)
        L = labels.size
        lab_full = np.full(N, L)                       # no answer: a dummy label that never wins
        lab_full[ok] = lab
        right = np.zeros(L + 1, dtype=bool)
        right[lab_full[y_all[p] & ok]] = True
        w = w_all[p] * ok
        for k, n in enumerate(ns):
            idx = np.arange(N)[None] if n == N else np.argsort(rng.random((max(1, draws), N)), axis=1)[:, :n]
            D = idx.shape[0]
            totals = np.zeros((D, L + 1))
            np.add.at(totals, (np.repeat(np.arange(D), idx.shape[1]), lab_full[idx].ravel()), w[idx].ravel())
            totals[:, L] = -1.0
            best = totals.max(1, keepdims=True)
            win = np.isclose(totals, best) & (best > 0)
            out[k] += float(((win & right[None]).sum(1) / np.maximum(win.sum(1), 1)).mean())
    return out / P
