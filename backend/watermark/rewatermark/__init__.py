"""Self-re-watermarking: the attack on image watermarks and the Lipschitz-constrained, self-aware defense (SRW).

Paper: "The Self-Re-Watermarking Trap: From Exploit to Resilience", Senthuran, Xiang, Natgunanathan, Thayasivam,
ICLR 2026 (OpenReview st1hrLTP14; no arXiv version). Official code: GitHub SVithurabiman/SRW.

- **The attack** (:mod:`.core`): whoever holds the owner's encoder re-embeds a message B of their own into an image
  that already carries A, ``rounds`` times (self-re-watermarking), once with another trained encoder (cross-model),
  or as a targeted L-inf PGD on the owner's decoder (the paper's eps 0.03 / 0.04 in [-1, 1] units); every attack is
  reported with the owner's accuracy on A and the attacker's own success on B.
- **The defense** (:mod:`.lipschitz`): spectral normalisation of every layer (GroupNorm without affine, ReLU) and
  training against re-embedding and PGD overwrite, as a CPU miniature: 16 bits on 32 x 32 frames, an image read at
  128 x 128 as 4 x 4 frames (:data:`~.lipschitz.TILES`), trained by ``python -m backend.train rewatermark``.

Left out: the paper's 128 px, 30-bit networks and their frozen ImageNet ResNet-50 branch (no downloaded weights), LPIPS
(SSIM instead), rotation and flip noise, and the paper's recoverability bounds: spectral normalisation of a
convolution's reshaped weight does not bound its true operator norm and GroupNorm has no global Lipschitz constant,
so sensitivities are measured (:func:`~.core.sensitivity_report`), not certified.

Victim and attacker models (:data:`~.core.MODELS`, each entry called with ``tiles`` gives the backend; the five
SRW-family training recipes are :data:`~.lipschitz.VARIANTS`, each called builds the untrained model):

| name | label | kind | what |
|---|---|---|---|
| ``srw`` | SRW: spectral norm + re-embedding + PGD losses (defended) | ours | the paper's defense |
| ``plain`` | plain (no constraint, no adversarial terms: the victim) | baseline | the same network trained without them |
| ``sn`` | spectral norm only | ablation | spectral norm, no adversarial terms |
| ``reemb`` | re-embedding loss only | ablation | re-embedding loss, no spectral norm |
| ``sn_reemb`` | spectral norm + re-embedding loss | ablation | no PGD loss |
| ``tinyhidden`` | TinyHiDDeN (registry, learned, undefended) | baseline | the attribution page's learned watermark |
| ``dwtdctsvd`` | invisible-watermark DWT-DCT-SVD | reference | classical (the library's ``dwtDctSvd``), >= 256 px |
| ``dwtdct`` | invisible-watermark DWT-DCT | reference | classical (the library's ``dwtDct``), >= 256 px |

Shapes: images ``(H, W, 3)`` uint8 RGB (re-watermarked images are rounded to 8 bits between rounds); messages
``(n,)`` uint8 bits (16 for the SRW family, 64 for TinyHiDDeN and the classical ones); inside the networks
``(B, 3, H, W)`` float in [0, 1].

Modules: :mod:`.lipschitz` (the SRW networks, the training step, PGD, operator norms), :mod:`.core` (the registry of
victims, the attacks, one image's story, the evaluation over images, sensitivity), :mod:`.diagnose` (why a model
misreads a photograph), :mod:`.jobs` (``run_attack``, ``run_evaluate``: what the page and the CLI call),
:mod:`.inputs` (the page's preset photos; the image kind is the shared one), :mod:`.cli`
(``python -m backend rewatermark ...``).
"""

from __future__ import annotations

from backend.api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    **dict.fromkeys(("MODELS", "Victim", "SRWBackend", "get_model", "available_models", "model_names",
                     "check_image", "rewatermark", "pgd_overwrite", "Story", "run_story", "story_rows",
                     "decoded_stages", "distortion_accuracy", "EvalConfig", "evaluate", "sensitivity_report"),
                    "core"),
    **dict.fromkeys(("VARIANTS", "Variant", "SRWConfig", "SRWModel", "TILES", "weights_path", "load"), "lipschitz"),
    **dict.fromkeys(("AttackConfig", "Attack", "AttackResult", "run_attack", "EvaluateConfig", "EvaluateResult",
                     "run_evaluate"), "jobs"),
    "PRESETS": "inputs",
    "preset_image": "inputs",
})
