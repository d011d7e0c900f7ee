"""Model patchers for token reduction, one module per host model family, apart from the pure merge functions
(:mod:`..merging`) and the plans (:mod:`..plan`), the way ToMe keeps ``merge.py`` apart from
its ``patch/`` modules:

- :mod:`.vit`: DINOv2, CLIP and SigLIP vision encoders (:func:`.vit.run_vit`);
- :mod:`.llama`: Llama-family decoders, SmolLM2, Llama, Qwen2 (:class:`.llama.LlamaRunner`);
- :mod:`.llava`: transformers LLaVA models, built from the two above (:class:`.llava.LlavaPatched`).

Each has ``apply_patch(model)``, which wraps the host model's own modules (never modifying them) for the loops.
"""
