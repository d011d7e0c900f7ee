"""``python -m backend.train rgm``: the SPRM heads of the RGM page (``assets/rgm_heads.safetensors``), six heads on the
shipped tiny reasoner's penultimate layer: the SPR loss and the plain-BCE baseline, each with training seeds 0, 1, 2.

Data: ``--problems`` problems of the ``grammar`` split (1-8 operations, generator seed 100; the page and the claims
draw seed 0), 8 samples each at temperature 0.8 (sampling seed 1), labelled by their final answer only; the step
features are read at every step end (:mod:`backend.reasoning.rgm.data`). Each head: 30 epochs of AdamW (lr 1e-3,
mini-batches of 64 traces, :func:`backend.reasoning.rgm.fit.train_head`). Quality: per head, the first-wrong-step
AUROC on 60 problems x 8 samples of the held-out phrasings (``grammar_paraphrase``, seed 100), stored in the file's
metadata. ``--out`` writes elsewhere (a smoke test: ``--problems 4 --epochs 1 --out F``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from .. import weights
    from ..models.tinyreasoner import load_tinyreasoner
    from ..reasoning.rgm.data import collect
    from ..reasoning.rgm.fit import locate_auroc, step_scores, train_head
    from ..reasoning.rgm.jobs import HEADS, SEEDS
    from ..reasoning.rgm.sprm import LOSSES
    from ..reasoning.tasks import generate

    ap = argparse.ArgumentParser(prog="python -m backend.train rgm")
    ap.add_argument("--problems", type=int, default=400)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--out", type=Path, default=HEADS)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    reasoner = load_tinyreasoner()
    train = collect(reasoner, generate(args.problems, "grammar", seed=100, steps=(1, 8)), 8, 0.8, seed=1)
    held = collect(reasoner, generate(60, "grammar_paraphrase", seed=100, steps=(1, 8)), 8, 0.8, seed=1)
    state, names, quality = {}, [], {}
    for loss in LOSSES:
        for seed in SEEDS:
            name = f"{loss}_s{seed}"
            head = train_head(train, loss, seed=seed, epochs=args.epochs)
            for k, v in head.state_dict().items():
                state[f"{name}/{k}"] = v
            names.append(name)
            quality[f"{name}_heldout_locate_auroc"] = round(locate_auroc(step_scores(head, held), held), 4)
            print(name, quality[f"{name}_heldout_locate_auroc"], flush=True)
    quality |= {"train_traces": int(train.outcome.size), "train_accuracy": round(float(train.outcome.mean()), 4),
                "heldout_traces": int(held.outcome.size), "seconds": round(time.perf_counter() - t0, 1)}
    command = "python -m backend.train rgm" + (f" --problems {args.problems}" if args.problems != 400 else "")
    weights.save(args.out, state, config={"features": int(train.features[0].shape[1]), "layer": -2},
                 command=command, data_seeds={"problems": [100], "split": "grammar", "sampling_seed": 1, "n": 8},
                 quality=quality, extra={"heads": names})
    print(quality, f"\nwrote {args.out}", flush=True)
    return 0
