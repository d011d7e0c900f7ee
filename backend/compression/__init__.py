"""Model compression methods: one sub-package per method beside the pieces they share.

- **pruning** (:mod:`.pruning`, RCPU: structured pruning with rotation-constrained compensation, arXiv 2510.07782):
  ``criteria`` (the scores and compensations), ``pruning`` (the Llama-family patcher and the baselines Wanda-sp,
  FLAP, ridge least squares), ``encoder`` (the same on MiniLM), ``lab`` (the one-layer study), ``lmtools`` (measuring
  and exporting pruned LMs), ``jobs``, ``inputs``, ``cli`` (``python -m backend pruning``).
- **stamp** (:mod:`.stamp`, STaMP: sequence transforms and mixed precision for activation quantization, arXiv
  2510.26771): ``stamp`` (the tensor maths and the transform registry), ``hooks`` (fake quantization in a causal LM
  and the evaluation), ``jobs``, ``inputs``, ``cli`` (``python -m backend stamp``).

Shared: ``corpus`` (the offline text corpora and the ``text_corpus`` input decoder), ``lm`` (the Llama-family check
and held-out perplexity). Importing this package imports no torch.
"""
