"""What Happens Next?: motion forecasting from a single image by generating point trajectories.

Paper: Boduljak, Karazija, Laina, Rupprecht, Vedaldi, "What Happens Next? Anticipating Future Motion by Generating
Point Trajectories" (arXiv 2509.21592). A latent flow model generates the future trajectories of a dense point grid
from one image (motion, not pixels): an image-conditioned trajectory VAE compresses the grid (spatial downsampling
only), a rectified-flow model in its latent space, conditioned on DINOv2 patch tokens by cross-attention, samples K
futures from K noise seeds.

Implemented, as a miniature: a 2-D rigid-body world simulated by pymunk (``world``: blocks and balls falling,
sliding, colliding, tipping; two ambiguous kinds with two known outcomes each, a ball on a peak and a square on its
corner, decided by a nudge the image does not show), rendered at 112 x 112, with the ground-truth trajectories of a
stride-8 grid (14 x 14 points, T = 8 steps of 0.1 s); frozen DINOv2 ViT-S/14 patch tokens (8 x 8) as the image
features (``data``); the VAE (Huber + beta KL), the flow and the regressor (``model``), trained by ``python -m
backend.train nextmotion`` for three seeds; the metrics (``metrics``: best-of-K MSE, Frechet motion distance,
coverage of the ambiguous scenes' outcomes, LRTL). Departures: convolutional VAE and regressor instead of the paper's
spatio-temporal transformers; a 2-block flow transformer; T = 8 instead of 16-30; 2,000 simulated training scenes
instead of Kubric and real video; the paper's FVMD is replaced by a Frechet distance on pooled displacements.

| name | label | kind | what |
|------|-------|------|------|
| ``flow`` | Latent flow (ours) | ours | K Euler samples of the latent rectified flow from K noise seeds, decoded by the VAE |
| ``regressor`` | Regressor | baseline | one deterministic prediction from the same DINOv2 tokens (MSE) |
| ``noisy_regressor`` | Regressor + noise | baseline | the regressor plus Gaussian noise with its training residuals' spread, K draws |
| ``retrieval`` | Nearest-neighbour retrieval | baseline | the futures of the K training scenes nearest in mean DINOv2 token |
| ``static`` | Static (no motion) | reference | every point stays put |

(``methods.METHODS``.) Shapes: a trajectory grid ``[G, G, T, 2]`` pixel displacements (G = 14, T = 8); samples
``[K, G, G, T, 2]``; image tokens ``[B, 64, 384]``. ``run_sample(image | None, SampleConfig) -> SampleResult`` (K
futures per method with metrics); ``run_eval(EvalConfig) -> EvalResult`` (per-scene metrics on held-out ambiguous
scenes).
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "Scene": "world", "make_scene": "world", "make_scenes": "world", "simulate": "world", "grid_points": "world",
    "KINDS": "world", "AMBIGUOUS": "world",
    "NetConfig": "model", "TrajVAE": "model", "FlowNet": "model", "Regressor": "model",
    "METHODS": "methods", "Models": "methods",
    "mse": "metrics", "best_of_k": "metrics", "lrtl": "metrics", "object_lrtl": "metrics", "grid_lrtl": "metrics",
    "coverage": "metrics", "frechet": "metrics", "motion_features": "metrics", "deform": "metrics",
    "SampleConfig": "jobs", "SampleResult": "jobs", "run_sample": "jobs", "EvalConfig": "jobs",
    "EvalResult": "jobs", "run_eval": "jobs", "load_models": "jobs",
})
