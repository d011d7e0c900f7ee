"""D2F: discrete diffusion forcing, pipelined parallel block decoding of a block-causal diffusion LM with an exact KV
cache, against vanilla diffusion decoding, a cache-free threshold decoder and an autoregressive model of the same size.

Paper: "Diffusion LLMs Can Do Faster-Than-AR Inference via Discrete Diffusion Forcing" (D2F), Wang et al., ICLR 2026
(arXiv 2508.09192).

What it implements: the model (``diffusion_lm``: the tiny reasoner's architecture with bidirectional or block-causal
attention, KV cache), the pipelined decoder and its baselines (``decode``), loading the shipped models, one question
through a decoder, accuracy and costs over many, the state grid and the claim's verdict (``evaluate``); the page's and
the CLI's jobs (``jobs``), the CLI (``cli``), inputs (``inputs``). Training (the teacher, then asymmetric block-causal
distillation into the student): ``python -m backend.train d2f``.

What it leaves out: the paper's 7B models (LLaDA, Dream) and benchmarks (GSM8K, MATH, HumanEval, MBPP); here the three
models have 1.8M parameters each and answer the reasoning tasks of ``backend.reasoning.tasks``.

Methods (``evaluate.DECODERS``; ``kind`` as in ``backend.registry``):

| name | label | kind | what |
|------|-------|------|------|
| ``d2f`` | D2F (ours: pipelined blocks, KV cache) | ours | the student, pipelined parallel block decoding with the exact KV cache |
| ``d2f_nocache`` | D2F schedule without cache | ablation | the same schedule recomputing every position each pass (tokens identical) |
| ``vanilla`` | Vanilla diffusion (teacher, full recompute) | baseline | the teacher, ``steps`` full-recompute passes over the whole length (Dream) |
| ``vanilla_blocks`` | Vanilla diffusion, semi-AR blocks | baseline | the same in semi-autoregressive blocks of the student's size (LLaDA) |
| ``threshold`` | Confidence-threshold parallel (teacher, no cache) | baseline | each pass fills every position above ``tau_conf`` |
| ``ar`` | Autoregressive (same size and data, KV cache) | baseline | the tiny reasoner, greedy next-token decoding |

Shapes: token ids [B, T] -> logits [B, T, V]; a decoder takes ``(models, prompt ids, D2FConfig, steps)`` and returns a
``DecodeResult`` (tokens, forward passes, seconds, the pass that decoded each position, block states per pass).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "DiffusionLM": "diffusion_lm", "DiffusionLMConfig": "diffusion_lm", "load_diffusion_lm": "diffusion_lm",
    "D2FConfig": "decode", "DecodeResult": "decode", "d2f_decode": "decode", "vanilla_decode": "decode",
    "threshold_decode": "decode",
    "DECODERS": "evaluate", "D2FModels": "evaluate", "load_models": "evaluate", "run_one": "evaluate",
    "evaluate": "evaluate", "claim_verdict": "evaluate", "state_grid": "evaluate", "block_invariance": "evaluate",
    "GenerateConfig": "jobs", "BenchConfig": "jobs", "InvarianceConfig": "jobs",
    "run_generate": "jobs", "run_bench": "jobs", "run_invariance": "jobs",
    "KINDS": "inputs", "PRESETS": "inputs",
})
