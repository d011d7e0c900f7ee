"""Certified robustness. ``dualrs``: Cohen et al.'s CERTIFY and dual randomized smoothing; ``attack``: the empirical
check of certificates (PGD + random search); ``data2d``: 2-D presets and validated CSV uploads."""
