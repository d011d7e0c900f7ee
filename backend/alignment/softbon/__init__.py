"""Soft Best-of-N: the exact policy of a softened Best-of-N, its KL bound and its regret terms.

Paper: Aminian, Shenfeld, Asadi, Beirami, Mroueh, "Best-of-N through the Smoothing Lens: KL Divergence and Regret
Analysis" (ICLR 2026; arXiv 2507.05913). SBoN draws ``Y_1..Y_N`` from a reference policy ``pi_ref`` and returns
``Y_Z`` with ``P(Z = i) ∝ exp(beta r(Y_i))`` for a proxy reward ``r``: ``beta = 0`` is plain sampling, ``beta -> inf``
hard Best-of-N.

Implemented: the sampling algorithm itself and the exact SBoN policy on a finite response space (a one-dimensional
integral, checked against enumeration of all ``K^N`` tuples), hard BoN, the tilted policy (the ``N -> inf`` limit),
calibrated rewards, Lemma 4.1's KL bound and the hard-BoN bound, Theorem 5.2's three regret terms; the sweep over an
``(N, beta)`` grid on random instances with hackable items (the project's demo design) and on a user's candidate
answers scored by a text encoder's cosine to a reference (``jobs``). Left out: sampling from a language model (the
candidates stand for N draws) and the paper's LLM experiments; no public code exists, the module follows the paper's
definitions (see the ``softbon`` module).

| name | label | kind | what |
|------|-------|------|------|
| ``sbon`` | Soft Best-of-N | ours | softmax over N proxy rewards at inverse temperature beta |
| ``bon`` | hard Best-of-N | baseline | the highest of N draws (beta = inf), ties split uniformly |
| ``sampling`` | plain sampling | reference | one draw from pi_ref (beta = 0, or N = 1) |
| ``tilted`` | tilted policy | reference | ``pi_ref exp(beta r) / Z``, the N = inf limit |
| ``proxy`` | raw proxy | baseline | selection reward: the proxy as it is |
| ``calibrated`` | calibrated proxy | ours | selection reward: the proxy's CDF under pi_ref (Theorem 5.2) |
| ``true`` | true reward (oracle) | reference | selection reward: the true reward |

(``softbon.POLICIES``, ``softbon.REWARDS``.)

Shapes (numpy float64; ``K`` responses): ``Instance.pi_ref``, ``true_reward``, ``proxy``, ``hackable``: ``[K]``;
``sbon_policy(pi_ref [K], reward [K], n, beta) -> [K]``; ``sbon_policies(..., ns, beta) -> [len(ns), K]``;
``sweep(inst, SweepConfig) -> SweepResult`` with ``[len(ns), len(betas) + 1]`` grids (the last column hard BoN) and
``policies [len(ns), len(betas) + 1, K]``; ``text_instance`` takes ``embed(list of texts) -> [B, H]`` L2-normalised.
``run_random`` / ``run_text`` return JSON-able summaries.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "InstanceConfig": "softbon", "Instance": "softbon", "make_instance": "softbon", "text_instance": "softbon",
    "split_candidates": "softbon", "read_candidates": "softbon", "calibrate": "softbon", "bon_policy": "softbon",
    "sbon_policy": "softbon", "sbon_policies": "softbon", "tilted_policy": "softbon", "POLICIES": "softbon",
    "REWARDS": "softbon", "get_method": "softbon", "sample_sbon": "softbon", "kl_divergence": "softbon",
    "kl_bound": "softbon", "bon_kl_bound": "softbon", "regret_terms": "softbon", "SweepConfig": "softbon",
    "SweepResult": "softbon", "sweep": "softbon",
    "RandomConfig": "jobs", "TextConfig": "jobs", "RandomResult": "jobs", "TextResult": "jobs",
    "run_random": "jobs", "run_text": "jobs",
})
