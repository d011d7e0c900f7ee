"""``python -m backend.train pbfm``: train the flow-matching models of the PBFM page and write
``assets/pbfm_<case>_<method>_s<seed>.safetensors``: for each case (darcy, heat) and seed (0, 1, 2), plain flow
matching, PBFM (ConFIG + unrolling) and flow matching plus lambda x residual for the lambdas of
``backend.physics.pbfm.pbfm.LAMBDAS`` (both cases) and ``LAMBDAS_DARCY`` (30, 100, 300: Darcy only), and on Darcy
PBFM without unrolling (``pbfm-1step``). Residual guidance reuses the plain FM models. ``--diagnostics`` trains the
models of ``backend.physics.pbfm.pbfm.DIAGNOSTICS`` instead (Darcy, seed 0: wider, longer, per-node normalisation),
which ask why the samples are not physical.

Each model trains ``PBFMConfig.steps`` AdamW steps on 2,000 solver fields (data seed 0); quality (energy distance to
500 held-out solver fields of data seed 99 on standardised channels and the mean |residual|, 500 samples, 50 Euler
steps) is written into each file; the weights are stored as float16 (the evaluation uses the stored values). On one
core of a loaded 2-core machine: about 25 s (FM), 60-80 s (weighted, PBFM without unrolling) and 160 s (PBFM) per
model. Options: ``--case``, ``--method`` (fm, pbfm, weighted-<lambda>, pbfm-1step, or a diagnostic's name),
``--seed`` (repeatable), ``--steps``, ``--diagnostics``.
"""

from __future__ import annotations

import argparse
import json

COMMAND = "python -m backend.train pbfm"
SEEDS = (0, 1, 2)


def main(argv: list[str] | None = None) -> int:
    from backend import weights
    from backend.physics.pbfm import pbfm as B
    from backend.physics.pbfm import pdes as P
    from backend.physics.pbfm.evaluation import asset_path, heldout, standardised_energy_distance
    from backend.runtime import setup_torch

    setup_torch(1)
    ap = argparse.ArgumentParser(prog=COMMAND)
    ap.add_argument("--case", action="append", choices=list(P.CASES))
    ap.add_argument("--method", action="append", help="fm, pbfm, weighted-<lambda>, pbfm-1step (default all)")
    ap.add_argument("--seed", type=int, action="append")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--diagnostics", action="store_true", help="train the diagnostic models (Darcy, seed 0)")
    args = ap.parse_args(argv)
    registry = B.DIAGNOSTICS if args.diagnostics else B.METHODS
    trained = [m for m in registry if registry.get(m).trained]
    for case in args.case or list(P.CASES):
        base = B.PBFMConfig(case=case) if args.steps is None else B.PBFMConfig(case=case, steps=args.steps)
        held = heldout(case, 500)
        for seed in args.seed or ((0,) if args.diagnostics else SEEDS):
            for name in args.method or trained:
                m = registry.get(name)
                if case not in m.cases:
                    continue
                cfg = m.config(base)
                model, norm, log = m.fit(base, seed=seed)
                half = {k: v.half() for k, v in model.state_dict().items()}  # stored as float16 (half the bytes)
                model.load_state_dict({k: v.float() for k, v in half.items()})  # and evaluated as stored
                s = B.sample(model, norm, P.get_case(case), 500, steps=50, seed=1000 + seed)
                quality = {"energy_distance": round(standardised_energy_distance(s, held), 5),
                           "mean_residual": float(P.mean_abs_residual(P.get_case(case), s).mean()),
                           "train_seconds": round(log.seconds, 1),
                           "command": "python -m pytest tests/backend/test_pbfm.py -m 'not full'"}
                flag = " --diagnostics" if args.diagnostics else ""
                path = weights.save(asset_path(case, m.weights, seed), half, config=B.config_dict(cfg),
                                    command=f"{COMMAND} --case {case} --method {name} --seed {seed}{flag}",
                                    data_seeds={"train": [cfg.data_seed], "heldout": [99], "seed": seed},
                                    quality=quality, extra={"method": name, "lam": m.lam,
                                                            "mean": norm.mean.tolist(), "std": norm.std.tolist(),
                                                            "fm_loss": log.fm_loss[-5:],
                                                            "res_loss": log.res_loss[-5:],
                                                            "cos_fm_res": log.cos_fm_res[-5:]})
                print(path.name, json.dumps(quality), flush=True)
    return 0
