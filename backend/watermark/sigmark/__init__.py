"""SIGMark: blind, scalable in-generation video watermarking (GF-PRC + SGO).

Paper: "SIGMark: Scalable In-Generation Watermark with Blind Extraction for Video Diffusion", Zhu, Zhao, Jin, Guo, Ma,
Wang, Guo, Zhang, ICLR 2026 (arXiv 2603.02882). Building block: PRC watermark (Gunn, Zhao, Song, ICLR 2025,
arXiv 2410.07369), :mod:`backend.watermark.prc`.

- **GF-PRC** (:class:`GlobalKeys`): one PRC key per latent temporal index ``f = 1..Lf``, made once and shared by every
  video. The message is split into ``Lf / fr`` blocks of ``m`` bits, each tiled over ``fr`` latent frames;
  ``z_T[:, f] = PRC_Encode(K[f], block) * |N(0, I)|`` (distortion-free); latent frame 0 gets plain Gaussian noise.
- **Blind extraction** (:func:`extract_noise`): per inverted latent frame, PRC posterior (v = 1.5), Detect score against
  EVERY key; the argmax key is the frame's absolute temporal index; BP-decode with that key; place the bits at
  ``out[key_idx] = decoded`` (the correct direction; the official code inverts the permutation); majority vote over the
  ``fr`` copies. A video is called watermarked if the joint PRC Detect of the aligned keys (latent frame f with key
  f, all frames' checks together) passes at ``video_fpr / 2``, or some (frame, key) pair passes PRC Detect at
  ``video_fpr / (2 frames keys)`` (union bound: false-positive rate <= ``video_fpr`` per video for a fixed frame
  grouping; SGO's placement search is a data-dependent choice outside this bound). No per-video record.
- **SGO** (:func:`segment_group_ordering`): temporal edits shift frames across the causal VAE's 4-frame groups, which
  destroys the sign pattern of every later latent frame. SGO segments the frames at discontinuities (the paper's
  features: optical flow, forward-backward consistency, motion-compensated residual, flow change, frame difference;
  robust local z-scores, hysteresis and hard cuts; :func:`segment_frames`), finds each segment's group phase by
  encoding+inverting short mini-videos at the 4 phase offsets and keeping the one whose two latent frames get
  consecutive keys (k, k + 1), places the segment at absolute frame ``4(k - 1) + 1``, interpolates the gaps, and the
  re-grouped video is extracted.
- **Baselines** (:func:`get_method`): ``sigmark_nosgo`` (ablation: naive re-grouping), ``videoshield`` (non-blind
  Gaussian-Shading templates, one record per video; extraction compares against all of them, VideoShield-style);
  ``videomark`` (non-blind VideoMark-style: one PRC key, per-frame messages in a store, nearest stored message by
  Levenshtein distance, :class:`VideoMarkStore`); ``sigmark_oracle_cuts`` is a diagnostic only (SGO handed the true cut positions, to separate the segmentation from
  the phase search).

Left out: the paper's video diffusion models (no such weights are available offline; a tiny causal latent video
diffusion model trained by the project stands in, :mod:`.channel`) and its code length (n = 1024 per latent frame here,
65536 in the paper; :class:`SIGMarkConfig`).

Methods (:data:`~.evaluation.METHODS`, each entry the function that evaluates the method on one
:class:`~.evaluation.Trial`):

| name | label | kind | what |
|---|---|---|---|
| ``sigmark`` | SIGMark (GF-PRC + SGO) | ours | GF-PRC + SGO (blind) |
| ``sigmark_nosgo`` | SIGMark without SGO | ablation | GF-PRC, naive re-grouping (blind) |
| ``sigmark_oracle_cuts`` | SGO given the true cuts (diagnostic) | reference | SGO given the true cut positions (not deployable) |
| ``videoshield`` | VideoShield-style templates (non-blind) | baseline | Gaussian-Shading templates, one record per video |
| ``videomark`` | VideoMark-style nearest stored message (non-blind) | baseline | one PRC key, nearest stored message by edit distance |

Shapes: videos ``[F, H, W, 3]`` float in [0, 1] (uint8 in the jobs' results); latents ``[C, 1 + Lf, h, w]``;
messages uint8 bit arrays ``[M]`` with ``M`` one of :func:`~.messages.message_options` (32, 64, 96 or 192 bits on
the tiny model); Detect scores ``[Lf', Lf]``.

Modules, by job: :mod:`.messages` (the valid message lengths), :mod:`.gfprc` (keys, messages, watermarked noise,
generation, blind extraction from recovered noise), :mod:`.sgo` (segmentation, phase search, re-grouping and the full
extraction from a video), :mod:`.baselines` (VideoShield-style and VideoMark-style stores), :mod:`.evaluation` (the
methods table ``METHODS``, extraction costs, evaluation under an attack chain), :mod:`.tiny` (the tiny model's sizes),
:mod:`.channel` (the video diffusion channels: the tiny latent video diffusion model and an analytic linear one),
:mod:`.networks` (the tiny model's network classes), :mod:`.jobs` (``run_generate``, ``run_trial``, ``run_extract``,
``run_evaluate``, ``run_table``: what the page, the CLI and the benchmark call), :mod:`.inputs` (presets; the video
kind is the shared one), :mod:`.cli` (``python -m backend sigmark ...``). Attack chains are written in the one grammar
of :mod:`backend.watermark.attacks`. The weights are trained by ``python -m backend.train sigmark``.

The method's API is importable from this package (``from backend.watermark import sigmark as S; S.generate(...)``);
each name is loaded from its module on first use, so importing the package (e.g. for ``--help``) stays cheap.
"""

from __future__ import annotations

from backend.api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    **dict.fromkeys(("message_options", "check_message_bits"), "messages"),
    **dict.fromkeys(("SIGMarkConfig", "Extraction", "GlobalKeys", "Generation", "global_keys", "parse_hex",
                     "bits_to_hex", "frame_blocks", "initial_noise", "prc_signed_noise", "generate",
                     "score_frames", "detect_noise", "extract_noise", "conform_length"), "gfprc"),
    **dict.fromkeys(("segment_features", "segment_frames", "segment_group_ordering", "extract", "bit_accuracy"), "sgo"),
    **dict.fromkeys(("VideoShieldStore", "VideoMarkStore", "levenshtein_many"), "baselines"),
    **dict.fromkeys(("METHODS", "MethodResult", "Trial", "get_method", "extraction_cost", "cut_segments",
                     "evaluate_attack", "run_methods", "aggregate"), "evaluation"),
    **dict.fromkeys(("GenerateConfig", "GenerateResult", "run_generate", "TrialConfig", "TrialResult", "run_trial",
                     "ExtractConfig", "ExtractResult", "run_extract", "EvaluateConfig", "EvaluateResult",
                     "run_evaluate", "TableConfig", "TableResult", "run_table"), "jobs"),
})
