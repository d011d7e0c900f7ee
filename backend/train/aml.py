"""``python -m backend.train aml``: the segmentation heads of the AML page (``assets/aml_<masking>_s<seed>.safetensors``).

Each masking of :data:`backend.scenes.aml.masking.MASKINGS` (AML, random blocks at AML's rate, none) with ``--seeds``
seeds, ``--steps`` steps of 32 samples from ``--train`` training scenes (frozen DINOv2 / MiniLM features, computed once
and cached). Seed s gives every masking the same initial weights and batches. Each file holds the head (float16),
its mIoU curves on the ``val`` and ``heldout`` sets and its training losses; its quality is the full evaluation on
both sets and the training seconds (evaluation excluded). ``--out-dir`` writes elsewhere (a smoke test:
``--steps 5 --seeds 1 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import torch  # noqa: F401 - torch first (the thread setting of python -m backend.train)

    from .. import weights
    from ..scenes.aml.features import build
    from ..scenes.aml.jobs import EVAL_SIZE, TRAIN_SIZE, weights_path
    from ..scenes.aml.learn import TrainConfig, evaluate, train
    from ..scenes.aml.masking import MASKINGS

    ap = argparse.ArgumentParser(prog="python -m backend.train aml")
    ap.add_argument("--steps", type=int, default=TrainConfig.steps)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--train", type=int, default=TRAIN_SIZE)
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)

    t_all = time.perf_counter()
    data = build(0, args.train, "train")
    evals = {"val": build(0, EVAL_SIZE, "val"), "heldout": build(0, EVAL_SIZE, "heldout")}
    print(f"features of {len(data)} + {EVAL_SIZE} + {EVAL_SIZE} samples in {time.perf_counter() - t_all:.0f} s",
          flush=True)
    command = "python -m backend.train aml" + "".join(
        f" --{k} {v}" for k, v in (("steps", args.steps), ("seeds", args.seeds), ("train", args.train))
        if v != ap.get_default(k))
    for seed in range(args.seeds):
        for masking in MASKINGS:
            cfg = TrainConfig(masking=masking, steps=args.steps, seed=seed)
            res = train(cfg, data, evals, log=lambda m: print(m, flush=True))
            q: dict = {name: {k: round(v, 3) for k, v in evaluate(res.model, ev).items()} for name, ev in evals.items()}
            q.update(seconds=round(res.seconds, 2), masked_share=round(res.masked_share, 4),
                     command="python -m backend aml evaluate --json")
            state = {k: v.half() for k, v in res.model.state_dict().items()}
            path = weights_path(masking, seed)
            if args.out_dir:
                path = args.out_dir / path.name
            weights.save(path, state, config=asdict(cfg), command=command,
                         data_seeds={"train": ["train", 0, args.train], "val": ["val", 0, EVAL_SIZE],
                                     "heldout": ["heldout", 0, EVAL_SIZE], "batches": 1000 + seed,
                                     "mask_draws": 2000 + seed},
                         quality=q, extra={"curves": res.curves,
                                           "losses_every_10_steps": [round(v, 4) for v in res.losses[::10]]})
            print(f"wrote {path.name}: {q}", flush=True)
    print(f"total {time.perf_counter() - t_all:.0f} s", flush=True)
    return 0
