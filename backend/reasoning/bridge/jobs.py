"""The pure entry points of Bridge: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_sample` ``(SampleConfig)`` -> :class:`SampleResult`: N samples of one question from each generation
  mode of :data:`MODES` (Bridge, independent sampling of the same-budget arm, the untrained base), side by side, with
  their answers, votes and the parameters each adds.
- :func:`run_scaling` ``(ScalingConfig)`` -> :class:`ScalingResult`: mean accuracy over the N samples, pass@N,
  majority vote and distinct right solutions against the width N per mode, from the shipped evaluation of the
  training log (``source="log"``: 24 held-out problems, 3 seeds, instant) or sampled now (``source="live"``), with
  the per-problem numbers for paired comparisons, the training curves (held-out accuracy against rollout tokens) and
  the costs.

The configs are frozen and check themselves (:class:`backend.errors.InputError`); the results are small JSON-able
dataclasses. ``reasoner`` may be passed in already loaded (the page caches it); None loads the shipped one.
"""

from __future__ import annotations

import ast
import operator
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import Registry, choose
from ...runtime import CancelToken, Progress, checked, report, sub_progress
from .checkpoints import EVAL_SEED, LOG_PROBLEMS, TRAIN_WIDTH, WIDTHS, Arm, eval_problems, read_log

MAX_N = 32
MAX_PROBLEMS = 48
SOURCES = ("log", "live")


#: Generation modes: an :class:`Arm`, called ``(reasoner, seed) -> BridgedLM``; one sampler draws N samples from each.
MODES: Registry[Arm] = Registry("generation mode")
MODES.add("bridge", Arm("bridge", bridge=True), label="Bridge (ours)", kind="ours",
          about="Bridge blocks + the trained layer: the N samples attend to each other")
MODES.add("independent", Arm("independent", bridge=False), label="Independent sampling", kind="baseline",
          about="the same SFT data and GRPO budget without Bridge: N independent samples")
MODES.add("base", Arm(None, bridge=False), label="Base tiny reasoner", kind="reference",
          about="the shipped tiny reasoner, untrained: N independent samples")


def _mean(right: np.ndarray, passed: np.ndarray, maj: np.ndarray, n: int) -> np.ndarray:  # noqa: ARG001
    return right / n


def _pass(right: np.ndarray, passed: np.ndarray, maj: np.ndarray, n: int) -> np.ndarray:  # noqa: ARG001
    return passed.astype(float)


def _majority(right: np.ndarray, passed: np.ndarray, maj: np.ndarray, n: int) -> np.ndarray:  # noqa: ARG001
    return maj.astype(float)


#: How the N samples of a question are scored: per question, from the right count, pass and majority arrays.
AGGREGATES: Registry[Any] = Registry("aggregation")
AGGREGATES.add("mean", _mean, label="mean accuracy over the N samples", kind="ours")
AGGREGATES.add("pass", _pass, label="pass@N (best-of-N with an exact verifier)", kind="reference")
AGGREGATES.add("majority", _majority, label="majority vote over the N samples", kind="baseline")


# ------------------------------------------------------------------------------------------------ one question

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def expression_answer(question: str) -> int | None:
    """The exact value of a question that is one arithmetic expression of whole numbers (``Compute (12 + 5) * 3.``),
    with ``+ - * /`` and brackets; None for word problems, inexact divisions or anything else."""
    import re

    m = re.fullmatch(r"\s*(?:Compute|Calculate|Evaluate|What is)?\s*:?\s*([\d\s+\-*/()]+?)\s*[.?]?\s*", question)
    if not m or len(m.group(1)) > 200:
        return None
    try:
        tree = ast.parse(m.group(1), mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            a, b = ev(node.left), ev(node.right)
            if b == 0 or a % b:
                raise ValueError
            return a // b
        raise ValueError

    try:
        v = ev(tree)
    except (ValueError, RecursionError):
        return None
    return v if abs(v) < 10**12 else None


@dataclass(frozen=True)
class SampleConfig:
    """N samples of ``prompt`` per generation mode at ``temperature`` (sampling seed ``seed``), from the checkpoints
    of training seed ``checkpoint``; ``answer`` the right answer if known (None: computed for a plain arithmetic
    expression, else unknown)."""

    prompt: str
    n: int = 8
    temperature: float = 1.0
    seed: int = 0
    checkpoint: int = 0
    answer: int | None = None
    modes: str | tuple[str, ...] = "all"

    def __post_init__(self) -> None:
        from ..lm import check_question

        object.__setattr__(self, "prompt", check_question(self.prompt, "type a question in the reasoner's grammar"))
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or not 1 <= int(self.n) <= MAX_N:
            raise InputError(f"N (samples per question) must be a whole number from 1 to {MAX_N}; got {self.n!r}.")
        if not 0.0 < float(self.temperature) <= 2.0:
            raise InputError(f"The sampling temperature must be in (0, 2]; got {self.temperature}.")
        if not 0 <= int(self.seed) < 2**31:
            raise InputError(f"The seed must be a whole number from 0 to 2**31 - 1; got {self.seed}.")
        if int(self.checkpoint) not in (0, 1, 2):
            raise InputError(f"The checkpoint is a training seed 0, 1 or 2; got {self.checkpoint}.")
        object.__setattr__(self, "modes", MODES.keys_of(self.modes))


@dataclass
class SampleResult:
    """Per mode: the N samples (text, answer, right), the vote, distinct answers, tokens and seconds."""

    prompt: str
    domain: dict
    answer: int | None
    n: int
    modes: dict[str, dict]
    labels: dict[str, str]
    parameters: dict[str, int]
    config: dict

    def to_dict(self) -> dict:
        return asdict(self)


def _reasoner(reasoner: Any) -> Any:
    if reasoner is not None:
        return reasoner
    from ...models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner()


def parameters(reasoner: Any) -> dict[str, int]:
    """The base model's parameters, those the Bridge blocks add and those both arms train in the base."""
    from .checkpoints import TRAIN_BASE
    from .model import bridged_from_reasoner

    m = bridged_from_reasoner(reasoner)
    full = dict(m.base.named_parameters())
    return {"base": m.base_parameters(), "bridge_added": m.bridge_parameters(),
            "trained_in_base": sum(full[n].numel() for n in TRAIN_BASE)}


def run_sample(config: SampleConfig, reasoner: Any = None, progress: Progress | None = None,
               token: CancelToken | None = None) -> SampleResult:
    """See the module docstring."""
    from ..domain import domain
    from ..tasks import MARKERS, extract_answer
    from .rl import sample_width

    progress = checked(progress, token)
    reasoner = _reasoner(reasoner)
    answer = config.answer if config.answer is not None else expression_answer(config.prompt)
    out: dict[str, dict] = {}
    for k, name in enumerate(config.modes):
        report(progress, k / len(config.modes), f"Sampling: {MODES.label(name)}")
        model = MODES.get(name)(reasoner, config.checkpoint)
        t0 = time.perf_counter()
        s = sample_width(reasoner, model, [config.prompt], config.n, config.temperature, config.seed,
                         progress=sub_progress(progress, k / len(config.modes), (k + 1) / len(config.modes)),
                         cancel=token)
        secs = time.perf_counter() - t0
        answers = [extract_answer(t, MARKERS["tinyreasoner"]) for t in s.text[0]]
        votes = Counter(a for a in answers if a is not None)
        vote = max(votes.items(), key=lambda kv: (kv[1], -answers.index(kv[0])))[0] if votes else None
        rows = [{"text": t.strip(), "answer": a, "right": None if answer is None else a == answer,
                 "tokens": int(s.lengths[0, i])} for i, (t, a) in enumerate(zip(s.text[0], answers, strict=True))]
        right = None if answer is None else sum(bool(r["right"]) for r in rows)
        out[name] = {"samples": rows, "majority": vote, "distinct_answers": len(votes),
                     "distinct_texts": len({r["text"] for r in rows}), "right": right,
                     "majority_right": None if answer is None else vote == answer,
                     "tokens": int(s.generated_tokens), "seconds": round(secs, 3)}
    report(progress, 1.0, "done")
    return SampleResult(config.prompt, domain(config.prompt).to_dict(), answer, config.n, out,
                        {k: MODES.label(k) for k in config.modes}, parameters(reasoner), asdict(config))


# ------------------------------------------------------------------------------------------------ width scaling

@dataclass(frozen=True)
class ScalingConfig:
    """Metrics against the width N: ``source`` ``log`` (the shipped evaluation: 24 held-out problems, every training
    seed) or ``live`` (``problems`` of the same held-out problems sampled now with the checkpoints of
    ``checkpoints``); ``widths`` from 1 to 16; ``modes`` the generation modes."""

    source: str = "log"
    problems: int = LOG_PROBLEMS
    widths: tuple[int, ...] = WIDTHS
    checkpoints: tuple[int, ...] = (0, 1, 2)
    modes: str | tuple[str, ...] = "all"

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", choose(self.source, SOURCES, "source"))
        if not 1 <= int(self.problems) <= MAX_PROBLEMS:
            raise InputError(f"The number of problems must be 1-{MAX_PROBLEMS}; got {self.problems}.")
        ws = tuple(sorted({int(w) for w in self.widths}))
        if not ws or not all(1 <= w <= 16 for w in ws):
            raise InputError(f"Widths must be whole numbers from 1 to 16; got {self.widths}.")
        if self.source == "log" and int(self.problems) > LOG_PROBLEMS:
            raise InputError(f"The shipped evaluation has {LOG_PROBLEMS} problems; choose at most that or sample live.")
        if self.source == "log" and not set(ws) <= set(WIDTHS):
            raise InputError(f"The shipped evaluation has widths {', '.join(map(str, WIDTHS))}; choose among them "
                             "or sample live.")
        cks = tuple(sorted({int(c) for c in self.checkpoints}))
        if not cks or not set(cks) <= {0, 1, 2}:
            raise InputError(f"Checkpoints are training seeds 0, 1, 2; got {self.checkpoints}.")
        object.__setattr__(self, "widths", ws)
        object.__setattr__(self, "checkpoints", cks)
        object.__setattr__(self, "modes", MODES.keys_of(self.modes))


@dataclass
class ScalingResult:
    """``metrics[mode][aggregate]`` [len(widths)] (means over checkpoints and problems); ``distinct[mode]``
    [len(widths)]; ``per_problem[mode][width][aggregate]`` flat over (checkpoint, problem), for paired intervals;
    ``curves[mode]`` the training runs' (rollout tokens, held-out accuracy) points; costs."""

    config: dict
    widths: list[int]
    metrics: dict[str, dict[str, list[float]]]
    distinct: dict[str, list[float]]
    tokens_per_sample: dict[str, list[float]]
    per_problem: dict[str, dict[str, dict[str, list[float]]]]
    per_seed: dict[str, dict[str, dict[str, list[float]]]]
    curves: dict[str, list[dict]]
    labels: dict[str, str]
    parameters: dict[str, int]
    train_width: int
    seconds: float
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _runs(config: ScalingConfig, reasoner: Any, progress: Progress | None, token: CancelToken | None) -> dict:
    """{mode: {checkpoint: {width: per-problem dict}}} from the log or sampled now."""
    if config.source == "log":
        log = read_log()
        out: dict = {}
        for m in config.modes:
            out[m] = {}
            for c in config.checkpoints:
                arm = MODES.get(m)
                ev = log["runs"][arm.run_key(c)]["eval"] if arm.trained else log["base"]
                out[m][c] = {w: {k: ev[str(w)][k][: config.problems] for k in ("right", "passed", "majority",
                                                                                "distinct", "tokens")}
                             for w in config.widths}
        return out
    from .rl import sample_width, score

    probs = eval_problems(config.problems)
    qs = [p.question for p in probs]
    jobs = [(m, c) for m in config.modes for c in (config.checkpoints if MODES.get(m).trained else config.checkpoints[:1])]
    out = {m: {} for m in config.modes}
    for k, (m, c) in enumerate(jobs):
        model = MODES.get(m)(reasoner, c)
        out[m][c] = {}
        for j, w in enumerate(config.widths):
            frac = (k + j / len(config.widths)) / len(jobs)
            report(progress, frac, f"{MODES.label(m)}, checkpoint {c}: width {w}")
            if token is not None:
                token.check()
            sc = score(sample_width(reasoner, model, qs, w, 1.0, EVAL_SEED), probs)
            out[m][c][w] = {"right": sc.right.tolist(), "passed": sc.passed.tolist(),
                            "majority": sc.majority.tolist(), "distinct": sc.distinct.tolist(),
                            "tokens": sc.tokens.tolist()}
    for m in config.modes:
        for c in config.checkpoints[1:]:
            if not MODES.get(m).trained:  # one untrained model serves every checkpoint
                out[m][c] = out[m][config.checkpoints[0]]
    return out


def run_scaling(config: ScalingConfig, reasoner: Any = None, progress: Progress | None = None,
                token: CancelToken | None = None) -> ScalingResult:
    """See the module docstring."""
    progress = checked(progress, token)
    t0 = time.perf_counter()
    reasoner = _reasoner(reasoner) if config.source == "live" else reasoner
    runs = _runs(config, reasoner, progress, token)
    metrics, distinct, toks, per_problem, per_seed = {}, {}, {}, {}, {}
    for m in config.modes:
        metrics[m] = {a: [] for a in AGGREGATES}
        per_problem[m], per_seed[m] = {}, {}
        distinct[m], toks[m] = [], []
        for w in config.widths:
            rows = {a: [] for a in AGGREGATES}
            seeds = {a: [] for a in AGGREGATES}
            d, t = [], []
            for c in config.checkpoints:
                r = runs[m][c][w]
                for a in AGGREGATES:
                    v = AGGREGATES.get(a)(np.array(r["right"], float), np.array(r["passed"]),
                                          np.array(r["majority"]), w)
                    rows[a] += v.tolist()
                    seeds[a].append(float(v.mean()))
                d += r["distinct"]
                t += [x / w for x in r["tokens"]]
            for a in AGGREGATES:
                metrics[m][a].append(float(np.mean(rows[a])))
            per_problem[m][str(w)] = rows
            per_seed[m][str(w)] = seeds
            distinct[m].append(float(np.mean(d)))
            toks[m].append(float(np.mean(t)))
    curves: dict[str, list[dict]] = {}
    extra: dict = {}
    try:
        log = read_log()
        for m in config.modes:
            keys = [(c, MODES.get(m).run_key(c)) for c in config.checkpoints if MODES.get(m).trained]
            curves[m] = [{"seed": c, "points": log["runs"][k]["curve"], "train_seconds": log["runs"][k]["train_seconds"]}
                         for c, k in keys if k in log["runs"]]
        extra = {"base_sha256": log.get("base_sha256"), "train_command": log.get("command")}
        params = {"base": next(iter(log["runs"].values()))["base_parameters"],
                  "bridge_added": max(r["bridge_parameters"] for r in log["runs"].values())}
    except InputError:
        params = parameters(_reasoner(reasoner))
    report(progress, 1.0, "done")
    return ScalingResult(asdict(config), list(config.widths), metrics, distinct, toks, per_problem, per_seed, curves,
                         {k: MODES.label(k) for k in config.modes}, params, TRAIN_WIDTH,
                         round(time.perf_counter() - t0, 3), extra)
