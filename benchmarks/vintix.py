"""Vintix II / DPT benchmark: the shipped models against the baselines in one process, on held-out task priors.

1. Online regret on held-out K-armed bandits: the DPT (posterior sampling from the flow model's policy, FIFO context of
   its last 64 pulls) vs UCB1, Thompson sampling with the held-out prior and Algorithm Distillation, same tasks and
   reward noise; cumulative regret at horizons 16-256 (regret vs horizon, past the 64-tuple training context), ratios,
   and the time per round of each agent (all tasks of a round in one batch).
1b. Online regret on held-out continuous bandits: the DPT acting by posterior sampling from each head vs GP-UCB,
   discretised Thompson sampling and uniform actions.
2. Heads on held-out bimodal tasks (two equal peaks): mass within +-0.1 of a peak, mass at the less-visited peak,
   sampling time per task (256 samples) and parameters of the flow, Gaussian and mixture heads.
3. Entropy of the policy vs context length (held-out K-armed tasks) and dark-room returns on the held-out goals of the
   DPT, Algorithm Distillation, posterior sampling over the goal and a random walk.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/vintix.py [--tasks 256] [--horizon 256]

Reference (paper): Vintix II, a 928M model over 209 tasks, +63 % over Vintix on Meta-World ML45; DPT (Lee et al.)
matches Thompson sampling's regret on held-out bandits. Here a 2-layer, d = 64 model pretrained on one CPU core.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import record  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=256)
    ap.add_argument("--horizon", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import numpy as np

    from backend.icrl.vintix import evaluate as E
    from backend.icrl.vintix.heads import HEADS

    flow = E.load_model("flow")
    models = {h: E.load_model(h) for h in HEADS}
    print(
        f"held-out priors; {args.tasks} tasks per measurement; seed {args.seed}; parameters "
        + ", ".join(f"{h} {sum(p.numel() for p in m.parameters()):,}" for h, m in models.items())
        + "\n"
    )

    from backend.icrl.vintix import online as O
    from backend.icrl.vintix import tasks as T

    reg = E.online_regret(flow, E.heldout_karm(args.tasks, args.seed + 3), horizon=args.horizon, seed=args.seed + 4)
    marks = [h for h in E.HORIZON_MARKS if h <= args.horizon]
    print("### Online regret vs horizon (K = 3..10, means N(0.5, 0.2^2); training context 64)\n")
    print("| agent | " + " | ".join(f"regret at {h}" for h in marks) + " | ratio DPT / agent at "
          + " / ".join(str(h) for h in marks) + " | ms per round (batch of all tasks) |")
    print("|---|" + "---|" * (len(marks) + 2))
    dpt = reg["agents"]["dpt"]["at_horizons"]
    for a, v in reg["agents"].items():
        ratios = " / ".join(f"{dpt[str(h)] / max(1e-9, v['at_horizons'][str(h)]):.2f}" for h in marks)
        print(f"| {E.AGENTS.label(a)} | " + " | ".join(f"{v['at_horizons'][str(h)]:.2f}" for h in marks)
              + f" | {ratios} | {1000 * v['seconds_per_round']:.2f} |")
    print()
    rng = np.random.default_rng(args.seed + 6)
    ctasks = [T.draw_cont(rng, heldout=True) for _ in range(args.tasks)]
    co = O.cont_online_regret(ctasks, horizon=64, seed=args.seed + 7)
    print("### Online regret on held-out continuous bandits (two equal narrow peaks, horizon 64)\n")
    print("| agent | cumulative regret | +- s.e. | regret per round, last quarter | ms per round |")
    print("|---|---|---|---|---|")
    for a, v in co["agents"].items():
        print(f"| {O.CONT_AGENTS.label(a)} | {v['final']:.2f} | {v['final_sem']:.2f} | "
              f"{v['late_regret_per_round']:.3f} | {1000 * v['seconds_per_round']:.2f} |")
    print()

    pm = E.peak_mass(models, n_tasks=args.tasks, length=64, n_samples=256, seed=args.seed + 2)
    print("### Heads on held-out bimodal tasks (two equal peaks, widths 0.05-0.09, 64 uniform context tuples)\n")
    print(
        "| head | mass within 0.1 of a peak | mass at the less-visited peak | ms per task (256 samples) | parameters |"
    )
    print("|---|---|---|---|---|")
    for h, v in pm["heads"].items():
        n = sum(p.numel() for p in models[h].cont_head.parameters())
        print(
            f"| {HEADS.label(h)} | {v['mass']:.3f} | {v['minor_peak_mass']:.3f} | "
            f"{1000 * v['sample_seconds_per_task']:.2f} | {n:,} |"
        )
    f, g, m = (pm["heads"][h]["mass"] for h in ("flow", "gaussian", "mixture"))
    print(f"\nflow / Gaussian mass ratio {f / max(g, 1e-9):.2f}x; flow / mixture {f / max(m, 1e-9):.2f}x\n")

    t0 = time.perf_counter()
    ec = E.entropy_curve(flow, n_tasks=args.tasks, length=64, seed=args.seed)
    dt = time.perf_counter() - t0
    print("### Policy entropy vs context length (held-out K-armed, uniformly random pulls)\n")
    print("| context | " + " | ".join(str(lv) for lv in (0, 1, 4, 16, 32, 64)) + " |")
    print("|---|" + "---|" * 6)
    print("| entropy (nats) | " + " | ".join(f"{ec['entropy'][lv]:.3f}" for lv in (0, 1, 4, 16, 32, 64)) + " |")
    print("| P(best arm) | " + " | ".join(f"{ec['p_best'][lv]:.3f}" for lv in (0, 1, 4, 16, 32, 64)) + " |")
    print(f"\n(all 65 prefix lengths of {args.tasks} tasks in one forward pass: {dt:.2f} s)\n")

    d = O.dark_online_agents(episodes=8, replicas=8, seed=args.seed)
    print("### Dark room, held-out goals (each agent with its own history, 8 episodes of 12 steps, 5 goals x 8 runs)\n")
    print("| agent | returns per episode | total | seconds |")
    print("|---|---|---|---|")
    for a, v in d["agents"].items():
        print(f"| {O.DARK_AGENTS.label(a)} | " + ", ".join(f"{x:.2f}" for x in v["returns"])
              + f" | {v['total']:.2f} | {v['seconds']:.1f} |")
    print(f"\noptimal return per episode {d['optimal']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(record(main, "vintix"))
