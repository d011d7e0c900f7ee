"""``python -m backend.train t1``: T1's reward model (``assets/t1_rm.safetensors``) and the candidate cache of the
page's presets (``assets/t1_candidates.jsonl.gz``), both from the shipped tiny reasoner.

Reward model (:mod:`backend.reasoning.t1.rm`): ``--problems`` problems of the ``grammar`` split (1-8 operations,
generator seed 100: the page and the claims draw seed 0), ``--n`` samples each at temperature 0.8 (sampling seed 1),
labelled by their final answer; features are the reasoner's penultimate-layer state at each sample's last token;
class-balanced L2 logistic regression. Quality: AUROC of r on the training samples and on 60 problems x 8 samples of
the held-out phrasings (``grammar_paraphrase``, seed 100), stored in the file's metadata.

Cache: the candidate sets the page's presets and the ci claim tests read (:data:`backend.reasoning.t1.inputs.PRESETS`
with their defaults), sampled once so that a preset opens instantly. ``--out-dir`` writes elsewhere (a smoke test:
``--problems 4 --n 2 --no-cache --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from .. import weights
    from ..models.tinyreasoner import load_tinyreasoner
    from ..reasoning.rgm.traces import auroc
    from ..reasoning.t1.jobs import CACHE_FILE, RM_WEIGHTS, sample_candidates
    from ..reasoning.t1.rm import features, fit
    from ..reasoning.tasks import MARKERS, extract_answer, generate

    ap = argparse.ArgumentParser(prog="python -m backend.train t1")
    ap.add_argument("--problems", type=int, default=400)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--out-dir", type=Path, default=None)
    ap.add_argument("--no-cache", action="store_true", help="skip sampling the presets' candidate cache")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    reasoner = load_tinyreasoner()
    m = MARKERS["tinyreasoner"]

    def labelled(split: str, n_problems: int, n: int):
        probs = generate(n_problems, split, seed=100, steps=(1, 8))
        sets = sample_candidates(reasoner, [p.question for p in probs], n, 0.8, seed=1)
        prompts = [s.prompt_ids for s in sets for _ in s.candidates]
        toks = [c.tokens for s in sets for c in s.candidates]
        y = np.array([extract_answer(c.text, m) == p.answer for p, s in zip(probs, sets, strict=True)
                      for c in s.candidates], dtype=float)
        return features(reasoner, prompts, toks), y

    X, y = labelled("grammar", args.problems, args.n)
    rm = fit(X, y)
    Xh, yh = labelled("grammar_paraphrase", 60, 8)
    quality = {"train_auroc": round(auroc(rm.score(X), y), 4), "train_accuracy_of_samples": round(float(y.mean()), 4),
               "heldout_phrasings_auroc": round(auroc(rm.score(Xh), yh), 4),
               "heldout_accuracy_of_samples": round(float(yh.mean()), 4), "samples": int(y.size),
               "seconds": round(time.perf_counter() - t0, 1)}
    print(quality, flush=True)
    out_rm = (args.out_dir / RM_WEIGHTS.name) if args.out_dir else RM_WEIGHTS
    command = "python -m backend.train t1" + (f" --problems {args.problems}" if args.problems != 400 else "")
    weights.save(out_rm, rm.state(), config={"layer": -2, "features": int(X.shape[1])}, command=command,
                 data_seeds={"problems": [100], "split": "grammar", "sampling_seed": 1, "n": args.n},
                 quality=quality)
    print(f"wrote {out_rm}")
    if not args.no_cache:
        from ..reasoning.candidates import CandidateCache
        from ..reasoning.t1.inputs import PRESETS
        from ..reasoning.t1.jobs import BonConfig

        path = (args.out_dir / CACHE_FILE.name) if args.out_dir else CACHE_FILE
        if path.exists():
            path.unlink()
        cache = CandidateCache(path)
        for name, kw in PRESETS.items():
            cfg = BonConfig(**kw)
            if cfg.source != "samples":
                continue
            probs = generate(cfg.problems, cfg.split, seed=cfg.problem_seed, steps=cfg.ops)
            sample_candidates(reasoner, [p.question for p in probs], cfg.n, cfg.temperature, cfg.seed, cache)
            print(f"cached {name}: {len(cache)} sets", flush=True)
        print(f"wrote {path}")
    return 0
