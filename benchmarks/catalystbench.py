"""CatalystBench benchmark: what each fine-tuning method costs and scores, beside the baselines outside the LM.

Costs: the estimate made before training (from two timed steps: seconds per training row with the LM head and with a
decoupled head, and per generated answer) against the measured training and evaluation seconds of every method x
seed, recorded in the shipped files' metadata by ``python -m backend.train catalystbench``; the trainable
parameters; a fresh timing of the per-row costs on this machine; gradient boosting's fitting time and the regex
extractor's rate. Quality: the per-task test metrics (mean and standard deviation over the 5 seeds), recorded.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/catalystbench.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from backend.data.catalystbench import fit as F
    from backend.data.catalystbench import jobs as J
    from backend.data.catalystbench.baselines import regex_extract
    from backend.data.catalystbench.bench import build_bench
    from backend.models.lm import load_causal_lm

    res = J.run_benchmark(J.BenchmarkConfig())
    print("## Cost per method x seed (one CPU thread; training on cached states of the 29 frozen layers)\n")
    print("| method | trainable parameters | estimated train + eval s / seed | measured train + eval s / seed (mean) | "
          + " | ".join(f"train s seed {s}" for s in J.SEEDS) + " | eval s / seed (mean) |")
    print("|---|---|---|---|" + "---|" * len(J.SEEDS) + "---|")
    for m in J.METHOD_NAMES:
        q, extra = J.recorded(m)
        both = np.mean([q[f"seed{s}_train_s"] + q[f"seed{s}_eval_s"] for s in J.SEEDS])
        print(f"| {res.labels[m]} | {int(q['trainable_parameters']):,} | {q['estimate_s_per_seed']:.0f} | {both:.0f} | "
              + " | ".join(f"{q[f'seed{s}_train_s']:.0f}" for s in J.SEEDS)
              + f" | {np.mean([q[f'seed{s}_eval_s'] for s in J.SEEDS]):.0f} |")
    _, extra = J.recorded(J.METHOD_NAMES[0])
    c = extra["cost_per_row_s"]
    print(f"\nAt training: {c['text'] * 1e3:.1f} ms per text row, {c['head'] * 1e3:.1f} ms per head row, "
          f"{c['generation'] * 1e3:.0f} ms per generated answer (timed under a heavier load than the runs, hence the "
          f"high estimates); caching the backbone states of every row took {extra['cache_s']:.0f} s (0 = reused "
          "from the user cache folder).")
    print("\n## Test metrics, mean (sd) over 5 seeds (R^2 / accuracy / exact match)\n")
    names = [t["name"] for t in res.tasks] + ["average"]
    print("| method | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for m, per in res.scores.items():
        print(f"| {res.labels[m]} | " + " | ".join(f"{np.mean(per[n]):.3f} ({np.std(per[n], ddof=1):.3f})"
                                                    for n in names) + " |")
    print("\n## Paired comparisons over seeds (95 % t interval)\n")
    print("| comparison | task | gain | interval |")
    print("|---|---|---|---|")
    for cmp in res.comparisons:
        print(f"| {cmp['ours']} - {cmp['other']} | {cmp['task']} | {cmp['gain']:+.3f} | "
              f"[{cmp['gain_ci'][0]:+.3f}, {cmp['gain_ci'][1]:+.3f}] |")
    print("\n## Per-row costs measured now\n")
    lm = load_causal_lm()
    bench = build_bench()
    rows = [i for i, r in enumerate(bench.rows) if r.split == "train"][:16]
    t = time.perf_counter()
    enc_sub = F.encode_and_cache(lm.model, lm.tokenizer, [bench.rows[i] for i in rows], disk=False)
    cache_row = (time.perf_counter() - t) / len(rows)
    enc = F.Encoded([[]] * len(bench.rows), [0] * len(bench.rows), [None] * len(bench.rows))
    for k, i in enumerate(rows):
        enc.ids[i], enc.prompt_len[i], enc.states[i] = enc_sub.ids[k], enc_sub.prompt_len[k], enc_sub.states[k]
    top = F.TopLayer(lm.model)
    s_text, s_head = F.time_probe(top, enc, rows, F.FitSettings())
    print(f"backbone states (29 frozen layers): {cache_row * 1e3:.0f} ms per row, so about "
          f"{cache_row * len(bench.rows):.0f} s for all {len(bench.rows)} rows; training: {s_text * 1e3:.1f} ms per "
          f"text row, {s_head * 1e3:.1f} ms per head row")
    sents = [r.prompt for r in bench.rows if r.task == "melting_extract"]
    t = time.perf_counter()
    for _ in range(20):
        for s in sents:
            regex_extract(s)
    print(f"regex extractor: {20 * len(sents) / (time.perf_counter() - t):,.0f} sentences / s; gradient boosting "
          f"(fit + predict, 5 tasks): {res.costs['gb']['train_s']:.2f} s per seed")
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "catalystbench"))
