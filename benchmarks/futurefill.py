"""FutureFill benchmark: decode wall time and counted multiply-adds of naive, epoched, continuous and prompted online
convolution at L = 2^12 .. 2^16, all on the same model, prompt and noise in one process; median of repeats.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/futurefill.py [--repeats 3] [--max-len 65536] [--filters 8]

Prints a markdown table (per length: seconds and MACs per method, naive/continuous ratios, max deviation from naive)
and the fitted log-log slopes. Reference: the paper reports 2.1x (52 s vs 112 s) for 16,384 tokens on a
515M-parameter STU model, where each step also pays for MLPs and many layers; here the step is the convolution alone
in numpy, so Python overhead per step counts much more at small L.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--min-len", type=int, default=1 << 12)
    ap.add_argument("--max-len", type=int, default=1 << 16)
    ap.add_argument("--filters", type=int, default=8)
    ap.add_argument("--direct-below", type=int, default=16, help="second continuous run with small carries done "
                                                                  "directly (0 to skip)")
    args = ap.parse_args()

    import numpy as np

    from backend.generation.futurefill.futurefill import METHODS
    from backend.generation.futurefill.jobs import BenchConfig, run_bench
    from backend.runtime import package_versions

    lengths = []
    n = args.min_len
    while n <= args.max_len:
        lengths.append(n)
        n *= 2
    res = run_bench(BenchConfig(tuple(lengths), tuple(METHODS), n_filters=args.filters, kind="random",
                                repeats=args.repeats))
    extra = None
    if args.direct_below:
        extra = run_bench(BenchConfig(tuple(lengths), ("continuous",), n_filters=args.filters, kind="random",
                                      repeats=args.repeats, direct_below=args.direct_below))
    rows = {(r["method"], r["length"]): r for r in res.rows}
    if extra:
        rows.update({("continuous*", r["length"]): r for r in extra.rows})

    print(f"Machine: {platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load average {os.getloadavg()[0]:.1f}, "
          f"numpy {np.__version__}, "
          f"python {platform.python_version()}; {args.filters} random filters, prompt 16, median of {args.repeats}.")
    print(f"Versions: {package_versions(('numpy', 'scipy'))}\n")
    meths = METHODS.names() + (["continuous*"] if extra else [])
    head = "| L | " + " | ".join(f"{m} s" for m in meths) + " | naive/continuous time | naive/continuous* time | " \
        "naive MACs | continuous MACs | MAC ratio | max abs err vs naive |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for L in lengths:
        secs = [rows[(m, L)]["seconds"] for m in meths]
        nv, ct = rows[("naive", L)], rows[("continuous", L)]
        cs = rows.get(("continuous*", L))
        err = max(float(rows[(m, L)]["max_err"]) for m in METHODS.names(kind="ours"))
        print(f"| {L} | " + " | ".join(f"{s:.3f}" for s in secs)
              + f" | {nv['seconds'] / ct['seconds']:.2f}x | "
              + (f"{nv['seconds'] / cs['seconds']:.2f}x" if cs else "-")
              + f" | {nv['macs']:.3e} | {ct['macs']:.3e} | {nv['macs'] / ct['macs']:.1f}x | {err:.1e} |")
    print()
    print("| method | time slope | MAC slope | MAC ratio per doubling |")
    print("|---|---|---|---|")
    slopes = dict(res.slopes)
    ratios = dict(res.mac_ratios)
    if extra:
        slopes["continuous*"] = extra.slopes["continuous"]
        ratios["continuous*"] = extra.mac_ratios["continuous"]
    for m, s in slopes.items():
        print(f"| {m} | {s['seconds']:.2f} | {s['macs']:.2f} | {', '.join(f'{v:.2f}' for v in ratios.get(m, []))} |")
    if extra:
        print(f"\ncontinuous* = continuous with carries of size <= {args.direct_below} done directly (F m^2 MACs) "
              "instead of by FFT: same outputs, less per-call overhead.")
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/futurefill.md

    raise SystemExit(record(main, "futurefill"))
