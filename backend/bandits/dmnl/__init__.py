"""DMNL: diversified multinomial logit contextual bandits.

Paper: Heesang Ann, Taehyun Hwang, Min-hwan Oh, "Diversified Multinomial Logit Contextual Bandits" (ICLR 2026;
OpenReview swwelQtLRn, no arXiv version). A shop shows K of N items each round and the user buys at most one; a
monotone submodular diversity term ``lambda g(S)`` raises the purchase probability of varied assortments. OFU-DMNL
learns ``w = [theta, lambda]`` online and builds each assortment item by item, greedily, in O(NK).

Implemented: the choice model, its diversity functions, greedy and exhaustive assortment optimisation and the
``1 - 1/(e + 1)`` check on random instances (``model``); OFU-DMNL, its exhaustive ablation and the MNL bandit
baselines that ignore diversity, and the round-by-round simulation with common random numbers (``agents``);
synthetic catalogues and the user's item table (``items``); the race, the greedy check and the runtime sweep as
jobs (``jobs``); the CLI (``cli``); the ``item_table`` kind and the presets (``inputs``). Left out: the paper's
real-data experiments and its analysis constants as defaults (loose by orders of magnitude; ``DMNLConfig.constants =
"theory"`` selects them).

| name | label | kind | what |
|------|-------|------|------|
| ``ofu-dmnl`` | OFU-DMNL (ours) | ours | augmented features ``[x, g(S)]``, online mirror descent, greedy optimistic assortment |
| ``ofu-dmnl-full`` | OFU-DMNL-FULL (exhaustive) | ablation | the same learner, optimistic assortment by enumeration (N <= 20 at K = 5) |
| ``ofu-mnl+`` | OFU-MNL+ (no diversity) | baseline | the same online mirror descent on plain MNL features, top-K (Lee & Oh 2024) |
| ``ucb-mnl`` | UCB-MNL | baseline | regularised MLE on plain MNL, UCB utilities, top-K (Oh & Iyengar 2021) |
| ``ts-mnl`` | TS-MNL (Thompson) | baseline | Thompson sampling around the same MLE, top-K (Oh & Iyengar 2019) |
| ``lsb-greedy`` | LSBGreedy (linear submodular UCB) | baseline | slot-by-slot UCB on ``[x_i, diversity gain]``, a linear model without the MNL structure (Yue & Guestrin 2011) |
| ``oracle`` | Oracle (true model) | reference | knows theta* and lambda*: the enumerated optimum |
| ``random`` | Random assortment | reference | K items uniformly at random |
| ``coverage`` | Category coverage (exponential decay) | ours | diversity: the k-th item of a category adds rho^(k-1)/K |
| ``facility`` | Facility location (feature similarity) | baseline | diversity: (1/N) sum_j max_{i in S} exp(-||f_i - f_j||^2 / h) |

(``agents.AGENTS``, ``model.DIVERSITY``.)

Shapes (numpy): a catalogue's features ``[N, d]`` (row norms <= 1), categories ``[N]``; contexts ``[T, N, d]``;
utilities ``[N]`` or ``[T, N]``; assortments ``int`` index arrays ``[K]`` (``[T, K]`` over a run); an enumeration
``[C(N, K), K]``. The jobs return JSON-able results (``to_json()``).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "DIVERSITY": "model", "Diversity": "model", "APPROX": "model", "reward": "model", "choice_probs": "model",
    "greedy": "model", "greedy_true": "model", "exhaustive_true": "model", "all_subsets": "model",
    "make_diversity": "model", "random_instances_ratio": "model", "hard_instance": "model",
    "AGENTS": "agents", "DMNLConfig": "agents", "simulate": "agents", "runtime_vs_n": "agents",
    "Catalogue": "items", "synthetic": "items", "read_item_table": "items",
    "BanditConfig": "jobs", "BanditResult": "jobs", "run_bandits": "jobs",
    "GreedyConfig": "jobs", "GreedyResult": "jobs", "run_greedy": "jobs",
    "RuntimeConfig": "jobs", "RuntimeResult": "jobs", "run_runtime": "jobs",
    "PRESETS": "inputs", "preset": "inputs",
})
