"""Certified robustness methods, one package per method:

- ``backend.robustness.dualrs``: dual randomized smoothing (arXiv 2512.01782): Cohen et al.'s CERTIFY with one global
  noise level against a per-input noise level chosen and certified by a second smoothed model, the empirical attack
  check of the certificates and the 2-D data it runs on (CLI group ``dualrs``).

Nothing is shared between methods yet.
"""
