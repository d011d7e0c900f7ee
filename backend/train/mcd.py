"""``python -m backend.train mcd``: train the MCD page's models and write ``assets/mcd_*.safetensors``.

- ``mcd_tissue.safetensors``: the any-subset MCD diffusion model on 2,000 synthetic 32 x 32 panels of 12 channels (data
  seed 0), random channel masking with the held-out observation patterns excluded, 3,500 AdamW steps (about 16
  minutes on one core). ``--apart`` adds the group rule of ``mcd.APART`` (no epithelial and cell-state marker observed
  together), which makes ``mcd.FAR_PATTERNS`` far from training, and writes ``mcd_tissue_apart.safetensors`` instead
  (the far-pattern claim's model; the page's default model is trained without the rule).
- ``mcd_regressor.safetensors``: the deterministic masked regressor: the same network (initialised from the shipped
  MCD weights), data, masking rule and optimiser, then ``--steps`` (default 120) steps of MSE on the missing channels
  (``mcd.train(..., regressor=True)``); with ``--apart`` from ``mcd_tissue_apart.safetensors`` into
  ``mcd_regressor_apart.safetensors``.
- ``mcd_cells.safetensors``: the same network and trainer on per-cell vectors ``(N, 12, 1, 1)`` (H = W = 1).
- ``mcd_cells_baselines.safetensors``: on the same per-cell vectors, the masked regressor (same network, masking and
  steps as the cells model) and a per-target regressor network for held-out pattern 0.
- ``mcd_unet.safetensors``: the per-target U-Net regressors for every pattern the claims evaluate (one network per
  (pattern, target)), written after each pattern.

Weights are stored in float16 (the files stay small; the networks run in float32). The standardisation statistics are
stored in each file. ``--part`` picks some of them; ``--steps`` overrides the step count of the part.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parents[2] / "assets"
COMMAND = "python -m backend.train mcd"
N_TRAIN = 2000
REGRESSOR_STEPS = 120
PARTS = ("tissue", "regressor", "cells", "cellsbase", "unet")


def half(state: dict) -> dict:
    return {k: v.detach().half() if v.is_floating_point() else v for k, v in state.items()}


def kept_unets(path: Path, ucfg, key_of) -> tuple[dict, dict]:  # noqa: ANN001
    """The networks already in the U-Net file that were trained with the same settings (a rerun resumes instead of
    retraining them): ``({"p<pattern>.t<target>.<param>": tensor}, {"<pattern>.t<target>": seconds})``. A file of the
    one-pattern layout (keys ``t<target>.``, ``config["observed"]``) is read as that pattern."""
    from backend import weights

    if not path.is_file():
        return {}, {}
    state, meta = weights.load(path, made_by=f"{COMMAND} --part unet")
    cfg = meta.config
    if [cfg.get("widths"), cfg.get("steps"), cfg.get("batch"), cfg.get("lr")] != [list(ucfg.widths), ucfg.steps,
                                                                                   ucfg.batch, ucfg.lr]:
        return {}, {}
    secs = meta.quality.get("train_seconds", {})
    if "observed" in cfg:
        key = key_of(cfg["observed"])
        return ({f"p{key}.{k}": v for k, v in state.items()},
                {f"{key}.t{t}": s for t, s in secs.items()})
    return dict(state), dict(secs)


def save_unets(out: Path, state: dict, ucfg, meta: dict) -> None:  # noqa: ANN001
    """Write the U-Net file: every network in ``state`` (keys ``p<pattern>.t<target>.<param>``), float16."""
    from backend import weights

    weights.save(out, half(state), config={"widths": list(ucfg.widths), "steps": ucfg.steps, "batch": ucfg.batch,
                                           "lr": ucfg.lr, "patterns": sorted({k.split(".")[0][1:] for k in state})},
                 command=f"{COMMAND} --part unet", **meta)


def main(argv: list[str] | None = None) -> int:
    from backend import weights
    from backend.imputation.mcd import baselines as B
    from backend.imputation.mcd import evaluate as E
    from backend.imputation.mcd import mcd as M
    from backend.imputation.mcd import tissue as T
    from backend.runtime import setup_torch

    setup_torch(1)
    ap = argparse.ArgumentParser(prog=COMMAND)
    ap.add_argument("--part", action="append", choices=PARTS)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--apart", action="store_true", help="tissue: never observe both channel groups of mcd.APART")
    ap.add_argument("--unet-from", action="append", default=[], type=Path,
                    help="unet: U-Net files whose networks (same settings) are kept instead of retrained")
    ap.add_argument("--only", action="append", default=[], help="unet: train only these patterns (e.g. 0-5)")
    ap.add_argument("--out", type=Path, default=None, help="unet: write here instead of assets/ (parallel runs)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    cache: dict = {}

    def data() -> tuple:
        """(training panels, their standardiser, standardised panels), generated once and only when a part needs them."""
        if not cache:
            panels = T.generate(N_TRAIN, T.TRAIN_SEED)
            print(f"generated {N_TRAIN} panels in {time.perf_counter() - t0:.0f} s", flush=True)
            std = M.Standardiser.fit(panels.x)
            cache["d"] = (panels, std, std.fwd(panels.x).astype(np.float32))
        return cache["d"]

    seeds = {"train": [T.TRAIN_SEED, N_TRAIN]}
    flag = " --apart" if args.apart else ""
    q = {"command": "python -m pytest tests/backend/test_mcd_claims.py -m 'not full'"}

    def prog(f: float, msg: str) -> None:
        print(f"  {msg} ({time.perf_counter() - t0:.0f} s)", flush=True)

    for part in args.part or PARTS:
        if part == "tissue":
            _, std, z = data()
            cfg = M.MCDConfig(steps=args.steps or M.MCDConfig().steps, apart=M.APART if args.apart else ())
            model, log = M.train(z, cfg, progress=prog)
            quality = {"train_seconds": round(log.seconds, 1), "params": M.n_params(model)} | q
            print(f"{part}: {quality}", flush=True)
            weights.save(E.TISSUE_APART_FILE if args.apart else E.TISSUE_FILE, model, config=M.config_dict(cfg),
                         command=f"{COMMAND} --part tissue{flag}", data_seeds=seeds, quality=quality,
                         extra={"mean": std.mean.tolist(), "std": std.std.tolist(), "loss": log.loss})
        elif part == "regressor":
            _, std, z = data()
            source, target = (E.TISSUE_APART_FILE, E.REGRESSOR_APART_FILE) if args.apart else (E.TISSUE_FILE,
                                                                                               E.REGRESSOR_FILE)
            init, meta = weights.load(source)
            cfg = M.config_from(meta.config | {"steps": args.steps or REGRESSOR_STEPS})
            model, log = M.train(z, cfg, progress=prog, regressor=True, init=init)
            quality = {"train_seconds": round(log.seconds, 1), "params": M.n_params(model),
                       "init": source.name} | q
            print(f"{part}: {quality}", flush=True)
            weights.save(target, half(model.state_dict()), config=M.config_dict(cfg),
                         command=f"{COMMAND} --part regressor{flag}", data_seeds=seeds, quality=quality,
                         extra={"mean": std.mean.tolist(), "std": std.std.tolist(), "loss": log.loss})
        elif part in ("cells", "cellsbase"):
            v, _ = T.cell_vectors(data()[0])
            sv = M.Standardiser.fit(v)
            zv = sv.fwd(v).astype(np.float32)
            # the vector model uses EDM's image default P_mean -1.2 (the tissue model -0.4, see backend.imputation.mcd.mcd)
            # and no group rule (the single-cell claim reads the near held-out pattern 0 only)
            cfg = M.MCDConfig(batch=256, p_mean=-1.2, steps=args.steps or 1500, apart=())
            if part == "cells":
                model, log = M.train(zv, cfg, progress=prog, log_every=250)
                quality = {"train_seconds": round(log.seconds, 1), "cells": len(v), "params": M.n_params(model)} | q
                weights.save(ASSETS / "mcd_cells.safetensors", model, config=M.config_dict(cfg),
                             command=f"{COMMAND} --part cells", data_seeds=seeds, quality=quality,
                             extra={"mean": sv.mean.tolist(), "std": sv.std.tolist(), "loss": log.loss})
                continue
            reg, log = M.train(zv, cfg, progress=prog, log_every=250, regressor=True)
            state = {f"reg.{k}": v for k, v in reg.state_dict().items()}
            obs = M.HELDOUT_PATTERNS[0]
            ucfg = B.UNetConfig(batch=256)
            secs = {"regressor": round(log.seconds, 1)}
            for t in range(T.C):
                if t not in obs:
                    net, sec = B.train_unet(zv, obs, t, ucfg)
                    secs[f"t{t}"] = round(sec, 1)
                    state.update({f"unet.t{t}.{k}": v for k, v in net.state_dict().items()})
            print(f"cellsbase: {secs}", flush=True)
            weights.save(ASSETS / "mcd_cells_baselines.safetensors", half(state),
                         config={"regressor": M.config_dict(cfg), "unet": {"widths": list(ucfg.widths),
                                 "steps": ucfg.steps, "batch": ucfg.batch, "lr": ucfg.lr, "observed": list(obs)}},
                         command=f"{COMMAND} --part cellsbase", data_seeds=seeds,
                         quality={"train_seconds": secs} | q, extra={"mean": sv.mean.tolist(), "std": sv.std.tolist()})
        else:
            ucfg = B.UNetConfig(steps=args.steps or B.UNetConfig().steps)
            out = args.out or ASSETS / "mcd_unet.safetensors"
            state, secs = kept_unets(E.UNET_FILE, ucfg, E.pattern_key) if args.out is None else ({}, {})
            for extra in args.unet_from:
                more, more_s = kept_unets(extra, ucfg, E.pattern_key)
                state.update(more)
                secs.update(more_s)
            tissue = weights.read_meta(E.TISSUE_FILE).extra  # the same training panels' standardiser

            meta = {"data_seeds": seeds, "quality": {"train_seconds": secs} | q,
                    "extra": {"mean": tissue["mean"], "std": tissue["std"]}}
            for obs in E.UNET_PATTERNS:
                key = E.pattern_key(obs)
                if any(k.startswith(f"p{key}.") for k in state):
                    print(f"  unet pattern {key}: kept", flush=True)
                    continue
                if args.only and key not in args.only:
                    continue
                for t in range(T.C):
                    if t in obs:
                        continue
                    net, sec = B.train_unet(data()[2], obs, t, ucfg)
                    secs[f"{key}.t{t}"] = round(sec, 1)
                    state.update({f"p{key}.t{t}.{k}": v for k, v in net.state_dict().items()})
                print(f"  unet pattern {key}: {time.perf_counter() - t0:.0f} s", flush=True)
                save_unets(out, state, ucfg, meta)
            if args.unet_from:
                save_unets(out, state, ucfg, meta)
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0
