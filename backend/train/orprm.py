"""``python -m backend.train orprm``: OR-PRM's process reward model, one file per training seed
(``assets/orprm_prm_s{0,1,2}.safetensors``).

Data of seed s: ``--problems`` generated problems (generator seed 100 + s; the page's dataset draws seed 0 and
best-of-N seed 1000), ``--n`` candidate formulations each from the stochastic modeller, each flawed with probability
``--rate`` by a kind of :data:`backend.reasoning.orprm.modeller.TRAIN` (wrong sense, missing constraint, unit error,
wrong recorded optimum) and, with probability ``--variation``, rewritten in an equivalent way (blocks reordered, a
block in other units, a redundant bound; sampling seed [s, 3]). Every step is labelled 1 before the candidate's first flawed step and 0
from it on; features are :func:`backend.reasoning.orprm.prm.step_features`; the model is class-balanced L2 logistic
regression (:func:`backend.reasoning.orprm.prm.fit`).

Quality, stored in each file's metadata: step-level AUROC on the training candidates, and on 100 problems x 4
candidates (generator seed 900) whose flaws are the held-out kinds (wrong variable domain, swapped coefficients);
AUROC of the weakest-step score against the candidate's answer being right on those. ``--out-dir`` writes elsewhere
(a smoke test: ``--problems 12 --seeds 0 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def _data(n_problems: int, problem_seed: int, n: int, rate: float, kinds: str, seed: int, variation: float):
    import numpy as np

    from ..reasoning.orprm.formulation import steps
    from ..reasoning.orprm.gates import context
    from ..reasoning.orprm.modeller import draw_kinds, write
    from ..reasoning.orprm.modeller import kinds as parse
    from ..reasoning.orprm.prm import step_features, step_labels
    from ..reasoning.orprm.problems import generate

    names = parse(kinds)
    rng = np.random.default_rng([seed, 3])
    X, y, cand_X, right = [], [], [], []
    for p in generate(n_problems, problem_seed):
        for k in draw_kinds(rng, n, rate, names):
            w = write(p, k, rng, variation)
            F, _ = step_features(p.form, w.form, context(p.form, w.form, w.solution))
            X.append(F)
            y.append(step_labels(len(steps(w.form)), w.flaw_step))
            cand_X.append(F)
            right.append(w.answer is not None and abs(w.answer - p.optimum) <= 1e-6 * max(1.0, abs(p.optimum)))
    return np.concatenate(X), np.concatenate(y), cand_X, np.array(right)


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from .. import weights
    from ..reasoning.orprm.jobs import PRM_SEEDS, prm_path
    from ..reasoning.orprm.prm import FEATURES, fit
    from ..reasoning.rgm.traces import auroc

    ap = argparse.ArgumentParser(prog="python -m backend.train orprm")
    ap.add_argument("--problems", type=int, default=600)
    ap.add_argument("--n", type=int, default=6, help="candidate formulations per problem")
    ap.add_argument("--rate", type=float, default=0.6, help="probability that a candidate carries a flaw")
    ap.add_argument("--variation", type=float, default=0.5, help="probability of an equivalent rewriting")
    ap.add_argument("--seeds", default=",".join(map(str, PRM_SEEDS)))
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)

    Xh, yh, cand_h, right_h = _data(100, 900, 4, 0.7, "heldout", 0, args.variation)
    for seed in [int(s) for s in args.seeds.split(",")]:
        t0 = time.perf_counter()
        X, y, _, _ = _data(args.problems, 100 + seed, args.n, args.rate, "train", seed, args.variation)
        prm = fit(X, y)
        cand_scores = np.array([prm.score(F) for F in cand_h])
        quality = {"train_step_auroc": round(auroc(prm.step_scores(X), y), 4),
                   "heldout_kinds_step_auroc": round(auroc(prm.step_scores(Xh), yh), 4),
                   "heldout_kinds_answer_auroc": round(auroc(cand_scores, right_h), 4),
                   "steps": int(y.size), "flawed_step_share": round(float(1 - y.mean()), 4),
                   "seconds": round(time.perf_counter() - t0, 1)}
        print(seed, quality, flush=True)
        out = (args.out_dir / prm_path(seed).name) if args.out_dir else prm_path(seed)
        command = "python -m backend.train orprm" + (f" --problems {args.problems}" if args.problems != 600 else "")
        weights.save(out, prm.state(), config={"features": list(FEATURES), "aggregate": "min over steps"},
                     command=command,
                     data_seeds={"problems": [100 + seed], "n_problems": args.problems, "candidates": args.n,
                                 "flaw_rate": args.rate, "variation": args.variation, "kinds": "train", "sampling_seed": [seed, 3],
                                 "heldout_problems": [900]},
                     quality=quality)
        print(f"wrote {out}", flush=True)
    return 0
