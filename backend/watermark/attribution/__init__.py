"""Watermark-based attribution: one watermark per user, codes chosen to maximise the paper's bounds, and a suspect
image traced to the best-matching user among many.

Paper: "Watermark-based Attribution of AI-Generated Content" (earlier: "Watermark-based Detection and Attribution of
AI-Generated Content"), Jiang, Guo, Hu, Wang, Gong, ICLR 2026, arXiv 2404.04254.

- **Bounds** (:mod:`.bounds`): Thm 1-4 (detection and attribution rates from the watermark's bit accuracy beta and the
  users' pairwise bitwise accuracies), tau from a target false-detection rate, p-values, and matching of decoded bits
  against a bit-packed pool of users (10^6 users in milliseconds per query).
- **Codes** (:data:`backend.watermark.codes.STRATEGIES`): A-BSTA, the paper's selection that maximises the bounds,
  against random codes and NRG; pools are cached per (strategy, n, N, seed, depth).
- **Users** (:mod:`.users`): the service's users database (SQLite), created in one transaction per call.
- **Evaluation** (:mod:`.evaluation`): embed each user's watermark, post-process (the attack grammar of
  :mod:`backend.watermark.attacks`, WEvade-style adversarial attacks included), decode, detect and attribute, with the
  bounds at the measured beta; strength sweeps per backend and strategy, locally or as Ray tasks.

Left out: the paper's image generators and its HiDDeN / StegaStamp networks (no downloaded weights): the learned
watermark is the project's TinyHiDDeN (:mod:`backend.watermark.learned`, 64 bits), beside the classical
invisible-watermark baselines.

Watermark backends (:data:`backend.watermark.registry.BACKENDS`, each entry called loads the backend) and code
selection strategies (:data:`backend.watermark.codes.STRATEGIES`, each entry called selects codes):

| name | label | kind | what |
|---|---|---|---|
| ``tinyhidden`` | TinyHiDDeN (learned) | ours | the project's HiDDeN-family watermark, PSNR budget per call |
| ``dwtdctsvd`` | invisible-watermark DWT-DCT-SVD | baseline | classical, strong (the library's ``dwtDctSvd``), >= 256 px |
| ``dwtdct`` | invisible-watermark DWT-DCT | baseline | classical, weak (the library's ``dwtDct``), >= 256 px |
| ``absta`` | A-BSTA | ours | the paper's selection, maximises the bounds (up to 10,000 users here) |
| ``random`` | Random | baseline | uniform random unique codes (any number of users) |
| ``nrg`` | NRG | baseline | non-redundant guess (up to 10,000 users here) |

Shapes: images ``(H, W, 3)`` uint8 RGB; codes packed ``(N,)`` uint64 of ``n`` <= 64 bits or unpacked ``(N, n)``
uint8; decoded bits ``(B, n)`` uint8 with an ``ok`` mask ``(B,)`` (a classical backend cannot read images below
256 px).

Modules: :mod:`.bounds`, :mod:`.users`, :mod:`.evaluation`, :mod:`.jobs` (``run_create_users``,
``run_compare_pools``, ``run_embed``, ``run_attribute``, ``run_trace``, ``run_evaluate``, ``run_sweep``,
``run_simulate``, ``run_bounds``: what the page and the CLI call), :mod:`.inputs` (the page's preset photos and live
evaluation settings; the image kind is the shared one), :mod:`.cli` (``python -m backend attribution ...``). The
TinyHiDDeN weights are trained by ``python -m backend.train attribution``.
"""

from __future__ import annotations

from backend.api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    **dict.fromkeys(("UserPool", "MatchResult", "tau_for_fpr", "detection_p_value", "detection_threshold",
                     "attribution_threshold", "tdr_lower_bound", "tar_lower_bound", "fdr_upper_bound_random",
                     "fdr_upper_bound_independent", "binomial_pmf", "simulate_decodes"), "bounds"),
    **dict.fromkeys(("UserRegistry", "User", "default_db_path", "open_registry"), "users"),
    **dict.fromkeys(("EvalConfig", "EvalResult", "evaluate", "cached_pool", "clean_decode_set", "embed_and_attribute",
                     "compare_strategies", "strength_sweep", "simulate_vs_users", "theory_vs_users",
                     "measured_betas"), "evaluation"),
    **dict.fromkeys(("CreateUsersConfig", "CreateUsersResult", "run_create_users", "ComparePoolsConfig",
                     "ComparePoolsResult", "run_compare_pools", "EmbedConfig", "EmbedResult", "run_embed",
                     "AttributeConfig", "AttributeResult", "run_attribute", "TraceConfig", "TraceResult", "run_trace",
                     "EvaluateConfig", "run_evaluate", "SweepConfig", "SweepResult", "run_sweep", "SimulateConfig",
                     "SimulateResult", "run_simulate", "BoundsConfig", "BoundsResult", "run_bounds"), "jobs"),
    "PRESETS": "inputs",
    "preset_image": "inputs",
})
