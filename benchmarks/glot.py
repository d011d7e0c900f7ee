"""Benchmark of GLOT (arXiv 2603.03389) against its baselines on the same inputs, in one process.

1. Training cost per epoch on the same texts: the GLOT head (and AdaPool, mean + linear) on cached MiniLM states vs
   LoRA fine-tuning of MiniLM (peft, r = 64, the paper's setting) with a linear head. The paper reports GLOT training
   over 100x faster than parameter-efficient fine-tuning.
2. Inference: the added cost of GLOT pooling over mean pooling per sentence on cached states, next to the backbone's
   own forward time per sentence.

Usage: ``OMP_NUM_THREADS=1 python benchmarks/glot.py [--n 256] [--repeats 3] [--lora-epochs 1]``. Prints a markdown
table of medians and ratios with the machine labelled. Times are given as wall clock and as process CPU time; with one
torch thread the CPU time hardly depends on other jobs sharing the machine, so the ratios are taken on CPU time (the
wall-clock ratio is printed beside it, with the load average before and after).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def median_time(fn, repeats: int, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        t = clock()
        fn()
        times.append(clock() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=256, help="training texts (hard variant, 90%% distractors)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--lora-epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)

    import torch

    from backend.tokens.glot import stress
    from backend.tokens.glot.backbone import encode, load_backbone
    from backend.tokens.glot.heads import PooledClassifier, TrainConfig, graph_for, train_head
    from backend.tokens.glot.layers import GlotConfig
    from backend.tokens.glot.lora import lora_reference

    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()[0]
    bb = load_backbone("minilm")
    data = stress.generate(args.n, 0.9, "random", "hard", seed=0)
    y = torch.tensor(data.labels)
    t, c = time.perf_counter(), time.process_time()
    states = encode(bb, data.texts, 160, use_cache=False)
    encode_s, encode_cpu = time.perf_counter() - t, time.process_time() - c
    glot_cfg = GlotConfig()
    one_epoch = TrainConfig(epochs=1)

    rows = []
    for pooling in ("mean", "adapool", "glot"):
        graphs = (graph_for(states, glot_cfg.tau),) * 2 if pooling == "glot" else None
        per_epoch, cpu_epoch = [], []
        params = 0
        for r in range(args.repeats):
            _, res = train_head(pooling, states, y, states, y, glot=glot_cfg, cfg=one_epoch,
                                seed=r, graphs=graphs)
            per_epoch.append(res.train_seconds)
            cpu_epoch.append(res.cpu_seconds_per_epoch)
            params = res.params
        rows.append({"method": f"{pooling} head on cached states", "s_per_epoch": statistics.median(per_epoch),
                     "cpu_per_epoch": statistics.median(cpu_epoch), "params": params})
    graph_cpu = median_time(lambda: graph_for(states, glot_cfg.tau), args.repeats, time.process_time)
    lora_times, lora_cpu = [], []
    lora = None
    for r in range(args.lora_epochs):
        lora = lora_reference(bb, data.texts, data.labels, None, None, epochs=1, seed=r)
        lora_times.append(lora.seconds_per_epoch)
        lora_cpu.append(lora.cpu_seconds_per_epoch)
    assert lora is not None
    rows.append({"method": f"LoRA r={lora.rank} fine-tuning (peft)", "s_per_epoch": statistics.median(lora_times),
                 "cpu_per_epoch": statistics.median(lora_cpu), "params": lora.trainable_params})

    # inference: pooling cost per sentence on cached states (batch of 32), vs the backbone forward per sentence
    h, m = states.batch(torch.arange(min(32, len(states))))
    pools = {}
    with torch.no_grad():
        for pooling in ("mean", "max", "cls", "adapool", "glot"):
            model = PooledClassifier(pooling, h.shape[-1], 2, config=glot_cfg).eval()
            model(h, m)  # warm-up
            pools[pooling] = median_time(lambda model=model: model(h, m), max(5, args.repeats),
                                         time.process_time) / h.shape[0]
    backbone_per_sentence = encode_cpu / len(states)

    glot_epoch, glot_wall = rows[2]["cpu_per_epoch"], rows[2]["s_per_epoch"]
    machine = (f"{platform.platform()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
               f"{torch.get_num_threads()} torch thread(s)")
    print(f"## GLOT benchmark\n\nMachine: {machine}; load average {load_before:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end. Inputs: {args.n} hard stress-test texts at 90% distractors "
          f"(MiniLM, about {int(m.sum(1).float().mean())} tokens each). Medians of {args.repeats} repeats "
          f"(LoRA: {args.lora_epochs} epoch(s)).\n")
    print("### Training cost per epoch on the same texts\n")
    print("| method | trainable params | CPU s / epoch | wall s / epoch | ratio to GLOT head (CPU) | (wall) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['method']} | {r['params']:,} | {r['cpu_per_epoch']:.3f} | {r['s_per_epoch']:.3f} | "
              f"{r['cpu_per_epoch'] / glot_epoch:.2f}x | {r['s_per_epoch'] / glot_wall:.2f}x |")
    print(f"\nOne-time cost of the cached states: {encode_cpu:.2f} CPU s ({encode_s:.2f} s wall) for {args.n} texts "
          f"(backbone forward); the token graphs at tau={glot_cfg.tau} take {graph_cpu:.3f} CPU s. LoRA per epoch / "
          f"GLOT head per epoch = **{rows[3]['cpu_per_epoch'] / glot_epoch:.0f}x** on CPU time "
          f"({rows[3]['s_per_epoch'] / glot_wall:.0f}x wall clock); including the one-time encoding in GLOT's first "
          f"epoch: {rows[3]['cpu_per_epoch'] / (glot_epoch + encode_cpu + graph_cpu):.1f}x.\n")
    print("### Inference cost per sentence on cached states (batch 32, CPU time)\n")
    print("| pooling | ms / sentence | ratio to mean | share of backbone forward |")
    print("|---|---:|---:|---:|")
    for name, s in pools.items():
        print(f"| {name} | {s * 1e3:.3f} | {s / pools['mean']:.1f}x | {s / backbone_per_sentence:.1%} |")
    print(f"\nBackbone forward (MiniLM): {backbone_per_sentence * 1e3:.1f} ms / sentence. Added cost of GLOT over mean "
          f"pooling: {(pools['glot'] - pools['mean']) * 1e3:.3f} ms / sentence "
          f"({(pools['glot'] - pools['mean']) / backbone_per_sentence:.1%} of the backbone forward).")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/glot.md

    raise SystemExit(record(main, "glot"))
