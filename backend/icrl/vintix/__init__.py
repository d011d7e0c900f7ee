"""Vintix II / DPT: in-context reinforcement learning with a decision-pretrained transformer and a rectified-flow
action head.

Paper: dunnolab, "Vintix II: Decision Pre-Trained Transformer is a Scalable In-Context Reinforcement Learner" (ICLR
2026; arXiv 2604.05112), with the DPT objective of Lee et al., "Supervised Pretraining Can Learn In-Context
Reinforcement Learning" (arXiv 2306.14892). A transformer reads an unordered context of (observation, action,
reward) tuples and outputs a distribution over the optimal action; sampling from it approximates posterior sampling.

Implemented: procedural task priors (K-armed bandits, 1-D continuous bandits, a 5x5 dark room), demonstrator
contexts and tokens (``tasks``); the permutation-invariant transformer with per-family decoders (``dpt``) and the
continuous heads (``heads``); the evaluation on held-out priors and the K-armed online agents (``evaluate``); the
continuous-action online bandit and the dark-room agents (``online``); the Algorithm Distillation baseline, trained
on the same task priors (``ad``); one run of a task (``run``) and the claims' measurements (``claims``); the user's task file (``taskfile``); the jobs (``jobs``),
the CLI (``cli``), the ``bandit_task`` kind and the named tasks (``inputs``). Training is ``backend/train/vintix.py``.
Left out: the paper's scale (928M parameters, 209 Meta-World / MuJoCo / ... tasks); here a 2-layer, d = 64 model
pretrained on one CPU core.

| name | label | kind | what |
|------|-------|------|------|
| ``flow`` | Rectified-flow head (ours) | ours | action head: velocity MLP, 16 Heun steps from N(0, 1) |
| ``gaussian`` | Gaussian head | baseline | action head: one Gaussian, likelihood |
| ``mixture`` | Gaussian-mixture head | baseline | action head: 5 Gaussians, likelihood |
| ``dpt`` | DPT, flow model (ours) | ours | online agent: posterior sampling from the policy given its FIFO context |
| ``ucb`` | UCB1 | baseline | online agent: mean + sigma sqrt(2 ln t / n) |
| ``thompson`` | Thompson sampling | baseline | online agent: Gaussian prior N(0.5, 0.2^2) (the held-out prior), the posterior sampler the DPT approximates |
| ``ad`` | Algorithm Distillation | baseline | online agent: causal transformer distilled from Thompson-sampling histories |
| ``dpt_flow`` | DPT, flow head (ours) | ours | continuous online agent: posterior sampling from the flow head |
| ``dpt_gaussian`` | DPT, Gaussian head | ablation | continuous online agent: posterior sampling from the Gaussian head |
| ``dpt_mixture`` | DPT, mixture head | ablation | continuous online agent: posterior sampling from the mixture head |
| ``gp_ucb`` | GP-UCB | baseline | continuous online agent: RBF GP on 201 actions, mean + sqrt(beta) sd |
| ``ts_grid`` | Discretised Thompson sampling | baseline | continuous online agent: independent Gaussian arms on 11 actions |
| ``uniform`` | Uniform actions | baseline | continuous online agent: a uniform action each round |
| ``dpt`` (dark) | DPT (ours) | ours | dark-room agent: the discrete head given its own history |
| ``ad`` (dark) | Algorithm Distillation | baseline | dark-room agent: distilled from goal-posterior-sampling histories |
| ``psrl`` | Posterior sampling over the goal | reference | dark-room agent: goal drawn from the cells not ruled out |
| ``random_walk`` | Random walk | baseline | dark-room agent: uniform actions |

(``heads.HEADS``, ``evaluate.AGENTS``, ``online.CONT_AGENTS``, ``online.DARK_AGENTS``; the named tasks ``bimodal``, ``unimodal``, ``karm``, ``darkroom`` are
``inputs.PRESETS``.)

Shapes: context tokens (B, L, F) with F = 11 (K-armed), 2 (continuous), 31 (dark room); queries (B, Q); the
discrete heads give probabilities (B, K_MAX) or (B, L + 1, K_MAX) over every prefix; ``sample_actions`` gives
(B, n) continuous actions (or (B, n_lengths, n)). The jobs return JSON-able results (``to_json()``).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "DPT": "dpt", "DPTConfig": "dpt", "HEADS": "heads", "AGENTS": "evaluate", "load_model": "evaluate",
    "online_regret": "evaluate", "CONT_AGENTS": "online", "DARK_AGENTS": "online", "cont_online_regret": "online",
    "dark_online_agents": "online", "AD": "ad", "ADConfig": "ad", "peak_mass": "evaluate", "entropy_curve": "evaluate", "run": "run",
    "measure": "claims", "read_task_csv": "taskfile",
    "RunConfig": "jobs", "RunResult": "jobs", "run_task": "jobs", "EvalConfig": "jobs", "EvalResult": "jobs",
    "run_eval": "jobs", "PRESETS": "inputs",
})
