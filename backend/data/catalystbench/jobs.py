"""The pure entry points of CatalystBench: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_benchmark` ``(BenchmarkConfig)`` -> :class:`BenchmarkResult`: per method, seed and task the test metric
  (R^2, accuracy, exact match) of the shipped checkpoints (``source="recorded"``: the numbers stored in each file's
  metadata at training; ``"reevaluate"``: recomputed from the checkpoints, on every test row or on a fixed subset of
  test elements), the baselines outside the LM (gradient boosting per task, the regex extractor) on the same rows, the
  paired comparisons of the claims (MFT - FT on each regression task, MFT - ST on the average) with 95 % intervals,
  and the costs (trainable parameters, training seconds, the estimate made before training).
- :func:`run_predict` ``(PredictConfig)`` -> :class:`PredictResult`: predictions of every method (one seed) and of the
  baselines for records and sentences the user gives.

``lm`` may be passed in already loaded (the page caches it); None loads the embedded SmolLM2.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import choose
from ...runtime import ASSETS, CancelToken, Progress, report
from .methods import BASELINES, METHODS

METHOD_NAMES: tuple[str, ...] = tuple(METHODS.names())
SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)
SOURCES = ("recorded", "reevaluate")
CI_ELEMENTS = 4  # the fixed test-element subset of the ci tier (the first test elements by atomic number)
MAX_RECORDS, MAX_SENTENCES = 10, 10


def asset_path(method: str) -> Path:
    return ASSETS / f"catalystbench_{METHODS.key(method)}.safetensors"


@dataclass(frozen=True)
class BenchmarkConfig:
    """``methods`` to report (registry names), ``seeds`` (subset of 0-4), ``source`` (``recorded`` or
    ``reevaluate``), ``elements`` (re-evaluation only: 0 = every test element, else the first ``elements`` test
    elements by atomic number)."""

    methods: tuple[str, ...] = METHOD_NAMES
    seeds: tuple[int, ...] = SEEDS
    source: str = "recorded"
    elements: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", tuple(METHODS.key(m) for m in self.methods))
        if not self.methods:
            raise InputError("Choose at least one method.")
        seeds = tuple(int(s) for s in self.seeds)
        if not seeds or any(s not in SEEDS for s in seeds) or len(set(seeds)) != len(seeds):
            raise InputError(f"Seeds must be distinct values among {list(SEEDS)}; got {list(self.seeds)}.")
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "source", choose(self.source, SOURCES, "source"))
        if not 0 <= int(self.elements) <= 40:
            raise InputError(f"elements must be 0 (all test elements) or 1-40; got {self.elements}.")


@dataclass
class BenchmarkResult:
    config: dict
    tasks: list[dict]                     # name, kind, metric, test rows
    scores: dict[str, dict[str, list[float]]]  # method or baseline -> task (and "average") -> per seed
    labels: dict[str, str]
    colors: dict[str, str]
    comparisons: list[dict]               # the claims' paired comparisons
    costs: dict[str, dict[str, float]]    # method -> trainable_parameters, train_s (mean per seed), estimate_s
    rows: int
    seconds: float
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def mean(self, method: str, task: str) -> float:
        return float(np.mean(self.scores[method][task]))


METRIC = {"regression": "R^2", "classification": "accuracy", "extraction": "exact match"}


def _subset_rows(bench: Any, elements: int) -> list[int]:
    test = [i for i, r in enumerate(bench.rows) if r.split == "test"]
    if not elements:
        return test
    order = {r["symbol"]: r["z"] for r in _records()}
    keep = set(sorted({bench.rows[i].element for i in test}, key=lambda s: order[s])[: int(elements)])
    return [i for i in test if bench.rows[i].element in keep]


def _records() -> tuple[dict, ...]:
    from .bench import element_records

    return element_records()


def load_method(top: Any, bench: Any, method: str, seed: int) -> dict:
    """``{task: Unit}`` of a shipped checkpoint (one method, one seed)."""
    import torch

    from ... import weights
    from . import fit as F

    state, meta = weights.load(asset_path(method), made_by="python -m backend.train catalystbench")
    pre = f"seed{int(seed)}."
    sub = {k[len(pre):]: v.to(torch.float32) for k, v in state.items() if k.startswith(pre)}
    if not sub:
        raise InputError(f"{asset_path(method).name} holds no seed {seed}.")
    settings = F.FitSettings(**meta.config.get("settings", {}))
    return F.load_units(top, bench, sub, settings)


def recorded(method: str) -> tuple[dict, dict]:
    """``(quality, extra)`` stored in a method's checkpoint at training."""
    from ... import weights

    meta = weights.read_meta(asset_path(method))
    return meta.quality, meta.extra


def paired(a: list[float], b: list[float]) -> dict:
    from ...stats import paired_ci

    ci = paired_ci(a, b)
    return {"gain": ci.mean, "gain_ci": [ci.low, ci.high], "pairs": len(a)}


def run_benchmark(config: BenchmarkConfig, lm: Any = None, progress: Progress | None = None,
                  token: CancelToken | None = None) -> BenchmarkResult:
    """Per-method, per-seed, per-task test metrics of the shipped checkpoints beside the non-LM baselines."""
    from . import fit as F
    from .bench import build_bench

    t0 = time.perf_counter()
    bench = build_bench()
    rows = _subset_rows(bench, config.elements if config.source == "reevaluate" else 0)
    names = [t.name for t in bench.tasks]
    scores: dict[str, dict[str, list[float]]] = {}
    costs: dict[str, dict[str, float]] = {}
    top = enc = None
    if config.source == "reevaluate":
        if lm is None:
            from ...models.lm import load_causal_lm

            lm = load_causal_lm()
        top = F.TopLayer(lm.model)
        sub = [bench.rows[i] for i in rows]
        enc_sub = F.encode_and_cache(lm.model, lm.tokenizer, sub, progress=progress, token=token,
                                     disk=not config.elements)
        enc = F.Encoded([[]] * len(bench.rows), [0] * len(bench.rows), [None] * len(bench.rows))  # type: ignore[list-item]
        for k, i in enumerate(rows):
            enc.ids[i], enc.prompt_len[i], enc.states[i] = enc_sub.ids[k], enc_sub.prompt_len[k], enc_sub.states[k]
    n_jobs = len(config.methods) * len(config.seeds)
    done = 0
    for m in config.methods:
        q, extra = recorded(m)
        scores[m] = {n: [] for n in [*names, "average"]}
        for s in config.seeds:
            if token is not None:
                token.check()
            if config.source == "recorded":
                sc = q.get(f"seed{s}")
                if sc is None:
                    raise InputError(f"{asset_path(m).name} records no seed {s}; retrain with "
                                     "python -m backend.train catalystbench.")
            else:
                units = load_method(top, bench, m, s)
                settings = F.FitSettings(**_settings(m))
                sc = F.score(bench, F.predict(top, lm.tokenizer, bench, enc, units, rows, settings))
            for n in names:
                scores[m][n].append(float(sc.get(n, math.nan)))
            scores[m]["average"].append(F.average(bench, {n: scores[m][n][-1] for n in names}))
            done += 1
            report(progress, 0.3 + 0.6 * done / n_jobs, f"{METHODS.label(m)} seed {s}")
        costs[m] = {"trainable_parameters": float(q.get("trainable_parameters", math.nan)),
                    "train_s": float(np.mean([q.get(f"seed{s}_train_s", math.nan) for s in config.seeds])),
                    "estimate_s": float(q.get("estimate_s_per_seed", math.nan)),
                    "eval_s": float(np.mean([q.get(f"seed{s}_eval_s", math.nan) for s in config.seeds]))}
    for b in BASELINES.names():
        scores[b] = {n: [] for n in [*names, "average"]}
        t_b = time.perf_counter()
        for s in config.seeds:
            sc = _baseline_scores(b, s, tuple(rows))
            for n in [*names, "average"]:
                scores[b][n].append(float(sc.get(n, math.nan)))
        costs[b] = {"trainable_parameters": math.nan, "train_s": (time.perf_counter() - t_b) / len(config.seeds),
                    "estimate_s": math.nan, "eval_s": math.nan}
    report(progress, 1.0, "done")
    comparisons = _comparisons(bench, scores)
    tasks = [{"name": t.name, "kind": t.kind, "metric": METRIC[t.kind],
              "test_rows": sum(1 for i in rows if bench.rows[i].task == t.name)} for t in bench.tasks]
    labels = {**{m: METHODS.label(m) for m in config.methods}, **{b: BASELINES.label(b) for b in BASELINES.names()}}
    colors = {**{m: METHODS.color(m) for m in config.methods}, **{b: BASELINES.color(b) for b in BASELINES.names()}}
    return BenchmarkResult(config=asdict(config), tasks=tasks, scores=scores, labels=labels, colors=colors,
                           comparisons=comparisons, costs=costs, rows=len(rows),
                           seconds=time.perf_counter() - t0)


@lru_cache(maxsize=64)
def _baseline_scores(name: str, seed: int, rows: tuple[int, ...]) -> dict[str, float]:
    """A baseline's per-task scores on the benchmark's ``rows`` (deterministic given the seed; kept per process)."""
    from . import fit as F
    from .bench import build_bench

    bench = build_bench()
    return F.score(bench, BASELINES.get(name)(bench, seed, list(rows)))


def _settings(method: str) -> dict:
    from ... import weights

    return weights.read_meta(asset_path(method)).config.get("settings", {})


def _comparisons(bench: Any, scores: dict) -> list[dict]:
    """MFT - FT on each regression task and MFT - ST on the average, paired over seeds (when those are present)."""
    ours = METHODS.names("ours")
    out = []
    for o in ours:
        if o not in scores:
            continue
        for other in METHODS.names("baseline"):
            if other not in scores:
                continue
            shared_other = METHODS.get(other).shared_adapter
            tasks = [t.name for t in bench.tasks if t.kind == "regression"] if shared_other else ["average"]
            for t in tasks:
                a, b = scores[o][t], scores[other][t]
                out.append({"ours": o, "other": other, "task": t, "ours_mean": float(np.mean(a)),
                            "other_mean": float(np.mean(b)), **paired(a, b)})
    return out


# ----------------------------------------------------------------------------------------------------- predictions
@dataclass(frozen=True)
class PredictConfig:
    """``records``: element-like records (dicts with name, symbol, atomic_number, period, group, block,
    atomic_weight); ``sentences``: sentences stating a melting point; ``seed``: which shipped seed of every method."""

    records: tuple[tuple[tuple[str, Any], ...], ...] = ()
    sentences: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        if int(self.seed) not in SEEDS:
            raise InputError(f"seed must be one of {list(SEEDS)}; got {self.seed}.")
        if not self.records and not self.sentences:
            raise InputError("Give at least one record or one sentence.")
        if len(self.records) > MAX_RECORDS:
            raise InputError(f"At most {MAX_RECORDS} records per run; got {len(self.records)}.")
        if len(self.sentences) > MAX_SENTENCES:
            raise InputError(f"At most {MAX_SENTENCES} sentences per run; got {len(self.sentences)}.")
        for s in self.sentences:
            if not str(s).strip() or len(str(s)) > 400:
                raise InputError("Each sentence must be non-empty and at most 400 characters.")
        for rec in self.records:
            from .records import check_record

            check_record(dict(rec))


@dataclass
class PredictResult:
    rows: list[dict]     # one per input x task x method: input, task, method, label, pred, text
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def run_predict(config: PredictConfig, lm: Any = None, progress: Progress | None = None,
                token: CancelToken | None = None) -> PredictResult:
    from . import fit as F
    from .baselines import regex_extract
    from .bench import Row, build_bench, features, prompt_for, record_text

    t0 = time.perf_counter()
    bench = build_bench()
    if lm is None:
        from ...models.lm import load_causal_lm

        lm = load_causal_lm()
    top = F.TopLayer(lm.model)
    items: list[tuple[str, str]] = []
    inputs: list[str] = []
    recs = [dict(r) for r in config.records]
    for rec in recs:
        text = record_text(rec)
        for t in bench.tasks:
            if t.kind != "extraction":
                items.append((t.name, prompt_for(t.name, text)))
                inputs.append(f"{rec['name']} ({rec['symbol']})")
    for s in config.sentences:
        items.append(("melting_extract", prompt_for("melting_extract", s)))
        inputs.append(s)
    out: list[dict] = []
    for k, m in enumerate(METHODS.names()):
        if token is not None:
            token.check()
        units = load_method(top, bench, m, config.seed)
        preds = F.infer(top, lm.tokenizer, bench, items, units, F.FitSettings(**_settings(m)))
        for inp, p in zip(inputs, preds, strict=True):
            out.append({"input": inp, "task": p["task"], "method": m, "label": METHODS.label(m),
                        "pred": p["pred"], "text": p["text"]})
        report(progress, (k + 1) / (len(METHODS.names()) + 1), METHODS.label(m))
    # the baselines outside the LM on the same inputs
    for b in BASELINES.names():
        if recs:
            extra = [Row(t.name, f"user{j}", "", "", split="user") for j in range(len(recs)) for t in bench.tasks
                     if t.kind != "extraction"]
            for j, rec in enumerate(recs):
                bench.features[f"user{j}"] = features(rec)
            base = len(bench.rows)
            bench.rows.extend(extra)
            preds = BASELINES.get(b)(bench, config.seed, list(range(base, base + len(extra))))
            for p, r in zip(preds, extra, strict=True):
                rec = recs[int(r.element[4:])]
                out.append({"input": f"{rec['name']} ({rec['symbol']})", "task": p["task"], "method": b,
                            "label": BASELINES.label(b), "pred": p["pred"], "text": str(p["pred"])})
        for s in config.sentences:
            got = regex_extract(s)
            out.append({"input": s, "task": "melting_extract", "method": b, "label": BASELINES.label(b),
                        "pred": got or "", "text": got or "(no match)"})
    report(progress, 1.0, "done")
    return PredictResult(rows=out, seconds=time.perf_counter() - t0)
