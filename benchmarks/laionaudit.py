"""LAION audit benchmark: the caption audit's counting rate up to a million captions, through the CLI, and what the
bias-transfer miniature costs.

Audit: generated web-style captions (``backend.data.laionaudit.webcorpus``) written to a Parquet file, audited with
``python -m backend laionaudit audit --captions FILE --json`` in a fresh process (reading, n-gram discovery on the
first 200,000 captions, one counting pass over every term, the tables); the table gives the wall time of the whole
command and the rate of the counting stage as the audit reports it. The sizes 10^4 and 10^5 are also run in-process
to separate the import cost. Transfer: the training seconds per encoder recorded in the shipped files' metadata, the
encoders' parameters, and the time to evaluate every setting (``laionaudit transfer``).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/laionaudit.py [--max 1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from backend import weights
    from backend.data.laionaudit import jobs as J
    from backend.data.laionaudit import transfer as T
    from backend.data.laionaudit.captions import to_parquet
    from backend.data.laionaudit.webcorpus import generate

    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=1_000_000)
    args = ap.parse_args()
    sizes = [n for n in (10_000, 100_000, 1_000_000) if n <= args.max]
    print("## Caption audit through the CLI (Parquet upload, all concept lists + corpus n-grams, VADER lexicon)\n")
    print("| captions | file MB | command wall s | counting s | captions / s (counting) | captions / s (whole command) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"captions_{n}.parquet"
            path.write_bytes(to_parquet(generate(n, seed=11)))
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "backend", "laionaudit", "audit", "--captions", str(path),
                                  "--json"], cwd=ROOT, capture_output=True, text=True, timeout=3600)
            wall = time.perf_counter() - t
            if out.returncode != 0:
                print(out.stdout[-2000:], out.stderr[-2000:])
                return 1
            costs = json.loads(out.stdout)["costs"]
            print(f"| {n:,} | {path.stat().st_size / 2**20:.1f} | {wall:.1f} | {costs['count_s']:.1f} | "
                  f"{costs['captions_per_s']:,.0f} | {n / wall:,.0f} |")
    print("\n## In-process audit (imports already done)\n")
    print("| captions | total s | captions / s |")
    print("|---|---|---|")
    J.run_audit(J.AuditConfig(size=1000))
    for n in (s for s in sizes if s <= 100_000):
        t = time.perf_counter()
        J.run_audit(J.AuditConfig(source="webstyle", size=n))
        s = time.perf_counter() - t
        print(f"| {n:,} | {s:.2f} | {n / s:,.0f} |")
    print("\n## Bias transfer: training cost per encoder (from the shipped files) and evaluation\n")
    print("| setting | seeds | train s per seed (mean) | mean R^2 |")
    print("|---|---|---|---|")
    for name, s in T.SETTINGS.items():
        q = weights.read_meta(s.path).quality
        secs = [v for k, v in q.items() if k.endswith("_seconds")]
        print(f"| {name} | {len(secs)} | {sum(secs) / len(secs):.1f} | {q['r2_mean']:.3f} |")
    t = time.perf_counter()
    res = J.run_transfer(J.TransferConfig())
    print(f"\nEvaluating all {len(res.settings)} settings x {len(T.SEEDS)} seeds (load, 600 evaluation figures, "
          f"caption counts, fits): {time.perf_counter() - t:.1f} s; {res.costs['parameters_per_encoder']:,} "
          "parameters per encoder.")
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "laionaudit"))
