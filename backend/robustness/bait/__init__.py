"""BAIT: unlearnable examples that stay unlearnable when the victim fine-tunes a pretrained prior.

Papers: Li, Xu, Cai, Fang, Wu, Lao, Ling, Wang, "When Priors Backfire: On the Vulnerability of Unlearnable Examples
to Pretraining" (ICLR 2026; arXiv 2603.04731); Huang, Ma, Erfani, Bailey, Wang, "Unlearnable Examples: Making Personal Data Unexploitable"
(ICLR 2021; arXiv 2101.04898) for EMN; Fowl, Goldblum, Chiang, Geiping, Czaja, Goldstein, "Adversarial Examples Make
Strong Poisons" (NeurIPS 2021; arXiv 2106.10807) for the targeted-poisoning baseline.

Implemented: two 10-class 32 x 32 sources (``data``: one centred object of the scene package, class = its shape;
scikit-learn's bundled digits upsampled), a small CNN prior pretrained on the same kind of scenes showing ten OTHER
outlines (``data.PRIOR_SHAPES``: heptagon, octagon, 4- and 6-pointed stars, bar, half-disc, crescent, arrow, L, T;
never a target class), sample-wise EMN (min-min with a from-scratch surrogate), the class-targeted adversarial
poison, and BAIT's bi-level perturbation GENERATOR (``generator``): ``G(x, y) -> delta`` (a per-class pattern plus an
image-conditioned U-Net residual, ``eps * tanh``), trained with Adam through ``unroll`` inner SGD steps taken with
:func:`torch.func.functional_call` (inner: a surrogate restarted at every outer step from the prior fine-tuned on the
clean images, trained on ``(x + G(x, y), y)`` with the true labels; outer: the
inner-trained surrogate's cross-entropy towards the designated wrong label ``(y + 1) mod 10``), and its zero-unroll
ablation; exact L-infinity projection in /255 units on uint8 images (``perturb``); victims trained from scratch
and fine-tuned from the prior, the grid over seeds and both sources (``victims``, ``experiment``); the jobs
(``jobs``). Left out: the paper's exact losses and schedules (not in the abstract; ours are named in
``generator``), CIFAR / ImageNet-scale data and backbones (offline we have procedural scenes and 8 x 8 digits; the
prior is a 34k-parameter CNN, not an ImageNet model; the full tier also fine-tunes the embedded ImageNet
EfficientNet-Lite0), and data augmentation in the victims' training.

| name | label | kind | what |
|------|-------|------|------|
| ``clean`` | clean (no protection) | reference | the unprotected training set |
| ``emn`` | EMN (error-minimising) | baseline | Huang et al.'s sample-wise min-min noise (surrogate from scratch) |
| ``targeted`` | targeted poison | baseline | Fowl et al.'s PGD towards (y + 1) mod 10 against a model fine-tuned from the prior |
| ``bait`` | BAIT (ours) | ours | the bi-level generator, gradients through 3 unrolled inner SGD steps |
| ``bait_k0`` | BAIT, 0 unrolled steps | ablation | the same generator trained without the inner level |
| ``shapes`` | scene shapes (10 classes) | ours | source: one centred scene object, class = shape |
| ``digits`` | sklearn digits (upsampled) | reference | source: 8 x 8 digits upsampled to 32 x 32 |

(``experiment.METHODS``, ``data.SOURCES``.)

Shapes: images uint8 ``[N, 32, 32, 3]`` (protection also takes any ``[N, H, W, 3]``), labels int64 ``[N]``;
``SmallCNN: [B, 3, H, W] in [0, 1] -> [B, heads]``; ``Generator: (x [B, 3, H, W], y [B], eps) -> delta [B, 3, H,
W]``; ``train_bait(images, labels, theta0, eps) -> (protected uint8, generator, log)``; ``bait_apply(generator,
images, labels, eps)`` for new images of any size; ``protect_uint8(images, delta, eps) -> uint8`` with
``|out - images| <= eps``;
``run_protect(image | None, ProtectConfig) -> ProtectResult`` (protected images, amplified perturbations, realised
L-inf per method); ``run_grid(GridConfig) -> GridResult`` (per source x method x init: seeds' accuracies, mean, 95%
interval).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "ImageSet": "data", "SOURCES": "data", "load_source": "data", "prior_set": "data", "shape_image": "data",
    "PRIOR_SHAPES": "data", "prior_image": "data",
    "SmallCNN": "nets", "from_prior": "nets",
    "EMNConfig": "perturb", "emn": "perturb", "emn_apply": "perturb", "targeted_poison": "perturb",
    "protect_uint8": "perturb", "Generator": "generator", "BaitConfig": "generator", "train_bait": "generator",
    "bait_apply": "generator", "train_generator": "generator", "unrolled_outer_loss": "generator",
    "linf": "perturb", "accuracy": "perturb",
    "VictimConfig": "victims", "train_victim": "victims", "train_prior": "victims",
    "METHODS": "experiment", "get_method": "experiment", "Protectors": "experiment",
    "build_protectors": "experiment", "victim_grid": "experiment",
    "ProtectConfig": "jobs", "ProtectResult": "jobs", "run_protect": "jobs", "GridConfig": "jobs",
    "GridResult": "jobs", "run_grid": "jobs",
})
