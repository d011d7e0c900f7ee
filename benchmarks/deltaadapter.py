"""delta-Adapter vs full fine-tuning and LoRA per backbone: trainable parameters, training time and test MSE on the
synthetic preset's post-shift data (same adaptation split, same early stopping), plus the training-free baselines.

Run: ``OMP_NUM_THREADS=1 python benchmarks/deltaadapter.py [--repeats 2] [--backbones dlinear,mlp,patchtst]``
(about 10 minutes on one loaded core with the patch transformer). Times are medians over the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TRAINED = ("ada_xy", "ada_x", "ada_y", "finetune", "lora")


def main() -> int:
    import torch

    from backend.forecast.deltaadapter import data as dt
    from backend.forecast.deltaadapter import pipeline as pl
    from backend.forecast.deltaadapter.backbones import load_shipped
    from backend.forecast.deltaadapter.interface import METHODS

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--backbones", default="dlinear,mlp,patchtst")
    args = ap.parse_args()
    torch.set_num_threads(1)
    s = dt.synthetic()
    w = dt.make_windows(s)
    print(f"synthetic preset: adapt {len(w.x['adapt'])} / val {len(w.x['val'])} / test {len(w.x['test'])} windows, "
          f"input {w.lookback} x {s.d}, horizon {w.horizon}; delta 0.1 additive; {args.repeats} repeats\n")
    for kind in args.backbones.split(","):
        model, _ = load_shipped("synthetic", kind)
        runs = [pl.adapt(s, model, 0.1, "add", windows=w, seed=r) for r in range(args.repeats)]
        bp = runs[0].backbone_params
        print(f"### {kind} ({bp:,} parameters)\n")
        print("| method | trainable params | share of backbone | train s (median) | epochs | test MSE (median) "
              "| vs frozen |")
        print("|---|---|---|---|---|---|---|")
        frozen = statistics.median(r.rows["frozen"]["mse"] for r in runs)
        for m in METHODS:
            rows = [r.rows[m] for r in runs]
            mse = statistics.median(x["mse"] for x in rows)
            secs = statistics.median(x["train_s"] for x in rows)
            ep = rows[0].get("epochs", "-")
            print(f"| {METHODS.label(m)} | {rows[0]['params']:,} | {100 * rows[0]['params'] / bp:.1f} % | "
                  f"{secs:.2f} | {ep} | {mse:.4f} | {100 * (1 - mse / frozen):+.1f} % |")
        ft = statistics.median(r.rows["finetune"]["train_s"] for r in runs)
        ad = statistics.median(r.rows["ada_xy"]["train_s"] for r in runs)
        print(f"\nAda-X+Y training time / full fine-tuning: {ad / ft:.2f}x\n")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/deltaadapter.md

    raise SystemExit(record(main, "deltaadapter"))
