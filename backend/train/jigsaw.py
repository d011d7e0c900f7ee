"""``python -m backend.train jigsaw``: the Visual Jigsaw page's weights.

Part ``policy`` (``assets/jigsaw_policy_g<grid>_<reward>_s<seed>.safetensors``): the Plackett-Luce tile policy
(:mod:`backend.scenes.jigsaw.policy`) trained with GRPO at 2 x 2 and 3 x 3, with the graded and the binary reward,
``--seeds`` seeds each, the same ``--steps`` for every run (seed s gives both rewards the same initial weights, images
and shuffles). Training images: ``--train`` procedural scenes; the curves are measured on fixed puzzles of
held-out scenes (``scenes_val``) and of scikit-image photographs (``photos``, another source). Each file holds the
policy (float16), its curves and mean rewards; its quality is the final evaluation.

Part ``clips`` (``assets/jigsaw_clip_t4_<reward>_s<seed>.safetensors``): the same policy trained with GRPO on clip
ordering (:mod:`backend.scenes.jigsaw.ordering`: 4 shuffled frames of a procedural tracking shot, answered in time
order), graded and binary reward, ``--seeds`` seeds, ``--clip-steps`` steps, ``--clip-train`` training clips; curves
on held-out procedural clips (``clips_val``) and on windows panning over scikit-image photographs (``photo_pans``,
another source).

Part ``vlm`` (``assets/jigsaw_vlm_projector.safetensors``): the iLLaVA page's tiny vision-language model post-trained
with GRPO on 2 x 2 jigsaws scored as a closed set of 24 permutations (:mod:`backend.scenes.jigsaw.vlm_grpo`):
``--vlm-steps`` steps of ``--vlm-batch`` puzzles x 16 sampled answers from ``--vlm-train`` distinct training scenes,
the projector (``--vlm-lr``; 0: frozen) and LoRA adapters of rank ``--vlm-lora-rank`` on the language model's q/v projections
(``--vlm-lora-lr``; rank 0: the projector only); the file holds the trained tensors. Its quality: the jigsaw
(solve rate, p(true order), expected reward) on held-out scenes and photographs and the scene-question accuracy on
``--qa-scenes`` held-out scenes, before and after, with paired intervals; the learning curve is in its extra block.
The encoder tokens of the puzzles and the question answers are cached under ``cache_dir()/jigsaw``.

``--out-dir`` writes elsewhere (a smoke test: ``--part policy --steps 5 --seeds 1 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path


def _save(res, cfg, evals: dict, path: Path, out_dir: Path | None, command: str, quality_command: str,  # noqa: ANN001
          data_seeds: dict) -> None:
    """One trained policy: float16 weights, its config, data seeds, final evaluation and curves."""
    from .. import weights
    from ..scenes.jigsaw.policy import evaluate

    q: dict = {src: {k: round(v, 4) for k, v in evaluate(res.model, *ev).items() if k != "exact"}
               for src, ev in evals.items()}
    q.update(seconds=round(res.seconds, 2), command=quality_command)
    state = {k: v.detach().half() for k, v in res.model.state_dict().items()}
    if out_dir:
        path = out_dir / path.name
    every5 = [round(float(sum(res.rewards[i:i + 5]) / len(res.rewards[i:i + 5])), 4)
              for i in range(0, len(res.rewards), 5)]
    weights.save(path, state, config=asdict(cfg), command=command, data_seeds=data_seeds, quality=q,
                 extra={"curves": res.curves, "mean_reward_every_5": every5})
    print(f"wrote {path.name}: {q}", flush=True)


def _policy(args: argparse.Namespace, command: str) -> None:
    from ..scenes.jigsaw.features import puzzle_set
    from ..scenes.jigsaw.jobs import EVAL_COUNTS, EVAL_SEED, SHUFFLES, eval_set, policy_path
    from ..scenes.jigsaw.policy import TrainConfig, train
    from ..scenes.jigsaw.reward import REWARDS

    for grid in (2, 3):
        t0 = time.perf_counter()
        feats = puzzle_set("scenes", args.train, grid)
        evals = {src: eval_set(src, grid) for src in EVAL_COUNTS}
        print(f"grid {grid}: features in {time.perf_counter() - t0:.0f} s", flush=True)
        for seed in range(args.seeds):
            for reward in REWARDS:
                cfg = TrainConfig(grid=grid, reward=reward, steps=args.steps, seed=seed)
                res = train(cfg, feats, evals, log=lambda m: print(m, flush=True))
                seeds = {"train": ["scenes", 0, args.train],
                         **{src: [src, 0, c, EVAL_SEED + grid, SHUFFLES] for src, c in EVAL_COUNTS.items()},
                         "init": seed, "batches": 20_000 + seed, "samples": 10_000 + seed}
                _save(res, cfg, evals, policy_path(grid, reward, seed), args.out_dir, command,
                      "python -m backend jigsaw evaluate --json", seeds)


def _clips(args: argparse.Namespace, command: str) -> None:
    from ..scenes.jigsaw.jobs import CLIP_EVAL_COUNTS, CLIP_EVAL_SEED, SHUFFLES, clip_eval_set, clip_path
    from ..scenes.jigsaw.ordering import FRAMES, clip_set
    from ..scenes.jigsaw.policy import TrainConfig, train
    from ..scenes.jigsaw.reward import REWARDS

    t0 = time.perf_counter()
    feats = clip_set("clips", args.clip_train, FRAMES)
    evals = {src: clip_eval_set(src) for src in CLIP_EVAL_COUNTS}
    print(f"clips: features in {time.perf_counter() - t0:.0f} s", flush=True)
    for seed in range(args.seeds):
        for reward in REWARDS:
            cfg = TrainConfig(frames=FRAMES, reward=reward, steps=args.clip_steps, seed=seed)
            res = train(cfg, feats, evals, log=lambda m: print(m, flush=True))
            seeds = {"train": ["clips", 0, args.clip_train],
                     **{src: [src, 0, c, CLIP_EVAL_SEED, SHUFFLES] for src, c in CLIP_EVAL_COUNTS.items()},
                     "init": seed, "batches": 20_000 + seed, "samples": 10_000 + seed}
            _save(res, cfg, evals, clip_path(reward, seed), args.out_dir, command,
                  "python -m backend jigsaw evaluate --source clips_val --json", seeds)


def main(argv: list[str] | None = None) -> int:
    import torch  # noqa: F401 - torch first (the thread setting of python -m backend.train)

    from ..scenes.jigsaw.jobs import TRAIN_COUNT

    ap = argparse.ArgumentParser(prog="python -m backend.train jigsaw")
    ap.add_argument("--part", choices=("all", "policy", "clips", "vlm"), default="all")
    ap.add_argument("--steps", type=int, default=600, help="GRPO steps of every policy run")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--train", type=int, default=TRAIN_COUNT, help="training scenes")
    ap.add_argument("--clip-steps", type=int, default=300, help="GRPO steps of every clip-ordering run")
    ap.add_argument("--clip-train", type=int, default=300, help="training clips")
    ap.add_argument("--vlm-steps", type=int, default=300)
    ap.add_argument("--vlm-batch", type=int, default=2, help="puzzles per VLM step")
    ap.add_argument("--vlm-train", type=int, default=400, help="distinct training puzzles of the VLM")
    ap.add_argument("--vlm-lr", type=float, default=1e-3, help="the projector's learning rate (0: frozen)")
    ap.add_argument("--vlm-lora-rank", type=int, default=8, help="LoRA rank on the LM's q/v (0: projector only)")
    ap.add_argument("--vlm-lora-lr", type=float, default=1e-3)
    ap.add_argument("--qa-scenes", type=int, default=90, help="held-out scenes of the before/after question accuracy")
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    t_all = time.perf_counter()
    defaults = {k: ap.get_default(k) for k in ("steps", "seeds", "train")}
    command = "python -m backend.train jigsaw --part policy" + "".join(
        f" --{k} {getattr(args, k)}" for k in defaults if getattr(args, k) != defaults[k])
    if args.part in ("all", "policy"):
        _policy(args, command)
    if args.part in ("all", "clips"):
        ccmd = "python -m backend.train jigsaw --part clips" + "".join(
            f" --{k.replace('_', '-')} {getattr(args, k)}" for k in ("seeds", "clip_steps", "clip_train")
            if getattr(args, k) != ap.get_default(k))
        _clips(args, ccmd)
    if args.part in ("all", "vlm"):
        from ..scenes.jigsaw.vlm_grpo import VLMTrainConfig, train_and_save

        keys = ("vlm_steps", "vlm_batch", "vlm_train", "vlm_lr", "vlm_lora_rank", "vlm_lora_lr", "qa_scenes")
        vcmd = "python -m backend.train jigsaw --part vlm" + "".join(
            f" --{k.replace('_', '-')} {getattr(args, k)}" for k in keys if getattr(args, k) != ap.get_default(k))
        cfg = VLMTrainConfig(steps=args.vlm_steps, batch=args.vlm_batch, train_puzzles=args.vlm_train,
                             lr=args.vlm_lr, lora_rank=args.vlm_lora_rank, lora_lr=args.vlm_lora_lr)
        train_and_save(cfg, args.qa_scenes, vcmd, args.out_dir, log=lambda m: print(m, flush=True))
    print(f"total {time.perf_counter() - t_all:.0f} s", flush=True)
    return 0
