"""``python -m backend.train mcd``: train the MCD page's models and write ``assets/mcd_*.safetensors``.

- ``mcd_tissue.safetensors``: the any-subset MCD diffusion model on 2,000 synthetic 32 x 32 panels of 12 channels (data
  seed 0), random channel masking with the held-out observation patterns excluded, ``MCDConfig.steps`` AdamW steps.
- ``mcd_cells.safetensors``: the same network and trainer on per-cell vectors ``(N, 12, 1, 1)`` (H = W = 1).
- ``mcd_unet.safetensors``: the per-target U-Net regressors for the first held-out pattern (one per missing channel).

The standardisation statistics are stored in each file; the quality (mean Pearson r on 32 test panels of seed 9,000,
held-out pattern 0, mean of 4 samples) is written into the tissue file. On one core of a loaded 2-core machine: about
16 minutes (tissue, 3,500 steps), 2.5 minutes (cells), 2 minutes (U-Nets). ``--part`` picks one of them; ``--steps`` overrides.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parents[2] / "assets"
COMMAND = "python -m backend.train mcd"
N_TRAIN = 2000
PARTS = ("tissue", "cells", "unet")


def main(argv: list[str] | None = None) -> int:
    import torch

    from backend import weights
    from backend.imputation.mcd import baselines as B
    from backend.imputation.mcd import mcd as M
    from backend.imputation.mcd import tissue as T
    from backend.runtime import setup_torch

    setup_torch(1)
    ap = argparse.ArgumentParser(prog=COMMAND)
    ap.add_argument("--part", action="append", choices=PARTS)
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    panels = T.generate(N_TRAIN, T.TRAIN_SEED)
    print(f"generated {N_TRAIN} panels in {time.perf_counter() - t0:.0f} s", flush=True)
    std = M.Standardiser.fit(panels.x)
    z = std.fwd(panels.x).astype(np.float32)
    test = T.generate(32, T.TEST_SEED)
    zt = std.fwd(test.x).astype(np.float32)
    seeds = {"train": [T.TRAIN_SEED, N_TRAIN], "test": [T.TEST_SEED, 32]}

    def prog(f: float, msg: str) -> None:
        print(f"  {msg} ({time.perf_counter() - t0:.0f} s)", flush=True)

    for part in args.part or PARTS:
        if part == "tissue":
            cfg = M.MCDConfig() if args.steps is None else M.MCDConfig(steps=args.steps)
            model, log = M.train(z, cfg, progress=prog)
            obs = cfg.heldout[0]
            mis = [c for c in range(cfg.channels) if c not in obs]
            s = M.impute(model, zt, obs, n_samples=4, steps=18, seed=1)
            r = T.per_channel_r(s.mean(0), zt, mis)
            quality = {"heldout0_mean_r_m4": round(float(np.mean(list(r.values()))), 4),
                       "train_seconds": round(log.seconds, 1), "params": M.n_params(model),
                       "command": "python -m pytest tests/backend/test_mcd_claims.py"}
            print(f"tissue: {quality}", flush=True)
            weights.save(ASSETS / "mcd_tissue.safetensors", model, config=M.config_dict(cfg),
                         command=f"{COMMAND} --part tissue", data_seeds=seeds, quality=quality,
                         extra={"mean": std.mean.tolist(), "std": std.std.tolist(), "loss": log.loss})
        elif part == "cells":
            v, _ = T.cell_vectors(panels)
            sv = M.Standardiser.fit(v)
            zv = sv.fwd(v).astype(np.float32)
            # the vector model uses EDM's image default P_mean -1.2 (the tissue model -0.4, see backend.imputation.mcd.mcd)
            cfg = M.MCDConfig(batch=256, p_mean=-1.2, steps=1500 if args.steps is None else args.steps)
            model, log = M.train(zv, cfg, progress=prog, log_every=250)
            quality = {"train_seconds": round(log.seconds, 1), "cells": len(v), "params": M.n_params(model),
                       "command": "python -m pytest tests/backend/test_mcd_claims.py"}
            print(f"cells: {quality}", flush=True)
            weights.save(ASSETS / "mcd_cells.safetensors", model, config=M.config_dict(cfg),
                         command=f"{COMMAND} --part cells", data_seeds=seeds, quality=quality,
                         extra={"mean": sv.mean.tolist(), "std": sv.std.tolist(), "loss": log.loss})
        else:
            obs = M.HELDOUT_PATTERNS[0]
            ucfg = B.UNetConfig() if args.steps is None else B.UNetConfig(steps=args.steps)
            state, secs = {}, {}
            for t in range(T.C):
                if t in obs:
                    continue
                net, sec = B.train_unet(z, obs, t, ucfg)
                secs[str(t)] = round(sec, 1)
                state.update({f"t{t}.{k}": v for k, v in net.state_dict().items()})
                print(f"  unet target {t}: {sec:.0f} s", flush=True)
            torch.manual_seed(0)
            weights.save(ASSETS / "mcd_unet.safetensors", state,
                         config={"widths": list(ucfg.widths), "steps": ucfg.steps, "batch": ucfg.batch,
                                 "lr": ucfg.lr, "observed": list(obs)},
                         command=f"{COMMAND} --part unet", data_seeds=seeds,
                         quality={"train_seconds": secs, "command": "python -m pytest tests/backend/test_mcd_claims.py"},
                         extra={"mean": std.mean.tolist(), "std": std.std.tolist()})
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0
