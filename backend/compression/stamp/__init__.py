"""STaMP: sequence transforms and mixed precision for low-bit activation quantization.

Paper: Federici, Del Chiaro, van Breugel, Whatmough, Nagel, "STaMP: Sequence Transformation and Mixed Precision for
Low-Precision Activation Quantization", ICLR 2026, arXiv 2510.26771.

A linear layer's input X (s tokens x d features) is transformed along the token axis by an orthonormal L (a
multi-level Haar DWT), the few high-energy transformed rows are quantized at 8 bits and the rest at 4 (per token,
asymmetric min-max), and L is undone after the matmul: X_hat = L^-1 Q(L X); it composes with a feature rotation R:
X_hat = L^-1 Q(L X R) R^T. Implemented: the sequence transforms, the fake quantizer and bit allocation, Theorem 1's
bound, the attention-sink rule, fake quantization of every decoder linear input of a Llama-family causal LM
(SmolLM2-135M by default) with prefill perplexity at matched average bits against per-token RTN, a QuaRot-style block
Hadamard and SmoothQuant, and the AR(1) study. Left out: the fused GPU kernels (the paper's latency numbers),
FlatQuant's learned feature transforms and KV-cache quantization; activations are fake-quantized in float32, and the
text is the offline CPython documentation (perplexities compare only with each other).

Activation-quantization methods (:data:`~.hooks.METHODS`, each called with an :class:`~.hooks.EvalConfig` gives the
quantization of its activations) and sequence transforms (:data:`~.stamp.TRANSFORMS`, each called with
``(s, k, x)`` makes the transform; ``flops`` is its cost):

| name | label | kind | what |
|---|---|---|---|
| ``stamp`` | A4 + STaMP | ours | L^-1 Q(L X), the first k transformed rows at 8 bits |
| ``hadamard_stamp`` | Hadamard + STaMP | ours | L^-1 Q(L X R) R^T |
| ``a4`` | A4 per token (RTN) | baseline | Q4(X) per token, no transform |
| ``hadamard`` | Hadamard (QuaRot-style) | baseline | Q4(X R) R^T, R a randomized block Hadamard of 64 |
| ``smoothquant`` | SmoothQuant (alpha 0.5) | baseline | Q4(X / s) s, scales from calibration windows |
| ``a4_tok0`` | A4, token 0 at 8 bits | ablation | the sink rule alone, no transform (4 + 4 / s bits) |
| ``a4_first_k`` | A4, first k raw tokens at 8 bits | ablation | the same average bits without a transform |
| ``hadamard_tok0`` | Hadamard, token 0 at 8 bits | ablation | as ``a4_tok0`` after R |
| ``hadamard_first_k`` | Hadamard, first k raw tokens at 8 bits | ablation | as ``a4_first_k`` after R |
| ``dense`` | Dense (fp32 activations) | reference | X |
| ``a8`` | A8 per token | reference | Q8(X) per token |
| ``haar`` | Haar DWT (STaMP) | ours | transform: multi-level orthonormal Haar, O(s d) |
| ``dct`` | DCT-II | ablation | transform: orthonormal DCT along tokens, O(s^2 d) |
| ``wht`` | Walsh-Hadamard | ablation | transform: sequency-ordered WHT, s a power of two, O(s^2 d) |
| ``klt`` | KLT (data-fitted) | reference | transform: eigenbasis of X X^T per input, O(s^3 + s^2 d) |
| ``identity`` | No sequence transform | baseline | transform: plain per-token quantization |

Shapes: activations ``[..., s, d]`` (tokens on dim -2, features on dim -1); bit vectors ``[s]``; token windows
``ids`` [M, s] int64.

Modules: :mod:`.stamp` (the tensor maths and the transform registry), :mod:`.hooks` (the fake-quantization hooks in a
causal LM, the methods, the evaluation), :mod:`.losses` (the per-window losses and their cache), :mod:`.jobs`
(``run_evaluate``, ``run_synthetic``: what the page and the CLI call; ``paired_gain``, ``gain_table``: ours against
its controls paired over windows), :mod:`.inputs` (the page's presets and the second built-in text, Debian's licence
texts; the text kind is the family's shared one), :mod:`.cli` (``python -m backend stamp ...``).
"""

from __future__ import annotations

from backend.api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    **dict.fromkeys(("TRANSFORMS", "Transform", "SeqTransform", "QuantSpec", "QuantOut", "make_transform",
                     "stamp_quantize", "quantize_tokens", "bit_vector", "theorem1_bound", "energy_share",
                     "ar1_sequence", "block_rotation", "check_bits"), "stamp"),
    **dict.fromkeys(("METHODS", "Method", "EvalConfig", "StampResult", "evaluate", "quantized", "transform_flops",
                     "DEFAULT_METHODS", "HEADLINE"), "hooks"),
    **dict.fromkeys(("window_nll", "cache_key"), "losses"),
    **dict.fromkeys(("EvaluateConfig", "run_evaluate", "SyntheticConfig", "run_synthetic", "page_methods",
                     "paired_gain", "gain_table", "CONTROLS"), "jobs"),
    **dict.fromkeys(("PRESETS", "licence_text"), "inputs"),
})
