"""Page- and CLI-level jobs of the pruning method: pure functions ``(inputs, config, progress) -> small result``.

- :func:`run_pruning`: copy the dense model, prune it with one score x compensation, and measure it against the dense
  model: held-out perplexity at context 128, stored / effective parameters, weight memory, prefill and decode tokens
  per second, per-sublayer calibration vs held-out errors, kept heads and channels, and greedy generations for a
  prompt. The pruned model is discarded unless ``keep_model`` (the CLI writes it to disk).
- :func:`layer_lab`: capture one layer's activations for the fast lab (see lab.py).
- :func:`prune_sweep`: one score over prune ratios x compensations, each case pruned from the dense model and
  measured (the MiniLM encoder: embedding cosine; SmolLM2: held-out perplexity), locally or as Ray tasks
  (``backend.executor.map_cases``). Every case draws its calibration sample with the sweep seed from its own
  generator, so the compensations and ratios are compared on the same calibration text and both executors give the
  same numbers.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from ..runtime import Progress, provenance, report, sub_progress, timed
from . import corpus, lmtools
from .lab import capture_layer
from .pruning import COMPENSATIONS, SCORES, PruneConfig, check_llama_family, geometry, prune_llama

DEFAULT_PROMPT = "Explain in one sentence what a Python list comprehension is."
_DENSE_CACHE: dict[tuple, dict[str, Any]] = {}


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
    ppl = lmtools.perplexity(model, eval_ids, progress=sub_progress(progress, 0.0, 0.7))
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


def run_pruning(
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
    cfg.validate()
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
    """Capture ``layer``'s sublayer statistics for :mod:`backend.compression.lab` (returns {"attn", "mlp"} Captured
    objects plus the split's description)."""
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
    """The dense vs pruned metrics table of a :func:`run_pruning` result (one row per model)."""
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
    cfg = PruneConfig(ratio=case.ratio, score=case.score, compensation=case.compensation, lam=case.lam,
                      n_calib=case.n_calib, seed=int(seed),
                      propagate="dense" if case.compensation == "bias" else "pruned")
    cfg.validate()
    return cfg


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
    row.update({"perplexity": lmtools.perplexity(model, eval_ids), "params_stored": lmtools.stored_parameters(model),
                "params_effective": lmtools.effective_parameters(model),
                "heads_kept_per_layer": [sum(h) for h in res.head_keep],
                "intermediate_size": res.intermediate_size, "prune_s": res.seconds})
    del model
    return row


def prune_sweep(cases: list[SweepCase], seed: int = 0, executor: str = "local",
                progress: Progress | None = None) -> list[dict[str, Any]]:
    """Rows of :func:`sweep_case` for every case, in order; ``executor`` is ``local`` or ``ray``."""
    from ..executor import map_cases

    for case in cases:  # bad settings fail before any model loads
        sweep_config(case, seed)
        if case.target not in ("encoder", "lm"):
            raise InputError(f"Unknown sweep target {case.target!r}; use encoder or lm.")
    return map_cases(sweep_case, cases, executor=executor, progress=progress, seeds=[int(seed)] * len(cases))
