"""RCPU: structured pruning of LLMs with rotation-constrained error compensation and a variance-aware score.

Paper: "Rotation-Constrained Error Compensation for Structured Pruning of LLMs", Haruta, Matsumoto, Li, Wang,
Kurokawa (KDDI), ICLR 2026, arXiv 2510.07782. Official code: github.com/harutaro/rcpu (``lib/structured_prune.py``),
itself built on FLAP (arXiv 2312.11983, github.com/CASIA-IVA-Lab/FLAP). This module is our own implementation.

What is pruned (as in the paper's code): in every decoder layer only the *input columns* of the attention output
projection ``self_attn.o_proj`` (whole heads) and of the MLP down projection ``mlp.down_proj`` (intermediate channels)
are scored and removed; the coupled rows go with them (q rows of a pruned head, gate/up rows of a pruned channel).

Per sublayer, with weights ``W`` [d_out, d_in] and calibration inputs ``X`` [n, d_in] (tokens as rows; the paper
writes X as d_in x N), dense outputs ``Y = X W^T`` [n, d_out]:

The scores, the selection and the compensations (steps 1-3) are pure tensor functions in
:mod:`backend.compression.criteria`; this module applies them to a model.

1. score every input column j (registry :data:`SCORES`):
   - ``wanda_sp``   gamma_j = ||W[:, j]||_2 * ||X_j||                    (Wanda-sp: weight column norm x input norm)
   - ``variance``   gamma_j = ||W[:, j]||_2 * ||X_j|| * Var(X_j)          (RCPU; Var = population variance)
   - ``fluctuation`` gamma_j = ||W[:, j]||_2^2 * sample-Var(X_j)          (FLAP's WIFV metric)
   ``||X_j||`` is the L2 norm over calibration tokens (the paper's formula); the released code uses the
   mean absolute value instead: ``PruneConfig.input_stat = "mean_abs"`` selects that.
2. keep set K: for o_proj a head's score is the sum of its columns' scores (FLAP squares the column metric first);
   ``int(ratio * num_heads)`` heads with the lowest scores are dropped; for down_proj ``int(ratio * d_in)`` channels.
   (The code keeps scores >= the sorted score at that index; we drop exactly that many, ties broken by index, so the
   kept counts always equal the target.)
3. compensate the kept weights ``W_K`` (registry :data:`COMPENSATIONS`), Z = X_K W_K^T:
   - ``none``            W_K unchanged;
   - ``ls``              ridge least squares towards the original weights ("propls" in the code), lambda = 1e-4:
                         W_K <- (Y^T X_K + lambda W_K)(X_K^T X_K + lambda I)^-1;
   - ``rotation``        orthogonal Procrustes: SVD of M = Y^T Z (= Y Z^T in the paper's notation) = U S V^T,
                         Q = U V^T (fp32, reflections allowed, no det correction), W_K <- Q W_K;
   - ``rotation_scale``  additionally s = tr(S) / ||Z||_F^2, W_K <- s Q W_K;
   - ``bias``            FLAP's bias compensation: b = W_drop mean(X_drop) is added to the layer's output.
4. write W_K back, remove the dropped columns.

Layers go in order, and layer l's calibration inputs come from the already-pruned layers < l (SparseGPT/FLAP
convention; ``propagate="dense"`` instead feeds the dense outputs forward as FLAP's own code does). As in the paper's
code, both sublayers of a layer take their inputs from one forward pass of the still-dense layer.

Grouped-query attention (SmolLM2: 9 query heads over 3 key/value heads, groups of 3). The pruned unit is the
query head (it owns 64 o_proj columns and 64 q_proj rows), which keeps the paper's head granularity; pruning whole
KV groups would leave only 0 / 3 / 6 / 9 heads per layer. A key/value head can only go when all query heads of its
group are dropped. The stock attention maps query head i to KV head i // 3, so removing a single query head
physically would shift that mapping; instead the dropped query heads are zeroed (o_proj columns and q_proj rows,
numerically identical to removal), while a whole dropped group is removed physically (q rows, k/v rows, o_proj
columns), which keeps 3 query heads per KV head. Stored and effective parameter counts are both reported. MLP
channels are always removed physically; a uniform ratio gives every layer the same new ``intermediate_size``.

Left out: the paper's 13B runs, zero-shot task accuracy, SliceGPT. The page and tests use SmolLM2-135M and the
offline CPython documentation corpus instead of Llama-7B and WikiText-2 (see corpus.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...registry import Registry
from ...runtime import Progress, report, timed
from ..lm import check_llama_family
from .criteria import (  # noqa: F401 - the scores and compensations, re-exported for callers of this module
    COMPENSATIONS,
    SCORES,
    ColumnStats,
    Compensated,
    Score,
    column_stats,
    compensate,
    get_compensation,
    get_score,
    head_scores,
    n_to_drop,
    output_error,
    procrustes,
    score_columns,
    select_keep,
)

if TYPE_CHECKING:
    import torch



# ------------------------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class PruneConfig:
    """Settings of one pruning run; defaults are the paper's (RCPU rotation, variance score, ratio 0.2, 128 calibration
    segments of 128 tokens, ridge lambda 1e-4). Checked when made (:meth:`validate`: InputError saying what to
    change); the score and compensation names are stored as their registry keys."""

    ratio: float = 0.2  # fraction of heads and of MLP channels removed in every layer
    score: str = "variance"  # key of SCORES
    compensation: str = "rotation"  # key of COMPENSATIONS
    lam: float = 1e-4  # ridge strength of "ls"
    input_stat: str = "l2"  # "l2" (paper: ||X_j||) or "mean_abs" (released code: mean |X_j|)
    n_calib: int = 128  # calibration segments
    seqlen: int = 128  # tokens per segment (the paper's model.seqlen)
    seed: int = 0  # calibration segment sampling
    propagate: str = "pruned"  # "pruned" (RCPU/Wanda-sp code) or "dense" (FLAP code)
    prune_attention: bool = True
    prune_mlp: bool = True
    physical: bool = True  # remove MLP channels and whole KV groups physically (else zero them)

    def __post_init__(self) -> None:
        self.validate()
        object.__setattr__(self, "score", SCORES.key(str(self.score).replace("-", "_")))
        object.__setattr__(self, "compensation", COMPENSATIONS.key(str(self.compensation).replace("-", "_")))

    def validate(self) -> None:
        if not 0.0 <= float(self.ratio) < 1.0:
            raise InputError(f"The prune ratio must be in [0, 1); got {self.ratio}.")
        get_score(self.score)
        get_compensation(self.compensation)
        if self.input_stat not in ("l2", "mean_abs"):
            raise InputError(f"input_stat must be 'l2' or 'mean_abs'; got {self.input_stat!r}.")
        if self.propagate not in ("pruned", "dense"):
            raise InputError(f"propagate must be 'pruned' or 'dense'; got {self.propagate!r}.")
        if self.lam < 0:
            raise InputError(f"lambda must be >= 0; got {self.lam}.")
        if not 1 <= int(self.n_calib) <= 4096 or not 2 <= int(self.seqlen) <= 8192:
            raise InputError("n_calib must be in [1, 4096] and seqlen in [2, 8192].")


# --------------------------------------------------------------------------------------------------------- sublayer
@dataclass
class SublayerResult:
    """One pruned sublayer: ``keep`` [d_in] bool, ``unit_keep`` [heads or channels] bool, the column scores, the
    compensation, and relative output errors ||Y - Y_hat||_F / ||Y||_F on calibration and held-out tokens."""

    keep: torch.Tensor
    unit_keep: torch.Tensor
    col_scores: torch.Tensor
    comp: Compensated
    calib_err: float
    heldout_err: float | None


def prune_sublayer(
    W: torch.Tensor,
    X: torch.Tensor,
    cfg: PruneConfig,
    head_dim: int | None = None,
    X_held: torch.Tensor | None = None,
) -> SublayerResult:
    """Score, select and compensate one sublayer. ``W`` [d_out, d_in]; ``X`` [n, d_in] calibration inputs; with
    ``head_dim`` the columns are pruned in heads of that width (o_proj), else one by one (down_proj)."""
    import torch

    stats = column_stats(X)
    sc = get_score(cfg.score)
    col = sc.fn(W, stats, cfg.input_stat)
    if head_dim:
        unit_keep = select_keep(head_scores(col, head_dim, sc.head_reduce), cfg.ratio)
        keep = unit_keep.repeat_interleave(head_dim)
    else:
        unit_keep = keep = select_keep(col, cfg.ratio)
    if bool(keep.all()):  # ratio 0 (or rounding to 0): the sublayer is left untouched, Q = I
        comp = Compensated(W.clone(), Q=torch.eye(W.shape[0]), scale=1.0)
        return SublayerResult(keep, unit_keep, col, comp, 0.0, 0.0 if X_held is not None else None)
    comp = compensate(cfg.compensation, W, X, keep, lam=cfg.lam)
    e, y = output_error(W, X, keep, comp)
    held = None
    if X_held is not None and X_held.shape[0]:
        eh, yh = output_error(W, X_held, keep, comp)
        held = math.sqrt(eh / max(yh, 1e-30))
    return SublayerResult(keep, unit_keep, col, comp, math.sqrt(e / max(y, 1e-30)), held)


# ---------------------------------------------------------------------------------------------- model structure
@dataclass
class Geometry:
    num_heads: int
    num_kv_heads: int
    head_dim: int
    hidden: int
    intermediate: int
    layers: int

    @property
    def group(self) -> int:
        return self.num_heads // self.num_kv_heads


def geometry(model: Any) -> Geometry:
    c = model.config
    heads = int(c.num_attention_heads)
    return Geometry(
        num_heads=heads,
        num_kv_heads=int(getattr(c, "num_key_value_heads", None) or heads),
        head_dim=int(getattr(c, "head_dim", None) or c.hidden_size // heads),
        hidden=int(c.hidden_size),
        intermediate=int(c.intermediate_size),
        layers=len(model.model.layers),
    )


# ------------------------------------------------------------------------------------------------- layer surgery
def _set_linear(lin: Any, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
    """Replace ``lin``'s weight (and bias, adding a bias parameter if needed) keeping dtype and device."""
    import torch

    lin.weight = torch.nn.Parameter(weight.to(lin.weight.dtype).contiguous(), requires_grad=False)
    lin.out_features, lin.in_features = weight.shape
    if bias is not None:
        lin.bias = torch.nn.Parameter(bias.to(lin.weight.dtype).contiguous(), requires_grad=False)


def apply_attention(layer: Any, geo: Geometry, head_keep: torch.Tensor, o_weight_kept: torch.Tensor,
                    o_bias: torch.Tensor | None = None, physical: bool = True) -> dict[str, int]:
    """Prune the query heads ``~head_keep`` [H] of one layer.

    ``o_weight_kept`` [d_out, kept_heads * head_dim] is written into the kept o_proj columns; dropped heads are zeroed
    (o_proj columns, q_proj rows); a KV group whose query heads are all dropped is removed physically (``physical``)
    or zeroed (k/v rows too). Returns counts: heads_dropped, groups_removed, heads_zeroed.
    """
    import torch

    attn, hd, g = layer.self_attn, geo.head_dim, geo.group
    H = head_keep.numel()
    col_keep = head_keep.repeat_interleave(hd)
    W = torch.zeros_like(attn.o_proj.weight)
    W[:, col_keep] = o_weight_kept.to(W.dtype)
    bias = attn.o_proj.bias.detach().clone() if attn.o_proj.bias is not None else None
    if o_bias is not None:
        bias = (bias if bias is not None else torch.zeros(W.shape[0], dtype=W.dtype)) + o_bias.to(W.dtype)
    _set_linear(attn.o_proj, W, bias)
    with torch.no_grad():
        attn.q_proj.weight[~col_keep] = 0
        if attn.q_proj.bias is not None:
            attn.q_proj.bias[~col_keep] = 0
    group_keep = head_keep.reshape(-1, g).any(1)  # [H_kv]
    kv_cols = group_keep.repeat_interleave(hd)
    with torch.no_grad():
        for lin in (attn.k_proj, attn.v_proj):
            lin.weight[~kv_cols] = 0
            if lin.bias is not None:
                lin.bias[~kv_cols] = 0
    removed = int((~group_keep).sum())
    if physical and removed:
        q_rows = group_keep.repeat_interleave(g).repeat_interleave(hd)  # query heads of kept groups
        for lin, rows in ((attn.q_proj, q_rows), (attn.k_proj, kv_cols), (attn.v_proj, kv_cols)):
            _set_linear(lin, lin.weight[rows], lin.bias[rows] if lin.bias is not None else None)
        _set_linear(attn.o_proj, attn.o_proj.weight[:, q_rows], attn.o_proj.bias)
    dropped = int((~head_keep).sum())
    return {"heads": H, "heads_dropped": dropped, "groups_removed": removed,
            "heads_zeroed": dropped - (removed * g if physical else 0)}


def apply_mlp(layer: Any, channel_keep: torch.Tensor, down_weight_kept: torch.Tensor,
              down_bias: torch.Tensor | None = None, physical: bool = True) -> None:
    """Prune MLP channels ``~channel_keep`` [I]: gate/up rows and down_proj columns, removed (``physical``) or zeroed;
    ``down_weight_kept`` [d_out, kept] goes into the kept down_proj columns, ``down_bias`` is added to its bias."""
    import torch

    mlp = layer.mlp
    bias = mlp.down_proj.bias.detach().clone() if mlp.down_proj.bias is not None else None
    if down_bias is not None:
        bias = (bias if bias is not None else torch.zeros(down_weight_kept.shape[0])) + down_bias.float()
    if physical:
        for lin in (mlp.gate_proj, mlp.up_proj):
            _set_linear(lin, lin.weight[channel_keep], lin.bias[channel_keep] if lin.bias is not None else None)
        _set_linear(mlp.down_proj, down_weight_kept, bias)
        if hasattr(mlp, "intermediate_size"):
            mlp.intermediate_size = int(channel_keep.sum())
    else:
        with torch.no_grad():
            for lin in (mlp.gate_proj, mlp.up_proj):
                lin.weight[~channel_keep] = 0
                if lin.bias is not None:
                    lin.bias[~channel_keep] = 0
        W = torch.zeros_like(mlp.down_proj.weight)
        W[:, channel_keep] = down_weight_kept.to(W.dtype)
        _set_linear(mlp.down_proj, W, bias)


# -------------------------------------------------------------------------------------------------------- pipeline
@dataclass
class LayerRecord:
    """One sublayer of the run (JSON-able)."""

    layer: int
    sublayer: str  # "attn" (o_proj) or "mlp" (down_proj)
    kept: int
    total: int
    calib_err: float
    heldout_err: float | None
    scale: float | None
    reflection: bool | None  # det(Q) < 0
    top_singular: list[float] = field(default_factory=list)  # the 8 largest singular values of M = Y^T Z


@dataclass
class PruneResult:
    """Outcome of :func:`prune_llama`: per-sublayer records, kept heads [L][H] and channel masks [L][I] (lists of
    bools), head accounting, and timings."""

    config: dict[str, Any]
    records: list[LayerRecord]
    head_keep: list[list[bool]]
    channel_keep: list[list[bool]]
    heads_per_layer: int
    heads_dropped: int
    groups_removed: int
    heads_zeroed: int
    intermediate_size: int
    seconds: float
    calib_tokens: int

    def summary(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("channel_keep")
        return d


class _Stop(Exception):
    pass


def _layer_inputs(model: Any, ids: torch.Tensor, batch_size: int) -> list[tuple[torch.Tensor, dict[str, Any]]]:
    """Hidden states entering decoder layer 0 plus the keyword arguments the model passes to its layers, per batch."""
    import torch

    layers = model.model.layers
    caught: list[tuple[torch.Tensor, dict[str, Any]]] = []

    def catch(_mod: Any, args: tuple, kwargs: dict) -> None:
        hidden = args[0] if args else kwargs.pop("hidden_states")
        drop = ("hidden_states", "cache", "past_key_values", "past_key_value")
        kw = {k: v for k, v in kwargs.items() if k not in drop}
        kw["use_cache"] = False
        caught.append((hidden.detach(), kw))
        raise _Stop

    handle = layers[0].register_forward_pre_hook(catch, with_kwargs=True)
    try:
        for i in range(0, ids.shape[0], batch_size):
            try:
                with torch.inference_mode():
                    model(input_ids=ids[i : i + batch_size], use_cache=False)
            except _Stop:
                pass
    finally:
        handle.remove()
    return caught


def _run_layer(layer: Any, batches: list[tuple[torch.Tensor, dict[str, Any]]]) -> list[tuple[torch.Tensor, dict]]:
    import torch

    out = []
    with torch.inference_mode():
        for h, kw in batches:
            o = layer(h, **kw)
            out.append((o[0] if isinstance(o, tuple) else o, kw))
    return out


def _capture(layer: Any, batches: list, names: tuple[str, ...]) -> tuple[dict[str, torch.Tensor], list]:
    """Run ``layer`` over ``batches`` and return the inputs [n, d_in] (float32) of the named linear sublayers plus the
    layer outputs."""
    import torch

    store: dict[str, list[torch.Tensor]] = {n: [] for n in names}
    handles = []
    for n in names:
        def hook(_m: Any, inp: tuple, _out: Any, n: str = n) -> None:
            x = inp[0]
            store[n].append(x.reshape(-1, x.shape[-1]).float().clone())
        handles.append(layer.get_submodule(n).register_forward_hook(hook))
    try:
        outs = _run_layer(layer, batches)
    finally:
        for h in handles:
            h.remove()
    return {n: torch.cat(v) if v else torch.empty(0) for n, v in store.items()}, outs


def prune_llama(
    model: Any,
    calib_ids: torch.Tensor,
    cfg: PruneConfig | None = None,
    heldout_ids: torch.Tensor | None = None,
    progress: Progress | None = None,
    batch_size: int = 8,
) -> PruneResult:
    """Prune a Llama-family causal LM **in place**, layer by layer (copy it first to keep the dense model).

    ``calib_ids`` [N, T] calibration token windows; ``heldout_ids`` [M, T] optional windows whose per-sublayer output
    errors are tracked alongside (they never influence the pruning). Returns a :class:`PruneResult`.
    """
    import torch

    cfg = cfg or PruneConfig()
    cfg.validate()
    check_llama_family(model)
    clock = timed()
    geo = geometry(model)
    if geo.num_heads % geo.num_kv_heads:
        raise InputError("num_attention_heads must be a multiple of num_key_value_heads.")
    model.eval()
    report(progress, 0.0, "capturing the inputs of layer 0")
    calib = _layer_inputs(model, calib_ids, batch_size)
    held = _layer_inputs(model, heldout_ids, batch_size) if heldout_ids is not None and len(heldout_ids) else []
    names = ("self_attn.o_proj", "mlp.down_proj")
    records: list[LayerRecord] = []
    head_keep_all: list[list[bool]] = []
    chan_keep_all: list[list[bool]] = []
    totals = {"heads_dropped": 0, "groups_removed": 0, "heads_zeroed": 0}
    inter = geo.intermediate
    for li, layer in enumerate(model.model.layers):
        X, dense_out = _capture(layer, calib, names)
        Xh, dense_held = _capture(layer, held, names) if held else ({n: None for n in names}, [])
        head_keep = torch.ones(geo.num_heads, dtype=torch.bool)
        chan_keep = torch.ones(geo.intermediate, dtype=torch.bool)
        for name in names:
            is_attn = name.startswith("self_attn")
            if (is_attn and not cfg.prune_attention) or (not is_attn and not cfg.prune_mlp):
                continue
            lin = layer.get_submodule(name)
            W = lin.weight.detach().float()
            res = prune_sublayer(W, X[name], cfg, head_dim=geo.head_dim if is_attn else None, X_held=Xh[name])
            Q = res.comp.Q
            records.append(LayerRecord(
                layer=li, sublayer="attn" if is_attn else "mlp", kept=int(res.unit_keep.sum()),
                total=int(res.unit_keep.numel()), calib_err=res.calib_err, heldout_err=res.heldout_err,
                scale=res.comp.scale, reflection=None if Q is None else bool(torch.linalg.det(Q.double()) < 0),
                top_singular=[] if res.comp.singular_values is None else
                [round(float(s), 4) for s in res.comp.singular_values[:8]],
            ))
            if bool(res.keep.all()):
                continue
            if is_attn:
                head_keep = res.unit_keep
                counts = apply_attention(layer, geo, head_keep, res.comp.weight, res.comp.bias, cfg.physical)
                for k in totals:
                    totals[k] += counts[k]
            else:
                chan_keep = res.unit_keep
                apply_mlp(layer, chan_keep, res.comp.weight, res.comp.bias, cfg.physical)
                inter = int(chan_keep.sum()) if cfg.physical else geo.intermediate
        head_keep_all.append(head_keep.tolist())
        chan_keep_all.append(chan_keep.tolist())
        del X, Xh
        if cfg.propagate == "pruned":
            calib = _run_layer(layer, calib)
            held = _run_layer(layer, held) if held else []
        else:
            calib, held = dense_out, dense_held
        report(progress, (li + 1) / geo.layers, f"layer {li + 1}/{geo.layers} pruned")
    if cfg.physical and cfg.prune_mlp:
        model.config.intermediate_size = inter
    return PruneResult(
        config=asdict(cfg), records=records, head_keep=head_keep_all, channel_keep=chan_keep_all,
        heads_per_layer=geo.num_heads, intermediate_size=inter, seconds=clock(),
        calib_tokens=int(calib_ids.numel()), **totals,
    )


# ------------------------------------------------------------------------------------------------------- presets
@dataclass(frozen=True)
class Method:
    """A named pairing of score and compensation (what the paper's tables call a method); its label is the
    registry's. Called (``method(ratio=0.3, ...)``), it gives the :class:`PruneConfig` of the method."""

    name: str
    score: str
    compensation: str
    propagate: str

    @property
    def label(self) -> str:
        return METHODS.label(self.name)

    def __call__(self, **overrides: Any) -> PruneConfig:
        return PruneConfig(**{"score": self.score, "compensation": self.compensation, "propagate": self.propagate,
                              **overrides})


METHODS: Registry[Method] = Registry("pruning method")
METHODS.add("wanda_sp", Method("wanda_sp", "wanda_sp", "none", "pruned"), label="Wanda-sp", kind="baseline")
METHODS.add("flap", Method("flap", "fluctuation", "bias", "dense"), label="FLAP (fluctuation + bias)",
            kind="baseline")
METHODS.add("variance_none", Method("variance_none", "variance", "none", "pruned"),
            label="variance score, no compensation", kind="ablation")
METHODS.add("propls", Method("propls", "variance", "ls", "pruned"), label="variance score + ridge LS",
            kind="ablation")
METHODS.add("rcpu", Method("rcpu", "variance", "rotation", "pruned"), label="RCPU (variance + rotation)", kind="ours")
METHODS.add("rcpu_scale", Method("rcpu_scale", "variance", "rotation_scale", "pruned"), label="RCPU rotation + scale",
            kind="ours")


def get_method(name: str) -> Method:
    """A named method (score + compensation); InputError lists the valid names."""
    return METHODS.get(str(name).replace("-", "_"))


def config_for(method: str, **overrides: Any) -> PruneConfig:
    """The :class:`PruneConfig` of a named method with ``overrides`` (e.g. ratio, n_calib)."""
    return get_method(method)(**overrides)


def pairing(compensation: str) -> Method:
    """The named method a compensation runs in when only the compensation is chosen (the page, the sweeps): the one
    with the default score (RCPU's variance score) if there is one, else the first with that compensation (FLAP for
    the mean bias, with its fluctuation score and dense propagation)."""
    key = COMPENSATIONS.key(str(compensation).replace("-", "_"))
    methods = [m for m in METHODS.values() if m.compensation == key]
    return next((m for m in methods if m.score == PruneConfig.score), methods[0]) if methods else Method(
        key, PruneConfig.score, key, PruneConfig.propagate)


__all__ = [
    "COMPENSATIONS", "METHODS", "SCORES", "ColumnStats", "Compensated", "LayerRecord", "Method", "PruneConfig",
    "PruneResult", "SublayerResult", "apply_attention", "apply_mlp", "check_llama_family", "column_stats",
    "compensate", "config_for", "geometry", "get_compensation", "get_method", "get_score", "head_scores",
    "n_to_drop", "output_error", "pairing", "procrustes", "prune_llama", "prune_sublayer", "score_columns",
    "select_keep",
]
