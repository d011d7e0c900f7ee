"""``python -m backend.train spectralbellman``: the DeepSea(N) evaluation log behind the exploration claim
(``assets/spectralbellman_deepsea_log.json``): episodes to solve for TS + SBM, its two ablations and the tuned grids of
TS with the true features, RLSVI, UCB-VI and RND, N in {10, 20}, seeds 0-9, a 1,000-episode budget (see
:mod:`backend.rl.spectralbellman.explore_log`). Nothing is trained into weights: the agents learn online, so the log
of their runs is what ships; the ci tests re-evaluate it and rerun a few cheap rows, the full tier reruns it all.
``--tier ci`` runs a small grid (N in {6, 10}, 400 episodes) as a quick check; ``--out`` writes elsewhere; ``--only`` restricts to some agent families; ``--resume`` keeps the rows already in the
``--out`` log and runs the rest.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from ..rl.spectralbellman.explore_log import LOG_NAME, TIERS, evaluate, load, make_log

    ap = argparse.ArgumentParser(prog="python -m backend.train spectralbellman")
    ap.add_argument("--tier", choices=sorted(TIERS), default="full")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--only", default=None, help="comma-separated agent families (default: all)")
    ap.add_argument("--resume", action="store_true", help="keep the rows of the log at --out and run the rest")
    args = ap.parse_args(argv)
    out = args.out or Path(__file__).resolve().parents[2] / "assets" / LOG_NAME
    t0 = time.perf_counter()
    only = tuple(args.only.split(",")) if args.only else None
    resume = load(out) if args.resume and out.exists() else None
    log = make_log(args.tier, out=out, only=only, resume=resume)
    ev = evaluate(log)
    for N, per in ev["sizes"].items():
        print(f"DeepSea({N}): strongest reference {per['strongest']}")
        for f, v in per["tuned"].items():
            print(f"  {f:14s} {v:40s} median {per['variants'][v]['median']}")
    print(f"wrote {out} in {time.perf_counter() - t0:.0f} s")
    return 0
