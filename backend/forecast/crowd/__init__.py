"""STDDN: a crowd simulator whose trajectory network is trained with a density continuity equation on a grid graph.

Paper: "STDDN: A Physics-Guided Deep Learning Framework for Crowd Simulation" (Liu et al., ICLR 2026; arXiv
2604.02756). A per-agent trajectory network is trained together with a differentiable density neural ODE (the
continuity equation solved on a learned graph over grid cells), which shapes training only: at inference the network
runs alone.

Implemented: scene geometries and the held-out split (``scenes``); the vectorised social-force model and ORCA through
pyrvo / RVO2 (``physics``); the ground-truth generator with hidden per-agent parameters (``generate``); the trajectory
container (``data``); differentiable density mapping and cross-grid detection (``density``); the trajectory network,
the density ODE and the staged loss (``stddn``); training windows and the staged schedule (``training``); the
long-term simulation protocol (``rollout``); the simulators and their shipped weights (``methods``); MAE, Sinkhorn OT,
MMD, FDE and collisions (``metrics``); running and scoring methods on clips (``evaluate``); the ``frame, id, x, y``
CSV (``csvio``); the registry (``interface``) and the jobs (``jobs``). Left out: the paper's GC and UCY recordings
(not available offline: the generator, a mix of social-force and ORCA walkers, stands in) and its diffusion baseline
SPDiff (not trained here).

| name | label | kind | what |
|------|-------|------|------|
| ``stddn`` | STDDN | ours | the trajectory network trained with the density continuity ODE |
| ``micro`` | Micro only (no ODE) | ablation | the same network trained without the density ODE (lambda2 = 0) |
| ``social_force`` | Social force | baseline | the default-parameter social-force model (Helbing and Molnar 1995) |
| ``orca`` | ORCA | baseline | optimal reciprocal collision avoidance (pyrvo / RVO2) |
| ``constant_velocity`` | Constant velocity | baseline | every agent keeps its last velocity |

(``interface.METHODS``: each entry, called as ``factory(net=None)``, builds a ``rollout.CrowdSimulator``; the learned
ones load their shipped weights unless given a network.)

Shapes: positions ``[T, N, 2]`` metres (NaN where an agent is absent), 0.08 s frames; every agent's first 25 frames
come from the ground truth, then the method simulates it. ``run_simulate(scene or Clip, SimulateConfig) ->
SimulateResult`` and ``run_evaluate(EvaluateConfig) -> EvaluateResult`` return the metric tables (and the page's
arrays).

Importing this package imports nothing heavy.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "METHODS": "interface", "LEARNED": "interface", "get_method": "interface", "canonical": "interface",
    "Clip": "data", "Scene": "scenes", "get_scene": "scenes", "EVAL_SCENES": "scenes", "TRAIN_SCENES": "scenes",
    "read_trajectories": "csvio", "rollouts_to_frame": "csvio",
    "simulate": "rollout", "run_clip": "evaluate", "evaluate": "evaluate", "eval_clip": "evaluate",
    "load_model": "methods", "weights_path": "methods",
    "SimulateConfig": "jobs", "SimulateResult": "jobs", "run_simulate": "jobs", "EvaluateConfig": "jobs",
    "EvaluateResult": "jobs", "run_evaluate": "jobs",
})
