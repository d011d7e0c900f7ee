"""The pure entry points of Tactic: what the page, the CLI, the benchmark and the claim tests call.

- :func:`run_compare`: every selector of ``SELECTORS`` on the decode queries of one text (a preset, the user's text
  or the synthetic stand-in): realised mass, error, tokens, bytes, the fixed-median-budget share, the needle recall,
  and (``figures``) the page's drawings: per (layer, head) the sorted score curve with Tactic's fit and each
  selector's positions, and per case (tokens, relative error, mass). ``tactic run`` and ``tactic synth``.
- :func:`run_perplexity`: the teacher-forced perplexity of a text's last positions with the selectors plugged into
  every layer's attention, vs dense (``tactic ppl``).

Each takes ``(text, config, lm=None, progress=None, token=None)``: ``text`` is the user's UTF-8 text (None: the
config's preset), ``lm`` an already loaded ``backend.models`` causal LM (None: loaded from ``config.model``; the
synthetic preset needs none). The configs are frozen and check themselves, so the page and the CLI refuse the same
settings with the same words; the results are small JSON-able summaries (``to_json()``).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, report, sub_progress
from . import evaluation as ev
from .evaluation import MIN_PREFILL
from .inputs import MODEL_FREE, PRESETS
from .model import capture, check_layers, check_model, sparse_perplexity
from .sparse_attention import SELECTORS, LayerCache, TacticConfig, check_p

PPL_MIN_PREFILL = 65  # tokens the perplexity needs before its last positions

# the page's choices (the CLI takes any value the configs accept)
CONTEXT_CHOICES = (512, 1024, 2048, 3072, 4096)
QUERY_CHOICES = (4, 8, 16, 32, 64)
LAYER_CHOICES = tuple(range(30))  # the embedded SmolLM2-135M's layers
BUDGET_CHOICES: tuple[int | str, ...] = ("match", 16, 32, 64, 128, 256, 512, 1024)
PPL_TOKEN_CHOICES = (512, 1024, 2048, 4096)
PPL_LAST_CHOICES = (64, 128, 256)


def _check_int(value: Any, what: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise InputError(f"{what} must be a whole number of at least {lo}; got {value!r}.")
    return int(value)


def check_budget(budget: Any) -> int | str:
    """``"match"`` or a whole number of tokens >= 1 (a numeric string is read as one), else :class:`InputError`."""
    if isinstance(budget, str):
        if budget.strip().lower() == "match":
            return "match"
        try:
            budget = int(budget)
        except ValueError:
            raise InputError(f"The budget must be 'match' or a whole number of tokens; got {budget!r}.") from None
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise InputError(f"The budget must be 'match' or a whole number of tokens; got {budget!r}.")
    if budget < 1:
        raise InputError("The budget must be at least 1 token.")
    return int(budget)


def _check_preset(preset: str, allowed: tuple[str, ...]) -> str:
    return choose(preset, allowed, "preset")


def _check_layers(layers: Any) -> tuple[int, ...]:
    try:
        out = tuple(sorted({int(x) for x in layers}))
    except (TypeError, ValueError):
        raise InputError(f"Layers must be whole numbers, e.g. 0,9,19,29; got {layers!r}.") from None
    if not out:
        raise InputError("Choose at least one layer.")
    if out[0] < 0:
        raise InputError(f"Layers must be 0 or more; got {list(layers)}.")
    return out


def _check_depth(depth: Any) -> float:
    if not isinstance(depth, (int, float)) or math.isnan(float(depth)) or not 0.0 <= float(depth) <= 1.0:
        raise InputError(f"The needle depth must be between 0 and 1; got {depth!r}.")
    return float(depth)


def _set(obj: Any, **values: Any) -> None:
    for k, v in values.items():
        object.__setattr__(obj, k, v)


def _check(token: CancelToken | None) -> None:
    if token is not None:
        token.check()


def _load(lm: Any, model: str | None) -> Any:
    if lm is not None:
        return lm
    from backend.models import load

    return load("smollm2", model)


# ------------------------------------------------------------------------------------------------ compare
@dataclass(frozen=True)
class CompareConfig:
    """The comparison of the selectors on one text. ``preset`` (``inputs.PRESETS``) is read when no text is given;
    ``tokens``: the context (the first T tokens); ``queries``: decode queries, the last N positions; ``p``: the
    target mass P in (0, 1]; ``layers``: layer indices (the synthetic preset draws one stand-in per index);
    ``budget``: tokens per head of the fixed-budget selectors, or ``"match"`` (Tactic's mean per layer and query);
    ``methods``: selector names (None: all); ``model``: None (the embedded SmolLM2-135M) or a Llama-family local
    folder / cached hub name; ``depth``: the needle's depth; ``seed``: the synthetic preset's; ``text_name``: how
    the user's text is named in results and messages; ``figures``: also return the page's drawings."""

    preset: str = "pydoc"
    tokens: int = 1024
    queries: int = 16
    p: float = 0.9
    layers: tuple[int, ...] = (0, 9, 19, 29)
    budget: int | str = "match"
    methods: tuple[str, ...] | None = None
    model: str | None = None
    depth: float = 0.4
    seed: int = 0
    text_name: str = "the text"
    figures: bool = True

    def __post_init__(self) -> None:
        queries = _check_int(self.queries, "The number of decode queries", 1)
        tokens = _check_int(self.tokens, "The context length in tokens", 1)
        if tokens - queries < MIN_PREFILL:
            raise InputError(f"A context of {tokens} tokens leaves fewer than {MIN_PREFILL} prefill tokens before "
                             f"{queries} decode queries; use a longer context or fewer queries.")
        methods = None if self.methods is None else tuple(SELECTORS.key(m) for m in self.methods)
        if methods is not None and not methods:
            raise InputError("Choose at least one selector.")
        _set(self, preset=_check_preset(self.preset, tuple(PRESETS)), tokens=tokens, queries=queries,
             p=check_p(self.p), layers=_check_layers(self.layers), budget=check_budget(self.budget),
             methods=methods, model=(str(self.model).strip() or None) if self.model is not None else None,
             depth=_check_depth(self.depth), seed=_check_int(self.seed, "The seed", 0))


@dataclass
class CompareResult:
    """``summary``: ``evaluation.summary`` (per selector mass, error, tokens, bytes, seconds; the oracle need);
    ``fixed_median_budget``; ``text`` (source, tokens); ``needle`` (None without one); ``capture_s``; with
    ``figures``: ``curves`` and ``positions`` per ``"layer/head"`` at the last query, ``points`` per selector."""

    summary: dict[str, Any]
    fixed_median_budget: dict[str, Any]
    text: dict[str, Any]
    needle: dict[str, Any] | None
    capture_s: float
    curves: dict[str, Any] | None = None
    positions: dict[str, Any] | None = None
    points: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """One flat dict: the summary's keys, then the rest (the drawings only when computed)."""
        out = dict(self.summary)
        out.update(fixed_median_budget=self.fixed_median_budget, needle=self.needle, text=self.text,
                   capture_s=self.capture_s)
        for k in ("curves", "positions", "points"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out


def run_compare(text: str | None, config: CompareConfig, lm: Any = None, progress: Progress | None = None,
                token: CancelToken | None = None) -> CompareResult:
    """Every selector (``config.methods``) on the last ``config.queries`` positions of ``text`` (None: the preset)
    in each chosen layer; see :class:`CompareResult`."""
    cfg = config
    _check(token)
    t0 = time.perf_counter()
    needle: list[int] = []
    if text is None and cfg.preset in MODEL_FREE:
        cap = ev.synthetic_capture(cfg.tokens, cfg.layers, cfg.seed)
        source = f"synthetic q, k, v of SmolLM2's shapes (seed {cfg.seed})"
        n_tokens = cfg.tokens
    else:
        report(progress, 0.0, "loading the model")
        lm = _load(lm, cfg.model)
        layers = check_layers(cfg.layers, check_model(lm.model)["layers"])
        need = cfg.queries + MIN_PREFILL
        if text is not None:
            prompt = ev.text_prompt(lm.tokenizer, text, cfg.tokens, cfg.text_name, need)
        else:
            prompt = ev.preset_prompt(lm.tokenizer, cfg.preset, cfg.tokens, need, cfg.depth)
        t0 = time.perf_counter()  # the capture alone (the model and the tokeniser are not timed)
        cap = capture(lm, prompt.ids, layers, progress=sub_progress(progress, 0.0, 0.5))
        source, n_tokens, needle = prompt.source, int(prompt.ids.shape[1]), prompt.needle
    capture_s = time.perf_counter() - t0
    _check(token)
    an = ev.analyse(cap, cfg.queries, cfg.p, cfg.budget, list(cfg.methods) if cfg.methods else None,
                    keep_masks=cfg.figures or bool(needle), progress=sub_progress(progress, 0.5, 0.85))
    _check(token)
    res = CompareResult(ev.summary(an), ev.fixed_median_budget(cap, an),
                        {"source": source, "tokens": n_tokens},
                        ev.needle_recall(an, needle) if needle else None, capture_s)
    if cfg.figures:
        report(progress, 0.9, "drawing the score curves")
        heads = int(an.need.shape[2])
        caches = {layer: LayerCache(cap[layer]["k"], an.n_prefill, cap[layer]["v"]) for layer in an.layers}
        res.curves = {f"{layer}/{h}": ev.score_curve(cap, layer, h, cfg.queries, cache=caches[layer])
                      for layer in an.layers for h in range(heads)}
        res.positions = {f"{layer}/{h}": ev.positions(an, layer, h) for layer in an.layers for h in range(heads)}
        res.points = {m: {"tokens": d["tokens"].flatten().tolist(), "rel_err": d["rel_err"].flatten().tolist(),
                          "mass": d["mass"].flatten().tolist()} for m, d in an.cases.items()}
    report(progress, 1.0, "done")
    return res


# ------------------------------------------------------------------------------------------------ perplexity
@dataclass(frozen=True)
class PerplexityConfig:
    """Perplexity through the selectors. ``preset``: ``pydoc`` or ``needle`` when no text is given; ``tokens``:
    the token ids read from the text (the last ``last`` of its ``tokens - 1`` predictions attend through the
    selector); ``methods``: selector names; ``layers``: None (every layer) or the layers that attend sparsely; the
    rest as in :class:`CompareConfig`."""

    preset: str = "pydoc"
    tokens: int = 1024
    last: int = 128
    p: float = 0.9
    budget: int | str = "match"
    methods: tuple[str, ...] = ("tactic",)
    layers: tuple[int, ...] | None = None
    model: str | None = None
    depth: float = 0.4
    text_name: str = "the text"

    def __post_init__(self) -> None:
        last = _check_int(self.last, "The positions through the selector", 1)
        tokens = _check_int(self.tokens, "The text length in tokens", 1)
        methods = tuple(SELECTORS.key(m) for m in self.methods)
        if not methods:
            raise InputError("Choose at least one selector.")
        texts = ev.TEXT_PRESETS
        if str(self.preset).strip().lower() in MODEL_FREE:
            raise InputError(f"The perplexity needs a real text: choose the {' or '.join(texts)} preset or give a "
                             "text of your own.")
        _set(self, preset=_check_preset(self.preset, texts), tokens=tokens, last=last, p=check_p(self.p),
             budget=check_budget(self.budget), methods=methods,
             layers=None if self.layers is None else _check_layers(self.layers),
             model=(str(self.model).strip() or None) if self.model is not None else None,
             depth=_check_depth(self.depth))


@dataclass
class PerplexityResult:
    """``dense`` (perplexity, bytes, tokens, seconds), ``methods`` (per selector: perplexity, its ratio to dense,
    KV bytes and their ratio, tokens per head, seconds, per-layer bytes ratio), ``prefill_s``, ``settings``,
    ``text`` (source, tokens)."""

    dense: dict[str, Any]
    methods: dict[str, dict[str, Any]]
    prefill_s: float
    settings: dict[str, Any]
    text: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_perplexity(text: str | None, config: PerplexityConfig, lm: Any = None, progress: Progress | None = None,
                   token: CancelToken | None = None) -> PerplexityResult:
    """Teacher-forced perplexity of the last ``config.last`` tokens of ``text`` (None: the preset), dense and through
    each selector of ``config.methods`` (``model.sparse_perplexity``)."""
    cfg = config
    _check(token)
    report(progress, 0.0, "loading the model")
    lm = _load(lm, cfg.model)
    geo = check_model(lm.model)
    layers = check_layers(cfg.layers, geo["layers"]) if cfg.layers is not None else None
    need = cfg.last + PPL_MIN_PREFILL
    if text is not None:
        prompt = ev.text_prompt(lm.tokenizer, text, cfg.tokens, cfg.text_name, need)
    else:
        prompt = ev.preset_prompt(lm.tokenizer, cfg.preset, cfg.tokens, need, cfg.depth)
    _check(token)
    res = sparse_perplexity(lm, prompt.ids, list(cfg.methods), cfg.p, cfg.budget, cfg.last, layers,
                            cfg=TacticConfig(p=cfg.p), progress=progress)
    return PerplexityResult(res["dense"], res["methods"], res["prefill_s"], res["settings"],
                            {"source": prompt.source, "tokens": int(prompt.ids.shape[1])})


__all__ = [
    "BUDGET_CHOICES", "CONTEXT_CHOICES", "LAYER_CHOICES", "PPL_LAST_CHOICES", "PPL_TOKEN_CHOICES", "QUERY_CHOICES",
    "CompareConfig", "CompareResult", "PerplexityConfig", "PerplexityResult", "check_budget", "run_compare",
    "run_perplexity",
]
