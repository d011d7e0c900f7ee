"""Dual randomized smoothing: certified L2 robustness with a per-input noise level chosen by a second smoothed model.

Papers: Sun, Mao, Vechev, "Dual Randomized Smoothing: Beyond Global Noise Variance" (ICLR 2026; arXiv 2512.01782);
Cohen, Rosenfeld, Kolter, "Certified Adversarial Robustness via Randomized Smoothing" (ICML 2019; arXiv 1902.02918)
for CERTIFY.

Implemented (``dualrs``): CERTIFY as Cohen et al. (Clopper-Pearson bound, abstention); the dual framework of Theorem
4.2 (a variance estimator smoothed at ``sigma_e >= max Sigma`` picks and certifies ``sigma(x)``, the expert trained
at that sigma certifies the class, radius ``min(R_sigma, R_c)``, ``alpha/2`` per stage), the paper's "router" variant
with one expert MLP per sigma (the same experts are the global-sigma baselines) and its estimator training (soft
labels from radii, class-balance weights, consistency regularisation); the empirical attack check of every
certificate (``attack``: PGD and random search inside the certified ball, raw flips confirmed with fresh draws); 2-D
presets and validated CSV uploads (``data2d``); the run as one job (``jobs``). Left out: Cohen's PREDICT, denoised
smoothing on images (the paper's base models are diffusion-denoised; ours are small MLPs trained under noise) and the
paper's radius-dependent weight ``w_r`` (not specified in what we could read; ``w_r = 1``).

| name | label | kind | what |
|------|-------|------|------|
| ``dual`` | dual RS | ours | the smoothed variance estimator picks sigma(x), the expert at that sigma certifies; radius = min |
| ``global`` | global | baseline | Cohen et al.'s randomized smoothing with one global sigma (one curve per sigma) |
| ``moons`` | moons | reference | preset: two close moons plus two far blobs |
| ``circles`` | circles | reference | preset: two concentric rings plus two far blobs |

(``dualrs.METHODS``, ``data2d.DATASETS``.)

Shapes (``m`` test points, ``C`` classes, ``|Sigma|`` noise levels): ``MLP: [B, 2] -> [B, C]`` logits;
``certify(model, x [m, 2], ...) -> Certificates`` with ``pred``, ``radius``, ``p_lower``: ``[m]``;
``dual_certify(...) -> DualCertificates`` with ``pred``, ``radius``, ``sigma_idx``, ``r_sigma``, ``r_c``: ``[m]``;
``estimator_labels(...) -> [n, |Sigma|]`` radii; ``Dataset2D.x_*``: ``[n, 2]`` float32, ``y_*``: ``[n]``.
``run_certify`` returns the per-point certificates, curves, map and JSON summary (no models).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "TrainConfig": "configs", "CertifyConfig": "configs",
    "MLP": "dualrs", "certify": "dualrs", "dual_certify": "dualrs", "estimator_labels": "dualrs",
    "train_estimator": "dualrs", "train_classifier": "dualrs", "train_models": "dualrs", "run": "dualrs",
    "certified_accuracy": "dualrs", "DualRSResult": "dualrs", "METHODS": "dualrs", "get_method": "dualrs",
    "ABSTAIN": "dualrs",
    "AttackConfig": "attack", "AttackResult": "attack", "attack_dual": "attack", "attack_run": "attack",
    "Dataset2D": "data2d", "DATASETS": "data2d", "make_dataset": "data2d", "load_csv": "data2d",
    "RunConfig": "jobs", "CertifyResult": "jobs", "run_certify": "jobs",
})
