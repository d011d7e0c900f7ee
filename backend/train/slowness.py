"""``python -m backend.train slowness``: the encoders of the temporal-slowness page (``assets/slowness_*.safetensors``).

The 2 x 2 ablation (full frame / gaze-centred crop x augmentation / temporal positives) with ``--seeds`` seeds per
arm at the paper's pairing (crop 32 of the 64-pixel frame, DeltaT = 3), then the sweeps of the central + temporal arm
for seed 0: crop sides ``--crops`` and DeltaT ``--deltas``. All arms learn from the same stream (``--clips`` clips of
seeds 0 ..), MoCo v3, ``--steps`` steps of 128 pairs. Each file holds the encoder only (float16), its training
losses and its probe accuracies on the standard photo sets (:func:`backend.scenes.slowness.probe.evaluate`) as its
quality. ``--out-dir`` writes elsewhere (a smoke test: ``--steps 5 --seeds 1 --crops --deltas --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def main(argv: list[str] | None = None) -> int:

    import torch  # noqa: F401 - torch first (the thread setting of python -m backend.train)

    from .. import weights
    from ..scenes.slowness.jobs import weights_path
    from ..scenes.slowness.learn import ARMS, TrainConfig, build_stream, train
    from ..scenes.slowness.probe import evaluate, probe_data

    ap = argparse.ArgumentParser(prog="python -m backend.train slowness")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--clips", type=int, default=160)
    ap.add_argument("--crops", type=str, default="16,24,48", help="extra crop sides for the sweep (seed 0)")
    ap.add_argument("--deltas", type=str, default="1,6,12", help="extra DeltaT values for the sweep (seed 0)")
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)

    t_all = time.perf_counter()
    stream = build_stream(args.clips)
    data = probe_data()
    print(f"stream {stream.frames.shape} in {time.perf_counter() - t_all:.0f} s", flush=True)
    runs = [TrainConfig(arm=a, steps=args.steps, clips=args.clips, seed=s) for s in range(args.seeds) for a in ARMS]
    runs += [TrainConfig(steps=args.steps, clips=args.clips, crop=c) for c in _ints(args.crops)]
    runs += [TrainConfig(steps=args.steps, clips=args.clips, delta_t=d) for d in _ints(args.deltas)]
    command = "python -m backend.train slowness" + "".join(
        f" --{k} {v}" for k, v in (("steps", args.steps), ("seeds", args.seeds), ("clips", args.clips))
        if v != ap.get_default(k))
    for cfg in runs:
        res = train(cfg, stream, log=lambda m: print(m, flush=True))
        q = evaluate(res.model.encoder, data)
        q.update(seconds=round(res.seconds, 1), command="python -m backend slowness probe --json")
        state = {k: (v.half() if v.is_floating_point() else v) for k, v in res.model.encoder.state_dict().items()}
        path = weights_path(cfg.arm, cfg.crop, cfg.delta_t, cfg.seed)
        if args.out_dir:
            path = args.out_dir / path.name
        conf = asdict(cfg)
        weights.save(path, state, config=conf, command=command,
                     data_seeds={"stream_clips": [0, cfg.clips], "sampling_seed": cfg.seed,
                                 "probe_photos": "backend.scenes.slowness.probe.PHOTO_SEEDS onwards"},
                     quality=q, extra={"losses_every_10_steps": res.losses})
        print(f"wrote {path.name}: {q}", flush=True)
    print(f"total {time.perf_counter() - t_all:.0f} s", flush=True)
    return 0
