"""Certified robustness methods, one package per method:

- ``backend.robustness.dualrs``: dual randomized smoothing (arXiv 2512.01782): Cohen et al.'s CERTIFY with one global
  noise level against a per-input noise level chosen and certified by a second smoothed model, the empirical attack
  check of the certificates and the 2-D data it runs on (CLI group ``dualrs``).
- ``backend.robustness.bait``: BAIT unlearnable examples (arXiv 2603.04731): a bi-level perturbation generator that
  binds protected images to wrong labels so that fine-tuning a pretrained prior still learns little, against
  error-minimising noise and targeted poisoning, with victims trained from scratch and from a prior (CLI group
  ``bait``).

Nothing is shared between methods yet.
"""
