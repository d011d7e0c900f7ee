"""Physics-constrained generative models.

Method packages: :mod:`.pbfm` (physics-based flow matching, with its PDE solvers and residuals in ``pbfm.pdes``).
Shared modules: none (the PDE data is read by PBFM alone).
"""
