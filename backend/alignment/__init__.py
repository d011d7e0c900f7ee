"""Inference-time alignment methods, one package per method:

- ``backend.alignment.softbon``: Soft Best-of-N (arXiv 2507.05913): the exact SBoN policy on a finite response
  space, the KL bound of Lemma 4.1 and the regret terms of Theorem 5.2 (CLI group ``softbon``).

Nothing is shared between methods yet.
"""
