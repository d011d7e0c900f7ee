"""Tactic: sparse decode attention by target attention mass.

Paper: Kan Zhu et al., "Tactic: Adaptive Sparse Attention with Clustering and Distribution Fitting for Long-Context
LLMs", ICLR 2026 (arXiv 2502.12216). Baselines: Quest (Tang et al., arXiv 2406.10774) and a StreamingLLM-style sink +
window (Xiao et al., arXiv 2309.17453).

What it implements: for each decode query and head, load just enough of the KV cache to cover a target share P of the
attention mass. Keys are clustered once (K-means, clusters of 16), clusters are taken in order of q . centroid, and
the total mass is estimated from a fixed sample of max(256, 2.5 %) keys with a fitted y = a/x + b
(``sparse_attention``), with its ablations beside it; the selectors run on SmolLM2-135M's real post-RoPE attention,
captured through transformers' ``AttentionInterface``, or plugged into every layer for perplexity (``model``); the
analysis of every selector on the same decode queries, the needle task (token recall) and the page's drawings
(``evaluation``); one decode step that reads only what it selects (keys and values stored cluster-contiguous at
prefill, clusters read in centroid order without sorting all centroid scores, all heads vectorised) against torch's
fused attention (``decode``); long-context caches whose sparsity follows SmolLM2's measured profile, for timing
beyond its 8,192 positions, and the recorded speed table read back for the page (``longctx``); the page's and the CLI's jobs (``jobs``), the CLI (``cli``), presets (``inputs``).

What it leaves out: the GPU kernels (FlashInfer with per-head sub-requests); speed is measured on CPU in
``benchmarks/tactic.py``, never asserted in a test. Re-clustering during long generations (the tokens after the
prefill get full attention, the paper's rule until the next re-clustering). K-means runs per segment of 4,096 prefill
tokens (linear prefill cost). Tactic here always loads the first token (an attention sink in SmolLM2), a named choice
of ``sparse_attention.TacticConfig.sinks`` that the paper does not have; the ablation ``tactic_no_sink`` is the
paper's algorithm as written.

Methods (``sparse_attention.SELECTORS``; ``kind`` as in ``backend.registry``):

| name | label | kind | what |
|------|-------|------|------|
| ``tactic`` | Tactic (ours) | ours | K-means clusters ranked by q . centroid, total mass from sampled scores fitted with a/x + b, clusters taken until P x the estimate |
| ``oracle_top_p`` | Exact top-P (oracle) | reference | every score; the smallest set in descending score order with mass >= P |
| ``top_k`` | Exact top-k (fixed budget) | reference | every score; the top B per head, a fixed uniform budget |
| ``quest`` | Quest (pages of 16) | baseline | pages of 16 keys with elementwise min/max, ranked by their upper bound, top pages under B tokens |
| ``window`` | Sinks + window | baseline | the first 4 sink tokens plus the most recent B - 4 tokens |
| ``tactic_no_sink`` | Tactic without the sink rule | ablation | the paper's algorithm: every prefill token clustered, none loaded by rule |
| ``tactic_exact_total`` | Tactic order, exact total | ablation | the same clusters in the same order, stopped at P x the exact total |
| ``sink_only`` | Sink rule alone | ablation | the first token and the tokens after the prefill, nothing else |

Shapes: a selector takes q (Q, Hq, d) at positions ``pos`` (Q,) over a ``LayerCache`` of k, v (Hkv, T, d) and returns a
``Selection`` with per-head masks (Q, Hq, T) and their GQA union (Q, Hkv, T); ``capture`` returns per layer q (Hq, T, d),
k and v (Hkv, T, d); ``build_layout`` stores k, v (Hkv, T, d) cluster-contiguous and ``decode_step`` takes q (Hq, d)
and returns the output (Hq, d) with the tokens and bytes it read. The jobs take a text
(str or None), a frozen config and optionally a loaded causal LM, and return JSON-able results (``to_json()``).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "SELECTORS": "sparse_attention", "ADAPTIVE": "sparse_attention", "TacticConfig": "sparse_attention",
    "LayerCache": "sparse_attention", "Selection": "sparse_attention", "select_tactic": "sparse_attention",
    "quality": "sparse_attention", "check_p": "sparse_attention",
    "capture": "model", "sparse_perplexity": "model", "check_model": "model",
    "analyse": "evaluation", "summary": "evaluation", "synthetic_layer": "evaluation", "builtin_text": "evaluation",
    "build_layout": "decode", "decode_step": "decode", "full_step": "decode", "DecodeLayout": "decode",
    "need_profile": "longctx", "extrapolate": "longctx", "synthetic_cache": "longctx", "calibrate": "longctx",
    "CompareConfig": "jobs", "CompareResult": "jobs", "run_compare": "jobs",
    "PerplexityConfig": "jobs", "PerplexityResult": "jobs", "run_perplexity": "jobs",
    "PRESETS": "inputs", "SIZES": "inputs",
})
