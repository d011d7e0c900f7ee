"""Model compression methods, two of them, as flat modules of this family:

- **pruning** (RCPU, structured pruning with rotation-constrained compensation, arXiv 2510.07782): ``criteria`` (the
  scores and compensations), ``pruning`` (the Llama-family patcher and the baselines Wanda-sp, FLAP, ridge least
  squares), ``encoder`` (the same on MiniLM), ``lab`` (the one-layer study), ``lmtools`` (measuring and exporting pruned
  LMs), ``jobs`` (the page and CLI jobs), ``cli`` (``python -m backend pruning``).
- **stamp** (STaMP, sequence transforms and mixed precision for activation quantization, arXiv 2510.26771):
  ``stamp`` (the tensor maths), ``stamp_hooks`` (fake quantization in a causal LM), ``stamp_cli``
  (``python -m backend stamp``).

Shared: ``corpus`` (the offline text corpora and the ``text_corpus`` input decoder). Importing this package imports
no torch.
"""
