"""PBFM: physics-based flow matching, flow matching whose samples must also satisfy a PDE.

Paper: G. Baldan, Q. Liu, A. Guardone, N. Thuerey, "Physics vs Distributions: Pareto Optimal Flow Matching with
Physics Constraints" (first title "Flow Matching Meets PDEs: A Unified Framework for Physics-Constrained
Generation"), ICLR 2026; arXiv 2506.08604. The gradients of the two losses are combined by ConFIG (Q. Liu et al.,
ICLR 2025; the ``conflictfree`` package).

Implemented: two PDE cases from the project's own solvers, each with a residual that is exactly the solver's
discretisation (``pdes``: 1-D Darcy flow and the heat equation); flow matching with the residual loss on the unrolled
one-step estimate, combined by ConFIG, against plain flow matching, flow matching plus lambda x residual (lambda 0.1
to 10 on both cases, 30 to 300 on Darcy), residual guidance at sampling and PBFM without unrolling (``pbfm``); the
evaluation of the shipped models (energy distance to held-out solver fields on standardised channels and per
channel, mean |residual| and its noise-equivalent std, Darcy's solution error, paired bootstrap and per-seed
intervals, the Pareto front read with them, the gradient geometry of one training step: ``evaluation``); the jobs
(``jobs``). Diagnostic models (``pbfm.DIAGNOSTICS``: wider, longer-trained, per-node-normalised) ask why the
miniature's samples are not physical. Left out: the paper's 2-D benchmarks (Kolmogorov flow, dynamic stall) and its
U-Net / transformer backbones (the miniature is an MLP on 1-D fields, trainable on one CPU core), and stochastic
sampling.

| name | label | kind | what |
|------|-------|------|------|
| ``pbfm`` | PBFM (FM + ConFIG + unrolling, ours) | ours | FM and the unrolled residual loss combined by ConFIG |
| ``fm`` | Flow matching | baseline | plain flow matching |
| ``weighted-0.1`` | FM + 0.1 x residual | baseline | FM loss plus lambda x the residual loss (one model per lambda) |
| ``weighted-0.3`` | FM + 0.3 x residual | baseline | as above, lambda = 0.3 |
| ``weighted-1`` | FM + 1 x residual | baseline | as above, lambda = 1 |
| ``weighted-3`` | FM + 3 x residual | baseline | as above, lambda = 3 |
| ``weighted-10`` | FM + 10 x residual | baseline | as above, lambda = 10 |
| ``weighted-30`` | FM + 30 x residual | baseline | as above, lambda = 30 (Darcy only) |
| ``weighted-100`` | FM + 100 x residual | baseline | as above, lambda = 100 (Darcy only) |
| ``weighted-300`` | FM + 300 x residual | baseline | as above, lambda = 300 (Darcy only) |
| ``guidance-0.05`` | FM + residual guidance 0.05 | baseline | the FM model, each Euler step also descends the residual |
| ``guidance-0.2`` | FM + residual guidance 0.2 | baseline | as above, guidance 0.2 |
| ``pbfm-1step`` | PBFM without unrolling (one-step estimate) | ablation | PBFM with the residual of the one-step estimate (Darcy only) |
| ``fm-wide`` | FM, 3 x 512 hidden | reference | diagnostic (``pbfm.DIAGNOSTICS``, Darcy, seed 0): flow matching with twice the width |
| ``fm-long`` | FM, 8,000 steps | reference | diagnostic: flow matching trained four times longer |
| ``fm-node`` | FM, per-node normalisation | reference | diagnostic: each node its own mean and scale |

(``pbfm.METHODS``: each entry, called as ``method(model, norm, case, n, steps=, seed=)``, samples a trained model
the way the method samples; ``method.fit(cfg, seed=)`` trains its model.)

Shapes: fields ``[n, C, ...]`` (Darcy ``[n, 2, 64]``: log k and u; heat ``[n, 1, 8, 32]``: time levels x nodes);
the velocity model works on ``[n, D]`` flattened, normalised fields; residuals ``[n, 64]`` and ``[n, 7, 32]``.
``run_sample`` / ``run_gradient_dial`` / ``run_residual`` / ``run_config_check`` / ``run_diagnostics`` return
JSON-able summaries.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "PBFMConfig": "pbfm", "Velocity": "pbfm", "Normaliser": "pbfm", "Method": "pbfm", "METHODS": "pbfm",
    "DIAGNOSTICS": "pbfm",
    "train": "pbfm", "sample": "pbfm", "energy_distance": "pbfm", "config_update": "pbfm",
    "CASES": "pdes", "Case": "pdes", "get_case": "pdes", "read_field": "pdes", "mean_abs_residual": "pdes",
    "load_model": "evaluation", "score": "evaluation", "summarise": "evaluation", "compare": "evaluation",
    "pareto_reading": "evaluation", "noise_equivalent": "evaluation", "darcy_solution_error": "evaluation",
    "SampleConfig": "jobs", "SampleResult": "jobs", "run_sample": "jobs", "DialConfig": "jobs", "DialResult": "jobs",
    "run_gradient_dial": "jobs", "ResidualConfig": "jobs", "ResidualResult": "jobs", "run_residual": "jobs",
    "ConfigCheckConfig": "jobs", "ConfigCheckResult": "jobs", "run_config_check": "jobs",
    "DiagnosticsConfig": "jobs", "DiagnosticsResult": "jobs", "run_diagnostics": "jobs",
})
