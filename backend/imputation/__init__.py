"""Imputation methods.

Method packages: :mod:`backend.imputation.mcd` (MCD multi-channel diffusion, with its baselines, the synthetic tissue
generator and the ``channel_stack`` input kind). Shared modules: none (the family has one method).
"""
