"""The pure entry points of the Visual Jigsaw page: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_solve` ``(image, SolveConfig)`` -> :class:`SolveResult`: the image cut into a 2 x 2 or 3 x 3 grid and
  shuffled; each shipped policy of that grid and seed (graded and binary reward) answers (greedy Plackett-Luce
  order), with per-tile correctness and the reward of its answer; an optional typed answer (the "race the model"
  mode) is scored by the same reward.
- :func:`run_order` ``(OrderConfig, image=None)`` -> :class:`SolveResult`: clip ordering: a held-out clip (or a pan
  over the user's image) shuffled frame by frame; each shipped clip policy (graded and binary reward) answers the
  time order, scored like a jigsaw.
- :func:`run_evaluate` ``(EvalConfig)`` -> :class:`EvalResult`: every shipped policy re-scored on fixed held-out
  puzzles (held-out scenes or scikit-image photographs; for clip ordering held-out clips or photograph pans): exact-solve rate and per-tile accuracy per run, the paired
  difference graded minus binary over seeds with a 95 % interval, the learning curves recorded in training.
- :func:`run_vlm` ``(VLMConfig)`` -> :class:`VLMResult`: the tiny VLM before and after jigsaw post-training: the
  recorded jigsaw solve rates and scene-question accuracies (with the paired bootstrap interval of the change), and
  optionally a re-evaluation of the first ``recheck_scenes`` held-out scenes by both models.

The configs are frozen and check themselves (:class:`backend.errors.InputError`); results are small summaries.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...runtime import ASSETS, CancelToken, Progress, checked, report
from .reward import check_grid

TRAIN_COUNT = 400
EVAL_COUNTS = {"scenes_val": 128, "photos": 200}
EVAL_SEED = 31_000
SEEDS = (0, 1, 2)
SHUFFLES = 4
TRAIN_COMMAND = "python -m backend.train jigsaw --part policy"
EVAL_SOURCES = tuple(EVAL_COUNTS)
CLIP_EVAL_COUNTS = {"clips_val": 64, "photo_pans": 100}
CLIP_EVAL_SEED = 32_000
CLIP_COMMAND = "python -m backend.train jigsaw --part clips"


def policy_path(grid: int, reward: str, seed: int) -> Path:
    """``assets/jigsaw_policy_g<grid>_<reward>_s<seed>.safetensors``."""
    return ASSETS / f"jigsaw_policy_g{int(grid)}_{reward}_s{int(seed)}.safetensors"


def load_policy(grid: int, reward: str, seed: int = 0) -> tuple[Any, dict]:
    """A shipped policy (float32, eval mode) and its metadata ``{"config", "quality", "extra"}``."""
    import torch

    from ... import weights
    from .policy import PolicyConfig, TilePolicy
    from .reward import REWARDS

    reward = REWARDS.key(reward)
    tensors, meta = weights.load(policy_path(grid, reward, seed), made_by=TRAIN_COMMAND)
    model = TilePolicy(int(grid) ** 2, PolicyConfig(**meta.config.get("policy", {})))
    model.load_state_dict({k: v.to(torch.float32) for k, v in tensors.items()})
    model.eval()
    return model, {"config": meta.config, "quality": meta.quality, "extra": meta.extra}


def eval_set(source: str, grid: int, count: int | None = None):  # noqa: ANN201 - (features, orders)
    """The fixed evaluation puzzles of a source at a grid: the first ``count`` images (default EVAL_COUNTS), each
    under SHUFFLES fixed shuffles: features ``[SHUFFLES * count, n, 5, 384]`` (raster order) and orders
    ``[SHUFFLES * count, n]``."""
    from .features import puzzle_set
    from .policy import fixed_orders

    full = EVAL_COUNTS[source]
    count = full if count is None else int(count)
    feats = puzzle_set(source, count, grid)
    orders = fixed_orders(SHUFFLES * full, grid * grid, EVAL_SEED + grid).view(SHUFFLES, full, -1)[:, :count]
    return feats.repeat(SHUFFLES, 1, 1, 1), orders.reshape(SHUFFLES * count, -1)


def clip_path(reward: str, seed: int) -> Path:
    """``assets/jigsaw_clip_t<frames>_<reward>_s<seed>.safetensors``."""
    from .ordering import FRAMES

    return ASSETS / f"jigsaw_clip_t{FRAMES}_{reward}_s{int(seed)}.safetensors"


def load_clip_policy(reward: str, seed: int = 0) -> tuple[Any, dict]:
    """A shipped clip-ordering policy (float32, eval mode) and its metadata ``{"config", "quality", "extra"}``."""
    import torch

    from ... import weights
    from .ordering import FRAMES
    from .policy import PolicyConfig, TilePolicy
    from .reward import REWARDS

    reward = REWARDS.key(reward)
    tensors, meta = weights.load(clip_path(reward, seed), made_by=CLIP_COMMAND)
    model = TilePolicy(FRAMES, PolicyConfig(**meta.config.get("policy", {})))
    model.load_state_dict({k: v.to(torch.float32) for k, v in tensors.items()})
    model.eval()
    return model, {"config": meta.config, "quality": meta.quality, "extra": meta.extra}


def clip_eval_set(source: str, count: int | None = None):  # noqa: ANN201 - (features, orders)
    """The fixed evaluation clips of a source: the first ``count`` clips (default CLIP_EVAL_COUNTS), each under
    SHUFFLES fixed shuffles: features ``[SHUFFLES * count, FRAMES, 5, 384]`` (time order) and orders."""
    from .ordering import FRAMES, clip_set
    from .policy import fixed_orders

    full = CLIP_EVAL_COUNTS[source]
    count = full if count is None else int(count)
    feats = clip_set(source, count, FRAMES)
    orders = fixed_orders(SHUFFLES * full, FRAMES, CLIP_EVAL_SEED).view(SHUFFLES, full, -1)[:, :count]
    return feats.repeat(SHUFFLES, 1, 1, 1), orders.reshape(SHUFFLES * count, -1)


def _seeds(seeds: Any) -> tuple[int, ...]:
    seeds = tuple(int(s) for s in seeds)
    bad = [s for s in seeds if s not in SEEDS]
    if bad or not seeds:
        raise InputError(f"Seeds must be among the shipped {', '.join(map(str, SEEDS))}; got {list(seeds)}.")
    return seeds


# ---------------------------------------------------------------------------------------------------------- solve
@dataclass(frozen=True)
class SolveConfig:
    """``grid`` 2 or 3 tiles per side; ``seed`` of the shipped policies; ``shuffle`` the seed of the shuffle;
    ``answer``: a typed answer to race the models (labels in raster order, e.g. ``"3, 1, 4, 2"``; empty: none)."""

    grid: int = 3
    seed: int = 0
    shuffle: int = 0
    answer: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", check_grid(self.grid))
        _seeds((self.seed,))
        if not 0 <= int(self.shuffle) <= 1_000_000:
            raise InputError(f"The shuffle seed must be 0 to 1,000,000; got {self.shuffle}.")
        if len(str(self.answer)) > 200:
            raise InputError("The typed answer is longer than 200 characters; type the tile labels, e.g. 3, 1, 4, 2.")


@dataclass
class SolveResult:
    """``image`` uint8 ``[168, 168, 3]`` (the square image); ``shown`` uint8 ``[n, t, t, 3]`` (the tiles as shown,
    labelled 1..n); ``truth`` the 1-based answer; ``answers``: per reward {reward, label, answer (1-based labels),
    correct (per position), reward (its graded reward), binary (its binary reward), exact, confidence (the
    policy's probability of its answer)}; ``race``: the typed answer's scores or None; ``seconds``."""

    image: np.ndarray
    shown: np.ndarray
    grid: int
    truth: list[int]
    answers: list[dict]
    race: dict | None
    seconds: float
    config: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return {"grid": self.grid, "truth": self.truth, "answers": self.answers, "race": self.race,
                "config": self.config}


def _answers(feats: Any, truth: list[int], load: Any, progress: Progress | None) -> list[dict]:
    """Each reward's shipped policy (``load(reward)``) answers the shown pieces ``feats [1, n, 5, 384]``: its greedy
    order, per-position correctness, both rewards of its answer and its probability."""
    import torch

    from .policy import greedy, log_prob
    from .reward import REWARDS, score_text, to_text

    answers = []
    for i, reward in enumerate(REWARDS):
        report(progress, 0.5 + 0.5 * i / len(REWARDS), REWARDS.label(reward))
        model = load(reward)
        with torch.no_grad():
            scores = model(feats)
            pred = greedy(scores)
            conf = float(log_prob(scores, pred).sum().exp())
        text = to_text(pred[0].tolist())
        g, b = score_text(text, truth, "graded"), score_text(text, truth, "binary")
        answers.append({"reward": reward, "label": REWARDS.label(reward), "answer": g.parsed,
                        "correct": [int(a == t) for a, t in zip(g.parsed, truth, strict=True)],
                        "reward_graded": round(g.total, 4), "reward_binary": round(b.total, 4),
                        "exact": g.exact, "confidence": round(conf, 4)})
    return answers


def _race(answer: str, truth: list[int]) -> dict | None:
    """A typed answer scored by the same rewards (None when empty)."""
    from .reward import score_text

    if not str(answer).strip():
        return None
    g, b = score_text(answer, truth, "graded"), score_text(answer, truth, "binary")
    return {"answer": g.parsed, "valid": g.valid, "exact": g.exact, "fraction": round(g.fraction, 4),
            "reward_graded": round(g.total, 4), "reward_binary": round(b.total, 4),
            "format_ok": g.parsed is not None,
            "correct": ([int(a == t) for a, t in zip(g.parsed, truth, strict=True)] if g.valid else None)}


def run_solve(image: Any, config: SolveConfig, progress: Progress | None = None, token: CancelToken | None = None,
              vision: Any = None) -> SolveResult:
    """Cut, shuffle and solve (see the module docstring). ``vision``: the DINOv2 encoder already loaded."""
    from .features import tile_features
    from .puzzle import make_puzzle

    progress = checked(progress, token)
    t0 = time.perf_counter()
    arr = np.asarray(image.convert("RGB")) if hasattr(image, "convert") else np.asarray(image)
    p = make_puzzle(arr, config.grid, config.shuffle)
    report(progress, 0.1, "DINOv2 features of the tiles")
    feats = tile_features(p.shown, vision)[None]
    truth = p.truth_labels()
    answers = _answers(feats, truth, lambda rw: load_policy(config.grid, rw, config.seed)[0], progress)
    race = _race(config.answer, truth)
    report(progress, 1.0, "done")
    return SolveResult(p.image, p.shown, config.grid, truth, answers, race, round(time.perf_counter() - t0, 3),
                       {"grid": config.grid, "seed": config.seed, "shuffle": config.shuffle})


# ---------------------------------------------------------------------------------------------------------- order
@dataclass(frozen=True)
class OrderConfig:
    """Clip ordering: clip ``index`` of ``source`` (``clips_val``: held-out procedural clips; ``photo_pans``: windows
    panning over scikit-image photographs), or a pan over the user's image when one is given (``index`` then seeds
    the pan); ``seed`` of the shipped clip policies; ``shuffle`` the seed of the shuffle; ``answer``: a typed answer
    (frame labels in time order, e.g. ``"3, 1, 4, 2"``; empty: none)."""

    source: str = "clips_val"
    index: int = 0
    seed: int = 0
    shuffle: int = 0
    answer: str = ""

    def __post_init__(self) -> None:
        if self.source not in CLIP_EVAL_COUNTS:
            raise InputError(f"clip source must be one of {', '.join(CLIP_EVAL_COUNTS)}; got {self.source!r}.")
        if not 0 <= int(self.index) <= 1_000_000 or not 0 <= int(self.shuffle) <= 1_000_000:
            raise InputError(f"The clip index and the shuffle seed must be 0 to 1,000,000; got {self.index} and "
                             f"{self.shuffle}.")
        _seeds((self.seed,))
        if len(str(self.answer)) > 200:
            raise InputError("The typed answer is longer than 200 characters; type the frame labels, e.g. 3, 1, 4, 2.")


def run_order(config: OrderConfig, image: Any = None, progress: Progress | None = None,
              token: CancelToken | None = None, vision: Any = None) -> SolveResult:
    """Shuffle a clip's frames and let each shipped clip policy (graded and binary reward) put them in time order:
    a :class:`SolveResult` whose ``image`` is the first frame, ``shown`` the shuffled frames ``[T, 168, 168, 3]``,
    ``truth`` the 1-based answer (for each moment, the shown frame) and ``grid`` 0."""
    from .ordering import FRAMES, clip_frames, frame_features, pan_over
    from .puzzle import truth_of

    progress = checked(progress, token)
    t0 = time.perf_counter()
    if image is not None:
        arr = np.asarray(image.convert("RGB")) if hasattr(image, "convert") else np.asarray(image)
        frames = pan_over(arr, int(config.index), FRAMES)
    else:
        frames = clip_frames(config.source, int(config.index), FRAMES)
    rng = np.random.default_rng(int(config.shuffle))
    order = rng.permutation(FRAMES)
    while (order == np.arange(FRAMES)).all():
        order = rng.permutation(FRAMES)
    report(progress, 0.1, "DINOv2 features of the frames")
    feats = frame_features(frames[order], vision)[None]
    truth = [int(v) + 1 for v in truth_of(order)]
    answers = _answers(feats, truth, lambda rw: load_clip_policy(rw, config.seed)[0], progress)
    race = _race(config.answer, truth)
    report(progress, 1.0, "done")
    return SolveResult(frames[0], frames[order], 0, truth, answers, race, round(time.perf_counter() - t0, 3),
                       {"source": "upload" if image is not None else config.source, "index": int(config.index),
                        "seed": config.seed, "shuffle": config.shuffle})


def preset_image(name: str) -> np.ndarray:
    """A named preset of :data:`inputs.PRESETS` as a uint8 image."""
    from ...registry import choose
    from .inputs import PRESETS
    from .puzzle import photo, source_image

    spec = PRESETS[choose(name, list(PRESETS), "preset")]
    return photo(spec["photo"]) if "photo" in spec else source_image(spec["source"], spec["index"])


# ------------------------------------------------------------------------------------------------------- evaluate
@dataclass(frozen=True)
class EvalConfig:
    """``source``: ``scenes_val`` (held-out scenes) or ``photos`` (held-out scikit-image photographs) for the image
    jigsaw, ``clips_val`` (held-out procedural clips) or ``photo_pans`` (windows panning over photographs) for clip
    ordering; ``count`` images or clips of it (each under SHUFFLES fixed shuffles; default all); ``grids``; ``seeds`` of the shipped policies."""

    source: str = "scenes_val"
    count: int | None = None
    grids: tuple[int, ...] = (2, 3)
    seeds: tuple[int, ...] = SEEDS

    @property
    def clips(self) -> bool:
        """A clip source: the clip-ordering policies are scored (``grids`` unused)."""
        return self.source in CLIP_EVAL_COUNTS

    def __post_init__(self) -> None:
        counts = {**EVAL_COUNTS, **CLIP_EVAL_COUNTS}
        if self.source not in counts:
            raise InputError(f"source must be one of {', '.join(counts)}; got {self.source!r}.")
        if self.count is not None and not 1 <= int(self.count) <= counts[self.source]:
            raise InputError(f"count must be 1 to {counts[self.source]} for {self.source}; got {self.count}.")
        object.__setattr__(self, "grids", tuple(check_grid(g) for g in self.grids) or (2, 3))
        object.__setattr__(self, "seeds", _seeds(self.seeds))


@dataclass
class EvalResult:
    """``rows``: one per (grid, reward, seed): solve rate, per-tile accuracy, training seconds; ``means`` grid ->
    reward -> {solve, tile_acc}; ``paired`` grid -> {gain, low, high, n} (graded minus binary solve rate over
    seeds, 95 % t interval); ``curves`` grid -> reward -> {"step", "<source>_solve": [[per seed]], ...}; for a clip
    source the grid is ``"clip"``;
    ``labels``; ``puzzles`` per grid; ``params``; ``seconds``."""

    source: str
    rows: list[dict]
    means: dict[str, dict[str, dict[str, float]]]
    paired: dict[str, dict[str, float]]
    curves: dict[str, dict[str, dict[str, list]]]
    labels: dict[str, str]
    puzzles: int
    params: int
    seconds: float
    config: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("source", "rows", "means", "paired", "curves", "labels", "puzzles",
                                              "params", "seconds", "config")}


def run_evaluate(config: EvalConfig, progress: Progress | None = None,
                 token: CancelToken | None = None) -> EvalResult:
    """Re-score the shipped policies (see the module docstring)."""
    from ...stats import paired_ci
    from .policy import evaluate
    from .reward import REWARDS

    progress = checked(progress, token)
    t0 = time.perf_counter()
    rows, curves, means, paired = [], {}, {}, {}
    params, puzzles = 0, 0
    if config.clips:
        from .ordering import FRAMES

        sets = [("clip", f"{FRAMES} frames", lambda: clip_eval_set(config.source, config.count), load_clip_policy)]
    else:
        sets = [(grid, f"{grid} x {grid}", lambda g=grid: eval_set(config.source, g, config.count),
                 lambda rw, sd, g=grid: load_policy(g, rw, sd)) for grid in config.grids]
    total = len(sets) * len(REWARDS) * len(config.seeds)
    i = 0
    for grid, name, make_set, loader in sets:
        report(progress, i / total, f"features of the {config.source} puzzles, {name} (cached)")
        feats, orders = make_set()
        puzzles = len(orders)
        for reward in REWARDS:
            for seed in config.seeds:
                report(progress, i / total, f"{name}, {REWARDS.label(reward)}, seed {seed}")
                i += 1
                model, meta = loader(reward, seed)
                params = sum(p.numel() for p in model.parameters())
                r = evaluate(model, feats, orders)
                rows.append({"grid": grid, "reward": reward, "seed": seed, "solve": round(r["solve"], 4),
                             "tile_acc": round(r["tile_acc"], 4), "train_seconds": meta["quality"].get("seconds")})
                c = curves.setdefault(str(grid), {}).setdefault(reward, {"step": meta["extra"]["curves"]["step"]})
                for k, v in meta["extra"]["curves"].items():
                    if k != "step":
                        c.setdefault(k, []).append(v)
        g = str(grid)
        means[g] = {rw: {k: float(np.mean([x[k] for x in rows if x["grid"] == grid and x["reward"] == rw]))
                         for k in ("solve", "tile_acc")} for rw in REWARDS}
        ours = [rw for rw in REWARDS if REWARDS.kind(rw) == "ours"][0]
        base = [rw for rw in REWARDS if REWARDS.kind(rw) == "baseline"][0]
        if len(config.seeds) >= 2:
            a = [x["solve"] for x in rows if x["grid"] == grid and x["reward"] == ours]
            b = [x["solve"] for x in rows if x["grid"] == grid and x["reward"] == base]
            ci = paired_ci(a, b)
            paired[g] = {"gain": round(float(ci.mean), 4), "low": round(float(ci.low), 4),
                         "high": round(float(ci.high), 4), "n": int(ci.n)}
    report(progress, 1.0, "done")
    return EvalResult(config.source, rows, means, paired, curves, {rw: REWARDS.label(rw) for rw in REWARDS},
                      int(puzzles), int(params), round(time.perf_counter() - t0, 2),
                      {"source": config.source, "count": config.count, "grids": list(config.grids),
                       "seeds": list(config.seeds)})


# ------------------------------------------------------------------------------------------------------------ vlm
@dataclass(frozen=True)
class VLMConfig:
    """``recheck_scenes``: re-answer the questions of the first k held-out scenes with both models (0: only the
    recorded evaluation; at most 100)."""

    recheck_scenes: int = 0

    def __post_init__(self) -> None:
        if not 0 <= int(self.recheck_scenes) <= 100:
            raise InputError(f"recheck_scenes must be 0 to 100; got {self.recheck_scenes}.")


@dataclass
class VLMResult:
    """``recorded``: the quality block of the post-trained file (jigsaw solve rates and question accuracy before and
    after, the change and its interval); ``per_kind``: question kind -> {before, after, n} (recorded);
    ``history``: per training step {reward, p_truth}; ``recheck``: {questions, before, after} or None;
    ``trained_params``; ``seconds``."""

    recorded: dict
    per_kind: dict[str, dict[str, float]]
    history: dict[str, list]
    recheck: dict | None
    trained_params: int
    seconds: float
    config: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("recorded", "per_kind", "history", "recheck", "trained_params",
                                              "seconds", "config")}


def run_vlm(config: VLMConfig, progress: Progress | None = None, token: CancelToken | None = None,
            vlm: Any = None) -> VLMResult:
    """The tiny VLM before and after jigsaw post-training (see the module docstring). ``vlm``: the base model."""
    from ... import weights
    from .vlm import VLM_COMMAND, VLM_FILE, load_base, load_post_trained, qa_correct

    progress = checked(progress, token)
    t0 = time.perf_counter()
    state, meta = weights.load(VLM_FILE, made_by=VLM_COMMAND)
    extra = meta.extra
    kinds = extra["qa_kinds"]
    per_kind = {}
    for k in sorted(set(kinds)):
        idx = [i for i, kk in enumerate(kinds) if kk == k]
        per_kind[k] = {"before": float(np.mean([extra["qa_before"][i] for i in idx])),
                       "after": float(np.mean([extra["qa_after"][i] for i in idx])), "n": len(idx)}
    recheck = None
    if config.recheck_scenes:
        report(progress, 0.1, "loading the tiny VLM")
        base = vlm or load_base()
        report(progress, 0.3, f"questions of {config.recheck_scenes} held-out scenes, before")
        before, _ = qa_correct(base, config.recheck_scenes)
        report(progress, 0.6, "after")
        after, _ = qa_correct(load_post_trained(base), config.recheck_scenes)
        recheck = {"questions": len(before), "before": before, "after": after,
                   "accuracy_before": float(np.mean(before)), "accuracy_after": float(np.mean(after))}
    report(progress, 1.0, "done")
    return VLMResult(meta.quality, per_kind, extra["history"], recheck,
                     int(sum(v.numel() for v in state.values())), round(time.perf_counter() - t0, 2),
                     {"recheck_scenes": int(config.recheck_scenes)})
