"""STaMP in a real causal LM: fake-quantization forward pre-hooks on every decoder linear layer's input.

Paper: Federici et al., "STaMP: Sequence Transformation and Mixed Precision for Low-Precision Activation
Quantization", ICLR 2026, arXiv 2510.26771. The tensor maths is :mod:`backend.compression.stamp.stamp`.

Every ``nn.Linear`` of the decoder layers (q/k/v/o_proj, gate/up/down_proj; not ``lm_head``) gets a forward pre-hook
that replaces its input X [B, s, d] by X_hat for a whole prefill sequence (teacher-forced perplexity over windows of
``seqlen`` tokens). Weights stay float32 unless ``weight_bits`` is set (symmetric per-channel RTN of the weight the
layer really multiplies: W, W R for the Hadamard rotation, W diag(s) for SmoothQuant).

| method | activation X_hat | kind |
|--------|------------------|------|
| ``dense`` | X | reference |
| ``a8`` | Q8(X) per token | reference |
| ``a4`` | Q4(X) per token (RTN, no transform) | baseline |
| ``a4_tok0`` | token 0 (the sink tokens) at 8 bits, the rest at 4, no transform (4 + 4 / s bits) | ablation |
| ``a4_first_k`` | the first k raw tokens at 8 bits, the rest at 4 (same average bits, no transform) | ablation |
| ``stamp`` | L^-1 Q(L X), first k transformed rows at 8 bits | ours |
| ``hadamard`` | Q4(X R) R^T, R a randomized block Hadamard of 64 (QuaRot-style) | baseline |
| ``hadamard_tok0`` | as ``a4_tok0`` after R: the sink rule alone, without the sequence transform | ablation |
| ``hadamard_first_k`` | as ``a4_first_k`` after R | ablation |
| ``hadamard_stamp`` | L^-1 Q(L X R) R^T | ours |
| ``smoothquant`` | Q4(X / s) s, s = max|X|^0.5 / max|W|^0.5 from calibration windows | baseline |

The sink rule (``sink_tokens``, default 1): the first token of each window is SmolLM2's attention sink and carries
massive activations in some linear inputs (in the down_proj inputs its largest value is up to about 2,000 times the
median token's, see :func:`sink_profile`); STaMP keeps it at the high bit-width outside
the sequence transform (as the spec does for a vision model's CLS token) and counts it among the k high-precision
tokens, so the average stays 4 + 4 k / s. Without the rule the Haar detail coefficients that touch token 0 are
quantized at 4 bits on the sink's scale and their error lands on the tokens of its block. Measured on 8 held-out
windows of 256 tokens (k = 8, 4.125 bits; ``test_full_references_and_sink_ablation`` in
``tests/backend/test_stamp_claims.py``): Hadamard + STaMP 22.9 with the rule vs 180 without it (Hadamard alone 64.2,
dense 17.4); A4 + STaMP 175 vs 3,880 (A4 37,157).
The rule alone carries much of that gain, which is why ``hadamard_tok0`` / ``a4_tok0`` (token 0 at 8 bits, no
sequence transform, 4.016 bits at s = 256) and ``hadamard_first_k`` / ``a4_first_k`` (the first k raw tokens at 8
bits, STaMP's 4.125 bits) are the controls that decide whether the transform itself helps.

Per-window losses: every row carries ``window_nll`` (the mean next-token NLL of each window), so two methods can be
compared paired over windows (:func:`backend.stats.block_bootstrap_mean` of the differences); with
``EvalConfig(cache=True)`` they are kept in the user cache (:mod:`.losses`), keyed by the token windows, the model and
everything that sets the method's quantization.

Causal caveat: mixing tokens along the sequence lets token i's quantization noise depend on later tokens of its block,
so this is a prefill measure; decoding (one token at a time) has no sequence axis and stays at 8-bit activations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...registry import Registry
from ...runtime import CancelToken, Progress, report, sub_progress
from . import stamp as st
from .losses import cache_key, window_nll

if TYPE_CHECKING:
    import torch

    from ..corpus import TextSplit

LINEARS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
           "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
SHORT = {n: n.split(".")[-1].replace("_proj", "") for n in LINEARS}


@dataclass(frozen=True)
class Method:
    """One activation-quantization configuration: ``seq`` = sequence transform or None (no mixing); ``first_k`` =
    the first k rows (raw or transformed) at the high bit-width; ``feature`` = none | rotation (the randomized block
    Hadamard) | smooth (SmoothQuant's scales); ``bits`` = low (the low bit-width everywhere), high (all at the high
    bit-width) or none (dense); ``sink_only``: only the leading sink tokens (``max(1, sink_tokens)``, token 0 by
    default) at the high bit-width, no sequence transform (the sink rule as a control). Called with an :class:`EvalConfig`, it gives the :class:`~.stamp.QuantSpec` of its
    activations under that config (None: not quantized)."""

    seq: str | None
    first_k: bool
    feature: str
    bits: str = "low"
    sink_only: bool = False

    def __call__(self, cfg: EvalConfig) -> st.QuantSpec | None:
        if self.bits == "none":
            return None
        if self.bits == "high":
            return st.QuantSpec("identity", cfg.high_bits, cfg.high_bits, cfg.seqlen, 0)
        if self.sink_only:
            return st.QuantSpec("identity", cfg.low_bits, cfg.high_bits, max(1, cfg.sink_tokens), 0)
        k = cfg.k() if self.first_k else 0
        seq = cfg.transform if self.seq else "identity"
        sink = cfg.sink_tokens if self.seq else 0
        return st.QuantSpec(seq, cfg.low_bits, cfg.high_bits, k, sink, cfg.allocation if self.seq else "first")


METHODS: Registry[Method] = Registry("activation quantization method")
METHODS.add("dense", Method(None, False, "none", "none"), label="Dense (fp32 activations)", kind="reference",
            color="#000000")
METHODS.add("a8", Method(None, False, "none", "high"), label="A8 per token", kind="reference", color="#7f7f7f")
METHODS.add("a4", Method(None, False, "none"), label="A4 per token (RTN)", kind="baseline", color="#1f77b4")
METHODS.add("a4_tok0", Method(None, False, "none", sink_only=True), label="A4, token 0 at 8 bits", kind="ablation",
            color="#c5b0d5", about="the sink rule alone: token 0 at the high bits, no sequence transform")
METHODS.add("a4_first_k", Method(None, True, "none"), label="A4, first k raw tokens at 8 bits", kind="ablation",
            color="#9edae5")
METHODS.add("stamp", Method("haar", True, "none"), label="A4 + STaMP", kind="ours", color="#d62728")
METHODS.add("hadamard", Method(None, False, "rotation"), label="Hadamard (QuaRot-style)", kind="baseline",
            color="#2ca02c")
METHODS.add("hadamard_tok0", Method(None, False, "rotation", sink_only=True), label="Hadamard, token 0 at 8 bits",
            kind="ablation", color="#bcbd22",
            about="the sink rule alone after the rotation: token 0 at the high bits, no sequence transform")
METHODS.add("hadamard_first_k", Method(None, True, "rotation"), label="Hadamard, first k raw tokens at 8 bits",
            kind="ablation", color="#98df8a")
METHODS.add("hadamard_stamp", Method("haar", True, "rotation"), label="Hadamard + STaMP", kind="ours",
            color="#ff7f0e")
METHODS.add("smoothquant", Method(None, False, "smooth"), label="SmoothQuant (alpha 0.5)", kind="baseline",
            color="#9467bd")
DEFAULT_METHODS: tuple[str, ...] = tuple(METHODS)
HEADLINE: str = METHODS.names("ours")[0]  # A4 + STaMP: its bit allocation is the one reported
HEADLINE_BASELINE: str = METHODS.names("baseline")[0]  # A4 per token (RTN), what the headline is compared with
DENSE: str = next(m for m in METHODS if METHODS[m].bits == "none")  # the unquantized reference
# the transforms whose energy concentration is measured: no transform first, then every one not fitted to the data
ENERGY_TRANSFORMS: tuple[str, ...] = (*st.TRANSFORMS.names("baseline"), *(
    n for n in st.TRANSFORMS if st.TRANSFORMS.kind(n) != "baseline" and not st.TRANSFORMS[n].fitted))


@dataclass(frozen=True)
class EvalConfig:
    """Defaults follow the paper: 4-bit activations, 8-bit coefficients, k = s / 32 (64 of 2048), Haar; a randomized
    block Hadamard of 64 as the feature transform; SmoothQuant alpha 0.5. Checked when made (InputError saying what
    to change).

    ``hp_tokens=None`` means s / 32. ``transform`` replaces Haar in the STaMP methods. ``sink_tokens``: leading raw
    tokens kept at high bits outside the transform (counted in k). ``allocation``: ``first`` (paper) or ``energy``.
    ``cache``: keep the per-window losses in the user cache (:func:`.losses.window_nll`)."""

    seqlen: int = 256
    n_windows: int = 4
    low_bits: int = 4
    high_bits: int = 8
    hp_tokens: int | None = None
    transform: str = "haar"
    sink_tokens: int = 1
    allocation: str = "first"
    hadamard_block: int = st.HADAMARD_BLOCK
    smooth_alpha: float = 0.5
    n_calib: int = 4
    weight_bits: int | None = None
    methods: tuple[str, ...] = DEFAULT_METHODS
    stats: bool = True
    energy_transforms: tuple[str, ...] = ENERGY_TRANSFORMS
    batch_size: int = 4
    seed: int = 0
    cache: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "energy_transforms", tuple(self.energy_transforms))
        self.validate()

    def k(self) -> int:
        return int(self.hp_tokens) if self.hp_tokens is not None else max(1, self.seqlen // 32)

    def validate(self) -> None:
        st.check_bits(self.low_bits, "low bit-width")
        st.check_bits(self.high_bits, "high bit-width")
        if self.high_bits < self.low_bits:
            raise InputError(f"The high bit-width ({self.high_bits}) must be at least the low one ({self.low_bits}).")
        if self.weight_bits is not None:
            st.check_bits(self.weight_bits, "weight bit-width")
        if not 32 <= self.seqlen <= 2048:
            raise InputError(f"The context must be 32-2048 tokens; got {self.seqlen}.")
        if not 0 <= self.k() <= self.seqlen:
            raise InputError(f"The number of high-precision tokens must be in [0, {self.seqlen}]; got {self.k()}.")
        if not 0 <= self.sink_tokens <= self.k():
            raise InputError(f"The sink tokens ({self.sink_tokens}) must be between 0 and k ({self.k()}).")
        if not 1 <= self.n_windows <= 256:
            raise InputError(f"The number of windows must be 1-256; got {self.n_windows}.")
        if self.allocation not in ("first", "energy"):
            raise InputError(f"allocation must be 'first' or 'energy'; got {self.allocation!r}.")
        st.TRANSFORMS.get(self.transform)
        for m in self.methods:
            METHODS.get(m)
        for t in self.energy_transforms:
            st.TRANSFORMS.get(t)
        if not 1 <= self.batch_size <= 64:
            raise InputError(f"The batch size must be 1-64; got {self.batch_size}.")

    def spec(self, method: Method) -> st.QuantSpec | None:
        """The quantization of ``method``'s activations under this config."""
        return method(self)


# ------------------------------------------------------------------------------------------------ model structure
def decoder_linears(model: Any) -> list[tuple[int, str, Any]]:
    """[(layer index, short name, nn.Linear)] of every decoder layer (q, k, v, o, gate, up, down)."""
    from ..lm import check_llama_family

    check_llama_family(model)
    return [(i, SHORT[n], layer.get_submodule(n)) for i, layer in enumerate(model.model.layers) for n in LINEARS]


@dataclass
class LayerStats:
    """Sums over the windows of one evaluated method, per (layer, linear): measured ||X_hat - X||^2, Theorem 1's
    bound, ||X||^2, and the number of samples whose error exceeded the bound."""

    err: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    energy: dict[str, float] = field(default_factory=dict)
    violations: int = 0
    samples: int = 0

    def add(self, key: str, err: torch.Tensor, bound: torch.Tensor | None, energy: torch.Tensor) -> None:
        self.err[key] = self.err.get(key, 0.0) + float(err.sum())
        self.energy[key] = self.energy.get(key, 0.0) + float(energy.sum())
        self.samples += int(err.numel())
        if bound is not None:
            self.bound[key] = self.bound.get(key, 0.0) + float(bound.sum())
            self.violations += int((err > bound * (1 + 1e-6) + 1e-9).sum())


class _Hooks:
    """The pre-hooks of one method on one model (installed by :func:`quantized`)."""

    def __init__(self, cfg: EvalConfig, method: Method, smooth: dict[str, torch.Tensor] | None,
                 stats: LayerStats | None, weight_quant: bool):
        self.cfg, self.method, self.smooth, self.stats = cfg, method, smooth, stats
        self.spec = cfg.spec(method)
        self.weight_quant = weight_quant
        self.rot: dict[int, st.BlockRotation] = {}

    def rotation(self, d: int) -> st.BlockRotation:
        if d not in self.rot:
            self.rot[d] = st.block_rotation(d, st.largest_pow2_block(d, self.cfg.hadamard_block), self.cfg.seed)
        return self.rot[d]

    def transform_in(self, key: str, x: torch.Tensor) -> torch.Tensor:
        if self.method.feature == "rotation":
            return self.rotation(x.shape[-1]).apply(x)
        if self.method.feature == "smooth":
            return x / self.smooth[key]
        return x

    def transform_out(self, key: str, x: torch.Tensor) -> torch.Tensor:
        if self.method.feature == "rotation":
            return self.rotation(x.shape[-1]).apply_t(x)
        if self.method.feature == "smooth":
            return x * self.smooth[key]
        return x

    def make(self, key: str) -> Any:
        def hook(module: Any, args: tuple) -> tuple:
            x = args[0]
            if self.spec is None:
                return args
            z = self.transform_in(key, x.float())
            out = st.stamp_quantize(z, self.spec)
            zq = out.x_hat
            # with quantized weights the layer holds W R (or W diag s): feed it the rotated/scaled activation
            xq = zq if self.weight_quant and self.method.feature != "none" else self.transform_out(key, zq)
            if self.stats is not None:
                err = (zq - z).double().pow(2).sum((-1, -2))
                bound = st.theorem1_bound(out.y, out.bits) if self.method.feature != "smooth" else None
                self.stats.add(key, err, bound, z.double().pow(2).sum((-1, -2)))
            return (xq.to(x.dtype), *args[1:])

        return hook


@contextmanager
def quantized(model: Any, cfg: EvalConfig, method_name: str, smooth: dict[str, torch.Tensor] | None = None,
              stats: LayerStats | None = None) -> Iterator[None]:
    """Install the fake-quantization hooks of ``method_name`` (and swap in quantized weights when
    ``cfg.weight_bits``); everything is restored on exit."""
    import torch

    method = METHODS.get(method_name)
    if method.feature == "smooth" and smooth is None:
        raise InputError("SmoothQuant needs calibration scales (smoothquant_calibration).")
    wq = cfg.weight_bits is not None and method.bits != "none"
    h = _Hooks(cfg, method, smooth, stats, wq)
    handles, saved = [], []
    try:
        for li, short, lin in decoder_linears(model):
            key = f"{li}.{short}"
            handles.append(lin.register_forward_pre_hook(h.make(key)))
            if wq:
                w = lin.weight.data
                saved.append((lin, w))
                if method.feature == "rotation":
                    w_eff = h.rotation(w.shape[1]).apply(w)
                elif method.feature == "smooth":
                    w_eff = w * smooth[key][None, :]
                else:
                    w_eff = w
                lin.weight.data = st.quantize_weight_rtn(w_eff, int(cfg.weight_bits)).to(w.dtype)
        with torch.inference_mode():
            yield
    finally:
        for hd in handles:
            hd.remove()
        for lin, w in saved:
            lin.weight.data = w


@contextmanager
def capturing(model: Any, got: dict[str, list[torch.Tensor]], max_batches: int = 1) -> Iterator[None]:
    """While active, store the inputs of the q, o, gate and down linears (q/k/v and gate/up share theirs) of the
    first ``max_batches`` forwards into ``got`` ({"layer.linear": [X [B, s, d]]})."""
    handles = []

    def rec(key: str) -> Any:
        def hook(m: Any, a: tuple) -> None:
            if len(got.setdefault(key, [])) < max_batches:
                got[key].append(a[0].detach().float().clone())

        return hook

    for li, short, lin in decoder_linears(model):
        if short in ("q", "o", "gate", "down"):
            handles.append(lin.register_forward_pre_hook(rec(f"{li}.{short}")))
    try:
        yield
    finally:
        for hd in handles:
            hd.remove()


def capture_inputs(model: Any, ids: torch.Tensor, batch_size: int = 4) -> dict[str, list[torch.Tensor]]:
    """Dense forward over ``ids`` [M, s]; returns {"layer.linear": [X [B, s, d] per batch]}."""
    import torch

    got: dict[str, list[torch.Tensor]] = {}
    with capturing(model, got, max_batches=10**9), torch.inference_mode():
        for i in range(0, ids.shape[0], batch_size):
            model(input_ids=ids[i : i + batch_size], use_cache=False)
    return got


def smoothquant_calibration(model: Any, calib_ids: torch.Tensor, alpha: float = 0.5,
                            batch_size: int = 4) -> dict[str, torch.Tensor]:
    """Per-linear SmoothQuant scales [d_in] from the channel max |X| over ``calib_ids`` [N, s] (dense forward)."""
    import torch

    amax: dict[str, torch.Tensor] = {}
    handles, lins = [], {}

    def rec(key: str) -> Any:
        def hook(m: Any, a: tuple) -> None:
            v = a[0].detach().abs().float().reshape(-1, a[0].shape[-1]).amax(0)
            amax[key] = torch.maximum(amax[key], v) if key in amax else v

        return hook

    for li, short, lin in decoder_linears(model):
        key = f"{li}.{short}"
        lins[key] = lin
        handles.append(lin.register_forward_pre_hook(rec(key)))
    try:
        with torch.inference_mode():
            for i in range(0, calib_ids.shape[0], batch_size):
                model(input_ids=calib_ids[i : i + batch_size], use_cache=False)
    finally:
        for hd in handles:
            hd.remove()
    return {k: st.smoothquant_scales(amax[k], lins[k].weight.detach().float(), alpha) for k in amax}


# ------------------------------------------------------------------------------------------------ energy
def energy_concentration(inputs: dict[str, list[torch.Tensor]], transforms: tuple[str, ...], k: int,
                         frac: float = 1 / 8, sink_tokens: int = 0) -> dict[str, dict[str, list[float]]]:
    """{transform: {linear: [share of the energy in the first ``frac`` of the rows, per layer]}} of the captured
    inputs (raw token order for ``identity``); with ``sink_tokens`` the leading tokens are left out of the
    transform and of the share (their energy is counted in neither part)."""
    out: dict[str, dict[str, list[float]]] = {}
    n_layers = 1 + max(int(key.split(".")[0]) for key in inputs)
    for name in transforms:
        per: dict[str, list[float]] = {}
        for short in ("q", "o", "gate", "down"):
            row = []
            for li in range(n_layers):
                xs = inputs.get(f"{li}.{short}")
                if not xs:
                    continue
                shares = []
                for x in xs:
                    body = x[..., sink_tokens:, :]
                    tr = st.make_transform(name, body.shape[-2], k, body)
                    shares.append(st.energy_share(tr.forward(body), frac))
                row.append(float(sum(shares) / len(shares)))
            per[short] = row
        out[name] = per
    return out


def energy_gains(model: Any, ids: torch.Tensor, transform: str, k: int, sink_tokens: int = 1, frac: float = 1 / 8,
                 batch_size: int = 2) -> dict[str, list[list[float]]]:
    """Per window of ``ids`` [M, s]: {linear: [per layer: [per window: the transform's share of the energy in its
    first ``frac`` of the rows minus the raw token order's]]} of the dense inputs (q, o, gate, down), the first
    ``sink_tokens`` left out of both; the windows' inputs are captured ``batch_size`` at a time and dropped."""
    out: dict[str, list[list[float]]] = {}
    for i in range(0, ids.shape[0], batch_size):
        for key, xs in capture_inputs(model, ids[i:i + batch_size], batch_size).items():
            li, short = key.split(".")
            rows = out.setdefault(short, [])
            rows.extend([] for _ in range(int(li) + 1 - len(rows)))
            for x in xs[0]:
                body = x[None, sink_tokens:, :]
                tr = st.make_transform(transform, body.shape[-2], k - sink_tokens, body)
                rows[int(li)].append(st.energy_share(tr.forward(body), frac) - st.energy_share(body, frac))
    return out


def sink_profile(inputs: dict[str, list[torch.Tensor]]) -> dict[str, dict[str, list[float]]]:
    """Per linear input and layer: the first token's max |x| and energy over the median token's (the attention sink's
    massive activations), {"absmax_ratio" | "energy_ratio": {linear: [per layer]}}."""
    n_layers = 1 + max(int(key.split(".")[0]) for key in inputs)
    out: dict[str, dict[str, list[float]]] = {"absmax_ratio": {}, "energy_ratio": {}}
    for short in ("q", "o", "gate", "down"):
        am, en = [], []
        for li in range(n_layers):
            x = inputs[f"{li}.{short}"][0].double()
            a = x.abs().amax(-1).mean(0)
            e = x.pow(2).sum(-1).mean(0)
            am.append(float(a[0] / a[1:].median()))
            en.append(float(e[0] / e[1:].median()))
        out["absmax_ratio"][short], out["energy_ratio"][short] = am, en
    return out


def token_energy(x: torch.Tensor, transform: str, k: int) -> dict[str, list[float]]:
    """Mean energy per row [s] of one captured input ``x`` [B, s, d] before and after ``transform``."""
    tr = st.make_transform(transform, x.shape[-2], k, x)
    raw = x.double().pow(2).sum(-1).mean(0)
    tra = tr.forward(x).double().pow(2).sum(-1).mean(0)
    return {"raw": raw.tolist(), "transformed": tra.tolist()}


# ------------------------------------------------------------------------------------------------ evaluation
@dataclass
class StampResult:
    """Rows per method (perplexity, per-window NLL, average bits, seconds, extra FLOPs), per-layer statistics, the
    energy concentration (``energy``: whole windows; ``energy_body``: without the sink tokens, as STaMP transforms
    them), the bit allocation."""

    rows: list[dict[str, Any]]
    layers: int
    per_layer: dict[str, dict[str, list[float]]]
    energy: dict[str, dict[str, list[float]]]
    sink: dict[str, dict[str, list[float]]]
    token_energy: dict[str, list[float]]
    bits: list[float]
    config: dict[str, Any]
    tokens: int
    source: str
    seconds: float
    energy_body: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def ppl(self, method: str) -> float:
        return next(r["ppl"] for r in self.rows if r["method"] == method)


def transform_flops(model: Any, cfg: EvalConfig, method: Method) -> tuple[float, float]:
    """(extra FLOPs of the method's transforms, FLOPs of the decoder matmuls) per window of ``cfg.seqlen`` tokens.

    The sequence transform's cost is its registry entry's (:attr:`~.stamp.Transform.flops`: Haar < 4 s d, a matrix
    transform 2 s^2 d); the Hadamard feature rotation is a fast WHT of log2(block) butterflies (s d log2 b each
    way)."""
    s = cfg.seqlen
    extra = mm = 0.0
    seq = st.TRANSFORMS[cfg.transform]
    for _, _, lin in decoder_linears(model):
        d_in, d_out = lin.in_features, lin.out_features
        mm += 2.0 * s * d_in * d_out
        if method.seq:
            extra += seq.flops(s, cfg.k(), cfg.sink_tokens, d_in, d_out)
        if method.feature == "rotation":
            b = st.largest_pow2_block(d_in, cfg.hadamard_block)
            extra += 2.0 * s * d_in * math.log2(max(b, 2))
        elif method.feature == "smooth":
            extra += 0.0  # folded into the previous layer / the weights
    return extra, mm


def evaluate(model: Any, tokenizer: Any, text: str | None = None, cfg: EvalConfig | None = None,
             source: str | None = None, progress: Progress | None = None,
             cancel: CancelToken | None = None, split: TextSplit | None = None) -> StampResult:
    """Perplexity of every method of ``cfg.methods`` on the held-out windows of ``text`` (None: the built-in Python
    reference text; ``split``: an already tokenised calibration / held-out pair, used instead of ``text``), plus
    per-layer error / Theorem 1 bound / SQNR per method and the energy concentration of the dense inputs (when
    ``cfg.stats``)."""
    from ..corpus import tokenize_split

    cfg = cfg or EvalConfig()
    decoder_linears(model)
    t0 = time.perf_counter()
    split = split if split is not None else tokenize_split(tokenizer, text, source)
    ids = split.heldout_segments(cfg.n_windows, cfg.seqlen)
    if ids.shape[0] < cfg.n_windows:  # a short text: the windows it has (the caller's config stays as it is)
        cfg = replace(cfg, n_windows=int(ids.shape[0]))
    progress = cancel.wrap(progress) if cancel is not None else progress
    smooth = None
    if any(METHODS[m].feature == "smooth" for m in cfg.methods):
        calib = split.calib_segments(min(cfg.n_calib, max(1, split.calib_tokens.numel() // cfg.seqlen - 1)),
                                     cfg.seqlen, cfg.seed)
        smooth = smoothquant_calibration(model, calib, cfg.smooth_alpha, cfg.batch_size)
    n_layers = len(model.model.layers)
    rows, per_layer = [], {}
    inputs: dict[str, list[torch.Tensor]] = {}  # the dense pass's first batch, for the energy statistics
    for j, name in enumerate(cfg.methods):
        report(progress, j / (len(cfg.methods) + 1), f"perplexity: {METHODS.label(name)}")
        method = METHODS[name]
        stats = LayerStats() if cfg.stats and method.bits != "none" else None
        t = time.perf_counter()
        grab = capturing(model, inputs) if cfg.stats and method.bits == "none" and not inputs else nullcontext()
        key = cache_key(model, cfg, method) if cfg.cache and stats is None and isinstance(grab, nullcontext) else None
        with quantized(model, cfg, name, smooth, stats), grab:
            nll = window_nll(model, ids, cfg.batch_size, sub_progress(progress, j / (len(cfg.methods) + 1),
                                                                      (j + 1) / (len(cfg.methods) + 1)), key)
        ppl = math.exp(sum(nll) / len(nll))
        secs = time.perf_counter() - t
        spec = cfg.spec(method)
        extra, mm = transform_flops(model, cfg, method)
        row = {"method": name, "label": METHODS.label(name), "kind": METHODS.kind(name), "ppl": ppl,
               "avg_bits": spec.average_bits(cfg.seqlen) if spec else 32.0,
               "weight_bits": cfg.weight_bits if (cfg.weight_bits and spec) else 32,
               "seconds": secs, "extra_flops_pct": 100.0 * extra / mm, "window_nll": nll}
        if stats is not None:
            err, en = sum(stats.err.values()), sum(stats.energy.values())
            row["sqnr_db"] = 10 * math.log10(en / max(err, 1e-300))
            if stats.bound:
                row["bound_violations"] = stats.violations
                row["bound_ratio"] = err / max(sum(stats.bound.values()), 1e-300)
            per_layer[name] = _per_layer(stats, n_layers)
        rows.append(row)
    energy: dict[str, dict[str, list[float]]] = {}
    body: dict[str, dict[str, list[float]]] = {}
    sink: dict[str, dict[str, list[float]]] = {}
    tok: dict[str, list[float]] = {}
    if cfg.stats:
        report(progress, len(cfg.methods) / (len(cfg.methods) + 1), "energy concentration")
        if not inputs:
            inputs = capture_inputs(model, ids[: min(cfg.batch_size, ids.shape[0])], cfg.batch_size)
        names = tuple(n for n in cfg.energy_transforms if st.TRANSFORMS[n].fits(cfg.seqlen - cfg.sink_tokens))
        energy = energy_concentration(inputs, names, cfg.k(), 1 / 8, 0)
        if cfg.sink_tokens:
            names_b = tuple(n for n in names if st.TRANSFORMS[n].fits(cfg.seqlen - cfg.sink_tokens))
            body = energy_concentration(inputs, names_b, cfg.k() - cfg.sink_tokens, 1 / 8, cfg.sink_tokens)
        sink = sink_profile(inputs)
        mid = n_layers // 2
        tok = token_energy(inputs[f"{mid}.q"][0], cfg.transform, cfg.k())
    report(progress, 1.0, "done")
    spec = cfg.spec(METHODS[HEADLINE])
    bvec = st.bit_vector(cfg.seqlen, spec.hp_tokens, spec.low_bits, spec.high_bits).tolist()
    return StampResult(rows, n_layers, per_layer, energy, sink, tok, bvec,
                       {**asdict(cfg), "hp_tokens": cfg.k(), "methods": list(cfg.methods)},
                       int(ids.numel()), split.source, time.perf_counter() - t0, body)


def _per_layer(stats: LayerStats, n_layers: int) -> dict[str, list[float]]:
    err = [0.0] * n_layers
    bound = [0.0] * n_layers
    en = [0.0] * n_layers
    for key, v in stats.err.items():
        li = int(key.split(".")[0])
        err[li] += v
        en[li] += stats.energy[key]
        bound[li] += stats.bound.get(key, float("nan"))
    return {"err": err, "bound": bound, "energy": en,
            "sqnr_db": [10 * math.log10(e / max(r, 1e-300)) for e, r in zip(en, err, strict=True)]}
