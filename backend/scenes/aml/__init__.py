"""AML: alignment-aware masked learning for referring image segmentation.

Paper: "Alignment-Aware Masked Learning for Referring Image Segmentation" (AMLRIS; ICLR 2026; arXiv id not given in
the lab's paper list, official code github.com/pipashu1/AMLRIS). Training computes, without gradient, how well each
image region aligns with the expression (PatchMax), zeroes the blocks of weakly aligned pixels, and applies the
ordinary segmentation loss to the masked image; inference is unchanged.

Implemented (a miniature over the lab's procedural scenes, :mod:`backend.scenes`): referring expressions from
templates (colour, shape, size, relations to a landmark) with exact masks, a held-out source with other backdrops,
textures and phrasings (``data``); frozen DINOv2 ViT-S/14 patch features of the 112-pixel image (8 x 8 patches) and
MiniLM token features, computed once and cached (``features``); a small fusion and upsampling head (cross-attention
of patches to tokens, FiLM by the sentence, convolutions, an image path at 28 x 28; 91k parameters) (``model``);
AML exactly as the official code computes it, with the paper's no-gradient first pass: L2-normalised features of the
head, one fixed Gaussian projection, a softmax over each patch's tokens, PatchMax, bilinear upsampling, tau = 0.4,
rho = 0.25 of the weak pixels selected (the masked side, ``num_to_mask = len(low_ids) // 4`` in
``mask_image_with_relevance``), every block holding a selected pixel zeroed (``masking``); training and evaluation
(mIoU, oIoU, prec@0.5/0.7/0.9) (``learn``); the jobs (``jobs``).

Departures from the paper, by design of the miniature: the encoders are frozen (the paper fine-tunes a Swin-B and BERT
inside a CARIS-style model), so a block is zeroed in the cached patch tokens and in the image path rather than in
the pixels the encoder sees; a block is one 14-pixel patch (8 x 8 blocks on 112 pixels; the paper's 32-pixel blocks
make a 15 x 15 grid on 480 pixels); cosines are divided by a temperature of 0.05 before the softmax (the official code
applies the softmax to unnormalised dot products of learned 1024-d features, which are peaked; L2-normalised cosines
over about ten tokens would give a nearly flat softmax that no patch lifts above tau). Left out: RefCOCO, the
Swin/BERT backbone and its pixel decoder, the first pass's own loss (the official ``train.py`` back-propagates half
the loss of each pass; ``TrainConfig.unmasked_weight`` = 0.5 reproduces that, the shipped heads use 0).

| name | label | kind | what |
|------|-------|------|------|
| ``aml`` | AML (ours) | ours | zero the blocks of weakly aligned pixels (PatchMax < tau, a share rho of them) |
| ``random`` | Random blocks (same rate) | baseline | as many blocks as AML zeroes for the sample, placed uniformly |
| ``none`` | No masking | baseline | the ordinary training |

(``masking.MASKINGS``.) Shapes: patch features ``[B, 64, 384]``, token features ``[B, 24, 384]`` with a mask
``[B, 24]``, images uint8 ``[B, 112, 112, 3]``, masks bool ``[B, 112, 112]``, PatchMax ``[B, 64]``, blocks bool
``[B, 8, 8]``, logits ``[B, 1, 28, 28]``. ``run_segment(image, SegmentConfig) -> SegmentResult`` (per masking: PatchMax,
blocks, mask, IoU); ``run_evaluate(EvalConfig) -> EvalResult`` (every shipped head re-scored, paired gains, curves,
training-time overhead). Weights: ``assets/aml_<masking>_s<seed>.safetensors`` (5 seeds each), made by
``python -m backend.train aml``.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "Sample": "data", "make_sample": "data", "make_samples": "data", "describe": "data", "SOURCES": "data",
    "FeatureSet": "features", "build": "features", "encode_images": "features", "encode_texts": "features",
    "HeadConfig": "model", "RefSegHead": "model", "scores": "model",
    "MASKINGS": "masking", "MaskConfig": "masking", "patchmax": "masking", "aml_blocks": "masking",
    "random_blocks": "masking", "projection": "masking",
    "TrainConfig": "learn", "train": "learn", "evaluate": "learn",
    "EvalConfig": "jobs", "EvalResult": "jobs", "run_evaluate": "jobs", "SegmentConfig": "jobs",
    "SegmentResult": "jobs", "run_segment": "jobs", "load_head": "jobs", "preset_sample": "jobs",
})
