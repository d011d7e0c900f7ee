"""MCD: one diffusion model imputes any missing channels of a multi-channel image from any observed subset.

Paper: Zhang, Zhou, Tansey, "Controllable Diffusion-Based Generation for Multi-Channel Biological Data" (ICLR 2026;
arXiv 2507.02902). A conditional diffusion model over multiplexed panels trained with random channel masking, so one
network reconstructs the missing channels from any combination of observed ones; hierarchical feature injection of the
spatially aligned observed channels and channel attention.

Implemented: the dual network (denoiser U-Net and condition encoder joined by squeeze-excitation gates at every
resolution, channel self-attention, SE output recalibration), EDM training and the Heun sampler (``mcd``); the
H = W = 1 per-cell vector case through the same network; a synthetic 12-marker tissue generator with a known
noise-free mean (``tissue``); the deterministic masked regressor (the same network and masking, trained with MSE:
what the diffusion objective adds over plain regression), the baselines (``baselines``) and the evaluation over
held-out observation patterns (``evaluate``; the channel-group rule that makes patterns far from training is the
trainer's ``--apart``); the ``channel_stack`` upload (``stack``). Left out: the paper's SiD one-step distillation, its larger
backbone and the real IMC / MRI / CITE-seq data (not available offline; the tissue generator stands in).

| name | label | kind | what |
|------|-------|------|------|
| ``mcd`` | MCD, mean of M samples (ours) | ours | the mean of M posterior samples from the Heun sampler |
| ``mcd_single`` | MCD, one sample (ours) | ours | one posterior sample |
| ``regressor`` | Masked regressor (same network, MSE) | ablation | MCD's network and masking trained with MSE; one forward pass |
| ``most_correlated`` | Most correlated observed channel | baseline | the observed channel of largest training abs(r), affinely mapped |
| ``ridge`` | Per-pixel ridge | baseline | per-pixel ridge regression from the observed channels |
| ``ridge_ms`` | Multi-scale ridge | baseline | ridge on the observed channels blurred at sigma 0, 1, 2, 4 px |
| ``unet`` | U-Net per target | baseline | a U-Net regressor per (pattern, target), shipped for the claims' patterns |
| ``bayes`` | Bayes ceiling (generator mean) | reference | the generator's noise-free mean (synthetic panels only) |

(``evaluate.METHODS``.)

Shapes: panels ``x`` (N, C, H, W) with C = 12, standardised per channel for the networks; masks ``m`` (N, C) in
{0, 1} (1 = observed); MCD samples (M, N, C, H, W). ``run_impute(stack, ImputeConfig) -> ImputeResult`` takes a
preset name or a ``(12, H, W)`` array and returns per-channel Pearson r per method plus the first panel's maps.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "MCD": "mcd", "MCDConfig": "mcd", "Standardiser": "mcd", "HELDOUT_PATTERNS": "mcd", "impute": "mcd",
    "FAR_PATTERNS": "mcd", "APART": "mcd", "MaskedRegressor": "mcd", "regress": "mcd", "distance_to_training": "mcd",
    "CHANNELS": "tissue", "PRESETS": "tissue", "generate": "tissue", "preset": "tissue",
    "METHODS": "evaluate", "evaluate": "evaluate", "EvalResult": "evaluate", "load_model": "evaluate",
    "parse_observed": "evaluate", "standardised_input": "evaluate",
    "read_stack": "stack", "to_bytes": "stack",
    "ImputeConfig": "jobs", "ImputeResult": "jobs", "run_impute": "jobs",
})
