"""FutureFill: exact fast autoregressive generation from convolutional sequence models.

Paper: Agarwal, Chen, Dogariu, Shah, Strauss, Feinberg, Suo, Bartlett, Hazan, "FutureFill: Fast Generation from
Convolutional Sequence Models" (ICLR 2026; arXiv 2410.03766; project page dshah.io/futurefill). A convolutional
sequence model (STU, Hyena-style long convolutions) generates through the online convolution
``y_t = sum_{j<=t} u_{t-j} phi_j``; FutureFill precomputes with FFTs what finished inputs contribute to future outputs
and stays exact.

Implemented: the FutureFill primitive, the four exact online-convolution methods and the cost model that counts their
multiply-adds (``engines``); a one-layer model with spectral STU filters (or random decaying filters) and a tanh
readout fitted to a user's series by ridge regression, generation with every method, their comparison, the benchmark
and the series parser (``futurefill``); the jobs of the page and the CLI (``jobs``). Left out: deep multi-layer
STU / Hyena stacks, MLP blocks and GPU kernels (the online-convolution engines are exactly the paper's; the model only
has to drive them).

| name | label | kind | what |
|------|-------|------|------|
| ``naive`` | Naive online conv. | baseline | one inner product over the whole history per token: O(L^2) |
| ``epoched`` | Epoched FutureFill | ours | a K-slot cache refilled by one FutureFill every K tokens: O(L^2 log L / K + K L) |
| ``continuous`` | Continuous FutureFill | ours | binary-carry FutureFills of the last 2^k inputs: O(L log^2 L) |
| ``prompted`` | Prompted (prefill + continuous) | ours | one FutureFill of the prompt, then continuous FutureFill over the generated tokens: O(K) cache |

(``futurefill.METHODS``, whose entries decode with a model; ``engines.ENGINES`` holds the engines of the first three.)

Shapes (numpy float64; ``F`` filters, ``P`` prompt values, ``T = P + n_new``): filters ``[F, L_max]``;
``futurefill(v [m], w [F, >= m + n], n) -> [F, n]``; ``generate(model, prompt [P], n_new, method) ->
GenerationResult`` with ``u [T]``, ``y [F, T]``; ``load_series(bytes) -> [P]``. ``run_generate(series [P],
GenerateConfig) -> GenerateResult``, ``run_bench(BenchConfig) -> BenchResult``, ``run_page(series [P], PageConfig)
-> dict`` return JSON-able summaries.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "ENGINES": "engines", "MAX_TOTAL_LENGTH": "engines", "make_engine": "engines",
    "online_convolve": "engines", "continuous_macs": "engines", "naive_macs": "engines", "default_epoch": "engines",
    "METHODS": "futurefill", "REFERENCE": "futurefill", "ConvSeqModel": "futurefill", "make_model": "futurefill",
    "fit_model": "futurefill", "generate": "futurefill", "compare_methods": "futurefill", "bench": "futurefill",
    "spectral_filters": "futurefill", "random_filters": "futurefill", "preset_series": "futurefill",
    "load_series": "futurefill",
    "GenerateConfig": "jobs", "GenerateResult": "jobs", "BenchConfig": "jobs", "PageConfig": "jobs",
    "run_generate": "jobs", "run_bench": "jobs", "run_page": "jobs",
})
