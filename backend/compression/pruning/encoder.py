"""RCPU on an encoder: structured pruning of all-MiniLM-L6-v2 (a 6-layer BERT, 12 heads of 32, FFN 1536).

The same algorithm as :mod:`backend.compression.pruning` (paper: arXiv 2510.07782), mapped onto BERT layers:
``attention.output.dense`` is the o_proj analogue (its input columns are pruned in whole heads, with the coupled
query/key/value rows) and ``output.dense`` the down_proj analogue (FFN channels, with the coupled
``intermediate.dense`` rows). These layers carry biases: scores and compensations work on the bias-free outputs
Y = X W^T (Procrustes on Y vs Z = X_K W_K^T) and the bias b is kept as it is (FLAP's mean-bias term is added to it).
Padding tokens are left out of the calibration statistics. BERT has one key/value head per query head, so every
dropped head is removed physically (its attention reshapes infer the head count).

Quality metric: cosine between the pruned and the dense model's sentence embeddings (masked mean pooling, L2
normalised) on held-out paragraphs.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...runtime import Progress, report, timed
from ..lm import has_submodule
from .pruning import LayerRecord, PruneConfig, prune_sublayer

if TYPE_CHECKING:
    import torch

SUBLAYERS = ("attention.output.dense", "output.dense")


class _Stop(Exception):
    pass


def check_bert(model: Any) -> None:
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is None or not len(layers) or not all(has_submodule(layers[0], n) for n in
                                                      ("attention.self.query", *SUBLAYERS, "intermediate.dense")):
        raise InputError("This model is not a BERT-style encoder (encoder.layer[i].attention.output.dense and "
                         "output.dense are needed).")


def paragraphs(text: str, min_chars: int = 80) -> list[str]:
    """Non-trivial paragraphs of ``text`` (blank-line separated, whitespace collapsed)."""
    out = [" ".join(p.split()) for p in text.split("\n\n")]
    return [p for p in out if len(p) >= min_chars]


@dataclass
class EncoderPruneResult:
    config: dict[str, Any]
    records: list[LayerRecord]
    head_keep: list[list[bool]]
    intermediate_size: int
    seconds: float


def _linear(lin: Any, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
    import torch

    lin.weight = torch.nn.Parameter(weight.to(lin.weight.dtype).contiguous(), requires_grad=False)
    lin.out_features, lin.in_features = weight.shape
    if bias is not None:
        lin.bias = torch.nn.Parameter(bias.to(lin.weight.dtype).contiguous(), requires_grad=False)


def prune_encoder(model: Any, calib: dict[str, torch.Tensor], cfg: PruneConfig | None = None,
                  held: dict[str, torch.Tensor] | None = None, progress: Progress | None = None) -> EncoderPruneResult:
    """Prune a BERT encoder **in place**, layer by layer, on tokenised calibration paragraphs ``calib``
    (``input_ids`` / ``attention_mask`` [B, T]); ``held`` optionally tracks held-out sublayer errors."""
    import torch

    cfg = cfg or PruneConfig()
    cfg.validate()
    check_bert(model)
    clock = timed()
    model.eval()
    layers = model.encoder.layer
    heads = int(model.config.num_attention_heads)
    hd = int(model.config.hidden_size) // heads

    def entry(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict, torch.Tensor]:
        caught: list = []

        def hook(_m: Any, args: tuple, kwargs: dict) -> None:
            caught.append((args[0] if args else kwargs.pop("hidden_states"), {k: v for k, v in kwargs.items()
                                                                                 if k != "hidden_states"}))
            raise _Stop

        h = layers[0].register_forward_pre_hook(hook, with_kwargs=True)
        try:
            with torch.inference_mode():
                model(**batch)
        except _Stop:
            pass
        finally:
            h.remove()
        return caught[0][0], caught[0][1], batch["attention_mask"].bool().reshape(-1)

    def run(layer: Any, state: tuple) -> tuple[dict[str, torch.Tensor], tuple]:
        hidden, kw, mask = state
        store: dict[str, torch.Tensor] = {}
        handles = [layer.get_submodule(n).register_forward_hook(
            lambda _m, inp, _o, n=n: store.__setitem__(n, inp[0].reshape(-1, inp[0].shape[-1])[mask].float()))
            for n in SUBLAYERS]
        try:
            with torch.inference_mode():
                out = layer(hidden, **kw)
        finally:
            for h in handles:
                h.remove()
        return store, ((out[0] if isinstance(out, tuple) else out), kw, mask)

    state = entry(calib)
    hstate = entry(held) if held is not None else None
    records, head_keep_all, inter = [], [], int(model.config.intermediate_size)
    for li, layer in enumerate(layers):
        X, dense_next = run(layer, state)
        Xh, dense_held = run(layer, hstate) if hstate is not None else ({n: None for n in SUBLAYERS}, None)
        head_keep = torch.ones(heads, dtype=torch.bool)
        for name in SUBLAYERS:
            is_attn = name.startswith("attention")
            lin = layer.get_submodule(name)
            res = prune_sublayer(lin.weight.detach().float(), X[name], cfg, hd if is_attn else None, Xh[name])
            records.append(LayerRecord(li, "attn" if is_attn else "mlp", int(res.unit_keep.sum()),
                                       int(res.unit_keep.numel()), res.calib_err, res.heldout_err, res.comp.scale,
                                       None))
            if bool(res.keep.all()):
                continue
            bias = lin.bias.detach().clone()
            if res.comp.bias is not None:
                bias = bias + res.comp.bias.float()
            _linear(lin, res.comp.weight, bias)  # bias kept (plus FLAP's mean term)
            if is_attn:
                head_keep = res.unit_keep
                rows = res.keep
                att = layer.attention.self
                for q in (att.query, att.key, att.value):
                    _linear(q, q.weight[rows], q.bias[rows])
                att.num_attention_heads = int(head_keep.sum())
                att.all_head_size = int(rows.sum())
            else:
                up = layer.intermediate.dense
                _linear(up, up.weight[res.keep], up.bias[res.keep])
                inter = int(res.keep.sum())
        head_keep_all.append(head_keep.tolist())
        if cfg.propagate == "pruned":
            state = run(layer, state)[1]
            hstate = run(layer, hstate)[1] if hstate is not None else None
        else:
            state, hstate = dense_next, dense_held
        report(progress, (li + 1) / len(layers), f"layer {li + 1}/{len(layers)} pruned")
    model.config.intermediate_size = inter
    return EncoderPruneResult(asdict(cfg), records, head_keep_all, inter, clock())


def run_encoder_pruning(enc: Any, cfg: PruneConfig, text: str | None = None, n_eval: int = 64,
                        max_length: int = 128, progress: Progress | None = None) -> dict[str, Any]:
    """Prune a copy of a :class:`~backend.models.text.TextEncoder` (MiniLM by default) on paragraphs of the built-in
    corpus (or ``text``), 70 / 30 split; report the mean and minimum cosine between dense and pruned embeddings of
    ``n_eval`` held-out paragraphs, and parameter counts."""
    import torch

    from backend.models.text import TextEncoder

    from ..corpus import builtin_text, split_text

    cal_text, held_text = split_text(text if text is not None else builtin_text())
    cal, hel = paragraphs(cal_text), paragraphs(held_text)[:n_eval]
    if len(cal) < cfg.n_calib or len(hel) < 2:
        raise InputError(f"The text has {len(cal)} calibration and {len(hel)} held-out paragraphs; {cfg.n_calib} and "
                         "2 are needed. Use fewer calibration segments or a longer text.")
    g = torch.Generator().manual_seed(cfg.seed)
    pick = torch.randperm(len(cal), generator=g)[: cfg.n_calib].tolist()

    def tok(ps: list[str]) -> dict[str, torch.Tensor]:
        return dict(enc.tokenizer(ps, padding=True, truncation=True, max_length=max_length, return_tensors="pt"))

    model = copy.deepcopy(enc.model)
    res = prune_encoder(model, tok([cal[i] for i in pick]), cfg, tok(hel[: min(16, len(hel))]), progress=progress)
    dense_e = enc.embed(hel, max_length=max_length)
    pruned_e = TextEncoder(enc.tokenizer, model, enc.source).embed(hel, max_length=max_length)
    cos = (dense_e * pruned_e).sum(1)
    return {
        "settings": {**asdict(cfg), "n_eval": len(hel), "max_length": max_length},
        "cosine_mean": float(cos.mean()), "cosine_min": float(cos.min()),
        "params_dense": int(sum(p.numel() for p in enc.model.parameters())),
        "params_pruned": int(sum(p.numel() for p in model.parameters())),
        "heads_kept_per_layer": [sum(h) for h in res.head_keep], "intermediate_size": res.intermediate_size,
        "records": [asdict(r) for r in res.records], "prune_s": res.seconds,
    }
