"""Benchmark of RCPU structured pruning on SmolLM2-135M-Instruct (CPU).

1. Speed and memory of the pruned vs dense model at ratios 20 / 30 / 50 % (variance score + rotation): prefill tokens
   per second (4 x 128 tokens), greedy decode tokens per second (32 new tokens, batch 1, KV cache), stored and effective
   parameters, weight memory, KV-cache bytes per token; medians over repeats.
2. Time the pruning itself takes per method (whole model, one run each, same calibration windows), and the
   compensation step alone per method on one layer's captured activations (median over repeats): this is where the
   methods differ (an SVD of d_out x d_out vs a k x k solve vs nothing).

Times are CPU seconds of this process (``time.process_time``; one torch thread), which track the uncontended wall
time and are robust to other jobs on a shared machine; the pruning table also shows wall seconds.

Usage: ``OMP_NUM_THREADS=1 python benchmarks/pruning.py [--n-calib 16] [--repeats 5] [--quick]``; prints a markdown
table with the machine labelled.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def cpu_time(fn) -> float:  # noqa: ANN001
    """CPU seconds of this process spent in ``fn()`` (one torch thread: close to the uncontended wall time, and far
    less sensitive than wall time to other jobs on a shared machine)."""
    t = time.process_time()
    fn()
    return time.process_time() - t


def median_time(fn, repeats: int) -> float:  # noqa: ANN001
    return statistics.median(cpu_time(fn) for _ in range(repeats))


def kv_bytes_per_token(model) -> int:  # noqa: ANN001
    return sum(2 * layer.self_attn.k_proj.out_features * layer.self_attn.k_proj.weight.element_size()
               for layer in model.model.layers)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-calib", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ratios", default="0.2,0.3,0.5")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)

    import torch

    from backend.compression import corpus
    from backend.compression.pruning import lmtools
    from backend.compression.pruning.lab import SUBLAYERS
    from backend.compression.pruning.pruning import (
        METHODS,
        PruneConfig,
        _capture,
        _layer_inputs,
        _run_layer,
        column_stats,
        compensate,
        config_for,
        get_score,
        head_scores,
        prune_llama,
        select_keep,
    )
    from backend.models import load
    from backend.runtime import setup_torch

    setup_torch()
    if args.quick:  # a smoke run of the script
        args.n_calib, args.repeats, args.ratios = 4, 1, "0.3"
    ratios = [float(r) for r in args.ratios.split(",")]
    methods = {k: v for k, v in METHODS.items() if not args.quick or k in ("wanda_sp", "rcpu")}
    lm = load("smollm2")
    split = corpus.tokenize_split(lm.tokenizer)
    calib = split.calib_segments(args.n_calib, 128, 0)
    speed_ids = split.heldout_segments(4, 128)
    prompt = speed_ids[:1, :32]
    machine = (f"{platform.platform()}, {os.cpu_count()} CPUs, torch {torch.__version__} with "
               f"{torch.get_num_threads()} thread(s), python {platform.python_version()}, load average at start "
               f"{os.getloadavg()[0]:.1f} (a shared machine slows every number alike; compare ratios)")
    print(f"# Pruning benchmark\n\nMachine: {machine}. Model: SmolLM2-135M-Instruct (fp32). "
          f"Calibration: {args.n_calib} x 128 tokens of {corpus.BUILTIN_NAME}. Medians of {args.repeats} repeats.\n")

    # ------------------------------------------------------------------ 1. speed and memory, dense vs pruned
    models = [("dense", lm.model, None)]
    for r in ratios:
        m = copy.deepcopy(lm.model)
        res = prune_llama(m, calib, PruneConfig(ratio=r, score="variance", compensation="rotation",
                                                n_calib=args.n_calib))
        models.append((f"RCPU {r:.0%}", m, res))
    for _, m, _ in models:  # warm-up
        lmtools.prefill_tokens_per_second(m, speed_ids[:1])
    pre: dict[str, list[float]] = {n: [] for n, _, _ in models}
    dec: dict[str, list[float]] = {n: [] for n, _, _ in models}
    for _ in range(args.repeats):  # interleaved, so a load change on a shared machine hits every model alike
        for name, m, _ in models:
            pre[name].append(cpu_time(lambda m=m: lmtools.prefill_tokens_per_second(m, speed_ids)))
            dec[name].append(cpu_time(lambda m=m: lmtools.decode_tokens_per_second(m, prompt, 32)))
    rows = []
    for name, m, res in models:
        p_s, d_s = statistics.median(pre[name]), statistics.median(dec[name])
        rows.append((name, {"prefill_s": p_s, "prefill_tps": speed_ids.numel() / p_s, "decode_s": d_s,
                            "decode_tps": 32 / d_s, "stored": lmtools.stored_parameters(m),
                            "effective": lmtools.effective_parameters(m), "mb": lmtools.weight_bytes(m) / 2**20,
                            "kv": kv_bytes_per_token(m)}, res))
    del models
    base = rows[0][1]
    print("## Speed and memory (pruned with variance score + rotation)\n")
    print("| model | prefill tok/CPU-s | x dense | decode tok/CPU-s | x dense | params stored | params effective "
          "| weights MB "
          "| KV bytes/token | heads dropped (KV groups removed) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, v, res in rows:
        heads = "-" if res is None else f"{res.heads_dropped} ({res.groups_removed})"
        print(f"| {name} | {v['prefill_tps']:.0f} ({v['prefill_s'] * 1e3:.0f} ms) "
              f"| {v['prefill_tps'] / base['prefill_tps']:.2f} "
              f"| {v['decode_tps']:.1f} ({v['decode_s']:.2f} s) | {v['decode_tps'] / base['decode_tps']:.2f} "
              f"| {v['stored'] / 1e6:.1f} M | {v['effective'] / 1e6:.1f} M | {v['mb']:.0f} | {v['kv']:,} | {heads} |")

    # ------------------------------------------------------------------ 2. pruning time per method (whole model)
    print(f"\n## Pruning time per method (whole model, ratio 30 %, N = {args.n_calib}, one run each)\n")
    print("| method | score | compensation | pruning CPU s (wall s) | x Wanda-sp |")
    print("|---|---|---|---|---|")
    times = {}
    for name, meth in methods.items():
        m = copy.deepcopy(lm.model)
        t0 = time.process_time()
        res = prune_llama(m, calib, config_for(name, ratio=0.3, n_calib=args.n_calib))
        times[name] = time.process_time() - t0
        del m
        print(f"| {meth.label} | {meth.score} | {meth.compensation} | {times[name]:.1f} ({res.seconds:.0f}) | "
              f"{times[name] / times['wanda_sp']:.2f} |")

    # ------------------------------------------------------------------ 3. the compensation step alone (layer 15)
    batches = _layer_inputs(lm.model, calib, 8)
    for li in range(15):
        batches = _run_layer(lm.model.model.layers[li], batches)
    X, _ = _capture(lm.model.model.layers[15], batches, tuple(SUBLAYERS.values()))
    print(f"\n## Compensation step alone (layer 15, ratio 30 %, {X['mlp.down_proj'].shape[0]} tokens; median CPU ms)\n")
    print("| compensation | o_proj (576 x 576, heads) | down_proj (576 x 1536) | x none (down_proj) |")
    print("|---|---|---|---|")
    ms: dict[str, dict[str, float]] = {}
    for comp in ("none", "bias", "rotation", "rotation_scale", "ls"):
        ms[comp] = {}
        for key, name in SUBLAYERS.items():
            W = lm.model.model.layers[15].get_submodule(name).weight.detach().float()
            x = X[name]
            col = get_score("variance").fn(W, column_stats(x), "l2")
            keep = (select_keep(head_scores(col, 64), 0.3).repeat_interleave(64) if key == "attn"
                    else select_keep(col, 0.3))
            ms[comp][key] = 1e3 * median_time(lambda W=W, x=x, keep=keep, comp=comp: compensate(comp, W, x, keep),
                                              args.repeats)
        print(f"| {comp} | {ms[comp]['attn']:.1f} | {ms[comp]['mlp']:.1f} | "
              f"{ms[comp]['mlp'] / ms['none']['mlp']:.1f} |")
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}.")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/pruning.md

    raise SystemExit(record(main, "pruning"))
