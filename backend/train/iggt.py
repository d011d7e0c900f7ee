"""``python -m backend.train iggt``: the miniature IGGT networks, one per seed (``assets/iggt_seed<k>.safetensors``).

Data (:mod:`backend.scenes.iggt.data`): ``--scenes`` scenes of the ``train`` split (boxes and spheres, plain and
striped) with 3 views each, rendered and passed through DINOv2 once (cached in the user cache folder). Each seed
trains :class:`backend.scenes.iggt.model.IGGTNet` for ``--steps`` steps (:func:`backend.scenes.iggt.learn.train`),
then is scored on 16 ``val`` scenes (training distribution, other seeds; 3 views): depth AbsRel, the share of
same-instance cross-view pixel pairs closer than the margin, and T-mIoU / T-SR of joint HDBSCAN; the scores go in the
file's metadata. The held-out splits (cylinders, checker) are never read here. ``--out-dir`` writes elsewhere (a
smoke test: ``--scenes 8 --steps 5 --seeds 0 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from .. import weights
    from ..models import load
    from ..scenes.iggt.data import dataset
    from ..scenes.iggt.learn import TrainConfig, predict, train, weights_path
    from ..scenes.iggt.model import LossConfig, NetConfig, count_parameters
    from ..scenes.iggt.segment import SEGMENTERS, ClusterConfig, Inputs, pair_distances, track_metrics

    ap = argparse.ArgumentParser(prog="python -m backend.train iggt")
    ap.add_argument("--scenes", type=int, default=120)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)

    t0 = time.perf_counter()
    enc = load("dinov2")
    data = dataset("train", args.scenes, 3, enc, progress=None, use_cache=args.out_dir is None)
    val = dataset("val", 16, 3, enc, use_cache=args.out_dir is None)
    prep_s = time.perf_counter() - t0
    print(f"data: train {data['dino'].shape}, val {val['dino'].shape} ({prep_s:.0f} s)", flush=True)
    for seed in [int(s) for s in args.seeds.split(",")]:
        cfg = TrainConfig(steps=args.steps, seed=seed)
        model, summary = train(data, cfg, log=lambda m: print(m, flush=True))
        absrel, close, tm, ts = [], [], [], []
        for i in range(val["dino"].shape[0]):
            rgb = val["rgb"][i].astype(np.float32) / 255.0
            ld, f = predict(model, val["dino"][i].astype(np.float32), rgb)
            d, gt = val["depth"][i], val["instance"][i].astype(np.int32)
            ok = np.isfinite(d)
            absrel.append(float(np.mean(np.abs(np.exp(ld[ok]) - d[ok]) / d[ok])))
            dist = pair_distances(f, gt, seed=i)
            close.append(float((dist < LossConfig().margin).mean()) if dist.size else 1.0)
            m = track_metrics(SEGMENTERS.get("iggt")(Inputs(rgb, val["dino"][i], ld, f), ClusterConfig(seed=i)), gt)
            tm.append(m["t_miou"])
            if m["t_sr"] is not None:
                ts.append(m["t_sr"])
        quality = {"val_depth_absrel": round(float(np.mean(absrel)), 4),
                   "val_cross_view_pairs_within_margin": round(float(np.mean(close)), 4),
                   "val_t_miou": round(float(np.mean(tm)), 4), "val_t_sr": round(float(np.mean(ts)), 4),
                   "train_seconds": summary["seconds"], "data_seconds": round(prep_s, 1),
                   "parameters": count_parameters(model), **{k: v for k, v in summary.items() if k != "seconds"}}
        print(f"seed {seed}: {quality}", flush=True)
        out = weights_path(seed, args.out_dir)
        command = "python -m backend.train iggt" + (f" --scenes {args.scenes}" if args.scenes != 120 else "") + (
            f" --steps {args.steps}" if args.steps != 400 else "")
        weights.save(out, model, config={"net": NetConfig().to_dict(), "train": cfg.to_dict(),
                                         "loss": LossConfig().__dict__},
                     command=command, data_seeds={"train": [0, args.scenes], "val": [10_000, 10_016], "views": 3},
                     quality=quality)
        print(f"wrote {out}", flush=True)
    return 0
