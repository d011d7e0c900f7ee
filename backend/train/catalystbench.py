"""``python -m backend.train catalystbench``: the LoRA adapters and heads of ST, MST, FT and MFT on the element
benchmark (``assets/catalystbench_<method>.safetensors``, one file per method holding every seed, float16).

The 29 lower layers of SmolLM2-135M are frozen, so their output for every benchmark row is computed once (about
3 minutes) and every method x seed trains only the last layer's LoRA (rank 4 on the query and value projections) and
its heads on those cached states (:mod:`backend.data.catalystbench.fit`). Before training, two timed steps give the
cost per training row with the LM head and with a decoupled head, and each method x seed's cost is estimated from
them; the estimate and the measured seconds go into the file's metadata with the per-seed test metrics and the
per-row test predictions of the float16 weights the page loads. ``--methods``, ``--seeds``, ``--epochs`` and
``--out-dir`` run a subset (a smoke test: ``--methods mft --seeds 0 --epochs 1 --out-dir DIR``). About 15 minutes on
one thread.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, replace
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import torch

    from .. import weights
    from ..data.catalystbench import fit as F
    from ..data.catalystbench.bench import build_bench
    from ..data.catalystbench.jobs import SEEDS, asset_path
    from ..data.catalystbench.methods import METHODS
    from ..models.lm import load_causal_lm

    ap = argparse.ArgumentParser(prog="python -m backend.train catalystbench")
    ap.add_argument("--methods", default="mft,ft,st,mst")
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--epochs", type=int, default=F.FitSettings().epochs)
    ap.add_argument("--out-dir", type=Path, default=None)
    ap.add_argument("--every", type=int, default=1, help="keep every k-th benchmark row (a smoke test)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    methods = [m.strip().lower() for m in args.methods.split(",") if m.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    settings = replace(F.FitSettings(), epochs=args.epochs)
    t_all = time.perf_counter()
    lm = load_causal_lm()
    bench = build_bench()
    bench.rows = bench.rows[:: max(1, args.every)]
    t0 = time.perf_counter()
    enc = F.encode_and_cache(lm.model, lm.tokenizer, bench.rows)
    cache_s = time.perf_counter() - t0
    print(f"cached {len(bench.rows)} rows in {cache_s:.0f} s", flush=True)
    top = F.TopLayer(lm.model)
    train_rows = [i for i, r in enumerate(bench.rows) if r.split == "train"]
    test_rows = [i for i, r in enumerate(bench.rows) if r.split == "test"]
    s_text, s_head = F.time_probe(top, enc, train_rows, settings)
    gen_probe = [i for i in test_rows if bench.rows[i].task == "electronegativity"][:8]
    t0 = time.perf_counter()
    F.generate(top, lm.tokenizer, [enc.ids[i][: enc.prompt_len[i]] for i in gen_probe], None, settings.max_new_tokens)
    s_gen = (time.perf_counter() - t0) / len(gen_probe)
    est = {m: F.estimate_seconds(bench, METHODS.get(m).heads, settings, s_text, s_head, s_gen) for m in methods}
    print(f"per-row cost: text {s_text * 1e3:.1f} ms, head {s_head * 1e3:.1f} ms, generation {s_gen * 1e3:.0f} ms; "
          f"estimate per seed: " + ", ".join(f"{m} {v:.0f} s" for m, v in est.items())
          + f"; total {sum(est.values()) * len(seeds) + cache_s:.0f} s", flush=True)
    for m in methods:
        state, quality, preds = {}, {"estimate_s_per_seed": round(est[m], 1)}, {}
        for seed in seeds:
            t0 = time.perf_counter()
            units = METHODS.get(m)(top, bench, enc, settings, seed)
            train_s = time.perf_counter() - t0
            st = {k: v.detach().to(torch.float16) for k, v in F.unit_state(units).items()}
            units = F.load_units(top, bench, {k: v.float() for k, v in st.items()}, settings)
            t1 = time.perf_counter()
            p = F.predict(top, lm.tokenizer, bench, enc, units, test_rows, settings)
            eval_s = time.perf_counter() - t1
            sc = F.score(bench, p)
            state.update({f"seed{seed}.{k}": v for k, v in st.items()})
            quality[f"seed{seed}"] = {k: round(v, 4) for k, v in sc.items()}
            quality[f"seed{seed}_train_s"] = round(train_s, 1)
            quality[f"seed{seed}_eval_s"] = round(eval_s, 1)
            quality[f"seed{seed}_parse_rate"] = round(sum(bool(x["parsed"]) for x in p) / len(p), 4)
            preds[f"seed{seed}"] = [x["pred"] if isinstance(x["pred"], str) else round(float(x["pred"]), 4) for x in p]
            quality["trainable_parameters"] = F.trainable_parameters(units)
            print(f"{m} seed {seed}: average {sc['average']:.3f} "
                  + " ".join(f"{k} {v:.3f}" for k, v in sc.items() if k != "average")
                  + f" (train {train_s:.0f} s, eval {eval_s:.0f} s, estimate {est[m]:.0f} s)", flush=True)
        path = (args.out_dir / asset_path(m).name) if args.out_dir else asset_path(m)
        command = "python -m backend.train catalystbench" + ("" if args.methods == "mft,ft,st,mst"
                                                             else f" --methods {args.methods}")
        weights.save(path, state, config={"method": m, "settings": asdict(settings)}, command=command,
                     data_seeds={"seeds": seeds, "split_seed": 0}, quality=quality,
                     extra={"test_rows": test_rows, "predictions": preds, "cache_s": round(cache_s, 1),
                            "cost_per_row_s": {"text": s_text, "head": s_head, "generation": s_gen}})
        print(f"wrote {path}", flush=True)
    print(f"total {time.perf_counter() - t_all:.0f} s", flush=True)
    return 0
