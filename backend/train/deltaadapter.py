"""``python -m backend.train deltaadapter``: train the frozen backbones of the delta-Adapter page once, on the early
regime of each preset, and write ``assets/deltaadapter_<preset>_<backbone>.safetensors`` (9 files: presets synthetic,
co2 and macro x backbones dlinear, patchtst and mlp).

Each backbone trains with MSE on the ``early`` split and early stopping on ``early_val``
(:mod:`backend.forecast.deltaadapter.data`), with the settings of ``backbones.TRAIN``; nothing after the shift is
seen. On one core of a shared 2-core machine the nine take about 4 minutes together (the patch transformer on the
synthetic preset about 2 of them).
Options: ``--preset`` / ``--backbone`` (repeatable) train a subset, ``--seed``.
"""

from __future__ import annotations

import argparse
import json

from backend.forecast.deltaadapter.interface import BACKBONES, PRESETS


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from backend import weights
    from backend.forecast.deltaadapter import backbones as bb
    from backend.forecast.deltaadapter import data as dt

    ap = argparse.ArgumentParser(prog="python -m backend.train deltaadapter")
    ap.add_argument("--preset", action="append", choices=list(PRESETS))
    ap.add_argument("--backbone", action="append", choices=list(BACKBONES))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    for preset in args.preset or PRESETS:
        s = PRESETS[preset]()
        w = dt.make_windows(s)
        x, y = w.torch("early")
        xv, yv = w.torch("early_val")
        for kind in args.backbone or BACKBONES:
            cfg = bb.config_for(kind, s.lookback, s.horizon, s.d)
            model, log = bb.train_backbone(cfg, x, y, xv, yv, seed=args.seed)
            xt, yt = w.torch("test")
            with torch.no_grad():
                mse_early = float(torch.mean((model(xv) - yv) ** 2))
                mse_test = float(torch.mean((model(xt) - yt) ** 2))
            b = dt.split_bounds(s)
            quality = {"early_val_mse": round(mse_early, 4), "post_shift_test_mse": round(mse_test, 4),
                       "parameters": bb.n_params(model), "epochs": log.epochs_run,
                       "train_seconds": round(log.seconds, 1),
                       "command": "python -m pytest tests/backend/test_deltaadapter.py -m 'not full'"}
            path = weights.save(bb.asset_path(preset, kind), model, config=bb.config_dict(model),
                                command=bb.TRAIN_COMMAND + (f" --seed {args.seed}" if args.seed else ""),
                                data_seeds={"preset": preset, "train": list(b["early"]), "val": list(b["early_val"]),
                                            "series_seed": 0, "seed": args.seed},
                                quality=quality, extra={"mean": np.asarray(w.mean).tolist(),
                                                        "std": np.asarray(w.std).tolist()})
            print(path.name, json.dumps(quality), flush=True)
    return 0
