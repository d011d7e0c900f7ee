"""DEPO: data-efficient policy optimisation for RLVR, offline data selection plus online rollout pruning.

Paper: "Towards High Data Efficiency in Reinforcement Learning with Verifiable Rewards" (Tang, Zhang, Liu, Zhao et
al.; arXiv 2509.01321). Offline, DEPO keeps a diverse, influential, medium-difficulty share of the training prompts;
online, it skips the rollouts of samples whose recent explorability (sum over a group's rollouts of |advantage| x
entropy) is low, and replays under-explored samples.

Implemented: the offline selector (``select``: a kNN similarity graph over MiniLM sentence embeddings, PageRank
influence, greedy maximisation of the PageRank-weighted DPP log-determinant, difficulty-aware sampling
p ~ phi((Acc - mu) / sigma) from the pass rates of G rollouts), which runs on the lab's task pool and on any uploaded
prompt list (``prompts``: the ``prompt_list`` kind); the online explorability filter with its decaying keep share and
the replay of the least-explored samples (``explore``); GRPO on the tiny reasoner over a pool of the task generator's
problems with every strategy (``loop``); the report over the shipped runs: curves of held-out accuracy against rollout
tokens, the speed-up at 95 % of full-data GRPO's final accuracy (``report``); the jobs (``jobs``). Left out: the
paper's 7B policies, its embeddings from the policy's last layer (MiniLM sentence embeddings here, the same for every
strategy), its verl pipeline and AIME-scale evaluation; runs here are minutes on one core (see the page).

| name | label | kind | what |
|------|-------|------|------|
| ``depo`` | DEPO (ours) | ours | subset strategy: weighted-DPP greedy, then difficulty-aware sampling |
| ``dpp`` | Weighted DPP only | ablation | subset strategy: the greedy log-det stage alone |
| ``random`` | Random | baseline | subset strategy: a uniform random subset |
| ``pagerank`` | Top PageRank | baseline | subset strategy: the largest influence scores |
| ``kcenter`` | k-center coreset | baseline | subset strategy: farthest-point traversal |

(``select.SUBSETS``: ``fn(ctx, k, seed) -> indices``.) Training strategies (``loop.STRATEGIES``:
``plan(ctx, k, seed, rate) -> Plan``):

| name | label | kind | what |
|------|-------|------|------|
| ``depo`` | DEPO (ours) | ours | offline subset + online explorability pruning and replay |
| ``full`` | Full-data GRPO | reference | every prompt, every rollout |
| ``random`` | Random 20 % | baseline | a uniform random share |
| ``pagerank`` | Top-PageRank 20 % | baseline | the top-PageRank share |
| ``kcenter`` | k-center 20 % | baseline | a k-center coreset |
| ``depo_noprune`` | DEPO without pruning | ablation | DEPO's subset, every rollout |

Shapes: embeddings [N, D]; subsets int index arrays; ``run_select(prompts, SelectConfig) -> SelectResult`` (per
strategy: indices, log-det, coverage; the 2-D PCA map; difficulty histograms); ``run_train(TrainConfig) ->
TrainResult`` (one GRPO run: curve, explorability heatmap, tokens); ``run_report(ReportConfig) -> ReportResult`` (the
shipped runs: curves per strategy and seed, speed-up, the heatmap of one DEPO run).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "SUBSETS": "select", "Context": "select", "context": "select", "greedy_logdet": "select", "logdet": "select",
    "coverage": "select", "pagerank": "select", "knn_graph": "select", "difficulty_weights": "select",
    "explorability": "explore", "keep_share": "explore", "Pruner": "explore",
    "STRATEGIES": "loop", "TrainConfig": "loop", "TrainLog": "loop", "train": "loop",
    "PromptList": "prompts", "decode_prompts": "prompts",
    "speedup": "report", "tokens_to_reach": "report",
    "SelectConfig": "jobs", "SelectResult": "jobs", "run_select": "jobs", "TrainResult": "jobs", "run_train": "jobs",
    "ReportConfig": "jobs", "ReportResult": "jobs", "run_report": "jobs", "load_runs": "jobs",
})
