"""Imputation methods: MCD multi-channel diffusion and its baselines."""
