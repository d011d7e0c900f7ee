"""RCPU: structured pruning of LLMs with rotation-constrained error compensation and a variance-aware score.

Paper: "Rotation-Constrained Error Compensation for Structured Pruning of LLMs", Haruta, Matsumoto, Li, Wang,
Kurokawa (KDDI), ICLR 2026, arXiv 2510.07782. Official code: github.com/harutaro/rcpu, built on FLAP (arXiv
2312.11983).

Structured pruning removes whole attention heads (input columns of ``o_proj``) and MLP channels (input columns of
``down_proj``) of every decoder layer, then repairs each pruned sublayer's output on a small calibration set. RCPU
only rotates the kept weights (orthogonal Procrustes: output norms and angles are kept, so it cannot overfit the
calibration tokens as least squares does) and keeps the inputs that carry the principal output directions (a
variance-aware score). Implemented: the scores, the compensations and the named methods of the paper's tables, on a
Llama-family causal LM (SmolLM2-135M by default) and on the MiniLM sentence encoder, the one-layer lab on Gram
statistics, sweeps (locally or on Ray), and writing a pruned model as a Hugging Face folder. Left out: the paper's 13B
runs, zero-shot task accuracy and SliceGPT; the text is the offline CPython documentation, not WikiText-2, so
perplexities compare only with each other.

Scores (:data:`~.criteria.SCORES`, each called on ``(W, stats, input_stat)``), compensations
(:data:`~.criteria.COMPENSATIONS`, each called on ``(W_K, X_K, Y)``) and named methods (:data:`~.pruning.METHODS`,
each called gives its :class:`~.pruning.PruneConfig`):

| name | label | kind | what |
|---|---|---|---|
| ``variance`` | RCPU variance-aware: \\|\\|W_j\\|\\| x \\|\\|X_j\\|\\| x Var(X_j) | ours | score |
| ``wanda_sp`` | Wanda-sp: \\|\\|W_j\\|\\| x \\|\\|X_j\\|\\| | baseline | score |
| ``fluctuation`` | FLAP fluctuation: \\|\\|W_j\\|\\|^2 x Var(X_j) | baseline | score |
| ``rotation`` | rotation (RCPU) | ours | compensation: W_K <- Q W_K, Q from the SVD of Y^T Z |
| ``rotation_scale`` | rotation + scale | ours | compensation: also s = tr(S) / \\|\\|Z\\|\\|^2 |
| ``ls`` | ridge least squares | baseline | compensation: lambda = 1e-4 |
| ``bias`` | mean bias (FLAP) | baseline | compensation: b = W_drop mean(X_drop) added to the output |
| ``none`` | none | reference | compensation: kept weights unchanged |
| ``rcpu`` | RCPU (variance + rotation) | ours | method |
| ``rcpu_scale`` | RCPU rotation + scale | ours | method |
| ``wanda_sp`` | Wanda-sp | baseline | method (Wanda-sp score, no compensation) |
| ``flap`` | FLAP (fluctuation + bias) | baseline | method (dense propagation) |
| ``variance_none`` | variance score, no compensation | ablation | method |
| ``propls`` | variance score + ridge LS | ablation | method |

Shapes: a sublayer's weights ``W`` [d_out, d_in], calibration inputs ``X`` [n, d_in] (tokens as rows), outputs
``Y = X W^T`` [n, d_out]; keep masks bool [d_in]; token windows ``ids`` [M, T] int64.

Modules: :mod:`.criteria` (column statistics, scores, selection, compensations and their Gram forms),
:mod:`.pruning` (the Llama-family patcher and the named methods), :mod:`.encoder` (the same on MiniLM), :mod:`.lab`
(the one-layer study on Gram statistics), :mod:`.lmtools` (throughput, parameter counts, writing a pruned model),
:mod:`.jobs` (``run_prune``, ``run_encoder``, ``run_lab``, ``run_sweep``: what the page and the CLI call),
:mod:`.inputs` (the page's presets; the text kind is the family's shared one), :mod:`.cli`
(``python -m backend pruning ...``). The shipped sweep and lab are made by ``python -m backend.train pruning``.
"""

from __future__ import annotations

from backend.api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    **dict.fromkeys(("SCORES", "COMPENSATIONS", "ColumnStats", "Compensated", "Compensation", "GramSystem",
                     "GramSolution", "Score", "column_stats", "compensate", "get_compensation", "get_score",
                     "head_scores", "n_to_drop", "output_error", "procrustes", "score_columns", "select_keep"),
                    "criteria"),
    **dict.fromkeys(("METHODS", "Method", "PruneConfig", "PruneResult", "LayerRecord", "config_for", "get_method",
                     "pairing", "geometry", "prune_llama", "prune_sublayer"), "pruning"),
    **dict.fromkeys(("check_bert", "prune_encoder", "run_encoder_pruning"), "encoder"),
    **dict.fromkeys(("capture_layer", "study_point", "n_sweep", "LAB_SCORES", "LAB_COMPENSATIONS"), "lab"),
    **dict.fromkeys(("Texts", "RunConfig", "run_prune", "EncoderConfig", "run_encoder", "LabConfig", "run_lab",
                     "SweepConfig", "run_sweep", "SweepCase", "prune_sweep", "prune_and_measure", "metrics_rows"),
                    "jobs"),
    "PRESETS": "inputs",
})
