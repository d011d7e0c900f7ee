"""The pure entry points of DEPO: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_select` ``(prompts, SelectConfig)`` -> :class:`SelectResult`: every subset strategy of
  :data:`backend.reasoning.depo.select.SUBSETS` at the same size on one prompt list (the training pool with the
  starting policy's pass rates, the example list, or the user's upload): indices, log-det volume, coverage, the 2-D
  PCA map of the MiniLM embeddings, PageRank, and the difficulty histograms before and after DEPO's sampling.
- :func:`run_train` ``(TrainConfig)`` -> :class:`TrainResult`: one GRPO run of a strategy on the tiny reasoner
  (:func:`backend.reasoning.depo.loop.train`); the CLI's ``train`` runs a short one.
- :func:`run_report` ``(ReportConfig)`` -> :class:`ReportResult`: the shipped runs (``python -m backend.train depo``,
  :data:`RUNS_FILE`): curves per strategy and seed, the speed-up at 95 % of full-data GRPO's final accuracy, the
  explorability heatmap of one DEPO run, token totals.

Configs are frozen and check themselves (:class:`backend.errors.InputError`); results are small JSON-able
dataclasses. ``reasoner`` / ``encoder`` may be passed in already loaded (the page caches them).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import choose
from ...runtime import ASSETS, CancelToken, Progress, checked, report
from .loop import STRATEGIES, TrainConfig, TrainLog
from .prompts import PromptList
from .select import SUBSETS, context, logdet, nearest, subset_size

RUNS_FILE = ASSETS / "depo_runs.json"
SOURCES = ("pool", "example", "upload")
HIST_BINS = 5


@dataclass(frozen=True)
class SelectConfig:
    """``share`` of the prompts to keep; ``source`` pool / example / upload; kNN graph degree ``knn``; DEPO's
    ``candidates`` (greedy pool as a multiple of k), ``mu`` and ``sigma`` of the difficulty weights; ``seed`` of the
    sampling; ``random_draws`` random subsets averaged for the random baseline's numbers."""

    share: float = 0.2
    source: str = "pool"
    knn: int = 10
    candidates: float = 2.0
    mu: float = 0.5
    sigma: float = 0.25
    seed: int = 0
    random_draws: int = 5

    def __post_init__(self) -> None:
        if isinstance(self.share, bool) or not isinstance(self.share, (int, float)) or not 0.0 < self.share <= 1.0:
            raise InputError(f"The share must be in (0, 1]; got {self.share!r}.")
        object.__setattr__(self, "source", choose(self.source, SOURCES, "prompt source"))
        if not 1 <= self.knn <= 50:
            raise InputError(f"The graph degree knn must be 1-50; got {self.knn}.")
        if not 1.0 <= self.candidates <= 10.0:
            raise InputError(f"candidates must be in [1, 10]; got {self.candidates}.")
        if not 0.0 < self.sigma <= 5.0:
            raise InputError(f"sigma must be in (0, 5]; got {self.sigma}.")
        if not 1 <= self.random_draws <= 100:
            raise InputError(f"random_draws must be 1-100; got {self.random_draws}.")


@dataclass
class SelectResult:
    """Per strategy (``strategies[name]``): indices (random: the first draw), log-det, coverage and every prompt's
    distance to its nearest selected prompt (random: means over the draws); the map, PageRank,
    difficulties and histograms; notes and timings."""

    config: dict
    n: int
    k: int
    prompts: list[str]
    ids: list[str]
    strategies: dict[str, dict]
    labels: dict[str, str]
    colors: dict[str, str]
    pca: list[list[float]]
    pagerank: list[float]
    difficulty: list[float | None] | None
    histograms: dict[str, list[int]] = field(default_factory=dict)
    bins: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def load_runs(path: Any = None) -> dict:
    """The shipped run logs (``python -m backend.train depo``)."""
    p = path or RUNS_FILE
    if not p.is_file():
        raise InputError("The DEPO run logs are missing: run `python -m backend.train depo`.")
    return json.loads(p.read_text())


def pool_problems(cfg: TrainConfig) -> tuple[list, list]:
    """(the training pool, the held-out problems) of a train config."""
    from ..tasks import generate

    return (generate(cfg.pool, cfg.split, seed=cfg.pool_seed, steps=cfg.ops),
            generate(cfg.heldout, cfg.split, seed=cfg.heldout_seed, steps=cfg.ops))


def embed(texts: list[str], encoder: Any = None) -> np.ndarray:
    """[N, 384] MiniLM sentence embeddings (L2-normalised) of ``texts``."""
    if encoder is None:
        from ...models.text import load_text_encoder

        encoder = load_text_encoder()
    return encoder.embed(list(texts)).double().numpy()


def _pca(x: np.ndarray) -> np.ndarray:
    c = x - x.mean(0)
    if c.shape[0] < 2:
        return np.zeros((c.shape[0], 2))
    _, _, vt = np.linalg.svd(c, full_matrices=False)
    comp = vt[:2]
    for j in range(comp.shape[0]):  # a deterministic sign: the largest loading positive
        if comp[j][np.argmax(np.abs(comp[j]))] < 0:
            comp[j] = -comp[j]
    out = c @ comp.T
    return out if out.shape[1] == 2 else np.hstack([out, np.zeros((out.shape[0], 2 - out.shape[1]))])


def _source(config: SelectConfig, prompts: PromptList | None) -> PromptList:
    if config.source == "upload":
        if prompts is None:
            raise InputError("Upload a prompt list (one prompt per line, or a CSV with a prompt column).")
        return prompts
    if config.source == "example":
        from .inputs import prompt_list
        from .prompts import decode_prompts

        return decode_prompts(prompt_list(), name="the example list")
    cfg = TrainConfig()
    pool, _ = pool_problems(cfg)
    diff, notes = None, []
    if RUNS_FILE.is_file():
        runs = load_runs()
        if runs.get("rated"):
            diff = [float("nan")] * len(pool)
            for i, a in zip(runs["rated"], runs["rated_pass_rates"], strict=True):
                diff[i] = float(a)
            notes.append(f"Pass rates (4 rollouts of the starting policy) are known for the {len(runs['rated'])} "
                         "greedy-DPP candidates of the training runs (share 0.2, 10 neighbours); with other settings "
                         "DEPO's candidates may include unrated prompts, and it keeps the greedy order.")
    return PromptList([p.question for p in pool], [f"pool {i}" for i in range(len(pool))], diff, notes)


def run_select(prompts: PromptList | None, config: SelectConfig, encoder: Any = None,
               progress: Progress | None = None, token: CancelToken | None = None) -> SelectResult:
    """Every subset strategy at size round(share N) on one prompt list (see the module docstring)."""
    progress = checked(progress, token)
    src = _source(config, prompts)
    n = len(src.prompts)
    if n < 2:
        raise InputError("At least two prompts are needed to select a subset.")
    k = subset_size(n, config.share)
    report(progress, 0.05, f"MiniLM embeddings of {n:,} prompts")
    t0 = time.perf_counter()
    x = embed(src.prompts, encoder)
    t_embed = time.perf_counter() - t0
    report(progress, 0.5, "Similarity graph and PageRank")
    acc = None if src.difficulty is None else np.asarray(src.difficulty, dtype=np.float64)
    t0 = time.perf_counter()
    ctx = context(x, acc, config.knn, config.candidates, config.mu, config.sigma)
    t_graph = time.perf_counter() - t0
    out: dict[str, dict] = {}
    seconds = {"embed": round(t_embed, 3), "graph_pagerank": round(t_graph, 3)}
    for j, name in enumerate(SUBSETS):
        report(progress, 0.5 + 0.45 * j / len(SUBSETS), SUBSETS.label(name))
        draws = config.random_draws if getattr(SUBSETS[name], "stochastic", False) else 1
        t0 = time.perf_counter()
        picks = [SUBSETS[name](ctx, k, config.seed + d) for d in range(draws)]
        seconds[name] = round((time.perf_counter() - t0) / draws, 4)
        ld = [logdet(ctx.x, ctx.weights, s, ctx.h) for s in picks]
        dist = [nearest(ctx.x, s) for s in picks]
        out[name] = {"indices": [int(i) for i in picks[0]], "logdet": float(np.mean(ld)),
                     "coverage": float(np.mean([d.mean() for d in dist])), "draws": draws,
                     "distances": [round(float(v), 6) for v in np.mean(dist, axis=0)],
                     "mean_pagerank": float(np.mean([ctx.pagerank[s].mean() * n for s in picks]))}
        if acc is not None and np.isfinite(acc[picks[0]]).any():
            out[name]["mean_difficulty"] = float(np.mean([np.nanmean(acc[s]) for s in picks]))
    bins = list(np.linspace(0.0, 1.0, HIST_BINS + 1))
    hists: dict[str, list[int]] = {}
    if acc is not None:
        hists["all"] = [int(c) for c in np.histogram(acc[np.isfinite(acc)], bins=bins)[0]]
        for name in SUBSETS:
            a = acc[out[name]["indices"]]
            hists[name] = [int(c) for c in np.histogram(a[np.isfinite(a)], bins=bins)[0]]
    report(progress, 1.0, "done")
    return SelectResult(asdict(config), n, k, src.prompts, src.ids, out, SUBSETS.labels(), SUBSETS.colors(),
                        [[round(float(a), 5), round(float(b), 5)] for a, b in _pca(ctx.x)],
                        [float(p) for p in ctx.pagerank],
                        None if acc is None else [None if np.isnan(a) else float(a) for a in acc],
                        hists, [float(b) for b in bins], list(src.notes), seconds)


@dataclass
class TrainResult:
    """One run's log (:class:`backend.reasoning.depo.loop.TrainLog` as a dict) with its label and the policy's
    parameter count."""

    log: dict
    label: str
    parameters: int

    def to_dict(self) -> dict:
        return asdict(self)


def run_train(config: TrainConfig, reasoner: Any = None, encoder: Any = None, progress: Progress | None = None,
              token: CancelToken | None = None) -> TrainResult:
    """One GRPO run of ``config.strategy`` from the shipped tiny reasoner (a fresh copy: ``reasoner`` is not
    changed)."""
    import copy

    progress = checked(progress, token)
    from ...models.tinyreasoner import load_tinyreasoner
    from .loop import train
    from .select import context as make_context

    lm = copy.deepcopy(reasoner) if reasoner is not None else load_tinyreasoner()
    pool, held = pool_problems(config)
    report(progress, 0.0, "MiniLM embeddings of the pool")
    ctx = make_context(embed([p.question for p in pool], encoder), None, 10, config.candidates, config.mu,
                       config.sigma)
    log: TrainLog = train(lm, pool, ctx, config, held, progress=progress, token=token)
    return TrainResult(log.to_dict(), STRATEGIES.label(config.strategy), int(lm.parameters))


@dataclass(frozen=True)
class ReportConfig:
    """``share`` of full-data GRPO's final accuracy that defines the target; ``heat_strategy`` / ``heat_seed``: the
    run whose explorability heatmap is shown."""

    share: float = 0.95
    heat_strategy: str = "depo"  # the registry key of DEPO
    heat_seed: int = 0

    def __post_init__(self) -> None:
        if not 0.5 <= self.share <= 1.0:
            raise InputError(f"The target share must be in [0.5, 1]; got {self.share!r}.")
        object.__setattr__(self, "heat_strategy", STRATEGIES.key(self.heat_strategy))


@dataclass
class ReportResult:
    """Curves per strategy (``runs[name]`` = list of per-seed curves; ``mean[name]`` = the seed mean), the
    speed-up of every strategy against full-data GRPO, start accuracy, totals, and one run's heatmap."""

    config: dict
    start_accuracy: float
    runs: dict[str, list[dict]]
    mean: dict[str, list[dict]]
    speedups: dict[str, dict]
    totals: dict[str, dict]
    labels: dict[str, str]
    colors: dict[str, str]
    heat: list[list[float | None]]
    pruned: list[list[bool]]
    train_config: dict
    model_sha256: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def run_report(config: ReportConfig, runs: dict | None = None, progress: Progress | None = None,
               token: CancelToken | None = None) -> ReportResult:
    """Curves, speed-ups and one heatmap from the shipped run logs (``runs``: an already loaded file)."""
    from .report import final_accuracy, mean_curve, speedup

    progress = checked(progress, token)
    data = runs if runs is not None else load_runs()
    by: dict[str, list[dict]] = {}
    for r in data["runs"]:
        by.setdefault(r["config"]["strategy"], []).append(r)
    reference = STRATEGIES.names("reference")[0]
    full = by.get(reference, [])
    speed = {name: speedup(full, rs, config.share) for name, rs in by.items() if name != reference and full}
    totals = {name: {"seeds": len(rs), "final_accuracy": float(np.mean([final_accuracy(r) for r in rs])),
                     "tokens": float(np.mean([r["tokens"] for r in rs])),
                     "offline_tokens": float(np.mean([r["offline_tokens"] for r in rs])),
                     "rollouts": float(np.mean([r["rollouts"] for r in rs])),
                     "pruned_rollouts": float(np.mean([r["pruned_rollouts"] for r in rs])),
                     "seconds": float(np.mean([r["seconds"] for r in rs]))} for name, rs in by.items()}
    pick = [r for r in by.get(config.heat_strategy, []) if r["config"]["seed"] == config.heat_seed]
    heat = pick[0]["heat"] if pick else []
    pruned = pick[0]["pruned"] if pick else []
    report(progress, 1.0, "done")
    order = [n for n in STRATEGIES if n in by]
    return ReportResult(asdict(config), float(data["start_accuracy"]),
                        {n: [r["curve"] for r in by[n]] for n in order}, {n: mean_curve(by[n]) for n in order},
                        speed, totals, {n: STRATEGIES.label(n) for n in order},
                        {n: STRATEGIES.color(n) for n in order}, heat, pruned, data.get("train_config", {}),
                        data.get("model_sha256", ""))
