"""OR-PRM: cleaning operations-research training data with executable gates, and a process reward model over
formulations.

Paper: Wang, Zhou, Mao, Li, Tan, Han, Yang, Wang, Li, "OR-PRM: A Process Reward Model for Algorithmic Problem in
Operations Research" (ICLR 2026; OpenReview tFEAzYdz92, no arXiv version found; no public code). The paper finds that over 30 % of the labels in existing
operations-research datasets are flawed, filters them with three gates (the generated code executes; the solver's
solution satisfies the constraints, checked by Qwen3-8B; GPT-4o judges the model), builds step-labelled solution
paths by Monte Carlo tree search (1, or 0 at the first error), and trains a generative PRM whose best-of-N
selection raises accuracy by up to 12.5 points (Qwen2.5-14B, BoN-8, 48.8 -> 61.3).

Implemented: word problems from six templates with exact optima from HiGHS (``scipy.optimize.milp``; ``problems``);
formulations in the paper's five-tuple form (sets, parameters, variables, objective, constraints) as structured text
and as executable models (``formulation``); a stochastic modeller that writes them with flaws of six kinds at tunable
rates and with equivalent rewritings, standing in for an LLM modeller (``modeller``); the three gates, with a
structural check of the formulation against the problem's entities standing in for the LLM judge (``gates``); step
labels at the first flaw and a discriminative PRM (a logistic head on features of each step read against the
problem's statement; ``prm``, trained by ``python -m backend.train orprm``); best-of-N selectors (``select``); the
jobs (``jobs``). Left out: MCTS over LLM generations, the GPT-4o review of step labels, the generative PRM that
critiques in words and corrects the first flaw, and SFT/DPO of the policy: they need LLMs far beyond one CPU core.
The full tier has Qwen2.5-Coder-1.5B write formulations for 20 problems as a real-model check of the gates.

Gates (``gates.GATES``):

| name | label | kind | what |
|------|-------|------|------|
| ``execution`` | Gate 1: the model executes | ours | compiles and HiGHS returns an optimum |
| ``feasibility`` | Gate 2: constraints hold, label reproduced | ours | the solution meets the stated constraints; the recorded optimum is the stated objective there |
| ``judge`` | Gate 3: structural judge | ours | structure agrees with the problem's entities (numbers unread) |

Flaw kinds (``modeller.FLAWS``; ``TRAIN``, ``HELDOUT`` and ``COVERED`` are subsets):

| name | label | kind | what |
|------|-------|------|------|
| ``wrong_sense`` | Wrong objective sense | reference | max <-> min |
| ``missing_constraint`` | Missing constraint | reference | a constraint block left out |
| ``unit_error`` | Unit error | reference | one parameter scaled by 10, 100, 1/10 or 60 |
| ``wrong_optimum`` | Wrong recorded optimum | reference | right model, misrecorded optimum |
| ``wrong_domain`` | Wrong variable domain | reference | integrality dropped (or added) |
| ``swapped`` | Swapped coefficients | reference | two entries of a parameter exchanged |

Selectors (``select.SELECTORS``):

| name | label | kind | what |
|------|-------|------|------|
| ``prm`` | OR-PRM best-of-N (ours) | ours | the candidate whose weakest step scores highest |
| ``gates`` | Gates 1-2, then uniform | ablation | uniform among the candidates gates 1 and 2 pass |
| ``majority`` | Majority vote | baseline | the most frequent recorded optimum |
| ``random`` | Random (pass@1) | baseline | a uniform choice |
| ``oracle`` | Oracle | reference | a right candidate whenever the subset holds one |

Shapes: a model's c [V], A [R, V]; step features [S, 20]; candidate arrays [P, N] (problems x candidates).
``run_clean(CleanConfig) -> CleanResult`` (counts per gate and flaw kind, Sankey flows), ``run_bon(BonConfig) ->
BonResult`` (accuracy per selector at n = 1..N), ``run_lp(LpConfig) -> LpResult`` (the user's model validated and
solved).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "check": "formulation", "compile_model": "formulation", "solve": "formulation", "steps": "formulation",
    "to_text": "formulation", "read_lp_json": "formulation", "violations": "formulation", "Model": "formulation",
    "Solution": "formulation",
    "Problem": "problems", "generate": "problems", "FAMILIES": "problems",
    "FLAWS": "modeller", "TRAIN": "modeller", "HELDOUT": "modeller", "COVERED": "modeller", "write": "modeller",
    "GATES": "gates", "audit": "gates",
    "PRM": "prm", "step_features": "prm", "step_labels": "prm", "fit": "prm",
    "SELECTORS": "select", "Scores": "select", "curves": "select", "per_problem": "select",
    "CleanConfig": "jobs", "CleanResult": "jobs", "run_clean": "jobs", "BonConfig": "jobs", "BonResult": "jobs",
    "run_bon": "jobs", "LpConfig": "jobs", "LpResult": "jobs", "run_lp": "jobs", "load_prm": "jobs",
})
