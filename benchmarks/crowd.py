"""Crowd benchmark: simulated seconds per wall second of every method at 50, 200 and 1000 agents (same inputs, one
process, repeated, medians), plus the held-out quality table of the shipped weights.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/crowd.py [--agents 50 200 1000] [--seconds 4] [--repeats 3]
                                                            [--quality-seconds 20]

The synthetic crowds fill the 20 m x 20 m open room on a jittered grid; each agent walks to a random point on the far
side. Only the methods' own step time is measured (``Rollout.wall_s``); every agent is simulated from frame 0 (its
first 25 frames are overwritten by the reference motion, as in the rollout protocol, but still computed). The
"K-pass sampler" row is a cost proxy for a K-step diffusion sampler (SPDiff-style): the same trajectory network called
K = 10 times per step; it is not a trained model and has no quality.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.forecast.crowd.data import DT, Clip  # noqa: E402
from backend.forecast.crowd.interface import METHODS, get_method  # noqa: E402
from backend.forecast.crowd.methods import Learned, load_model  # noqa: E402
from backend.forecast.crowd.rollout import simulate  # noqa: E402
from backend.forecast.crowd.scenes import open_room  # noqa: E402


def synthetic_clip(n: int, seconds: float, seed: int = 0) -> Clip:
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(n)))
    spacing = 18.0 / side
    g = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)[:n]
    p0 = 1.0 + (g + 0.5) * spacing + rng.uniform(-0.1, 0.1, (n, 2)) * spacing
    goal = np.stack([20.0 - p0[:, 0], rng.uniform(1, 19, n)], 1) + rng.uniform(-0.5, 0.5, (n, 2))
    T = int(round(seconds / DT))
    d = goal - p0
    e = d / np.linalg.norm(d, axis=1, keepdims=True)
    t = np.arange(T)[:, None, None] * DT
    pos = (p0[None] + e[None] * 1.2 * t).astype(np.float32)
    room = open_room()
    return Clip(pos, goal[:, None, :].astype(np.float32), np.ones(n, np.int64), np.zeros((T, n), np.int64), DT,
                room, f"synthetic-{n}", room.bounds)


class KPass(Learned):
    """Cost proxy: K passes of the network per simulated step."""

    def __init__(self, net: torch.nn.Module, k: int = 10) -> None:
        super().__init__(net, f"k{k}_pass_sampler")
        self.k = k

    def step(self, s, dt):  # noqa: ANN001, ANN201
        out = None
        for _ in range(self.k):
            out = super().step(s, dt)
        return out


def timing(agents: list[int], seconds: float, repeats: int) -> list[dict]:
    rows = []
    stddn = load_model("stddn")[0].micro
    for n in agents:
        clip = synthetic_clip(n, seconds)
        sims = {m: (lambda m=m: get_method(m)) for m in METHODS}
        sims["k10_pass_sampler"] = lambda: KPass(stddn, 10)
        for name, make in sims.items():
            if name == "k10_pass_sampler" and n > 200:
                continue  # minutes per repeat at 1000 agents on 2 cores
            walls = []
            for _ in range(repeats):
                r = simulate(clip, make())
                walls.append(r.wall_s)
            w = statistics.median(walls)
            rows.append({"agents": n, "method": name, "wall_s": w, "sim_s_per_wall_s": clip.seconds / w,
                         "ms_per_step": 1000 * w / (clip.num_frames - 1)})
            print(f"{n:5d} {name:18s} {clip.seconds / w:10.2f} sim s / wall s", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", type=int, nargs="*", default=[50, 200, 1000])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quality-seconds", type=float, default=20.0)
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("METHOD_LAB_THREADS", "1")))
    machine = (f"{platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
               f"torch {torch.__version__} with {torch.get_num_threads()} thread(s)")
    rows = timing(args.agents, args.seconds, args.repeats)
    print(f"\n### Crowd: simulated seconds per wall second (median of {args.repeats}; {args.seconds:g} s simulated)\n")
    print(f"Machine: {machine}\n")
    names = [m for m in [*METHODS, "k10_pass_sampler"] if any(r["method"] == m for r in rows)]
    print("| method | " + " | ".join(f"{n} agents" for n in args.agents) + " | ratio to STDDN at 200 |")
    print("|---|" + "---|" * (len(args.agents) + 1))
    ref = next((r["sim_s_per_wall_s"] for r in rows if r["method"] == "stddn" and r["agents"] == 200), None)
    for m in names:
        cells = []
        for n in args.agents:
            r = next((x for x in rows if x["method"] == m and x["agents"] == n), None)
            cells.append("-" if r is None else f"{r['sim_s_per_wall_s']:.2f} ({r['ms_per_step']:.1f} ms/step)")
        r200 = next((x for x in rows if x["method"] == m and x["agents"] == 200), None)
        ratio = f"{r200['sim_s_per_wall_s'] / ref:.2f}x" if (r200 and ref) else "-"
        print(f"| {m} | " + " | ".join(cells) + f" | {ratio} |")
    if args.quality_seconds > 0:
        from backend.forecast.crowd.evaluate import evaluate

        res = evaluate(seconds=args.quality_seconds, seed=300, stride=2)
        print(f"\n### Crowd: held-out quality ({args.quality_seconds:g} s clips, 4 scenes, seed 300)\n")
        print("| method | MAE (m) | OT | MMD | FDE (m) | collisions/agent | ms per simulated s |")
        print("|---|---|---|---|---|---|---|")
        for r in res.table:
            print(f"| {r['method']} | {r['MAE']:.3f} | {r['OT']:.3f} | {r['MMD']:.4f} | {r['FDE']:.3f} | "
                  f"{r['collisions']:.4f} | {r['ms_per_sim_second']:.1f} |")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/crowd.md

    raise SystemExit(record(main, "crowd"))
