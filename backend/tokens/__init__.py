"""Token-level methods over frozen models, one group of modules per method:

- GLOT token-graph pooling (arXiv 2603.03389): ``glot``, ``glot_backbone``, ``glot_heads``, ``glot_lora``,
  ``pooling``, ``pool_layers``, ``stress``; CLI ``glot_cli``.
- iLLaVA token merging in a tiny vision-language model (arXiv 2412.06263): ``merging``, ``plan``, ``patch/``,
  ``tiny_vlm``, ``projector``, ``scenes``, ``evaluation``, ``diagnosis``; CLI ``illava_cli``.
- Tactic sparse decode attention by target attention mass (arXiv 2502.12216): the package ``tactic/``.
"""
