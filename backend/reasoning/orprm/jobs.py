"""The pure entry points of OR-PRM: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_clean` ``(CleanConfig)`` -> :class:`CleanResult`: a noisy "existing dataset" (one problem each, the
  modeller's formulation with a flaw at the given rate, its recorded optimum) through the three gates: counts per
  gate and flaw kind, the flows of the Sankey diagram, the share of corrupted labels, rejected examples and costs.
- :func:`run_bon` ``(BonConfig)`` -> :class:`BonResult`: N candidate formulations per problem (flaws of the chosen
  kinds; by default the kinds held out of the PRM's training), their PRM step scores, gate verdicts and answers;
  every selector's accuracy at n = 1..N, per problem at n = N (for paired comparisons), the PRM's step-level AUROC,
  example candidates with their step scores, and costs.
- :func:`run_lp` ``(LpConfig)`` -> :class:`LpResult`: the user's own model in the five-tuple form, validated and
  solved: its steps as structured text, the optimum and solution, gates 1 and 2 (the model is its own statement),
  sizes and time.

The configs are frozen and check themselves (:class:`backend.errors.InputError`); the results are small JSON-able
dataclasses. ``prm`` may be passed in already loaded (the page caches it); None loads the shipped one.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...runtime import ASSETS, CancelToken, Progress, checked, report

PRM_SEEDS = (0, 1, 2)
MAX_SAMPLES, MAX_PROBLEMS, MAX_N = 2000, 200, 32
MAX_LP_TEXT = 2**20


def prm_path(seed: int = 0) -> Any:
    return ASSETS / f"orprm_prm_s{seed}.safetensors"


def load_prm(seed: int = 0, path: Any = None) -> Any:
    """The shipped process reward model of training seed ``seed`` (``python -m backend.train orprm``)."""
    from ... import weights
    from .prm import PRM

    p = path or prm_path(seed)
    if not p.is_file():
        raise InputError("The OR-PRM reward model is missing: run `python -m backend.train orprm`.")
    tensors, _ = weights.load(p, made_by="python -m backend.train orprm")
    return PRM.from_state(tensors)


def _check_common(rate: float, kinds: str, families: str) -> tuple[str, str]:
    from .modeller import kinds as parse_kinds
    from .problems import families as parse_families

    if not 0.0 <= rate <= 1.0:
        raise InputError(f"The flaw rate must be between 0 and 1; got {rate}.")
    return ",".join(parse_kinds(kinds)), ",".join(parse_families(families))


def _check_variation(v: float) -> None:
    if not 0.0 <= v <= 1.0:
        raise InputError(f"The rate of equivalent rewritings must be between 0 and 1; got {v}.")


@dataclass(frozen=True)
class CleanConfig:
    """A noisy dataset of ``samples`` problems (generator seed ``problem_seed``, families ``families``), each
    formulation flawed with probability ``flaw_rate`` by a kind drawn uniformly from ``kinds`` and, with probability
    ``variation``, rewritten in an equivalent way (seed ``seed``)."""

    samples: int = 300
    flaw_rate: float = 0.36
    kinds: str = "all"
    families: str = "all"
    variation: float = 0.5
    problem_seed: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        _check_variation(self.variation)
        if not 1 <= self.samples <= MAX_SAMPLES:
            raise InputError(f"The number of samples must be 1-{MAX_SAMPLES}; got {self.samples}.")
        k, f = _check_common(self.flaw_rate, self.kinds, self.families)
        object.__setattr__(self, "kinds", k)
        object.__setattr__(self, "families", f)


@dataclass
class CleanResult:
    """See :func:`run_clean`. ``table``: one row per flaw kind (and ``clean``) with the samples, the corrupted
    labels, how many each gate rejects on its own, how many the pipeline keeps, and the corrupted labels that gates
    1 and 2 miss; ``flows``: (source, target, kind, count) of the Sankey diagram; ``covered``: the kinds gates 1 and
    2 must catch every corrupted label of."""

    config: dict
    samples: int
    flawed: int
    corrupted: int
    kept: int
    kept_flawed: int
    table: list[dict]
    flows: list[dict]
    labels: dict[str, str]
    gate_labels: dict[str, str]
    covered: list[str]
    examples: list[dict]
    costs: dict[str, float]

    def to_dict(self) -> dict:
        return asdict(self)


def _is_right(value: float | None, optimum: float) -> bool:
    return value is not None and abs(value - optimum) <= 1e-6 * max(1.0, abs(optimum))


def run_clean(config: CleanConfig, progress: Progress | None = None, token: CancelToken | None = None) -> CleanResult:
    """See the module docstring."""
    from .gates import GATES, audit, context
    from .modeller import COVERED, FLAWS, draw_kinds, write
    from .problems import generate

    progress = checked(progress, token)
    t0 = time.perf_counter()
    report(progress, 0.0, "Problems")
    probs = generate(config.samples, config.problem_seed, config.families)
    rng = np.random.default_rng([config.seed, 1])
    kinds = draw_kinds(rng, config.samples, config.flaw_rate, config.kinds.split(","))
    t_gen = time.perf_counter() - t0
    rows: dict[str, dict] = {}
    flows: dict[tuple[str, str, str], int] = {}
    gate_s = dict.fromkeys(GATES, 0.0)
    examples, corrupted, kept, kept_flawed = [], 0, 0, 0
    for i, (p, k) in enumerate(zip(probs, kinds, strict=True)):
        if i % 20 == 0:
            report(progress, 0.05 + 0.9 * i / len(probs), f"Sample {i + 1} of {len(probs)}")
        w = write(p, k, rng, config.variation)
        a = audit(p.form, w.form, context(p.form, w.form, w.solution))
        for g, s in a.seconds.items():
            gate_s[g] += s
        bad = not _is_right(w.form["label"], p.optimum)
        corrupted += bad
        key = k or "clean"
        r = rows.setdefault(key, {"kind": key, "samples": 0, "corrupted": 0, **{f"rejected_{g}": 0 for g in GATES},
                                  "rejected_12": 0, "kept": 0, "corrupted_missed_12": 0, "corrupted_kept": 0})
        r["samples"] += 1
        r["corrupted"] += bad
        for g in GATES:
            r[f"rejected_{g}"] += not a.passed[g]
        g12 = all(a.passed[g] for g in list(GATES)[:2])
        r["rejected_12"] += not g12
        r["corrupted_missed_12"] += bad and g12
        r["kept"] += a.first_reject is None
        r["corrupted_kept"] += bad and a.first_reject is None
        kept += a.first_reject is None
        kept_flawed += a.first_reject is None and k is not None
        src = "all"
        for g in GATES:
            dst = f"rejected_{g}" if not a.passed[g] else f"passed_{g}"
            flows[(src, dst, key)] = flows.get((src, dst, key), 0) + 1
            if not a.passed[g]:
                break
            src = dst
        if a.first_reject is not None and len(examples) < 12 and sum(e["kind"] == key for e in examples) < 2:
            examples.append({"problem": p.id, "kind": key, "text": p.text, "gate": a.first_reject,
                             "reason": a.reasons[a.first_reject], "label": w.form["label"], "optimum": p.optimum})
    order = ["clean"] + list(FLAWS)
    table = [rows[k] for k in order if k in rows]
    for r in table:
        r["label"] = "Clean" if r["kind"] == "clean" else FLAWS.label(r["kind"])
    n = len(probs)
    report(progress, 1.0, "done")
    return CleanResult(
        config=asdict(config), samples=n, flawed=sum(k is not None for k in kinds), corrupted=int(corrupted),
        kept=int(kept), kept_flawed=int(kept_flawed), table=table,
        flows=[{"source": s, "target": d, "kind": k, "count": c} for (s, d, k), c in flows.items()],
        labels={"clean": "Clean", **FLAWS.labels()}, gate_labels=GATES.labels(), covered=list(COVERED),
        examples=examples,
        costs={"generation_s": round(t_gen, 3),
               **{f"{g}_ms_per_sample": round(1000 * s / n, 3) for g, s in gate_s.items()}})


@dataclass(frozen=True)
class BonConfig:
    """Best-of-N: ``problems`` problems (seed ``problem_seed``, families ``families``), ``n`` candidates each from
    the modeller, each flawed with probability ``flaw_rate`` by a kind of ``kinds`` and rewritten in an equivalent
    way with probability ``variation`` (sampling seed ``seed``); the
    PRM of training seed ``prm_seed``; votes averaged over ``draws`` subsets per n."""

    problems: int = 40
    n: int = 8
    flaw_rate: float = 0.7
    kinds: str = "heldout"
    families: str = "all"
    variation: float = 0.5
    problem_seed: int = 1000
    seed: int = 0
    prm_seed: int = 0
    draws: int = 200

    def __post_init__(self) -> None:
        _check_variation(self.variation)
        if not 1 <= self.problems <= MAX_PROBLEMS:
            raise InputError(f"The number of problems must be 1-{MAX_PROBLEMS}; got {self.problems}.")
        if not 1 <= self.n <= MAX_N:
            raise InputError(f"N (candidates per problem) must be 1-{MAX_N}; got {self.n}.")
        if self.prm_seed not in PRM_SEEDS:
            raise InputError(f"prm_seed must be one of {PRM_SEEDS} (the shipped training seeds); got {self.prm_seed}.")
        if not 1 <= self.draws <= 5000:
            raise InputError(f"draws must be 1-5000; got {self.draws}.")
        k, f = _check_common(self.flaw_rate, self.kinds, self.families)
        object.__setattr__(self, "kinds", k)
        object.__setattr__(self, "families", f)


@dataclass
class BonResult:
    """See :func:`run_bon`."""

    config: dict
    ns: list[int]
    curves: dict[str, list[float]]
    labels: dict[str, str]
    per_problem: dict[str, list[float]]
    pass_at_1: float
    step_auroc: float
    answer_auroc: float
    flaw_counts: dict[str, int]
    examples: list[dict]
    costs: dict[str, float]

    def to_dict(self) -> dict:
        return asdict(self)


def candidate_pool(config: BonConfig, prm: Any, progress: Progress | None = None) -> tuple:
    """The candidates of ``config``: (Scores, problems, written [P][N], step features, step scores, step labels,
    seconds of solving + gates and of the PRM)."""
    from .formulation import steps
    from .gates import GATES, audit, context
    from .modeller import draw_kinds, write
    from .prm import step_features, step_labels
    from .problems import generate
    from .select import Scores

    probs = generate(config.problems, config.problem_seed, config.families)
    rng = np.random.default_rng([config.seed, 2])
    P, N = len(probs), config.n
    prm_s = np.zeros((P, N))
    passed = np.zeros((P, N), dtype=bool)
    answers = np.full((P, N), np.nan)
    correct = np.zeros((P, N), dtype=bool)
    written, feats, sscores, slabels = [], [], [], []
    t_gates = t_prm = 0.0
    for i, p in enumerate(probs):
        if i % 5 == 0:
            report(progress, 0.05 + 0.8 * i / P, f"Problem {i + 1} of {P}")
        row, frow, srow, lrow = [], [], [], []
        for j, k in enumerate(draw_kinds(rng, N, config.flaw_rate, config.kinds.split(","))):
            w = write(p, k, rng, config.variation)
            t0 = time.perf_counter()
            ctx = context(p.form, w.form, w.solution)
            a = audit(p.form, w.form, ctx)
            t_gates += time.perf_counter() - t0
            t0 = time.perf_counter()
            X, _ = step_features(p.form, w.form, ctx)
            s = prm.step_scores(X)
            t_prm += time.perf_counter() - t0
            prm_s[i, j] = float(s.min())
            passed[i, j] = all(a.passed[g] for g in list(GATES)[:2])
            answers[i, j] = np.nan if w.answer is None else w.answer
            correct[i, j] = _is_right(w.answer, p.optimum)
            row.append(w)
            frow.append(X)
            srow.append(s)
            lrow.append(step_labels(len(steps(w.form)), w.flaw_step))
        written.append(row)
        feats.append(frow)
        sscores.append(srow)
        slabels.append(lrow)
    return Scores(prm_s, passed, answers, correct), probs, written, feats, sscores, slabels, (t_gates, t_prm)


def run_bon(config: BonConfig, prm: Any = None, progress: Progress | None = None,
            token: CancelToken | None = None) -> BonResult:
    """See the module docstring."""
    from ..rgm.traces import auroc
    from .formulation import steps
    from .modeller import FLAWS
    from .select import SELECTORS, curves, per_problem

    progress = checked(progress, token)
    prm = prm if prm is not None else load_prm(config.prm_seed)
    report(progress, 0.0, "Candidates")
    c, probs, written, _, sscores, slabels, (t_gates, t_prm) = candidate_pool(config, prm, progress)
    report(progress, 0.9, "Curves")
    ns = list(range(1, config.n + 1))
    cv = curves(c, ns, draws=config.draws, seed=config.seed)
    per = {k: [round(float(x), 6) for x in per_problem(c, k, config.n, draws=config.draws, seed=config.seed)]
           for k in SELECTORS}
    s_all = np.concatenate([s for row in sscores for s in row])
    y_all = np.concatenate([y for row in slabels for y in row])
    counts: dict[str, int] = {"clean": 0}
    for row in written:
        for w in row:
            key = w.flaw or "clean"
            counts[key] = counts.get(key, 0) + 1
    examples = []
    for i in range(min(3, len(probs))):
        cands = []
        for j, w in enumerate(written[i]):
            cands.append({"flaw": w.flaw, "flaw_label": FLAWS.label(w.flaw) if w.flaw else "clean",
                          "answer": None if w.answer is None else float(w.answer), "correct": bool(c.correct[i, j]),
                          "passed_gates": bool(c.passed[i, j]), "prm": round(float(c.prm[i, j]), 4),
                          "steps": [{"kind": s.kind, "name": s.name, "text": s.text, "score": round(float(sc), 4),
                                     "label": int(lb)}
                                    for s, sc, lb in zip(steps(w.form), sscores[i][j], slabels[i][j], strict=True)]})
        examples.append({"problem": probs[i].id, "family": probs[i].family, "text": probs[i].text,
                         "optimum": probs[i].optimum, "candidates": cands})
    m = c.prm.size
    report(progress, 1.0, "done")
    return BonResult(
        config=asdict(config), ns=ns, curves={k: [round(float(x), 4) for x in v] for k, v in cv.items()},
        labels=SELECTORS.labels(), per_problem=per, pass_at_1=round(float(c.correct.mean()), 4),
        step_auroc=round(float(auroc(s_all, y_all)), 4), answer_auroc=round(float(auroc(c.prm.ravel(),
                                                                                        c.correct.ravel())), 4),
        flaw_counts=counts, examples=examples,
        costs={"candidates": m, "gates_ms_per_candidate": round(1000 * t_gates / m, 3),
               "prm_ms_per_candidate": round(1000 * t_prm / m, 3), "prm_parameters": prm.parameters})


@dataclass(frozen=True)
class LpConfig:
    """The user's model as five-tuple JSON text (see :mod:`backend.reasoning.orprm.formulation`)."""

    text: str
    name: str = "the model"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InputError("The model is empty: paste or upload a five-tuple JSON model (see the example).")
        if len(self.text.encode()) > MAX_LP_TEXT:
            raise InputError("The model is larger than 1 MB; the limit here is 1 MB.")


@dataclass
class LpResult:
    """See :func:`run_lp`."""

    form: dict
    steps: list[dict]
    size: dict[str, int]
    status: str
    objective: float | None
    solution: list[dict]
    gates: dict[str, dict]
    seconds: float
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def run_lp(config: LpConfig, progress: Progress | None = None, token: CancelToken | None = None) -> LpResult:
    """See the module docstring. Infeasible, unbounded and unsolvable models are refused with an InputError."""
    from .formulation import compile_model, read_lp_json, size, steps
    from .gates import GATES, audit

    progress = checked(progress, token)
    report(progress, 0.0, "Checking")
    t0 = time.perf_counter()
    form = read_lp_json(config.text.encode(), config.name)
    m = compile_model(form)
    a = audit(form, form)
    report(progress, 0.9, "Solved")
    sol = [{"variable": n, "value": round(float(v), 6)} for n, v in zip(m.var_names, a.x, strict=True)
           if abs(v) > 1e-9] if a.x is not None else []
    gates = {g: {"label": GATES.label(g), "passed": a.passed[g], "reason": a.reasons[g]} for g in list(GATES)[:2]}
    report(progress, 1.0, "done")
    return LpResult(form, [asdict(s) for s in steps(form)], size(form), "optimal", a.objective, sol[:200], gates,
                    round(time.perf_counter() - t0, 4))
