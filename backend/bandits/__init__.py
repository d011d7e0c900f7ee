"""Assortment bandits, one package per method:

- ``backend.bandits.dmnl``: diversified MNL contextual bandits (ICLR 2026): the choice model, OFU-DMNL and the MNL
  bandit baselines, synthetic and uploaded catalogues (CLI group ``dmnl``).

No module is shared at the family level.
"""
