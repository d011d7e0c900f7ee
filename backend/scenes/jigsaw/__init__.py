"""Visual Jigsaw: reinforcement-learning post-training on jigsaw puzzles with a verifiable, graded reward.

Paper: "Visual Jigsaw Post-Training Improves MLLMs", Wu, Zhang, Tong, Li, Liu, Loy (arXiv 2509.25190; official code
github.com/penghao-wu/visual_jigsaw). An image is cut into a grid of tiles and shuffled; the model answers the
original order as a list of tile labels in raster order; the reward is checked automatically: 1 for the exact
permutation, gamma x the fraction of correct positions for a valid wrong one (gamma = 0.2), 0 for an invalid one,
plus a format reward of 0.2; GRPO without KL.

Implemented (a miniature on the lab's CPU): the task, the answer format and both rewards (``reward``); images, tiles,
shuffles and the sources (``puzzle``: procedural scenes of :mod:`backend.scenes` for training, held-out scenes, and
scikit-image photographs as a second held-out source); DINOv2 ViT-S/14 tile features, computed once and cached
(``features``); policy (a), a Plackett-Luce policy over tile features trained with GRPO
(:mod:`backend.reasoning.grpo`) at 2 x 2 and 3 x 3 with the graded and the binary reward (``policy``); policy (b),
the iLLaVA page's tiny vision-language model post-trained on 2 x 2 jigsaws as a closed set of 24 permutations it
scores, post-trained with GRPO on its projector and small LoRA adapters from cached encoder tokens (``vlm_grpo``),
evaluated on held-out puzzles and held-out scene questions before and after (``vlm``); clip ordering, the temporal jigsaw: 4
shuffled frames of a procedural tracking shot answered in time order by the same policy trained with GRPO, held out
on procedural clips and on pans over photographs (``ordering``); the jobs (``jobs``).

Left out, and why: the 7B Qwen2.5-VL model and its free-text generation with a reasoning format (the lab's CPU runs
a 135M language model; policy (b) scores a closed answer set instead of generating); the paper's video jigsaw on
real videos (clip ordering here runs on procedural tracking shots, whose arrow of time is the camera's heading) and the
3-D depth-ordering jigsaw; the benchmarks (MMVP, MMStar, DA-2K).

Rewards (``reward.REWARDS``):

| name | label | kind | what |
|------|-------|------|------|
| ``graded`` | Graded reward (paper) | ours | 1 exact, gamma x fraction right for a valid wrong permutation, 0 invalid (+ 0.2 format) |
| ``binary`` | Binary reward | baseline | 1 exact, else 0 (+ 0.2 format) |

Shapes: images uint8 ``[168, 168, 3]``; tiles uint8 ``[n, 168 / g, 168 / g, 3]`` (n = g x g); tile features float
``[B, n, 5, 384]``; policy scores ``[B, n (tile), n (position)]``; permutations long ``[B, n]`` (for each position in
raster order, the shown tile, 0-based; answers in text are 1-based). ``run_solve(image, SolveConfig) ->
SolveResult``; ``run_order(OrderConfig, image=None) -> SolveResult`` (frames ``[4, 168, 168, 3]``); ``run_evaluate(
EvalConfig) -> EvalResult``; ``run_vlm(VLMConfig) -> VLMResult``. Weights:
``assets/jigsaw_policy_g<grid>_<reward>_s<seed>.safetensors`` (3 seeds),
``assets/jigsaw_clip_t4_<reward>_s<seed>.safetensors`` (3 seeds) and
``assets/jigsaw_vlm_projector.safetensors``, made by ``python -m backend.train jigsaw``.
"""

from ...api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "REWARDS": "reward", "Score": "reward", "score_text": "reward", "score_perm": "reward",
    "parse_answer": "reward", "to_text": "reward", "GAMMA": "reward", "FORMAT_REWARD": "reward",
    "Puzzle": "puzzle", "make_puzzle": "puzzle", "cut": "puzzle", "assemble": "puzzle", "source_image": "puzzle",
    "tile_features": "features", "puzzle_set": "features",
    "TilePolicy": "policy", "PolicyConfig": "policy", "TrainConfig": "policy", "train": "policy",
    "sample": "policy", "greedy": "policy", "log_prob": "policy", "evaluate": "policy",
    "JigsawScorer": "vlm", "load_post_trained": "vlm",
    "SolveConfig": "jobs", "SolveResult": "jobs", "run_solve": "jobs", "EvalConfig": "jobs", "EvalResult": "jobs",
    "run_evaluate": "jobs", "VLMConfig": "jobs", "VLMResult": "jobs", "run_vlm": "jobs", "load_policy": "jobs",
    "preset_image": "jobs", "OrderConfig": "jobs", "run_order": "jobs", "load_clip_policy": "jobs",
    "clip_frames": "ordering", "clip_set": "ordering", "pan_over": "ordering", "frame_features": "ordering",
    "KINDS": "inputs", "PRESETS": "inputs",
})
