"""Temporal slowness in central vision: self-supervised learning from gaze-centred crops of an egocentric stream with
time-contrastive positives, against full frames with augmentations.

Paper: Schaumlöffel, Aubret, Roig, Triesch, "Temporal Slowness in Central Vision Drives Semantic Object Learning"
(arXiv 2602.04462). On Ego4D (5 fps) with gaze from a saliency model, crops around the gaze point and positive pairs
of frames at most DeltaT apart (MoCo v3, EMA key encoder) give better object semantics than full frames with
spatial augmentations: +7.97 instance recognition (ResNet-50), and a model that relies on the object (accuracy drops
about 20 % when the foreground is removed, about 10 % when the background is).

Implemented: the egocentric stream of the scene package (:mod:`backend.scenes.ego`: object instances that turn,
scale and drift under changing light over cluttered background classes, fixations and pans); gaze from
spectral-residual saliency of each frame, never the rendered object centre (``gaze``); the views and positives, the
four arms and the MoCo-v3 loop (``learn``, ``model``: a four-layer CNN on 32 x 32 inputs); linear probes for
instance, category and background class on held-out object photos, ImageNet-9-style foreground and background swaps
and nearest neighbours among scene photos and real photographs (``probe``); the jobs (``jobs``). Left out: Ego4D
and the GLC gaze model (a procedural stream and a classical saliency model instead), ResNet-50 / ViT (a 75k-parameter
CNN), fine-grained and scene probes, CKA against GloVe co-occurrence embeddings.

| name | label | kind | what |
|------|-------|------|------|
| ``central-temporal`` | Central + temporal (ours) | ours | gaze crops; positive = a frame 1..DeltaT away in the clip |
| ``full-augment`` | Full frame + augmentation | baseline | whole frames; positive = another augmentation of the frame |
| ``central-augment`` | Central + augmentation | ablation | gaze crops; positive = another augmentation of the crop |
| ``full-temporal`` | Full frame + temporal | ablation | whole frames; positive = a frame 1..DeltaT away |

(``learn.ARMS``.) Shapes: stream frames uint8 ``[C, T, 64, 64, 3]``; encoder inputs float ``[B, 3, 32, 32]``;
features ``[B, 64]``. ``run_probe(ProbeConfig) -> ProbeResult`` (accuracies per arm and seed, paired gains);
``run_sweep(SweepConfig) -> SweepResult`` (over crop side and DeltaT); ``run_stream(StreamConfig) -> StreamResult``
(a clip with gaze, crops and positive pairs); ``run_neighbours(image, NeighbourConfig) -> NeighbourResult``.
Weights: ``python -m backend.train slowness`` (``assets/slowness_*.safetensors``, encoders only).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "spectral_residual": "gaze", "gaze_points": "gaze", "crops": "gaze", "crop_boxes": "gaze",
    "Encoder": "model", "MoCo": "model", "ModelConfig": "model", "info_nce": "model",
    "ARMS": "learn", "TrainConfig": "learn", "build_stream": "learn", "train": "learn",
    "probe_data": "probe", "evaluate": "probe", "features": "probe", "nearest": "probe",
    "ProbeConfig": "jobs", "ProbeResult": "jobs", "run_probe": "jobs", "SweepConfig": "jobs", "SweepResult": "jobs",
    "run_sweep": "jobs", "StreamConfig": "jobs", "StreamResult": "jobs", "run_stream": "jobs",
    "NeighbourConfig": "jobs", "NeighbourResult": "jobs", "run_neighbours": "jobs", "load_encoder": "jobs",
})
