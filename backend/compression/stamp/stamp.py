"""STaMP: sequence transforms and mixed precision for low-bit activation quantization.

Paper: Federici, Del Chiaro, van Breugel, Whatmough, Nagel, "STaMP: Sequence Transformation and Mixed Precision for
Low-Precision Activation Quantization", ICLR 2026, arXiv 2510.26771.

A linear layer's input X (s tokens x d features) is transformed along the *token* axis by an orthonormal L, the
transformed tokens are quantized per token (asymmetric min-max) with a per-token bit vector (the few high-energy
coefficients at 8 bits, the rest at 4), and L is undone after the matmul: Y = L^-1 (Q(L X) W) = L^-1 Q(L X) W. Since
L acts on tokens and a feature rotation R (QuaRot-style Hadamard) on features, they compose:
X_hat = L^-1 Q(L X R) R^T.

This module holds the tensor maths (no model): the sequence-transform registry, the fake quantizer, the bit
allocation, Theorem 1's bound, the feature-axis block Hadamard and SmoothQuant's scales. The model hooks and the
perplexity evaluation are in :mod:`backend.compression.stamp.hooks`.

Sequence transforms (:data:`TRANSFORMS`; an entry called with ``(s, k, x)`` makes the transform, ``entry.flops``
is its cost in a layer, ``entry.fits(s)`` whether it exists for ``s`` tokens):

| transform | what | cost |
|-----------|------|------|
| ``identity`` | no sequence transform (plain per-token quantization) | 0 |
| ``haar`` | multi-level orthonormal Haar DWT along tokens, approximation coefficients first (ours, the paper's choice) | O(s d) |
| ``dct`` | orthonormal DCT-II along tokens (near-optimal for Toeplitz autocorrelation, Szego) | O(s^2 d) as a matmul |
| ``wht`` | Walsh-Hadamard in sequency order (s a power of two) | O(s^2 d) as a matmul |
| ``klt`` | eigenvectors of the sample autocorrelation X X^T, descending eigenvalue (the optimum, data-dependent) | O(s^3 + s^2 d) |

Theorem 1 (L orthonormal, per-token min-max quantization, round to nearest):
E||X_hat - X||^2 <= (d/2) sum_i e_i / (2^{b_i} - 1)^2 with e_i = ||l_i X||^2; it holds per sample because a token's
error is at most d Delta_i^2 / 4 with Delta_i = (max - min) / (2^{b_i} - 1) and (max - min)^2 <= 2 ||x||^2.

Shapes: activations are ``[..., s, d]`` (tokens on dim -2, features on dim -1); bit vectors are ``[s]``; a float
``inf`` bit-width means "not quantized".

Left out: the fused GPU kernels (the paper's latency numbers), FlatQuant's learned feature transforms, KV-cache
quantization (the paper's KV4); activations are fake-quantized (quantize-dequantize) in float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import InputError
from ...registry import Registry

if TYPE_CHECKING:
    import torch

SUPPORTED_BITS = (2, 3, 4, 5, 6, 8, 16)
HADAMARD_BLOCK = 64


# ------------------------------------------------------------------------------------------------ sequence transforms
@dataclass
class SeqTransform:
    """An orthonormal transform along dim -2 of ``[..., s, d]`` tensors: ``forward`` (L X) and ``inverse`` (L^T Y).

    ``approx`` is the number of leading coefficients that form the coarse approximation (Haar: s / 2^levels; the
    others: the same count, since their leading rows are the low-frequency ones)."""

    name: str
    s: int
    forward: Callable[[torch.Tensor], torch.Tensor]
    inverse: Callable[[torch.Tensor], torch.Tensor]
    approx: int

    def matrix(self) -> torch.Tensor:
        """The s x s matrix L (row i = l_i)."""
        import torch

        return self.forward(torch.eye(self.s, dtype=torch.float64))


def haar_levels_for(s: int, k: int) -> int:
    """The number of Haar levels whose approximation count is the largest that is <= ``k`` (at least 1)."""
    n, lev = s, 0
    while n > max(1, k) and n > 1:
        n = (n + 1) // 2
        lev += 1
    return max(1, lev)


def haar_forward(x: torch.Tensor, levels: int) -> torch.Tensor:
    """Multi-level orthonormal Haar DWT along dim -2 of ``x`` [..., s, d], O(s d).

    Each level replaces the current approximation a (n rows) by [(a_even + a_odd)/sqrt2 ; (a_even - a_odd)/sqrt2];
    an odd n carries its last row into the approximation unchanged (still orthonormal). Output order:
    [a_L, d_L, d_{L-1}, ..., d_1]."""
    import torch

    out = x.clone()
    n = x.shape[-2]
    r2 = math.sqrt(0.5)
    for _ in range(int(levels)):
        if n < 2:
            break
        m = n // 2
        a = out[..., 0 : 2 * m : 2, :]
        b = out[..., 1 : 2 * m : 2, :]
        approx, detail = (a + b) * r2, (a - b) * r2
        if n % 2:
            approx = torch.cat([approx, out[..., n - 1 : n, :]], dim=-2)
        na = approx.shape[-2]
        out[..., na:n, :] = detail
        out[..., :na, :] = approx
        n = na
    return out


def _haar_sizes(s: int, levels: int) -> list[int]:
    sizes, n = [], s
    for _ in range(int(levels)):
        if n < 2:
            break
        sizes.append(n)
        n = (n + 1) // 2
    return sizes


def haar_inverse(y: torch.Tensor, levels: int) -> torch.Tensor:
    """Inverse of :func:`haar_forward` (exact up to float rounding)."""
    import torch

    out = y.clone()
    r2 = math.sqrt(0.5)
    for n in reversed(_haar_sizes(y.shape[-2], levels)):
        m = n // 2
        na = (n + 1) // 2
        approx, detail = out[..., :m, :], out[..., na:n, :]
        rec = torch.empty_like(out[..., :n, :])
        rec[..., 0 : 2 * m : 2, :] = (approx + detail) * r2
        rec[..., 1 : 2 * m : 2, :] = (approx - detail) * r2
        if n % 2:
            rec[..., n - 1, :] = out[..., m, :]
        out[..., :n, :] = rec
    return out


def dct_matrix(s: int, dtype=None) -> torch.Tensor:
    """Orthonormal DCT-II matrix [s, s] (row k = frequency k), the same as ``scipy.fft.dct(norm="ortho")``."""
    import torch

    n = torch.arange(s, dtype=torch.float64)
    k = n[:, None]
    m = torch.cos(math.pi * (n[None, :] + 0.5) * k / s) * math.sqrt(2.0 / s)
    m[0] /= math.sqrt(2.0)
    return m.to(dtype or torch.float32)


def hadamard_matrix(n: int, dtype=None) -> torch.Tensor:
    """Orthonormal Sylvester Hadamard matrix [n, n] (n a power of two), natural order."""
    import torch

    if n < 1 or n & (n - 1):
        raise InputError(f"A Hadamard transform needs a power-of-two size; got {n}.")
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return (h / math.sqrt(n)).to(dtype or torch.float32)


def walsh_matrix(s: int, dtype=None) -> torch.Tensor:
    """Walsh-Hadamard matrix [s, s] in sequency order (row k has k sign changes), orthonormal."""
    import torch

    h = hadamard_matrix(s, dtype=torch.float64)
    changes = (h[:, 1:] * h[:, :-1] < 0).sum(1)
    return h[changes.argsort()].to(dtype or torch.float32)


def klt_matrix(x: torch.Tensor) -> torch.Tensor:
    """KLT [s, s]: eigenvectors of the autocorrelation sum over samples of X X^T (x: [..., s, d]), as rows in
    descending eigenvalue order."""
    import torch

    xs = x.reshape(-1, x.shape[-2], x.shape[-1]).double()
    c = torch.einsum("bsd,btd->st", xs, xs)
    vals, vecs = torch.linalg.eigh(c)
    return vecs[:, vals.argsort(descending=True)].T.contiguous()


def _matrix_transform(name: str, m: torch.Tensor, approx: int) -> SeqTransform:
    def fwd(x: torch.Tensor) -> torch.Tensor:
        return m.to(x.dtype) @ x

    def inv(y: torch.Tensor) -> torch.Tensor:
        return m.to(y.dtype).T @ y

    return SeqTransform(name, m.shape[0], fwd, inv, approx)


def _identity(s: int, k: int, x: torch.Tensor | None = None) -> SeqTransform:
    return SeqTransform("identity", s, lambda t: t, lambda t: t, max(0, min(k, s)))


def _haar(s: int, k: int, x: torch.Tensor | None = None) -> SeqTransform:
    lev = haar_levels_for(s, k)
    sizes = _haar_sizes(s, lev)
    approx = (sizes[-1] + 1) // 2 if sizes else s
    return SeqTransform("haar", s, lambda t: haar_forward(t, lev), lambda t: haar_inverse(t, lev), approx)


def _dct(s: int, k: int, x: torch.Tensor | None = None) -> SeqTransform:
    return _matrix_transform("dct", dct_matrix(s), max(1, min(k, s)))


def _wht(s: int, k: int, x: torch.Tensor | None = None) -> SeqTransform:
    if s & (s - 1):
        raise InputError(f"The Walsh-Hadamard sequence transform needs a power-of-two token count; got {s}. "
                         "Use haar or dct, or a context of 128/256/512 tokens.")
    return _matrix_transform("wht", walsh_matrix(s), max(1, min(k, s)))


def _klt(s: int, k: int, x: torch.Tensor | None = None) -> SeqTransform:
    if x is None:
        raise InputError("The KLT needs the activations it is fitted to.")
    return _matrix_transform("klt", klt_matrix(x).float(), max(1, min(k, s)))


def _haar_flops(s: int, k: int, sink: int, d_in: int, d_out: int) -> float:
    """2 flops per element per level on the shrinking approximation of the ``s - sink`` transformed tokens, forward
    on the input and inverse on the output (< 4 s d in all)."""
    lev = haar_levels_for(s - sink, k - sink)
    rows = sum(_haar_sizes(s - sink, lev))
    return 2.0 * rows * (d_in + d_out)


def _matmul_flops(s: int, k: int, sink: int, d_in: int, d_out: int) -> float:  # noqa: ARG001
    """An s x s matrix applied to the input and its transpose to the output: 2 s^2 (d_in + d_out)."""
    return 2.0 * s * s * (d_in + d_out)


def _no_flops(s: int, k: int, sink: int, d_in: int, d_out: int) -> float:  # noqa: ARG001
    return 0.0


@dataclass(frozen=True)
class Transform:
    """A sequence transform: ``transform(s, k, x)`` makes it for ``s`` tokens with ``k`` high-precision
    coefficients (``x`` [..., s, d]: the activations, read by a data-fitted one); ``flops(s, k, sink, d_in, d_out)``:
    its extra FLOPs in one linear layer of a window of ``s`` tokens (``sink`` of them left out of the transform);
    ``power_of_two``: it exists only for a power-of-two token count; ``fitted``: it is fitted to each input."""

    make: Callable[..., SeqTransform]
    flops: Callable[[int, int, int, int, int], float]
    power_of_two: bool = False
    fitted: bool = False

    def __call__(self, s: int, k: int, x: torch.Tensor | None = None) -> SeqTransform:
        return self.make(s, k, x)

    def fits(self, s: int) -> bool:
        """Whether the transform exists for ``s`` tokens."""
        return not self.power_of_two or (s >= 1 and not s & (s - 1))


TRANSFORMS: Registry[Transform] = Registry("sequence transform")
TRANSFORMS.add("haar", Transform(_haar, _haar_flops), label="Haar DWT (STaMP)", kind="ours",
               about="multi-level orthonormal Haar, O(s d)")
TRANSFORMS.add("dct", Transform(_dct, _matmul_flops), label="DCT-II", kind="ablation",
               about="orthonormal DCT along tokens")
TRANSFORMS.add("wht", Transform(_wht, _matmul_flops, power_of_two=True), label="Walsh-Hadamard", kind="ablation",
               about="sequency-ordered WHT, s = 2^n")
TRANSFORMS.add("klt", Transform(_klt, _matmul_flops, fitted=True), label="KLT (data-fitted)", kind="reference",
               about="eigenbasis of X X^T per input")
TRANSFORMS.add("identity", Transform(_identity, _no_flops), label="No sequence transform", kind="baseline",
               about="plain per-token")


def make_transform(name: str, s: int, k: int, x: torch.Tensor | None = None) -> SeqTransform:
    """The sequence transform ``name`` for ``s`` tokens with ``k`` high-precision coefficients (Haar picks its level
    count from k); ``x`` [..., s, d]: the activations, which a data-fitted transform (the KLT) is fitted to."""
    return TRANSFORMS.get(name)(int(s), int(k), x)


# ------------------------------------------------------------------------------------------------ quantizer
def check_bits(b: float, what: str = "bit-width") -> int:
    """Validate a bit-width against :data:`SUPPORTED_BITS`."""
    if isinstance(b, float) and math.isinf(b):
        raise InputError(f"The {what} must be finite here; choose one of {SUPPORTED_BITS}.")
    if int(b) != b or int(b) not in SUPPORTED_BITS:
        raise InputError(f"The {what} must be one of {', '.join(map(str, SUPPORTED_BITS))}; got {b}.")
    return int(b)


def quantize_tokens(x: torch.Tensor, bits: torch.Tensor | float) -> torch.Tensor:
    """Per-token asymmetric min-max fake quantization of ``x`` [..., s, d] with ``bits`` [s] (or a scalar).

    scale_i = (max_i - min_i) / (2^{b_i} - 1); q = clamp(round((x - min_i) / scale_i), 0, 2^{b_i} - 1);
    x_hat = q scale_i + min_i (the offset is not rounded to the grid, so every error is at most scale_i / 2).
    Tokens with ``inf`` bits pass unchanged."""
    import torch

    s = x.shape[-2]
    b = torch.as_tensor(bits, dtype=torch.float64).expand(s) if not torch.is_tensor(bits) or bits.dim() == 0 \
        else bits.double()
    finite = torch.isfinite(b)
    levels = torch.where(finite, 2.0 ** torch.where(finite, b, 0.0) - 1.0, 1.0).to(x.dtype)[:, None]
    lo = x.amin(-1, keepdim=True)
    hi = x.amax(-1, keepdim=True)
    scale = ((hi - lo) / levels).clamp_min(1e-12)
    q = torch.minimum(torch.round((x - lo) / scale).clamp_min(0), levels)
    xq = q * scale + lo
    if bool(finite.all()):
        return xq
    return torch.where(finite.to(x.device)[:, None], xq, x)


def bit_vector(s: int, k: int, low: float, high: float, first: int = 0) -> torch.Tensor:
    """[s] bits: rows ``first .. first + k - 1`` at ``high``, the rest at ``low`` (the paper: the first 64
    transformed tokens at 8 bits)."""
    import torch

    b = torch.full((s,), float(low), dtype=torch.float64)
    b[first : first + max(0, int(k))] = float(high)
    return b


def energy_bit_vector(energy: torch.Tensor, k: int, low: float, high: float) -> torch.Tensor:
    """[s] bits: the ``k`` rows of largest ``energy`` [s] at ``high`` (a dynamic choice, for comparison)."""
    import torch

    b = torch.full(energy.shape, float(low), dtype=torch.float64)
    if k > 0:
        b[energy.topk(min(int(k), energy.numel())).indices] = float(high)
    return b


def optimal_bits(energy: torch.Tensor, mean_bits: float) -> torch.Tensor:
    """The continuous optimum of Theorem 1's bound at a fixed mean: b_i = (1/2) log2 e_i + c (large-b limit), with c
    chosen so that the mean is ``mean_bits``; negative values clipped to 0 and the mean restored."""
    import torch

    lg = 0.5 * torch.log2(energy.double().clamp_min(1e-30))
    c = mean_bits - lg.mean()
    for _ in range(50):
        b = (lg + c).clamp_min(0.0)
        c = c + (mean_bits - b.mean())
    return (lg + c).clamp_min(0.0)


def average_bits(bits: torch.Tensor) -> float:
    """Mean activation bit-width of a bit vector (every token has the same d features)."""
    return float(bits.double().mean())


def theorem1_bound(y: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
    """Theorem 1's per-sample bound (d/2) sum_i ||y_i||^2 / (2^{b_i} - 1)^2 of the error after quantizing the
    transformed tokens ``y`` [..., s, d] with ``bits`` [s]; returns [...] (one value per sample)."""
    import torch

    d = y.shape[-1]
    e = y.double().pow(2).sum(-1)
    finite = torch.isfinite(bits)
    w = torch.where(finite, 1.0 / (2.0 ** torch.where(finite, bits.double(), 0.0) - 1.0) ** 2, 0.0)
    return 0.5 * d * (e * w.to(e.device)).sum(-1)


def energy_share(y: torch.Tensor, frac: float = 1 / 8) -> float:
    """Share of the energy of ``y`` [..., s, d] held by its first ``ceil(frac s)`` rows."""
    e = y.double().pow(2).sum(-1).reshape(-1, y.shape[-2]).sum(0)
    n = max(1, math.ceil(frac * y.shape[-2]))
    return float(e[:n].sum() / e.sum().clamp_min(1e-300))


def sqnr_db(x: torch.Tensor, x_hat: torch.Tensor) -> float:
    """10 log10(||X||^2 / ||X - X_hat||^2)."""
    err = float((x.double() - x_hat.double()).pow(2).sum())
    return 10.0 * math.log10(float(x.double().pow(2).sum()) / max(err, 1e-300))


# ------------------------------------------------------------------------------------------------ feature transforms
def block_hadamard(d: int, block: int = HADAMARD_BLOCK, seed: int | None = 0) -> torch.Tensor:
    """Orthonormal block-diagonal feature rotation [d, d]: d / block Hadamard blocks of size ``block`` (a power of
    two dividing d), each with random signs (QuaRot's randomized Hadamard; ``seed=None``: plain signs)."""
    import torch

    if block < 1 or d % block:
        raise InputError(f"The Hadamard block {block} must divide the feature size {d}.")
    h = hadamard_matrix(block)
    r = torch.block_diag(*([h] * (d // block)))
    if seed is not None:
        g = torch.Generator().manual_seed(int(seed))
        signs = torch.randint(0, 2, (d,), generator=g).float() * 2 - 1
        r = signs[:, None] * r
    return r


@dataclass
class BlockRotation:
    """A block-diagonal orthonormal feature rotation applied as [..., d / b, b] @ H_b (O(d b) per token instead of
    O(d^2)): ``signs`` [d] (random +-1), ``h`` [b, b] Hadamard."""

    signs: torch.Tensor
    h: torch.Tensor

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        """x R with R = diag(signs) blockdiag(H)."""
        b = self.h.shape[0]
        z = (x * self.signs.to(x.dtype)).reshape(*x.shape[:-1], -1, b) @ self.h.to(x.dtype)
        return z.reshape(x.shape)

    def apply_t(self, x: torch.Tensor) -> torch.Tensor:
        """x R^T."""
        b = self.h.shape[0]
        z = x.reshape(*x.shape[:-1], -1, b) @ self.h.to(x.dtype).T
        return z.reshape(x.shape) * self.signs.to(x.dtype)

    def matrix(self) -> torch.Tensor:
        import torch

        d = self.signs.numel()
        return self.apply(torch.eye(d, dtype=self.h.dtype))


def block_rotation(d: int, block: int = HADAMARD_BLOCK, seed: int | None = 0) -> BlockRotation:
    """The rotation of :func:`block_hadamard` in its fast form."""
    import torch

    if block < 1 or d % block:
        raise InputError(f"The Hadamard block {block} must divide the feature size {d}.")
    signs = torch.ones(d)
    if seed is not None:
        g = torch.Generator().manual_seed(int(seed))
        signs = torch.randint(0, 2, (d,), generator=g).float() * 2 - 1
    return BlockRotation(signs, hadamard_matrix(block))


def largest_pow2_block(d: int, cap: int = HADAMARD_BLOCK) -> int:
    """The largest power of two <= cap dividing d."""
    b = 1
    while b * 2 <= cap and d % (b * 2) == 0:
        b *= 2
    return b


def smoothquant_scales(act_absmax: torch.Tensor, weight: torch.Tensor, alpha: float = 0.5) -> torch.Tensor:
    """SmoothQuant's per-input-channel scales s_j = max|X_j|^alpha / max|W_:,j|^(1-alpha) [d]; the layer computes
    (X / s) (s W^T) (Xiao et al., 2023, alpha = 0.5)."""
    wmax = weight.abs().amax(0).clamp_min(1e-5)
    s = act_absmax.clamp_min(1e-5).pow(alpha) / wmax.pow(1.0 - alpha)
    return s.clamp_min(1e-5)


def quantize_weight_rtn(w: torch.Tensor, bits: int) -> torch.Tensor:
    """Symmetric per-output-channel round-to-nearest of ``w`` [out, in] at ``bits``."""
    qmax = 2 ** (int(bits) - 1) - 1
    scale = (w.abs().amax(1, keepdim=True) / qmax).clamp_min(1e-12)
    return (w / scale).round().clamp(-qmax - 1, qmax) * scale


# ------------------------------------------------------------------------------------------------ one activation
@dataclass
class QuantSpec:
    """How one activation X [..., s, d] is quantized.

    transform: a :data:`TRANSFORMS` name; low_bits / high_bits; hp_tokens: number of high-precision rows (the sink
    rows count among them); sink_tokens: leading raw tokens kept at high bits outside the sequence transform (the
    spec's CLS-token rule, used here for the attention sink); allocation: ``first`` (the paper: the first transformed
    rows) or ``energy`` (the k rows of largest energy in each sample)."""

    transform: str = "haar"
    low_bits: float = 4
    high_bits: float = 8
    hp_tokens: int = 64
    sink_tokens: int = 0
    allocation: str = "first"

    def average_bits(self, s: int) -> float:
        k = min(s, max(0, self.hp_tokens))
        return (self.high_bits * k + self.low_bits * (s - k)) / s


@dataclass
class QuantOut:
    """x_hat [..., s, d]; y: the transformed tokens that were quantized (sink rows first) [..., s, d]; bits [s] (or
    [..., s] for the energy allocation); the transform used."""

    x_hat: torch.Tensor
    y: torch.Tensor
    bits: torch.Tensor
    transform: SeqTransform


def stamp_quantize(x: torch.Tensor, spec: QuantSpec) -> QuantOut:
    """X_hat = L^-1 Q(L X) on the non-sink tokens, the sink tokens quantized at high bits as they are.

    x: [..., s, d]. The bit vector gives ``hp_tokens - sink_tokens`` leading transformed rows ``high_bits``."""
    import torch

    s = x.shape[-2]
    ns = max(0, min(int(spec.sink_tokens), s - 1))
    k_rest = max(0, int(spec.hp_tokens) - ns)
    body = x[..., ns:, :]
    tr = make_transform(spec.transform, s - ns, k_rest, body)
    yb = tr.forward(body)
    y = torch.cat([x[..., :ns, :], yb], dim=-2) if ns else yb
    if spec.allocation == "energy":
        e = y.double().pow(2).sum(-1)
        flat = e.reshape(-1, s)
        bits = torch.stack([energy_bit_vector(r, spec.hp_tokens, spec.low_bits, spec.high_bits) for r in flat])
        bits = bits.reshape(e.shape)
        yq = _quantize_per_sample(y, bits)
    elif spec.allocation == "first":
        bits = bit_vector(s, spec.hp_tokens, spec.low_bits, spec.high_bits)
        yq = quantize_tokens(y, bits)
    else:
        raise InputError(f"allocation must be 'first' or 'energy'; got {spec.allocation!r}.")
    xb = tr.inverse(yq[..., ns:, :])
    x_hat = torch.cat([yq[..., :ns, :], xb], dim=-2) if ns else xb
    return QuantOut(x_hat, y, bits, tr)


def _quantize_per_sample(y: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
    import torch

    flat_y = y.reshape(-1, y.shape[-2], y.shape[-1])
    flat_b = bits.reshape(-1, y.shape[-2])
    return torch.stack([quantize_tokens(a, b) for a, b in zip(flat_y, flat_b, strict=True)]).reshape(y.shape)


def ar1_sequence(s: int, d: int, rho: float = 0.95, seed: int = 0, batch: int = 1) -> torch.Tensor:
    """Locally correlated test data [batch, s, d]: per feature an AR(1) process x_t = rho x_{t-1} + sqrt(1-rho^2) e_t."""
    import torch

    g = torch.Generator().manual_seed(int(seed))
    e = torch.randn(batch, s, d, generator=g, dtype=torch.float64)
    x = torch.empty_like(e)
    x[:, 0] = e[:, 0]
    c = math.sqrt(1 - rho * rho)
    for t in range(1, s):
        x[:, t] = rho * x[:, t - 1] + c * e[:, t]
    return x.float()
