"""RGM: the Reflective Generative Model's self-supervised process reward model (SPRM) on the tiny reasoner.

Paper: Wang et al., "Test-Time Scaling with Reflective Generative Model" (MetaStone-S1; ICLR 2026; arXiv 2507.01951).
One network is both the policy and its process reward model: a small head on the policy's penultimate-layer states
scores each reasoning step, trained from final-answer labels only with the self-supervised SPR loss, and a
trajectory's score is the geometric mean of its step scores.

Implemented: the head, the step positions of the tiny reasoner's format, the SPR loss and the plain-BCE baseline, the
trajectory aggregations (``sprm``); traces' first wrong step against the grammar's gold solution and the AUROC of
step scores (``traces``); sampled traces with the penultimate-layer state at every step end (``data``); head
training and scoring (``fit``, ``python -m backend.train rgm``); the jobs (``jobs``). Left out: training the policy
jointly with GRPO (the head here learns on a frozen policy) and the paper's reasoning-effort modes.

| name | label | kind | what |
|------|-------|------|------|
| ``geometric`` | Geometric mean (the paper's) | ours | exp(mean log step score) |
| ``product`` | Product | ablation | the product of the step scores |
| ``arithmetic`` | Arithmetic mean | ablation | the mean step score |
| ``last`` | Last step (outcome RM) | baseline | the score of the last step |
| ``spr`` | SPR loss (ours) | ours | BCE on the steps whose own verdict agrees with the outcome |
| ``bce`` | BCE, outcome copied to every step | baseline | BCE on every step |

(``sprm.AGGREGATIONS``, ``sprm.LOSSES``.) Shapes: step logits [B, S] with a mask [B, S], outcomes [B].
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "SPRMHead": "sprm", "spr_loss": "sprm", "bce_loss": "sprm", "aggregate": "sprm", "AGGREGATIONS": "sprm",
    "LOSSES": "sprm", "step_positions": "sprm",
    "parse_steps": "traces", "first_wrong_step": "traces", "step_labels": "traces", "auroc": "traces",
    "Traces": "data", "collect": "data", "train_head": "fit", "step_scores": "fit", "locate_auroc": "fit",
    "trajectory_scores": "fit", "ScoreConfig": "jobs", "ScoreResult": "jobs", "run_score": "jobs",
    "EvalConfig": "jobs", "EvalResult": "jobs", "run_eval": "jobs", "load_heads": "jobs",
})
