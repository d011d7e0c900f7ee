"""``python -m backend.train pbfm``: train the flow-matching models of the PBFM page and write
``assets/pbfm_<case>_<method>_s<seed>.safetensors``: for each case (darcy, heat) and seed (0, 1, 2), plain flow
matching, PBFM (ConFIG + unrolling) and flow matching plus lambda x residual for the five lambdas of
``backend.physics.pbfm.pbfm.LAMBDAS`` (42 files). Residual guidance reuses the plain FM models.

Each model trains ``PBFMConfig.steps`` AdamW steps on 2,000 solver fields (data seed 0); quality (energy distance to
500 held-out solver fields of data seed 99 and the mean |residual|, 500 samples, 50 Euler steps) is written into each
file; the weights are stored as float16 (the evaluation uses the stored values). On one core of a loaded 2-core
machine: about 15 s (FM), 40 s (weighted) and 75 s (PBFM) per model, about 15 minutes per case.
Options: ``--case``, ``--method`` (fm, pbfm, weighted-<lambda>), ``--seed`` (repeatable), ``--steps``.
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
    from backend.physics.pbfm.evaluation import asset_path
    from backend.runtime import setup_torch

    setup_torch(1)
    ap = argparse.ArgumentParser(prog=COMMAND)
    ap.add_argument("--case", action="append", choices=list(P.CASES))
    ap.add_argument("--method", action="append", help="fm, pbfm or weighted-<lambda> (default all)")
    ap.add_argument("--seed", type=int, action="append")
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args(argv)
    trained = [m for m in B.METHODS if B.METHODS.get(m).trained]
    for case in args.case or list(P.CASES):
        cfg = B.PBFMConfig(case=case) if args.steps is None else B.PBFMConfig(case=case, steps=args.steps)
        held = P.get_case(case).fields(500, 99)
        for seed in args.seed or SEEDS:
            for name in args.method or trained:
                m = B.METHODS.get(name)
                model, norm, log = m.fit(cfg, seed=seed)
                half = {k: v.half() for k, v in model.state_dict().items()}  # stored as float16 (half the bytes)
                model.load_state_dict({k: v.float() for k, v in half.items()})  # and evaluated as stored
                s = B.sample(model, norm, P.get_case(case), 500, steps=50, seed=1000 + seed)
                quality = {"energy_distance": round(B.energy_distance(s, held), 5),
                           "mean_residual": float(P.mean_abs_residual(P.get_case(case), s).mean()),
                           "train_seconds": round(log.seconds, 1),
                           "command": "python -m pytest tests/backend/test_pbfm.py -m 'not full'"}
                path = weights.save(asset_path(case, m.weights, seed), half, config=B.config_dict(cfg),
                                    command=f"{COMMAND} --case {case} --method {name} --seed {seed}",
                                    data_seeds={"train": [cfg.data_seed], "heldout": [99], "seed": seed},
                                    quality=quality, extra={"method": name, "lam": m.lam, "mean": norm.mean.tolist(),
                                                            "std": norm.std.tolist(), "fm_loss": log.fm_loss[-5:],
                                                            "cos_fm_res": log.cos_fm_res[-5:]})
                print(path.name, json.dumps(quality), flush=True)
    return 0
