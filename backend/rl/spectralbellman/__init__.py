"""Spectral Bellman Method (SBM): Bellman-aligned features and Thompson-sampling exploration on finite MDPs.

Paper: O. Nabati, B. Dai, S. Mannor, G. Tennenholtz, "Spectral Bellman Method: Unifying Representation and
Exploration in RL" (ICLR 2026; arXiv 2507.13181). Stacking the Bellman backups of many random linear Q-functions gives
a matrix whose spectrum cuts at the rank d of a low-rank MDP; SBM learns features spanning it with one damped
power-iteration step per update, and the learned feature covariance drives Thompson sampling.

Implemented: the environments (random low-rank and full-rank MDPs, DeepSea(N), a chain, a pixel gridworld) and the
MDP JSON reader (``mdps``); the SBM learner with table or network features and its principal angles to the true span
(``spectral_bellman``, with the held-out capture ratio of a learned span against the best d-dimensional subspace);
the exploration agents (``agents``); the DeepSea(N) evaluation log over seeds with tuned references and paired
intervals (``explore_log``, shipped as ``assets/spectralbellman_deepsea_log.json``); the spectrum, the representation,
the agents side by side, the episodes-to-solve sweep and the shipped log's evaluation (``jobs``). Left out: the paper's Atari experiments; the loss forms are derived from
the spec's description, as the paper's equations were not available (see ``spectral_bellman``).

| name | label | kind | what |
|------|-------|------|------|
| ``ts_sbm`` | TS + SBM features (ours) | ours | Thompson sampling over SBM features learned online from replay counts |
| ``ts_sbm_zero`` | TS + SBM, unvisited pairs zeroed | ablation | never-visited pairs get zero feature rows |
| ``ts_sbm_mixed`` | TS + SBM, nu centred on the normalised fit | ablation | nu's centre not rescaled to the raw features |
| ``ts_sbm_model`` | TS + SBM features from the simulator | ablation | SBM features learned beforehand from exact backups, reward included |
| ``ts_random`` | TS + random features | baseline | the same agent with Gaussian random features |
| ``ts_true`` | TS + true features | reference | the same agent with the true zero-IBE features |
| ``rlsvi`` | RLSVI (one-hot features) | baseline | the same agent with one-hot features |
| ``ucbvi`` | UCB-VI (count bonus) | baseline | value iteration on the empirical model with a count bonus, Q_k <= k rmax |
| ``rnd`` | RND bonus | baseline | greedy LSVI on one-hot features plus a random-network-distillation bonus |
| ``egreedy`` | epsilon-greedy | baseline | LSVI on one-hot features, epsilon = 0.1 |

(``agents.AGENTS``; the environments ``mdps.ENVS``: ``lowrank``, ``fullrank``, ``deepsea``, ``chain``,
``gridworld``.)

Shapes: ``MDP.P`` (S, A, S) float64 row-stochastic, ``R`` (S, A); Q tables (S, A); stacked backups (S*A, n);
features ``Phi`` (S*A, d); agent returns (episodes,), visitation (S,). The jobs return JSON-able dicts.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "MDP": "mdps", "ENVS": "mdps", "make_env": "mdps", "read_mdp_json": "mdps", "spectrum": "mdps",
    "AGENTS": "agents", "AgentConfig": "agents", "run_agents": "agents", "solve_sweep": "agents",
    "SBMConfig": "spectral_bellman", "SBMLearner": "spectral_bellman", "learn_features": "spectral_bellman",
    "backup_rank": "spectral_bellman", "capture": "spectral_bellman",
    "make_log": "explore_log",
    "EnvConfig": "jobs", "SpectrumConfig": "jobs", "RepresentConfig": "jobs", "ExploreConfig": "jobs",
    "SweepConfig": "jobs", "run_spectrum": "jobs", "run_represent": "jobs", "run_explore": "jobs", "run_sweep": "jobs",
    "shipped_log": "jobs",
})
