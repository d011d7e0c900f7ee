"""Bridge: interdependent parallel generations through attention across the N samples of one prompt.

Paper: Dong, Brandfonbrener, Helenowski, He, Kumar, Fang, Chi, Sankararaman, "Generalized Parallel Scaling with
Interdependent Generations" (ICLR 2026; arXiv 2510.01143). The batch of hidden states of N samples of one prompt is
one tensor [N, S, D]: besides the sequence axis (self-attention) and the feature axis (feed-forward layers), a small
Bridge block after each feed-forward layer mixes along the sample axis, so the N samples generated in parallel read each other's states at the same position.

Implemented (``model``): the Bridge block (per prompt and position, an attention over its N samples without
positional encoding, finished rows masked; the message ``sum_j a_ij (v_j - v_i)`` makes a sample's own value cancel,
so width 1 is exactly the base model; zero-initialised output, so the model starts as the base model), the wrapper
that adds it after each decoder layer of the tiny reasoner and runs through the lab's sampling engine and GRPO
unchanged (``rl``: grouped sampling, scoring, SFT on sets of right solutions, GRPO steps); the shipped checkpoints of
both arms and seeds (``checkpoints``, trained by ``python -m backend.train bridge``); the jobs (``jobs``).
Left out: the paper's LLMs (DeepSeek-R1-Distill-Qwen, Llama) and math benchmarks: here a 1.8M-parameter reasoner
on generated arithmetic, training only the Bridge blocks and one base layer (both arms train the same base layer),
for a few minutes of one CPU core.

| name | label | kind | what |
|------|-------|------|------|
| ``bridge`` | Bridge (ours) | ours | Bridge blocks + the trained layer: the N samples attend to each other |
| ``independent`` | Independent sampling | baseline | the same SFT data and GRPO budget without Bridge: N independent samples |
| ``base`` | Base tiny reasoner | reference | the shipped tiny reasoner, untrained: N independent samples |
| ``mean`` | mean accuracy over the N samples | ours | (aggregation) the share of the N samples that are right |
| ``pass`` | pass@N (best-of-N with an exact verifier) | reference | (aggregation) any of the N samples right |
| ``majority`` | majority vote over the N samples | baseline | (aggregation) the most frequent answer is right |

(The first three rows are ``jobs.MODES``, the generation modes; the last three ``jobs.AGGREGATES``, how the N samples
of a question are scored.) Shapes: Bridge block ``h`` [G, N, S, D] (prompts x samples x positions x
width), ``valid`` [G, N, S]; samples [B, N, T]. ``run_sample(SampleConfig) -> SampleResult`` (N samples of one
question per mode, side by side); ``run_scaling(ScalingConfig) -> ScalingResult`` (accuracy, pass@N, majority and
distinct right solutions against N, the training curves, parameters added).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "BridgeConfig": "model", "BridgeBlock": "model", "BridgedLM": "model", "bridged_from_reasoner": "model",
    "sample_width": "rl", "score": "rl", "sft_sets": "rl", "sft_step": "rl", "grpo_update": "rl",
    "load_arm": "checkpoints", "Arm": "checkpoints", "read_log": "checkpoints", "eval_problems": "checkpoints",
    "MODES": "jobs", "AGGREGATES": "jobs", "SampleConfig": "jobs", "SampleResult": "jobs", "run_sample": "jobs",
    "ScalingConfig": "jobs", "ScalingResult": "jobs", "run_scaling": "jobs", "expression_answer": "jobs",
})
