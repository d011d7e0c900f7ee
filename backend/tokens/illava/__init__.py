"""iLLaVA: token merging inside the vision encoder and the language model of a tiny vision-language model, against
ToMe, FastV and random dropping at the same token budget.

Paper: "An Image is Worth Fewer Than 1/3 Input Tokens in Large Multimodal Models" (iLLaVA), Hu, Gao, Shang, Wan, Feng,
ICLR 2026 (arXiv 2412.06263). Baselines: ToMe (Bolya et al., arXiv 2210.09461) and FastV (Chen et al., arXiv
2403.06764).

What it implements: the merge and pruning functions on token sets (``merging``: the released code's rule and the
paper's informative + recycling tokens, ToMe's bipartite soft matching, FastV, random dropping); the plans, where and
how much each method reduces and what each step did on the patch grid (``plan``); the model loops that carry a plan
out inside the encoder blocks and decoder layers (``patch/``: DINOv2, CLIP and SigLIP encoders, Llama-family decoders,
transformers LLaVA models); the tiny VLM (``tiny_vlm``: the embedded DINOv2 ViT-S/14, a trained projector with LoRA
adapters, ``projector``, the embedded SmolLM2-135M answering from closed answer sets); the procedural scenes and
their questions (``scenes``); accuracy, prefill timing, one image in full and the method x budget sweep
(``evaluation``); the diagnosis of the counting answers (``diagnosis``); the page's and the CLI's jobs (``jobs``), the
CLI (``cli``), presets (``inputs``). Training of the projector and adapters: ``python -m backend.train illava``.

What it leaves out: the paper's LLaVA-class models and benchmarks (a 7B model does not run on the lab's CPU); the
patchers accept LLaVA-family checkpoints found in the local cache, and the claims are measured on the tiny VLM's
held-out scenes.

Methods (``merging.METHODS``; ``kind`` as in ``backend.registry``):

| name | label | kind | what |
|------|-------|------|------|
| ``none`` | Unreduced | reference | the unreduced model |
| ``illava_code`` | iLLaVA (code) | ours | the ``r + 1`` least important tokens averaged with rank weights into the group's most important one |
| ``illava_paper`` | iLLaVA (paper) | ours | informative tokens kept, a few recycling tokens absorb their ``M`` most similar discarded tokens |
| ``tome`` | ToMe | baseline | bipartite soft matching on the keys in every encoder block, size-weighted averages |
| ``fastv`` | FastV | baseline | the least attended image tokens pruned after LLM layer 2 |
| ``random`` | Random drop | baseline | tokens dropped uniformly at random at the same placement |

Counting controls of the diagnosis (``diagnosis.COUNTING_CONTROLS``):

| name | label | kind | what |
|------|-------|------|------|
| ``unreduced`` | Unreduced | reference | the unreduced model |
| ``illava_code`` | iLLaVA (code plan) | ours | iLLaVA's plan at the diagnosis budget, encoder and LLM stages |
| ``illava_code_encoder_only`` | iLLaVA encoder stage only | ablation | the same encoder merges, no LLM stage |
| ``random`` | Random drop | baseline | random dropping at the same budget and placement |
| ``ground_truth_ranking_encoder_only`` | Encoder stage, ranking = object masks | reference | iLLaVA's encoder merges ranked by the true object masks |

Shapes: a reduction step takes a ``TokenSet`` (x [B, N, C], size [B, N], source [B, N, N0], pos [B, N]) and ``r`` and
returns ``N - r`` tokens and a ``MergeInfo`` (scores, group [B, N]); the tiny VLM takes pixels [B, 3, 224, 224] and
answers from the logits of the closed answer words. The jobs take a frozen config (and optionally a loaded
``TinyVLM``) and return an ``Analysis`` or small JSON-able dicts.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "METHODS": "merging", "TokenSet": "merging", "MergeInfo": "merging", "Reducer": "merging",
    "get_method": "merging", "canonical": "merging", "reduce_tokens": "merging",
    "ReductionPlan": "plan", "StepRecord": "plan", "plan_for_budget": "plan",
    "TinyVLM": "tiny_vlm", "Projector": "projector", "load_projector": "projector", "PROJECTOR_FILE": "projector",
    "make_scene": "scenes", "Scene": "scenes",
    "evaluate": "evaluation", "analyze": "evaluation", "sweep": "evaluation", "time_prefill": "evaluation",
    "Analysis": "evaluation", "EvalResult": "evaluation", "SWEEP_METHODS": "evaluation",
    "diagnose": "diagnosis", "COUNTING_CONTROLS": "diagnosis",
    "PlanConfig": "jobs", "AnalysisConfig": "jobs", "EvalConfig": "jobs", "SweepConfig": "jobs",
    "DiagnoseConfig": "jobs", "run_analysis": "jobs", "run_eval": "jobs", "run_sweep": "jobs", "run_diagnose": "jobs",
    "KINDS": "inputs", "PRESETS": "inputs",
})
