"""Lyra: feed-forward 3-D Gaussians from one view, distilled from a camera-controlled view generator.

Paper: Bahmani, Shen, Ren, Huang, Jiang, Turki, Tagliasacchi, Lindell, Gojcic, Fidler, Ling, Gao, Ren, "Lyra:
Generative 3D Scene Reconstruction via Video Diffusion Model Self-Distillation" (ICLR 2026; arXiv 2509.19296). A frozen
camera-controlled video diffusion model imagines views along camera paths from one image; a 3-D Gaussian-splatting
decoder on its latents is trained so that its renders match the model's own decoded frames (self-distillation: no
real multi-view data); at inference, image -> latents -> Gaussians in one pass, rendered in real time.

Implemented at miniature scale (32 x 32 views of procedural scenes of :mod:`backend.scenes.scene3d`; Gaussians
rendered by :mod:`backend.scenes.splat`): the teacher, a small camera-conditioned view generator trained by the lab
on true renders and then frozen (the stand-in for the video diffusion model; like GEN3C it refines a 3-D cache, the
first view warped by a monocular depth network, and imagines an orbit view from one image, imperfectly and without
guaranteed 3-D consistency) (``models.Teacher``); the student, a U-Net that maps the first view with the teacher's
latent and depth of it to one 3-D Gaussian per 2 x 2 pixel cell (inverse depth, offset, anisotropic scale, rotation,
opacity, colour) in one forward pass, trained only on the teacher's decoded views along the orbit
(``models.Student``, ``distill``); the baselines and the upper bound (``evaluate``); the jobs (``jobs``). Left out:
the diffusion model itself (a deterministic regression network here), multi-trajectory latent fusion, the
dynamic (4-D) extension, and text input.

| name | label | kind | what |
|------|-------|------|------|
| ``lyra`` | Lyra student (ours) | ours | one forward pass: first view (+ teacher latent) -> 3-D Gaussians, trained only on teacher views |
| ``warp`` | Depth warp of the first view | baseline | the first view splatted at a monocular depth network's depth |
| ``per_scene`` | Per-scene optimisation on the teacher's views | baseline | Adam on every Gaussian parameter, fitted to the teacher's 8 path views of this scene |
| ``upper_bound`` | Student on true renders (upper bound) | reference | the same student trained on true multi-view renders |
| ``teacher_views`` | Teacher's views (2-D, distilled) | reference | the frozen generator's imagined views, one call per view |

(``jobs.METHODS``.) Shapes: first views ``[B, 3, H, W]`` in [0, 1]; path offsets ``[B, V]`` (degrees of orbit
azimuth about the scene centre); views ``[B, V, 3, H, W]``; Gaussians ``[B, N, ...]`` with N = H W / 4.
``run_render(RenderConfig, image=None) -> RenderResult`` (views, PSNR / SSIM per view, costs);
``run_eval(EvalConfig) -> EvalResult`` (PSNR / SSIM per held-out scene of every shipped arm).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "Teacher": "models", "Student": "models", "DepthNet": "models", "NetConfig": "models",
    "gaussians_from_maps": "models", "depth_warp_gaussians": "models",
    "train_teacher": "distill", "train_student": "distill", "train_depth": "distill", "teacher_views": "distill",
    "render_at": "distill",
    "psnr": "evaluate", "ssim": "evaluate", "depth_warp": "evaluate", "optimise_scene": "evaluate",
    "time_to_reach": "evaluate",
    "ViewSet": "views", "make_viewset": "views", "render_views": "views", "PATH_DELTAS": "views",
    "EVAL_DELTAS": "views",
    "METHODS": "jobs", "RenderConfig": "jobs", "RenderResult": "jobs", "run_render": "jobs", "EvalConfig": "jobs",
    "EvalResult": "jobs", "run_eval": "jobs", "load_models": "jobs", "Models": "jobs", "method_key": "jobs",
    "fast_methods": "jobs",
})
