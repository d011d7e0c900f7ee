"""The jobs of RCPU pruning: what the page and the CLI run. Each is
``run_<what>(inputs..., config, progress=None, token=None) -> dict`` with a frozen config that validates itself
(InputError with the same words for the page and the CLI); a loaded model may be handed in (the page's cached one),
else the job loads it by the config's name.

- :func:`run_prune`: copy the dense causal LM, prune it with one score x compensation, and measure it against the
  dense model (:func:`prune_and_measure`): held-out perplexity at context 128, stored / effective parameters, weight
  memory, prefill and decode tokens per second, per-sublayer calibration vs held-out errors, kept heads and channels,
  and greedy generations for a prompt. The pruned model is discarded unless ``keep_model`` (the CLI writes it to
  disk). ``pruning run``, the page's full run.
- :func:`run_encoder`: the same pruning on the MiniLM sentence encoder, measured by the embedding cosine to the dense
  model (``pruning encoder``, the page's light run).
- :func:`run_lab`: capture one layer's activations for the fast lab (:mod:`.lab`) and sweep N for one setting
  (``pruning lab``, the page's live capture).
- :func:`run_sweep`: one score over prune ratios x compensations, each case pruned from the dense model and measured
  (the MiniLM encoder: embedding cosine; SmolLM2: held-out perplexity), locally or as Ray tasks
  (``backend.executor.map_cases``, :func:`prune_sweep`). Every case draws its calibration sample with the sweep seed
  from its own generator, so the compensations and ratios are compared on the same calibration text and both
  executors give the same numbers (``pruning sweep``).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import InputError
from ...registry import choose
from ...runtime import CancelToken, Progress, checked, provenance, report, sub_progress, timed
from .. import corpus
from ..lm import check_llama_family, perplexity
from . import lmtools
from .lab import capture_layer, n_sweep
from .pruning import COMPENSATIONS, SCORES, PruneConfig, geometry, pairing, prune_llama

DEFAULT_PROMPT = "Explain in one sentence what a Python list comprehension is."
TARGETS = ("encoder", "lm")  # what a sweep prunes: the MiniLM sentence encoder or the SmolLM2 causal LM
EXECUTORS = ("local", "ray")
MAX_PROMPT_CHARS = 2000
_DENSE_CACHE: dict[tuple, dict[str, Any]] = {}


def _int(value: object, low: int, high: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{what} must be between {low:,} and {high:,}; got {value!r}.")


@dataclass(frozen=True)
class Texts:
    """The text of a run; all None: the built-in corpus. ``text``: one text split 70 / 30 (the page's upload);
    ``calib`` / ``heldout``: separate calibration and held-out texts (the CLI's ``--calib`` / ``--eval`` files; a
    missing one is the built-in corpus's part). The names say where each came from (messages, the recorded
    source)."""

    text: str | None = None
    name: str = "the uploaded text"
    calib: str | None = None
    calib_name: str = "the calibration file"
    heldout: str | None = None
    heldout_name: str = "the evaluation file"

    def split(self, tokenizer: Any) -> corpus.TextSplit:
        if self.text is not None:
            return corpus.tokenize_split(tokenizer, self.text, self.name)
        if self.calib is not None or self.heldout is not None:
            return corpus.tokenize_pair(tokenizer, self.calib, self.heldout, self.calib_name, self.heldout_name)
        return corpus.tokenize_split(tokenizer)


def load_lm(model: str | None = None) -> Any:
    """The causal LM to prune (None: the embedded SmolLM2-135M), refused unless Llama-family."""
    from backend.models import load

    lm = load("smollm2", model)
    check_llama_family(lm.model)
    return lm


def text_split(lm: Any, text: str | None = None, source: str | None = None) -> corpus.TextSplit:
    """The tokenised (calibration, held-out) split of the built-in corpus (``text=None``) or of ``text`` (70 / 30)."""
    return corpus.tokenize_split(lm.tokenizer, text, source)


def _generate(lm: Any, model: Any, prompt: str, max_new_tokens: int) -> tuple[str, float]:
    from backend.models.lm import CausalLM

    clock = timed()
    text = CausalLM(tokenizer=lm.tokenizer, model=model, source="").generate(prompt, max_new_tokens=max_new_tokens)
    return text, clock()


def _measure(lm: Any, model: Any, eval_ids: Any, prompt: str, max_new_tokens: int, speed_ids: Any,
             progress: Progress | None) -> dict[str, Any]:
    clock = timed()
    ppl = perplexity(model, eval_ids, progress=sub_progress(progress, 0.0, 0.7))
    eval_s = clock()
    report(progress, 0.75, "speed")
    prefill = lmtools.prefill_tokens_per_second(model, speed_ids)
    report(progress, 0.85, "generating")
    gen, gen_s = _generate(lm, model, prompt, max_new_tokens) if prompt else ("", 0.0)
    n_new = len(lm.tokenizer(gen, add_special_tokens=False)["input_ids"]) if gen else 0
    return {
        "perplexity": ppl, "eval_s": eval_s, "prefill_tokens_per_s": prefill,
        "generation": gen, "generation_s": gen_s, "generated_tokens": n_new,
        "decode_tokens_per_s": (n_new / gen_s) if gen_s > 0 and n_new else None,
        "params_stored": lmtools.stored_parameters(model), "params_effective": lmtools.effective_parameters(model),
        "weight_mb": lmtools.weight_bytes(model) / 2**20,
    }


def prune_and_measure(
    lm: Any,
    cfg: PruneConfig,
    split: corpus.TextSplit | None = None,
    n_eval: int = 16,
    n_track: int = 4,
    prompt: str = DEFAULT_PROMPT,
    max_new_tokens: int = 32,
    progress: Progress | None = None,
    keep_model: bool = False,
) -> dict[str, Any]:
    """Prune a copy of ``lm.model`` with ``cfg`` and compare it with the dense model (see module docstring).

    ``split``: tokenised calibration / held-out text (None: the built-in corpus, see :func:`text_split`);
    ``n_eval`` held-out windows for perplexity, the first ``n_track`` of them also track per-sublayer errors.
    Returns a JSON-able dict (plus ``"_model"`` when ``keep_model``).
    """
    check_llama_family(lm.model)
    clock = timed()
    report(progress, 0.0, "tokenising the text")
    split = split or text_split(lm)
    calib = split.calib_segments(cfg.n_calib, cfg.seqlen, cfg.seed)
    eval_ids = split.heldout_segments(n_eval, cfg.seqlen)
    speed_ids = eval_ids[: min(4, eval_ids.shape[0])]
    digest = hashlib.sha256(split.heldout_tokens.numpy().tobytes()).hexdigest()[:16]
    key = (id(lm.model), getattr(lm, "source", ""), digest, int(eval_ids.shape[0]), cfg.seqlen, prompt, max_new_tokens)
    dense = _DENSE_CACHE.get(key)
    if dense is None:
        report(progress, 0.02, "measuring the dense model")
        dense = _measure(lm, lm.model, eval_ids, prompt, max_new_tokens, speed_ids, sub_progress(progress, 0.02, 0.15))
        _DENSE_CACHE.clear()  # one entry: the latest dense measurement
        _DENSE_CACHE[key] = dense
    report(progress, 0.15, "copying the model")
    model = copy.deepcopy(lm.model)
    try:
        res = prune_llama(model, calib, cfg, heldout_ids=eval_ids[:n_track], progress=sub_progress(progress, 0.15, 0.8))
        report(progress, 0.8, "measuring the pruned model")
        pruned = _measure(lm, model, eval_ids, prompt, max_new_tokens, speed_ids, sub_progress(progress, 0.8, 1.0))
    except BaseException:
        del model
        raise
    geo = geometry(lm.model)
    heads_kept = [sum(h) for h in res.head_keep]
    out: dict[str, Any] = {
        "settings": {**asdict(cfg), "n_eval": int(eval_ids.shape[0]), "n_track": n_track,
                     "text_source": split.source, "calib_tokens_available": int(split.calib_tokens.numel()),
                     "heldout_tokens_available": int(split.heldout_tokens.numel()), "prompt": prompt,
                     "score_label": SCORES.label(cfg.score),
                     "compensation_label": COMPENSATIONS.label(cfg.compensation)},
        "model": {"source": getattr(lm, "source", ""), "layers": geo.layers, "heads": geo.num_heads,
                  "kv_heads": geo.num_kv_heads, "head_dim": geo.head_dim, "intermediate": geo.intermediate},
        "dense": dense,
        "pruned": pruned,
        "heads": {"per_layer": geo.num_heads, "kept_per_layer": heads_kept, "dropped_total": res.heads_dropped,
                  "groups_removed": res.groups_removed, "zeroed": res.heads_zeroed, "head_keep": res.head_keep},
        "channels": {"dense": geo.intermediate, "kept": res.intermediate_size,
                     "kept_per_layer": [sum(c) for c in res.channel_keep],
                     "channel_keep": [[int(v) for v in c] for c in res.channel_keep]},
        "records": [asdict(r) for r in res.records],
        "prune_s": res.seconds,
        "total_s": clock(),
        "recipe": {"method": "RCPU structured pruning (arXiv 2510.07782)", **asdict(cfg),
                   "head_keep": res.head_keep, "intermediate_size": res.intermediate_size,
                   "channels_dropped": [[i for i, k in enumerate(c) if not k] for c in res.channel_keep],
                   "calib_source": split.source, "calib_segments": int(calib.shape[0])},
    }
    out["provenance"] = provenance(cfg.seed, (), **{k: v for k, v in asdict(cfg).items() if k != "seed"},
                                   n_eval=n_eval, text=split.source)
    if keep_model:
        out["_model"], out["_result"] = model, res
    else:
        del model
    return out


def layer_lab(lm: Any, layer: int, split: corpus.TextSplit | None = None, n_list: tuple[int, ...] = (8, 16, 32, 64),
              n_held: int = 16, seqlen: int = 128, seed: int = 0,
              progress: Progress | None = None) -> dict[str, Any]:
    """Capture ``layer``'s sublayer statistics for :mod:`.lab` (returns {"attn", "mlp"} Captured objects plus the
    split's description)."""
    split = split or text_split(lm)
    n_max = max(n_list)
    if int(split.calib_tokens.numel()) < n_max * seqlen:
        raise InputError(f"The calibration text has {int(split.calib_tokens.numel()):,} tokens; the lab needs "
                         f"{n_max * seqlen:,} for N = {n_max}. Use a longer text.")
    calib = split.calib_segments(n_max, seqlen, seed)
    held = split.heldout_segments(n_held, seqlen)
    caps = capture_layer(lm.model, layer, calib, held, list(n_list), progress=progress)
    return {"captured": caps, "source": split.source, "n_held": int(held.shape[0])}


def metrics_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The dense vs pruned metrics table of a :func:`run_prune` result (one row per model)."""
    rows = []
    for name in ("dense", "pruned"):
        m = result[name]
        rows.append({"model": name, "perplexity": m["perplexity"], "params stored": m["params_stored"],
                     "params effective": m["params_effective"], "weights MB": m["weight_mb"],
                     "prefill tok/s": m["prefill_tokens_per_s"], "decode tok/s": m["decode_tokens_per_s"],
                     "eval s": m["eval_s"]})
    return rows


# ------------------------------------------------------------------------------------------------------ sweeps
_SWEEP_MODELS: dict[tuple[str, str | None], Any] = {}


@dataclass(frozen=True)
class SweepCase:
    """One cell of :func:`prune_sweep`: ``target`` is ``encoder`` (MiniLM) or ``lm`` (SmolLM2)."""

    target: str
    ratio: float
    compensation: str
    score: str = "variance"
    n_calib: int = 32
    n_eval: int = 32
    lam: float = 1e-4
    model: str | None = None
    text: str | None = None


def _sweep_model(target: str, model: str | None) -> Any:
    """The dense model of a sweep, loaded once per process (a Ray worker keeps it between cases)."""
    key = (target, model)
    if key not in _SWEEP_MODELS:
        from backend.models import load

        from .encoder import check_bert

        loaded = load("minilm" if target == "encoder" else "smollm2", model)
        (check_bert if target == "encoder" else check_llama_family)(loaded.model)
        _SWEEP_MODELS[key] = loaded
    return _SWEEP_MODELS[key]


def sweep_config(case: SweepCase, seed: int) -> PruneConfig:
    return PruneConfig(ratio=case.ratio, score=case.score, compensation=case.compensation, lam=case.lam,
                       n_calib=case.n_calib, seed=int(seed), propagate=pairing(case.compensation).propagate)


def sweep_case(case: SweepCase, seed: int) -> dict[str, Any]:
    """Prune a copy of the dense model with one (ratio, compensation) and measure it: one row of the sweep."""
    from .encoder import run_encoder_pruning

    cfg = sweep_config(case, seed)
    row: dict[str, Any] = {"target": case.target, "score": case.score, "compensation": case.compensation,
                           "ratio": case.ratio, "n_calib": case.n_calib, "seed": int(seed)}
    m = _sweep_model(case.target, case.model)
    if case.target == "encoder":
        res = run_encoder_pruning(m, cfg, text=case.text, n_eval=case.n_eval)
        row.update({k: res[k] for k in ("cosine_mean", "cosine_min", "params_dense", "params_pruned",
                                        "heads_kept_per_layer", "intermediate_size", "prune_s")})
        return row
    split = text_split(m, case.text)
    calib = split.calib_segments(cfg.n_calib, cfg.seqlen, cfg.seed)
    eval_ids = split.heldout_segments(case.n_eval, cfg.seqlen)
    model = copy.deepcopy(m.model)
    res = prune_llama(model, calib, cfg)
    row.update({"perplexity": perplexity(model, eval_ids), "params_stored": lmtools.stored_parameters(model),
                "params_effective": lmtools.effective_parameters(model),
                "heads_kept_per_layer": [sum(h) for h in res.head_keep],
                "intermediate_size": res.intermediate_size, "prune_s": res.seconds})
    del model
    return row


def prune_sweep(cases: list[SweepCase], seed: int = 0, executor: str = "local",
                progress: Progress | None = None) -> list[dict[str, Any]]:
    """Rows of :func:`sweep_case` for every case, in order; ``executor`` is ``local`` or ``ray``."""
    from ...executor import map_cases

    for case in cases:  # bad settings fail before any model loads
        sweep_config(case, seed)
        choose(case.target, TARGETS, "sweep target")
    return map_cases(sweep_case, cases, executor=executor, progress=progress, seeds=[int(seed)] * len(cases))


# ------------------------------------------------------------------------------------------------------- the jobs
@dataclass(frozen=True)
class RunConfig:
    """One pruning of the causal LM ``model`` (None: the embedded SmolLM2-135M) with ``prune``, measured on
    ``n_eval`` held-out windows (the first ``n_track`` also track per-sublayer errors) and a greedy generation of
    ``max_new_tokens`` from ``prompt`` (empty: none); ``keep_model`` returns the pruned model too (``_model``,
    ``_result``)."""

    prune: PruneConfig = field(default_factory=PruneConfig)
    n_eval: int = 16
    n_track: int = 4
    prompt: str = DEFAULT_PROMPT
    max_new_tokens: int = 32
    model: str | None = None
    keep_model: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.prune, PruneConfig):
            raise InputError("prune must be a PruneConfig.")
        _int(self.n_eval, 1, 4096, "The number of held-out windows")
        _int(self.n_track, 0, 4096, "The number of tracked windows")
        if not isinstance(self.prompt, str) or len(self.prompt) > MAX_PROMPT_CHARS:
            raise InputError(f"The prompt must be text of at most {MAX_PROMPT_CHARS:,} characters.")
        _int(self.max_new_tokens, 0, 512, "The number of new tokens")


def run_prune(texts: Texts | None, config: RunConfig, lm: Any = None, progress: Progress | None = None,
              token: CancelToken | None = None) -> dict[str, Any]:
    """``texts``: the calibration / held-out text (None: the built-in corpus); ``lm``: the loaded causal LM (None:
    loaded from ``config.model``). See :func:`prune_and_measure` for the result."""
    progress = checked(progress, token)
    lm = lm if lm is not None else load_lm(config.model)
    split = (texts or Texts()).split(lm.tokenizer)
    return prune_and_measure(lm, config.prune, split=split, n_eval=config.n_eval, n_track=config.n_track,
                             prompt=config.prompt, max_new_tokens=config.max_new_tokens, progress=progress,
                             keep_model=config.keep_model)


@dataclass(frozen=True)
class EncoderConfig:
    """One pruning of the sentence encoder ``model`` (None: the embedded all-MiniLM-L6-v2) with ``prune``
    (``n_calib`` = calibration paragraphs), measured on ``n_eval`` held-out paragraphs."""

    prune: PruneConfig = field(default_factory=lambda: PruneConfig(ratio=0.3, n_calib=32))
    n_eval: int = 64
    model: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.prune, PruneConfig):
            raise InputError("prune must be a PruneConfig.")
        _int(self.n_eval, 2, 4096, "The number of held-out paragraphs")


def run_encoder(text: str | None, config: EncoderConfig, enc: Any = None, progress: Progress | None = None,
                token: CancelToken | None = None) -> dict[str, Any]:
    """``text``: the user's text split 70 / 30 (None: the built-in corpus); ``enc``: the loaded encoder (None: loaded
    from ``config.model``)."""
    from .encoder import check_bert, run_encoder_pruning

    progress = checked(progress, token)
    if enc is None:
        from backend.models import load

        enc = load("minilm", config.model)
    check_bert(enc.model)
    return run_encoder_pruning(enc, config.prune, text=text, n_eval=config.n_eval, progress=progress)


@dataclass(frozen=True)
class LabConfig:
    """One decoder layer's activations captured for the lab: calibration sizes ``n_list`` (segments of ``seqlen``
    tokens, seed ``seed``), ``n_held`` held-out windows; with ``sweep`` also every compensation's calibration and
    held-out error for each N at ``ratio``, ``score`` and ridge ``lam``."""

    layer: int = 15
    ratio: float = 0.3
    score: str = PruneConfig.score
    lam: float = 1e-4
    n_list: tuple[int, ...] = (8, 16, 32, 64)
    n_held: int = 16
    seqlen: int = 128
    seed: int = 0
    model: str | None = None
    sweep: bool = True

    def __post_init__(self) -> None:
        _int(self.layer, 0, 1023, "The layer")
        PruneConfig(ratio=self.ratio, score=self.score, lam=self.lam, seqlen=self.seqlen)
        object.__setattr__(self, "score", SCORES.key(str(self.score).replace("-", "_")))
        if isinstance(self.n_list, (str, int)) or not self.n_list:
            raise InputError("--n-list needs positive sizes.")
        for n in self.n_list:
            _int(n, 1, 4096, "A calibration size")
        object.__setattr__(self, "n_list", tuple(sorted(set(self.n_list))))
        _int(self.n_held, 1, 4096, "The number of held-out windows")
        _int(self.seed, 0, 2**63 - 1, "The seed")


def run_lab(texts: Texts | None, config: LabConfig, lm: Any = None, progress: Progress | None = None,
            token: CancelToken | None = None) -> dict[str, Any]:
    """``captured`` ({"attn", "mlp"}: the layer's statistics, for :func:`.lab.study_point`), ``source``,
    ``n_held``, and with ``config.sweep`` the ``rows`` of :func:`.lab.n_sweep` for both sublayers."""
    progress = checked(progress, token)
    lm = lm if lm is not None else load_lm(config.model)
    split = (texts or Texts()).split(lm.tokenizer)
    got = layer_lab(lm, config.layer, split=split, n_list=config.n_list, n_held=config.n_held,
                    seqlen=config.seqlen, seed=config.seed, progress=progress)
    rows = []
    if config.sweep:
        for cap in got["captured"].values():
            rows += n_sweep(cap, config.ratio, config.lam, config.score)
    return {"layer": config.layer, "ratio": config.ratio, "score": config.score, "lam": config.lam, "rows": rows,
            **got}


@dataclass(frozen=True)
class SweepConfig:
    """``score`` over ``ratios`` x ``compensations`` (empty: all) on the ``target`` (``encoder``: MiniLM, embedding
    cosine; ``lm``: SmolLM2, held-out perplexity) of ``model`` (None: the embedded one); ``n_calib`` calibration
    paragraphs or segments, ``n_eval`` held-out ones; ``executor`` ``ray`` runs one task per case."""

    target: str = "encoder"
    ratios: tuple[float, ...] = (0.1, 0.2, 0.3)
    compensations: tuple[str, ...] = ()
    score: str = PruneConfig.score
    n_calib: int = 32
    n_eval: int = 32
    model: str | None = None
    seed: int = 0
    executor: str = "local"

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", choose(self.target, TARGETS, "sweep target"))
        object.__setattr__(self, "executor", choose(self.executor, EXECUTORS, "executor"))
        if isinstance(self.ratios, (str, float, int)) or not self.ratios:
            raise InputError("--ratios needs at least one ratio.")
        object.__setattr__(self, "compensations", tuple(COMPENSATIONS.key(str(c).replace("-", "_"))
                                                        for c in (self.compensations or tuple(COMPENSATIONS))))
        _int(self.seed, 0, 2**63 - 1, "The seed")
        for case in self.cases():
            sweep_config(case, self.seed)

    def cases(self, text: str | None = None) -> list[SweepCase]:
        return [SweepCase(target=self.target, ratio=r, compensation=c, score=self.score, n_calib=self.n_calib,
                          n_eval=self.n_eval, model=self.model, text=text)
                for r in self.ratios for c in self.compensations]

    @property
    def metric(self) -> str:
        return "cosine_mean" if self.target == "encoder" else "perplexity"


def run_sweep(text: str | None, config: SweepConfig, progress: Progress | None = None,
              token: CancelToken | None = None) -> dict[str, Any]:
    """``text``: the user's text (None: the built-in corpus). Rows of :func:`sweep_case`, in order."""
    progress = checked(progress, token)
    rows = prune_sweep(config.cases(text), seed=config.seed, executor=config.executor, progress=progress)
    return {"target": config.target, "score": config.score, "metric": config.metric, "rows": rows}
