"""SwiReasoning: training-free decoding that switches between latent and explicit reasoning on entropy trends.

Paper: Dachuan Shi, Abedelkadir Asi, Keying Li, Xiangchi Yuan, Leyan Pan, Wenke Lee, Wen Xiao, "SwiReasoning:
Switch-Thinking in Latent and Explicit for Pareto-Superior Reasoning LLMs", ICLR 2026 (arXiv 2510.05069).

What it implements: the released generation code's controller step for step (``decoder``): latent steps feed the
probability-weighted embedding, explicit steps the chosen token; switches on the entropy falling below or rising above
a reference, a window W before switching back to latent, and a switch cap C_max enforced by injecting the
end-of-thinking marker; its baselines on the same loop; accuracy vs tokens on generated problems of
``backend.reasoning.tasks`` with the causal LMs of ``backend.reasoning.lm``; the page's and the CLI's jobs (``jobs``),
the CLI (``cli``), inputs (``inputs``).

Protocols (``decoder.PROTOCOLS``, the released evaluation's two settings): ``accuracy`` runs without a switch cap at
alpha0 0.6, ``efficiency`` runs with C_max = 2 at alpha0 0.5; sampled decoders at temperature 0.6, top-p 0.95, top-k 20.

What it leaves out: the paper's large models and benchmarks (GSM8K, MATH, AIME...); W is scaled to budget / 8 under
budgets of 512 tokens or fewer (our choice, carried in every result).

Methods (``decoder.DECODERS``; ``kind`` as in ``backend.registry``):

| name | label | kind | what |
|------|-------|------|------|
| ``swireasoning`` | SwiReasoning (ours, greedy) | ours | latent/explicit switching on entropy trends, greedy tokens |
| ``swireasoning_sample`` | SwiReasoning (sampled) | ours | the same with sampled tokens (T 0.6, top-p 0.95, top-k 20) |
| ``cot_greedy`` | CoT greedy | baseline | explicit tokens only, greedy |
| ``cot_sample`` | CoT sampled (T 0.6, top-p 0.95, top-k 20) | baseline | explicit tokens only, sampled |
| ``soft_thinking`` | Latent only (soft thinking) | baseline | latent steps only |
| ``budget_forced`` | Budget-forced CoT | baseline | greedy CoT with the end-of-thinking marker forced before the answer reserve |

Shapes: logits [V], embeddings [V, D]; a decoder takes ``(lm, question, cfg, seed, cancel)`` and returns a ``Trace``.
The jobs take a question or a config and optionally a loaded LM, and return JSON-able dicts.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "DECODERS": "decoder", "SwiRConfig": "decoder", "Controller": "decoder", "Decision": "decoder",
    "DecoderMode": "decoder", "Trace": "decoder", "decode": "decoder", "summarize": "decoder", "evaluate": "decoder",
    "rows_table": "decoder", "effective_window": "decoder", "scripted_run": "decoder",
    "DecodeConfig": "jobs", "EvalConfig": "jobs", "ControllerConfig": "jobs",
    "run_decode": "jobs", "run_eval": "jobs", "run_controller": "jobs",
    "KINDS": "inputs", "PRESETS": "inputs",
})
