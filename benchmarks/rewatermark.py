"""Benchmark of the self-re-watermarking page: embedding and decoding time of the defended SRW model and of its
baselines (the undefended twin ``plain``, the attribution page's TinyHiDDeN, invisible-watermark's dwtDctSvd/dwtDct) on
the same held-out images, one process; plus parameters and multiply-adds per image (the SRW family reads an image as
4 x 4 frames of 32 x 32; ``srw (one frame)`` is the same model reading it as one frame), and the cost of one PGD
overwrite.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/rewatermark.py [--repeats 15] [--side 512]

Prints a markdown table of medians (and minima: what the machine does when not contended) and the ratios SRW / plain
and SRW / TinyHiDDeN, with the machine labelled.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from common import machine, median_ms  # noqa: E402  (benchmarks/common.py)


def median_ms_warm(fn, repeats: int) -> tuple[float, float]:
    return median_ms(fn, repeats, warmup=True)


def macs_frame(model) -> tuple[int, int]:
    """Multiply-adds of one encoder and one decoder pass at the working frame (convolutions and linear layers)."""
    import torch
    import torch.nn as nn

    total = {"n": 0}

    def hook(mod, inp, out):
        if isinstance(mod, nn.Conv2d):
            total["n"] += int(out.numel() * mod.kernel_size[0] * mod.kernel_size[1] * mod.in_channels // mod.groups)
        elif isinstance(mod, nn.Linear):
            total["n"] += mod.in_features * mod.out_features

    s = model.cfg.size
    res = []
    for part, call in ((model.encoder, lambda: model.encoder(torch.zeros(1, 3, s, s), torch.zeros(1, model.cfg.n_bits))),
                       (model.decoder, lambda: model.decoder(torch.zeros(1, 3, s, s)))):
        hs = [m.register_forward_hook(hook) for m in part.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        total["n"] = 0
        with torch.no_grad():
            call()
        for h in hs:
            h.remove()
        res.append(total["n"])
    return res[0], res[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--side", type=int, default=512)
    args = ap.parse_args(argv)

    from backend.runtime import setup_torch
    from backend.watermark.datasets import load_photo
    from backend.watermark.rewatermark import core as R
    from backend.watermark.rewatermark import lipschitz as L

    setup_torch(1)
    print(machine())
    img = np.ascontiguousarray(load_photo("astronaut")[: args.side, : args.side])
    from backend.watermark.photo_eval import ONE_FRAME

    names = ("srw", ONE_FRAME, "plain", "tinyhidden", "dwtDctSvd", "dwtDct")
    backends = {m: R.get_model("srw", tiles=1) if m == ONE_FRAME else R.get_model(m) for m in names}
    bits = {m: np.random.default_rng(0).integers(0, 2, backends[m].n_bits).astype(np.uint8) for m in names}
    rows = []
    times = {}
    for m in names:
        b = backends[m]
        xw = b.embed(img, bits[m])
        e_med, e_min = median_ms_warm(lambda b=b, m=m: b.embed(img, bits[m]), args.repeats)
        d_med, d_min = median_ms_warm(lambda b=b, xw=xw: b.decode_batch([xw]), args.repeats)
        times[m] = (e_med, d_med)
        params = macs = "-"
        if isinstance(b, R.SRWBackend):
            params = f"{L.count_parameters(b.model.encoder):,} / {L.count_parameters(b.model.decoder):,}"
            me, md = macs_frame(b.model)
            n = b.tiles ** 2
            macs = f"{n} x ({me / 1e6:.2f}M / {md / 1e6:.2f}M) = {n * me / 1e6:.2f}M / {n * md / 1e6:.2f}M"
        elif m == "tinyhidden":
            from backend.watermark.learned import count_parameters

            params = f"{count_parameters(b.model.encoder):,} / {count_parameters(b.model.decoder):,}"
            macs = "64 px frame; decoder searches 15 scales x 256 phases"
        rows.append((m, e_med, e_min, d_med, d_min, params, macs))
    pgd = {}
    for m in ("srw", "plain"):
        b = R.get_model(m)
        xw = b.embed(img, bits[m])
        t = time.perf_counter()
        R.pgd_overwrite(b, xw, 1 - bits[m], 0.03, 0.0075, 50)
        pgd[m] = 1000 * (time.perf_counter() - t)
    print(f"\n{args.side}x{args.side} astronaut crop, medians of {args.repeats} repeats (1 warm-up)\n")
    print("| model | embed median (ms) | embed min (ms) | decode median (ms) | decode min (ms) | params enc / dec | "
          "MACs per image enc / dec |")
    print("|---|---:|---:|---:|---:|---|---|")
    for m, em, en, dm, dn, p, mc in rows:
        print(f"| {m} | {em:.2f} | {en:.2f} | {dm:.2f} | {dn:.2f} | {p} | {mc} |")
    print("\n| ratio | value |\n|---|---:|")
    for other in (ONE_FRAME, "plain", "tinyhidden", "dwtDctSvd"):
        print(f"| embed: srw / {other} | {times['srw'][0] / times[other][0]:.2f} |")
        print(f"| decode: srw / {other} | {times['srw'][1] / times[other][1]:.2f} |")
    print(f"\nOne PGD overwrite (eps 0.03, 50 iterations) on the {args.side} px image: srw {pgd['srw']:.0f} ms, "
          f"plain {pgd['plain']:.0f} ms.")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/rewatermark.md

    raise SystemExit(record(main, "rewatermark"))
