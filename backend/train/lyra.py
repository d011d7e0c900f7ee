"""``python -m backend.train lyra``: the Lyra miniature's shipped networks (float16 safetensors in ``assets/``).

1. Data: ``--scenes`` procedural scenes of :mod:`backend.scenes.scene3d` (training seeds 0.., base azimuth from the
   seed), each rendered at its first view and at 8 random orbit offsets in [-40, 40] degrees, 32 x 32 pixels.
2. The monocular depth network (its 3-D cache and the depth-warp baseline), on true first-view depth
   (``--depth-steps``).
3. ``lyra_teacher.safetensors`` (with that depth network inside): the camera-conditioned view generator, L1 on those
   true renders at the training offsets, given the first view and its 3-D cache render there (``--teacher-steps``).
   Frozen from here on.
4. ``lyra_student_s{seed}.safetensors`` (``--seeds``): students trained only on the frozen teacher's views at the same
   offsets (plus the first view, their input); ``lyra_upper_s{seed}.safetensors`` (``--upper-seeds``): the same student
   trained on the true renders (the upper bound).

Quality (in each file's metadata): PSNR on ``--eval-scenes`` held-out scenes at the 8 held-out offsets.
``--out-dir`` writes elsewhere (a smoke test: ``--scenes 40 --teacher-steps 5 --student-steps 2 --depth-steps 2
--seeds 0 --upper-seeds 0 --eval-scenes 2 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import torch

    from .. import weights
    from ..scenes.lyra.distill import state_half, teacher_views, train_depth, train_student, train_teacher
    from ..scenes.lyra.evaluate import evaluate_student
    from ..scenes.lyra.jobs import ASSET_FILES
    from ..scenes.lyra.models import NetConfig
    from ..scenes.lyra.views import EVAL_DELTAS, EVAL_SEEDS, SIZE, TRAIN_SEEDS, make_viewset

    ap = argparse.ArgumentParser(prog="python -m backend.train lyra")
    ap.add_argument("--scenes", type=int, default=1000)
    ap.add_argument("--teacher-steps", type=int, default=600)
    ap.add_argument("--student-steps", type=int, default=200)
    ap.add_argument("--depth-steps", type=int, default=400)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--upper-seeds", type=int, nargs="*", default=[0])
    ap.add_argument("--eval-scenes", type=int, default=24)
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    out = args.out_dir or ASSET_FILES["teacher"].parent
    cfg = NetConfig()
    command = "python -m backend.train lyra" + "".join(
        f" --{k.replace('_', '-')} {v}" for k, v in (("scenes", args.scenes), ("teacher_steps", args.teacher_steps),
                                                     ("student_steps", args.student_steps))
        if v != ap.get_default(k))
    t0 = time.perf_counter()
    torch.manual_seed(0)
    vs = make_viewset(TRAIN_SEEDS[:args.scenes], n_random=8, size=SIZE, rng_seed=1)
    print(f"data: {args.scenes} scenes in {time.perf_counter() - t0:.1f} s", flush=True)
    ev = make_viewset(EVAL_SEEDS[:args.eval_scenes], deltas=EVAL_DELTAS, size=SIZE)
    seeds = {"train": [TRAIN_SEEDS[0], TRAIN_SEEDS[0] + args.scenes], "eval": [EVAL_SEEDS[0],
             EVAL_SEEDS[0] + args.eval_scenes], "offset_rng": 1}
    log = lambda f, m: print(f"  {f:.2f} {m}", flush=True) if int(f * 100) % 25 == 0 else None  # noqa: E731

    depth, dlog = train_depth(vs, cfg, args.depth_steps)
    print("depth", dlog, flush=True)
    teacher, tlog, cache = train_teacher(vs, depth, cfg, args.teacher_steps, progress=log)
    with torch.no_grad():
        tq = teacher_views(teacher, ev)
        tpsnr = float((-10 * torch.log10(((tq - ev.targets) ** 2).mean((2, 3, 4)))).mean())
        wq = teacher.cache(ev.first.repeat_interleave(ev.deltas.shape[1], 0), ev.deltas.reshape(-1))[:, :3]
        wpsnr = float((-10 * torch.log10(((wq.view_as(ev.targets) - ev.targets) ** 2).mean((2, 3, 4)))).mean())
    tlog.update(heldout_psnr=round(tpsnr, 3), heldout_psnr_of_its_cache_warp=round(wpsnr, 3), depth=dlog)
    print("teacher", tlog, flush=True)
    weights.save(out / ASSET_FILES["teacher"].name, state_half(teacher), config=cfg.to_dict(), command=command,
                 data_seeds=seeds, quality=tlog)

    distilled = teacher_views(teacher, vs, cache)
    del cache
    arms = [("student", s, distilled) for s in args.seeds] + [("upper", s, vs.targets) for s in args.upper_seeds]
    for arm, seed, targets in arms:
        student, slog = train_student(vs, targets, teacher, cfg, args.student_steps, seed=seed, progress=log)
        psnr = evaluate_student(student, teacher, ev)
        slog["heldout_psnr"] = round(float(psnr.mean()), 3)
        print(arm, seed, slog, flush=True)
        name = ASSET_FILES[arm].name.replace("{seed}", str(seed))
        weights.save(out / name, state_half(student), config={**cfg.to_dict(), "seed": seed,
                     "targets": "teacher views" if arm == "student" else "true renders"},
                     command=command, data_seeds=seeds, quality=slog)
    print(f"total {time.perf_counter() - t0:.1f} s", flush=True)
    return 0
