"""IGGT: instance-grounded multi-view features, at miniature scale on procedural 3-D scenes.

Paper: Li et al., "IGGT: Instance-Grounded Geometry Transformer for Semantic 3D Reconstruction" (ICLR 2026;
arXiv 2510.22706; official code github.com/lifuguan/IGGT_official). A large multi-view transformer (DINOv2 tokens,
alternating frame and global attention) predicts geometry and an 8-d instance feature per pixel, trained with a
3-D-consistent contrastive loss (pull same-instance pixels across views together, push different instances past a
margin); HDBSCAN on the features gives instance masks that are consistent across views.

Implemented (``data``, ``model``, ``learn``, ``segment``, ``jobs``): views of procedural scenes of boxes, spheres and
cylinders rendered by :mod:`backend.scenes.scene3d`, with exact depth and instance ids; frozen DINOv2 ViT-S/14 patch
features of each 224-pixel view (16 x 16 patches, cached once for training); a 0.2M-parameter network with a view
embedding, two pairs of frame / global (cross-view) attention blocks and a DPT-style head fused with a shallow
convolution of the pixels, predicting log depth and an 8-d feature on a 64 x 64 grid; the paper's pull/push loss with
lambda_pull = 2, lambda_push = 1, M = 1 plus an L1 log-depth loss; scikit-learn's HDBSCAN over the features of all
views at once (one cluster spans views, so masks come matched); T-mIoU and T-SR. Held-out scenes use a shape
(cylinders) or a texture (checker) never seen in training, or give every object the same colour (in training each
object has its own, so colour alone would identify it).

Left out, and why: the 1B-parameter VGGT backbone, camera and point-map heads and InsScene-15K (GPU scale; the
miniature trains in minutes on one CPU core); the window-shifted cross-attention that injects geometry into the
instance head (here the instance branch reads the depth branch's hidden features); the VLM / open-vocabulary uses
of the masks; SAM2 as the baseline (the field's per-view alternative here is clustering DINOv2 features per view and
matching them with the Hungarian algorithm).

| name | label | kind | what |
|------|-------|------|------|
| ``iggt`` | IGGT features, joint HDBSCAN (ours) | ours | one HDBSCAN over the learned features of all views |
| ``iggt_per_view`` | IGGT features, per view + Hungarian | ablation | HDBSCAN per view, clusters matched across views |
| ``dinov2_hungarian`` | DINOv2 clusters + Hungarian | baseline | per-view HDBSCAN of DINOv2 features, Hungarian matching on cosine |
| ``colour_depth`` | Colour + predicted depth + Hungarian | baseline | per-view HDBSCAN of colour, predicted depth and position, matched by colour |

(``segment.SEGMENTERS``.) Shapes: DINOv2 features ``[V, 16, 16, 384]``; images ``[V, 224, 224, 3]``; outputs, labels,
depth and instance maps ``[V, 64, 64]``; features ``[V, 64, 64, 8]``. ``run_segment(SegmentConfig, photos=None) ->
SegmentResult`` (one scene or 2-4 photos: masks, matches, T-mIoU / T-SR, PCA of the features, costs);
``run_eval(EvalConfig) -> EvalResult`` (held-out scenes x shipped seeds x segmenters).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "SPLITS": "data", "ViewSet": "data", "make_scene": "data", "cameras": "data", "render_views": "data",
    "rendered_viewset": "data", "photo_viewset": "data", "dataset": "data",
    "NetConfig": "model", "LossConfig": "model", "IGGTNet": "model", "contrastive_loss": "model",
    "scene_losses": "model",
    "TrainConfig": "learn", "train": "learn", "predict": "learn", "load_model": "learn", "weights_path": "learn",
    "SEGMENTERS": "segment", "ClusterConfig": "segment", "Inputs": "segment", "cluster": "segment",
    "match_views": "segment", "track_metrics": "segment", "pair_distances": "segment",
    "SegmentConfig": "jobs", "SegmentResult": "jobs", "run_segment": "jobs", "EvalConfig": "jobs",
    "EvalResult": "jobs", "run_eval": "jobs", "load_models": "jobs", "scene_means": "jobs",
})
