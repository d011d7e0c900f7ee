"""Optimisation methods, one package per method:

- ``backend.optim.dada``: DADA, Dual Averaging with Distance Adaptation (ICLR 2026), as a numpy reference and a
  ``torch.optim.Optimizer``, raced against GD, AdaGrad-norm and DoG on convex problems (CLI group ``dada``).
"""
