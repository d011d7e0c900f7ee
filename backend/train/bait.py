"""``python -m backend.train bait``: BAIT's shipped models and the victim grid's evaluation log.

1. The prior (``assets/bait_prior.safetensors``): the small CNN trained on 5,000 scene images of ten outlines that
   are not target classes (``data.PRIOR_SHAPES``), 500 more for its held-out accuracy.
2. Per source (``shapes``, ``digits``; 1,000 training images each) and per seed of ``--seeds``, at ``--eps``
   (/255): EMN's min-min noise and surrogate, the crafting model (the prior fine-tuned on the clean set: the
   targeted poison's target and BAIT's surrogate warm start) and the targeted poison, BAIT's generator (``--unroll``
   unrolled inner steps, ``--iters`` outer steps) and its zero-unroll ablation, every one drawn with that seed
   (``assets/bait_protectors.safetensors``, keys ``<source>.<Protectors field>.<tensor>`` for seed 0, the page's,
   and ``<source>.seed<s>.<Protectors field>.<tensor>`` for the others).
3. The victim grid: every method x {scratch, pretrained} on each source; the victims of seed ``s`` train on the sets
   protected by the protectors of seed ``s`` (a seed is the whole pipeline, so the intervals over seeds cover the
   protectors' training too); clean test accuracy per victim (``assets/bait_grid.json``); the seed-0 victims of the
   shapes source ship (``assets/bait_victims.safetensors``) so tests re-evaluate them, and the tests re-apply the
   other seeds' shipped generators and retrain their victims.

``--workers 2`` trains the two sources in two processes (the same files: every step is seeded on its own).
``--out-dir`` writes elsewhere (a smoke test: ``--seeds 0 --iters 5 --epochs 1 --sources digits --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from .. import weights
    from ..robustness.bait.data import PRIOR_SHAPES, SOURCES, prior_set
    from ..robustness.bait.experiment import METHODS
    from ..robustness.bait.generator import BaitConfig
    from ..robustness.bait.jobs import GRID_FILE, PRIOR_WEIGHTS, PROTECTOR_WEIGHTS, VICTIM_WEIGHTS
    from ..robustness.bait.perturb import accuracy
    from ..robustness.bait.victims import VictimConfig, train_prior

    ap = argparse.ArgumentParser(prog="python -m backend.train bait")
    ap.add_argument("--eps", type=int, default=8)
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--sources", default=",".join(SOURCES))
    ap.add_argument("--iters", type=int, default=BaitConfig.iters)
    ap.add_argument("--unroll", type=int, default=BaitConfig.unroll)
    ap.add_argument("--epochs", type=int, default=VictimConfig.epochs)
    ap.add_argument("--prior-images", type=int, default=5500)
    ap.add_argument("--prior-epochs", type=int, default=10)
    ap.add_argument("--prior-from", type=Path, default=None,
                    help="load the prior from this file (one this command wrote) instead of training it")
    ap.add_argument("--workers", type=int, default=1, help="train the sources in this many processes")
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    sources = [SOURCES.key(s) for s in args.sources.split(",")]

    def out(p: Path) -> Path:
        return args.out_dir / p.name if args.out_dir else p

    command = "python -m backend.train bait"
    t0 = time.perf_counter()
    px, py = prior_set(args.prior_images)
    n_fit = args.prior_images - 500
    if args.prior_from is not None:
        from ..robustness.bait.nets import SmallCNN

        prior = SmallCNN(len(PRIOR_SHAPES))
        weights.load_into(prior, args.prior_from)
        fit_acc = accuracy(prior, px[:n_fit], py[:n_fit])
    else:
        prior, fit_acc = train_prior(px[:n_fit], py[:n_fit], epochs=args.prior_epochs)
    fit_acc, held = round(fit_acc, 4), round(accuracy(prior, px[n_fit:], py[n_fit:]), 4)
    prior_s = round(time.perf_counter() - t0, 1)
    print(f"prior: train {fit_acc} held-out {held} ({prior_s} s)", flush=True)
    weights.save(out(PRIOR_WEIGHTS), prior, config={"heads": len(PRIOR_SHAPES), "width": 16,
                                                    "classes": list(PRIOR_SHAPES), "epochs": args.prior_epochs},
                 command=command, data_seeds={"scene_seeds": [200_000, 200_000 + args.prior_images], "fit": n_fit},
                 quality={"heldout_accuracy": held, "train_accuracy": fit_acc, "seconds": prior_s,
                          "command": "pytest tests/backend/test_bait.py -k prior"})
    prior_state = {k: v.clone() for k, v in prior.state_dict().items()}

    bait_cfg = BaitConfig(iters=args.iters, unroll=args.unroll)
    vcfg = VictimConfig(epochs=args.epochs)
    tensors: dict[str, torch.Tensor] = {}
    victims: dict[str, torch.Tensor] = {}
    log: dict = {"eps": args.eps, "seeds": list(seeds), "bait": bait_cfg.__dict__, "victim": vcfg.__dict__,
                 "prior": {"heldout_accuracy": held, "seconds": prior_s}, "sources": {}, "rows": []}
    jobs_ = [(src, prior_state, args.eps, seeds, bait_cfg, vcfg) for src in sources]
    if args.workers > 1 and len(sources) > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(min(args.workers, len(sources)), mp_context=mp.get_context("spawn")) as pool:
            results = list(pool.map(_train_source, *zip(*jobs_, strict=True)))
    else:
        results = [_train_source(*j) for j in jobs_]
    for src, (t_src, v_src, rows, src_log) in zip(sources, results, strict=True):
        tensors.update(t_src)
        victims.update(v_src)
        log["rows"] += rows
        log["sources"][src] = src_log
        for m in METHODS:
            for init in ("scratch", "pretrained"):
                accs = [r["test_accuracy"] for r in rows if r["method"] == m and r["init"] == init]
                print(f"  {src} {m:9s} {init:10s} {np.mean(accs):.3f} {accs}", flush=True)
    total = round(time.perf_counter() - t0, 1)
    log["seconds"] = total
    log["command"] = command
    weights.save(out(PROTECTOR_WEIGHTS), tensors, config={"eps": args.eps, "seeds": list(seeds), **bait_cfg.__dict__},
                 command=command, data_seeds={"train": "first 1,000 of each source's training split"},
                 quality={"linf": {s: log["sources"][s]["linf"] for s in log["sources"]},
                          "command": "pytest tests/backend/test_bait.py -k epsilon"})
    weights.save(out(VICTIM_WEIGHTS), victims, config={"epochs": args.epochs}, command=command,
                 data_seeds={"victim_seed": seeds[0]},
                 quality={"command": "pytest tests/backend/test_bait.py -k shipped_victims"})
    out(GRID_FILE).write_text(json.dumps(log, indent=1) + "\n")
    print(f"wrote {out(GRID_FILE)} in {total} s", flush=True)
    return 0


def _train_source(src: str, prior_state: dict, eps: int, seeds: tuple[int, ...], bait_cfg, vcfg
                  ) -> tuple[dict, dict, list, dict]:
    """One source's protectors and victims for every seed: (protector tensors, shipped victims' tensors, grid rows,
    the source's log: seed ``seeds[0]``'s protector logs and curves and the total seconds over seeds at the top level,
    every seed's logs in ``seeds``)."""
    import time
    from dataclasses import fields

    from ..robustness.bait.data import load_source
    from ..robustness.bait.experiment import Protectors, build_protectors, victim_grid
    from ..robustness.bait.jobs import SHIPPED_SOURCE, protector_prefix
    from ..runtime import setup_torch

    setup_torch()
    train, test = load_source(src, "train"), load_source(src, "test")
    tensors, victims, rows, per_seed = {}, {}, [], []
    src_log: dict = {"n_train": len(train), "n_test": len(test)}
    for s in seeds:
        t = time.perf_counter()
        prot, sets = build_protectors(train, prior_state, eps, bait_cfg, seed=s,
                                      progress=lambda f, m, src=src, s=s: print(f"  {src} seed {s} {f:.2f} {m}",
                                                                                flush=True)
                                      if m.endswith("0") or "EMN" in m else None)
        gen_s = round(time.perf_counter() - t, 1)
        print(f"{src} seed {s}: protectors in {gen_s} s; linf {prot.logs['linf']}", flush=True)
        pre = protector_prefix(src, s)
        for name in (f.name for f in fields(Protectors) if f.name != "logs"):
            tensors.update({f"{pre}{name}.{k}": v for k, v in getattr(prot, name).state_dict().items()})
        t = time.perf_counter()
        seed_rows, kept = victim_grid(sets, train, test, prior_state, (s,), vcfg,
                                      keep=lambda m, i, s_, src=src: src == SHIPPED_SOURCE and s_ == seeds[0],
                                      progress=lambda f, m: print(f"  {m}", flush=True))
        for key, net in kept.items():
            victims.update({f"{key}.{k}": v for k, v in net.state_dict().items()})
        rows += seed_rows
        entry = {"seed": int(s), "protect_seconds": gen_s, "victim_seconds": round(time.perf_counter() - t, 1),
                 "linf": prot.logs["linf"], "emn": prot.logs["emn"], "targeted": prot.logs["targeted"],
                 "bait": prot.logs["bait"]["summary"], "bait_k0": prot.logs["bait_k0"]["summary"]}
        per_seed.append(entry)
        if s == seeds[0]:
            src_log.update({k: v for k, v in entry.items() if k not in ("seed", "protect_seconds", "victim_seconds")})
            src_log.update({"bait_curve": prot.logs["bait"]["curve"], "bait_k0_curve": prot.logs["bait_k0"]["curve"],
                            "bait_target_rate": prot.logs["bait"]["target_rate"],
                            "bait_k0_target_rate": prot.logs["bait_k0"]["target_rate"]})
    src_log["protect_seconds"] = round(sum(e["protect_seconds"] for e in per_seed), 1)
    src_log["victim_seconds"] = round(sum(e["victim_seconds"] for e in per_seed), 1)
    src_log["seeds"] = per_seed
    return tensors, victims, rows, src_log
