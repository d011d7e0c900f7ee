"""BAIT benchmark: the cost of protecting images with each method (the shipped protectors, the same images, one
process) next to the protection each gives (the victims' clean test accuracy from the shipped grid log), and the
training costs of the protectors and the victim grid.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bait.py [--repeats 5] [--n 64]

Inference: seconds per image to protect ``--n`` test images of each source at eps 8/255 (median of ``--repeats``):
BAIT and its ablation run one forward pass of their shipped generator, EMN and the targeted poison 20
signed-gradient steps on a shipped model.
Training costs are those recorded by ``python -m backend.train bait`` (one thread).
Binding against the budget: BAIT's generator trained ``--bind-iters`` outer steps without unrolled steps (the
ablation's objective) against the shipped shapes warm start at eps 8, 16 and 32/255: the final outer loss and
wrong-label rate against chance (ln 10, 0.1), and their cost.
The perturbation's parameterisation: the same objective over BAIT's generator and over a free per-sample table
(``--param-iters`` outer steps each), beside the targeted poison, each judged by three victims fine-tuned from the
prior.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--bind-iters", type=int, default=300)
    ap.add_argument("--param-iters", type=int, default=500)
    args = ap.parse_args()

    import numpy as np
    import torch

    from backend.robustness.bait import jobs
    from backend.robustness.bait.data import SOURCES, load_source
    from backend.robustness.bait.experiment import METHODS
    from backend.robustness.bait.nets import SmallCNN, n_params
    from backend.runtime import package_versions

    torch.set_num_threads(1)
    print(f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
          f"torch {package_versions().get('torch')}; {args.n} images, eps 8/255, median of {args.repeats}\n")
    print(f"Parameters: classifier (prior, surrogates, victims) {n_params(SmallCNN()):,}; BAIT generator "
          f"{n_params(jobs.load_protectors('shapes').bait_generator):,}\n")
    grid = jobs.run_grid()
    for src in SOURCES:
        prot = jobs.load_protectors(src)
        test = load_source(src, "test", args.n)
        print(f"### {SOURCES.label(src)}\n")
        print("| method | ms / image | realised L-inf | victim acc. scratch | victim acc. pretrained |")
        print("|---|---|---|---|---|")
        for m in METHODS:
            times, out = [], None
            for _ in range(args.repeats):
                t = time.perf_counter()
                out = METHODS.get(m)(test.images, test.labels, prot, 8)
                times.append(time.perf_counter() - t)
            lin = int(np.abs(out.astype(int) - test.images.astype(int)).max())
            accs = {i: np.mean(grid.accuracies(src, m, i)) for i in ("scratch", "pretrained")}
            print(f"| {METHODS.label(m)} | {1000 * statistics.median(times) / args.n:.2f} | {lin} | "
                  f"{accs['scratch']:.3f} | {accs['pretrained']:.3f} |")
        s = grid.settings["sources"][src]
        print(f"\nTraining (one thread): EMN min-min {s['emn']['seconds']} s ({s['emn']['rounds']} rounds), "
              f"targeted crafting + PGD {s['targeted']['seconds']} s, BAIT {s['bait']['seconds']} s "
              f"({s['bait']['iters']} outer steps x {s['bait']['unroll']} unrolled), zero-unroll "
              f"{s['bait_k0']['seconds']} s, victim grid {s['victim_seconds']} s.\n")
    print(f"Whole training command: {grid.settings['train_seconds']} s.\n")

    from backend.robustness.bait.data import load_source as load
    from backend.robustness.bait.generator import BaitConfig, train_generator
    from backend.robustness.bait.perturb import to_float

    prot, train = jobs.load_protectors("shapes"), load("shapes", "train")
    theta0 = {k: v.detach().clone() for k, v in prot.crafting.state_dict().items()}
    x, y = to_float(train.images), torch.from_numpy(train.labels)
    print(f"### Binding against the budget (shapes, {args.bind_iters} outer steps, 0 unrolled steps)\n")
    print("| eps (/255) | first outer loss | final outer loss | chance | final wrong-label rate | seconds |")
    print("|---|---|---|---|---|---|")
    for eps in (8, 16, 32):
        t = time.perf_counter()
        _, log = train_generator(x, y, theta0, eps / 255, BaitConfig(unroll=0, iters=args.bind_iters))
        s = log["summary"]
        print(f"| {eps} | {s['first_outer_loss']:.2f} | {s['final_outer_loss']:.2f} | {s['chance_loss']:.2f} | "
              f"{s['final_target_rate']:.3f} | {time.perf_counter() - t:.0f} |")

    print(f"\n### The perturbation's parameterisation (shapes, eps 8/255, {args.param_iters} outer steps, 0 unrolled "
          "steps)\n")
    print("The same outer objective (the warm start's cross-entropy towards (y + 1) mod 10) over BAIT's generator and "
          "over a free per-sample perturbation table (one tensor per training image, Adam; it protects only the "
          "images it was optimised on), beside the targeted poison, all against seed 0's warm start; victims fine-tuned "
          "from the prior with seeds 0-2.\n")
    print("| perturbation | parameters | final outer loss | victim acc. pretrained (3 seeds) | seconds |")
    print("|---|---|---|---|---|")
    from backend.robustness.bait.generator import bait_apply
    from backend.robustness.bait.perturb import accuracy, protect_uint8, targeted_poison
    from backend.robustness.bait.victims import train_victim

    prior, test_set = jobs.load_prior(), load("shapes", "test")

    def victims(imgs: np.ndarray) -> list[float]:
        return [round(accuracy(train_victim(imgs, train.labels, "pretrained", prior, s), test_set.images,
                               test_set.labels), 3) for s in range(3)]

    t = time.perf_counter()
    gen, log = train_generator(x, y, theta0, 8 / 255, BaitConfig(unroll=0, iters=args.param_iters))
    imgs = bait_apply(gen, train.images, train.labels, 8)
    sec, accs = time.perf_counter() - t, victims(imgs)
    print(f"| BAIT generator (pattern + U-Net) | {n_params(gen):,} | {log['summary']['final_outer_loss']:.2f} | "
          f"{np.mean(accs):.3f} {accs} | {sec:.0f} |")
    t = time.perf_counter()
    delta, loss = _table_perturbation(x, y, theta0, 8 / 255, args.param_iters)
    imgs = protect_uint8(train.images, delta, 8)
    sec, accs = time.perf_counter() - t, victims(imgs)
    print(f"| per-sample table | {delta.numel():,} | {loss:.2f} | {np.mean(accs):.3f} {accs} | {sec:.0f} |")
    t = time.perf_counter()
    imgs = targeted_poison(prot.crafting, train.images, train.labels, 8)
    sec, accs = time.perf_counter() - t, victims(imgs)
    print(f"| targeted poison (20 PGD steps per image) | - | - | {np.mean(accs):.3f} {accs} | {sec:.0f} |")
    return 0


def _table_perturbation(x, y, theta0: dict, eps: float, iters: int, batch: int = 128, lr: float = 0.1):  # noqa: ANN202
    """BAIT's outer objective without unrolled steps over a free perturbation per image (``eps * tanh(w)``), Adam:
    (perturbations ``[N, 3, H, W]``, mean outer loss of the last 20 steps)."""
    import numpy as np
    import torch

    from backend.robustness.bait.generator import unrolled_outer_loss
    from backend.robustness.bait.nets import SmallCNN

    w = torch.zeros_like(x, requires_grad=True)
    opt = torch.optim.Adam([w], lr=lr)
    sur = SmallCNN()
    sur.load_state_dict(theta0)
    for p in sur.parameters():
        p.requires_grad_(False)
    gen, losses = torch.Generator().manual_seed(0), []
    for _ in range(iters):
        idx = torch.randperm(len(x), generator=gen)[:batch]
        loss, _ = unrolled_outer_loss(sur, theta0, (x[idx] + eps * torch.tanh(w[idx])).clamp(0, 1), y[idx], 0, 0.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return eps * torch.tanh(w.detach()), float(np.mean(losses[-20:]))


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/bait.md

    raise SystemExit(record(main, "bait"))
