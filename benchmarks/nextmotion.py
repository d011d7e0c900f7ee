"""What Happens Next? benchmark: sampling time per K for every forecaster, next to its quality, on the same images.

For ``--scenes`` held-out ambiguous scenes (a ball on a peak, a square on its corner; seeds from 200,000) and the
shipped models of training seed 0: the DINOv2 encoding time per image (shared by every method), then for K in
(1, 4, 8, 16) each method's time to produce K futures of one image (median over scenes; the flow model's 12 Euler
steps batched over K, the retrieval's simulation of the K retrieved scenes), and at K = 8 its best-of-8 MSE and
coverage on the same scenes.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/nextmotion.py [--scenes 12]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    import numpy as np
    import torch

    from backend.forecast.nextmotion import jobs as J
    from backend.forecast.nextmotion.data import ambiguous_test
    from backend.forecast.nextmotion.methods import METHODS
    from backend.forecast.nextmotion.metrics import best_of_k, coverage

    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=12)
    args = ap.parse_args()
    torch.set_num_threads(1)
    scenes = ambiguous_test(args.scenes, start=210_000)
    models = J.load_models(0)
    J.image_tokens([scenes[0].image])  # load the encoder once
    t = time.perf_counter()
    tokens = [J.image_tokens([s.image]) for s in scenes]
    enc_ms = (time.perf_counter() - t) / len(scenes) * 1e3
    print(f"{len(scenes)} held-out ambiguous scenes; DINOv2 ViT-S/14 at 112 px: {enc_ms:.1f} ms per image "
          "(shared by every method)\n")
    ks = (1, 4, 8, 16)
    print("| method | parameters | " + " | ".join(f"ms for K = {k}" for k in ks) + " | best-of-8 MSE (px²) | coverage |")
    print("|---|---|" + "---|" * len(ks) + "---|---|")
    for name in METHODS.names():
        fn = METHODS.get(name)
        times = []
        for k in ks:
            per = []
            for tok in tokens:
                t = time.perf_counter()
                fn(models, tok, k, 0)
                per.append(time.perf_counter() - t)
            times.append(float(np.median(per)) * 1e3)
        samp = [fn(models, tok, 8, 0)[0] for tok in tokens]
        bok = np.mean([best_of_k(s, sc.future) for s, sc in zip(samp, scenes, strict=True)])
        cov = np.mean([coverage(s, sc.futures) for s, sc in zip(samp, scenes, strict=True)])
        print(f"| {METHODS.label(name)} | {models.parameters(fn):,} | " + " | ".join(f"{x:.1f}" for x in times)
              + f" | {bok:.2f} | {cov:.2f} |")
    return 0


if __name__ == "__main__":
    from benchmarks.common import record

    raise SystemExit(record(main, "nextmotion"))
