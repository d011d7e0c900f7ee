"""``python -m backend.train laionaudit``: the dual encoders of the bias-transfer miniature
(``assets/laionaudit_<setting>.safetensors``, one file per setting holding every seed).

For each setting of :data:`backend.data.laionaudit.transfer.SETTINGS` (the base planted corpus, attribute noise,
age confounding and reporting amplification at raised strengths, and shuffled captions) and each seed of
:data:`backend.data.laionaudit.transfer.SEEDS`: draw the corpus (20,000 figures with captions; the seed draws the
sample), train a :class:`backend.data.laionaudit.dual.DualEncoder` (18 epochs, batches of 512, seed = the same seed),
measure the model bias of the 30 concepts on the clean evaluation figures and fit it on the audited data bias.
Quality (stored in each file's metadata): per seed the R^2, the slope, the last epoch's loss and in-batch retrieval
accuracy, and the training seconds. ``--settings a,b`` trains a subset; ``--out-dir`` writes elsewhere (a smoke
test: ``--settings base --seeds 0 --images 600 --epochs 1 --out-dir DIR``). 20-30 minutes on one thread.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import torch

    from .. import weights
    from ..data.laionaudit import transfer as T
    from ..data.laionaudit.dual import DualConfig, retrieval_accuracy, train
    from ..data.laionaudit.planted import sample

    ap = argparse.ArgumentParser(prog="python -m backend.train laionaudit")
    ap.add_argument("--settings", default=",".join(T.SETTINGS), help="comma-separated setting names")
    ap.add_argument("--seeds", default=",".join(map(str, T.SEEDS)))
    ap.add_argument("--images", type=int, default=None, help="corpus size (default: the settings' 20,000)")
    ap.add_argument("--epochs", type=int, default=DualConfig().epochs)
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    names = [T.setting(n).name for n in args.settings.split(",") if n.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    dual = replace(DualConfig(), epochs=args.epochs)
    t_all = time.perf_counter()
    for name in names:
        s = T.SETTINGS[name]
        state, quality, models = {}, {}, {}
        for seed in seeds:
            t0 = time.perf_counter()
            cfg = replace(s.config, seed=seed, **({"images": args.images} if args.images else {}))
            corpus = sample(cfg)
            model, losses = train(corpus.images, corpus.captions, dual, seed=seed)
            secs = time.perf_counter() - t0
            models[seed] = model
            state.update({f"seed{seed}.{k}": v.detach().to(torch.float16) if v.is_floating_point() else v
                          for k, v in model.state_dict().items()})
            quality[f"seed{seed}_loss"] = round(losses[-1], 4)
            quality[f"seed{seed}_retrieval_at_batch512"] = round(retrieval_accuracy(model, corpus.images[:4096],
                                                                                    corpus.captions[:4096], 512), 4)
            quality[f"seed{seed}_seconds"] = round(secs, 1)
            print(f"{name} seed {seed}: loss {losses[-1]:.3f} in {secs:.0f} s", flush=True)
        if not args.images:
            # the shipped files are fp16; the quality is that of the fp16 weights the page loads
            for m in models.values():
                m.load_state_dict({k: v.to(torch.float16).float() for k, v in m.state_dict().items()})
            ev = T.evaluate(name, models)
            for row in ev["seeds"]:
                quality[f"seed{row['seed']}_r2"] = row["r2"]
                quality[f"seed{row['seed']}_slope"] = row["slope"]
            quality["r2_mean"] = ev["r2_mean"]
            print(f"{name}: R^2 per seed {[r['r2'] for r in ev['seeds']]}", flush=True)
        path = (args.out_dir / s.path.name) if args.out_dir else s.path
        command = "python -m backend.train laionaudit" + ("" if args.settings == ",".join(T.SETTINGS)
                                                          else f" --settings {args.settings}")
        weights.save(path, state, config={"dual": dual.to_dict(), "corpus": s.config.to_dict(),
                                          "factor": s.factor, "strength": s.strength},
                     command=command, data_seeds={"corpus_and_init": seeds, "evaluation": 99}, quality=quality)
        print(f"wrote {path}", flush=True)
    print(f"total {time.perf_counter() - t_all:.0f} s", flush=True)
    return 0
