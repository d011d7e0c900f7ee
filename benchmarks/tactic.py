"""Tactic benchmark: one decode-attention step that reads only what it selects against torch's fused
``scaled_dot_product_attention`` over the whole cache, SmolLM2-135M's head shapes (9 query heads, 3 KV heads, d = 64),
one layer, one thread, at 16K-128K tokens; quality of the same step on SmolLM2's real keys at 8K.

1. The sparsity profile of SmolLM2's real attention (Python's reference docs, 8,192 tokens, all 30 layers): the tokens
   the exact top-P set needs (P = 0.9) per (layer, head) at 1K-8K, a power law per (layer, head) extrapolated to
   16K-128K (``longctx``).
2. Quality on the real keys at 8K: the decode step (``decode.decode_step``) at the last 4 positions of every layer
   (prefill = the first 8,176 tokens, clustered once): realised mass, relative output error, tokens read against the
   exact need; with and without the sink rule.
3. Timing at 16K-128K: keys and values Gaussian like layer ``--layer``'s real ones (the real sink at position 0), its
   9 real query heads scaled so their exact needs are the means of 9 equal groups of the 270 sorted extrapolated
   needs at that length (the heads' mean is the model's mean). Full attention and the Tactic step run interleaved in
   one process (same niceness, same thread), medians and minima of ``--repeats`` each; the prefill clustering
   (segmented K-means + the permutation) is timed apart and amortised over ``--generated`` generated tokens.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/tactic.py [--repeats 15] [--generated 1024]

Reference (abstract): up to 5.14x decode-attention speed-up on GPU (FlashInfer kernels, per-head sub-requests).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import record  # noqa: E402

LENGTHS = (16384, 32768, 65536, 131072)
PROFILE_LENGTHS = (1024, 2048, 4096, 8192)


def _load() -> str:
    a = os.getloadavg()
    return f"{a[0]:.1f} / {a[1]:.1f} / {a[2]:.1f}"


def _real_quality(cap, cfg, n_gen: int = 16, n_q: int = 4):  # noqa: ANN001
    """Per layer the decode step at the last ``n_q`` positions: mass, error, tokens read, exact need, bytes."""
    import dataclasses

    import torch

    from backend.tokens.tactic.decode import build_layout, decode_step, full_bytes, full_step
    from backend.tokens.tactic.longctx import oracle_need

    rows = {}
    for name, sinks in (("Tactic (decode step)", cfg.sinks), ("Tactic without the sink rule", 0)):
        c2 = dataclasses.replace(cfg, sinks=sinks)
        mass, err, tok, need, byt = [], [], [], [], []
        for layer in sorted(cap):
            c = cap[layer]
            k, v, q = c["k"], c["v"], c["q"]
            t = k.shape[1]
            n0 = t - n_gen
            lay = build_layout(k, v, n0, c2)
            for pos in range(t - n_q, t):
                qq = q[:, pos]
                r = decode_step(qq, lay, k[:, n0:pos + 1], v[:, n0:pos + 1])
                g = qq.shape[0] // k.shape[0]
                z = torch.einsum("hd,htd->ht", qq, k[:, :pos + 1].repeat_interleave(g, 0)) / 8.0
                total = torch.exp(z - r.shift[:, None]).sum(-1)
                mass.append(r.mass / total)
                ex = full_step(qq, k[:, :pos + 1], v[:, :pos + 1])
                err.append((r.out - ex).norm(dim=-1) / ex.norm(dim=-1))
                tok.append(r.tokens.double())
                need.append(oracle_need(z, cfg.p).double())
                byt.append(r.bytes / full_bytes(k[:, :pos + 1]))
        m, e, tk, nd = (torch.cat(x).double() for x in (mass, err, tok, need))
        rows[name] = {"mass": float(m.mean()), "ok": float((m >= 0.85).double().mean()), "err": float(e.mean()),
                      "tokens": float(tk.mean()), "need": float(nd.mean()), "ratio": float(tk.mean() / nd.mean()),
                      "bytes": statistics.mean(byt), "cases": int(m.numel())}
    return rows


def _timed_case(t: int, cap_layer, targets, cfg, repeats: int, seed: int = 0):  # noqa: ANN001
    """Build the calibrated cache at ``t``, time the prefill layout, then full and Tactic interleaved."""
    import torch

    from backend.tokens.tactic.decode import build_layout, decode_step, full_bytes, full_step
    from backend.tokens.tactic.longctx import calibrate, synthetic_cache

    k, v = synthetic_cache(cap_layer["k"], cap_layer["v"], t, seed)
    q, got = calibrate(cap_layer["q"][:, -1], k, targets, cfg.p)
    n0 = t - 1  # the current token is the one generated token
    t0 = time.perf_counter()
    lay = build_layout(k, v, n0, cfg)
    build_s = time.perf_counter() - t0
    kn, vn = k[:, n0:], v[:, n0:]
    for _ in range(2):
        full_step(q, k, v)
        decode_step(q, lay, kn, vn)
    tf, tt = [], []
    for _ in range(repeats):
        a = time.perf_counter()
        ex = full_step(q, k, v)
        b = time.perf_counter()
        r = decode_step(q, lay, kn, vn)
        c = time.perf_counter()
        tf.append(b - a)
        tt.append(c - b)
    z = torch.einsum("hd,htd->ht", q, k.repeat_interleave(q.shape[0] // k.shape[0], 0)) / 8.0
    mass = r.mass / torch.exp(z - r.shift[:, None]).sum(-1)
    err = (r.out - ex).norm(dim=-1) / ex.norm(dim=-1)
    return {"t": t, "full_ms": 1000 * statistics.median(tf), "tactic_ms": 1000 * statistics.median(tt),
            "full_min": 1000 * min(tf), "tactic_min": 1000 * min(tt),
            "pair": statistics.median(a / b for a, b in zip(tf, tt)),
            "build_s": build_s, "tokens": r.tokens.double(), "need": got.double(), "bytes": r.bytes / full_bytes(k),
            "mass": float(mass.mean()), "ok": float((mass >= 0.85).double().mean()), "err": float(err.mean()),
            "rounds": r.rounds, "load": _load()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--generated", type=int, default=1024, help="tokens generated per prefill (amortisation)")
    ap.add_argument("--layer", type=int, default=15, help="the real layer whose key statistics and queries are used")
    ap.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    args = ap.parse_args()

    import torch

    from backend.models import load
    from backend.tokens.tactic import evaluation as te
    from backend.tokens.tactic.longctx import extrapolate, head_targets, need_profile
    from backend.tokens.tactic.model import capture
    from backend.tokens.tactic.sparse_attention import TacticConfig

    torch.set_num_threads(1)
    cfg = TacticConfig()
    lengths = [int(x) for x in args.lengths.split(",")]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), pid niceness {os.nice(0)} (both arms); "
          f"P = {cfg.p}, clusters of {cfg.cluster_size} (K-means per segment of {cfg.kmeans_segment} tokens, "
          f"{cfg.kmeans_iters} iterations), samples max({cfg.min_samples}, {cfg.sample_frac:.1%}), first "
          f"{cfg.sinks} token(s) always loaded; float32 cache; load average at start {_load()}\n")

    lm = load("smollm2")
    prompt = te.preset_prompt(lm.tokenizer, "pydoc", PROFILE_LENGTHS[-1], 100)
    cap = capture(lm, prompt.ids, list(range(30)))
    prof = need_profile(cap, PROFILE_LENGTHS, 8, cfg.p)  # (30, 9, 4)
    need_t, alpha = extrapolate(prof, PROFILE_LENGTHS, lengths)
    print("## 1. Sparsity of SmolLM2's real attention (tokens the exact top-P set needs, P = 0.9)\n")
    print("Per (layer, head): the median need of the last 8 positions of each prefix of an 8,192-token Python-docs "
          "prompt (270 (layer, head) pairs); beyond 8K a power law per pair fitted in log-log on 1K-8K.\n")
    print("| context | measured or extrapolated | need: median | mean | 90th percentile | share of context (mean) |")
    print("|---|---|---|---|---|---|")
    for i, n in enumerate(PROFILE_LENGTHS):
        x = prof[..., i].flatten()
        print(f"| {n:,} | measured | {x.median():.0f} | {x.mean():.0f} | {x.quantile(0.9):.0f} | "
              f"{x.mean() / n:.2%} |")
    for j, n in enumerate(lengths):
        x = need_t[..., j].flatten()
        print(f"| {n:,} | extrapolated | {x.median():.0f} | {x.mean():.0f} | {x.quantile(0.9):.0f} | "
              f"{x.mean() / n:.2%} |")
    print(f"\nFitted exponent alpha (need ~ T^alpha): median {alpha.median():.2f}, 10th-90th percentile "
          f"{alpha.flatten().quantile(0.1):.2f} to {alpha.flatten().quantile(0.9):.2f}.\n")

    print("## 2. Quality of the decode step on SmolLM2's real keys (8,192 tokens)\n")
    print("All 30 layers, the last 4 positions (the 16 last tokens are the generated ones, the rest is the clustered "
          "prefill); mass = realised attention mass; need = exact top-P tokens.\n")
    print("| step | cases | mean mass | mass >= 0.85 | relative output error | tokens read / head | exact need | "
          "read / need | bytes / full |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in _real_quality(cap, cfg).items():
        print(f"| {name} | {r['cases']} | {r['mass']:.3f} | {r['ok']:.1%} | {r['err']:.3f} | {r['tokens']:.0f} | "
              f"{r['need']:.0f} | {r['ratio']:.2f} | {r['bytes']:.3f} |")

    layer = cap[args.layer]
    print("\n## 3. Decode-attention time: full (fused sdpa) vs Tactic, one layer, one thread\n")
    print(f"Keys and values Gaussian with layer {args.layer}'s real means and covariances per KV head (real sink at "
          f"position 0); the 9 query heads are layer {args.layer}'s real queries at 8K scaled to need the means of 9 "
          "equal groups of the 270 sorted extrapolated needs (so the heads' mean is the model's mean). "
          f"{args.repeats} interleaved pairs of steps (full, then Tactic): the median of the per-pair ratios (the two "
          "steps of a pair run back to back, under the same load: the headline ratio), the medians and the minima "
          "of each arm; prefill = segmented K-means + the physical permutation, "
          f"amortised over {args.generated:,} generated tokens. Bytes at float32.\n")
    check_targets = head_targets(prof[..., -1], 9)
    calib = _timed_case(PROFILE_LENGTHS[-1], layer, check_targets, cfg, 3)
    print(f"Check at 8,192 tokens on the synthetic keys: tokens read / exact need "
          f"{calib['tokens'].mean() / calib['need'].mean():.2f} (real keys: section 2), mass >= 0.85 in "
          f"{calib['ok']:.0%} of the heads, mean mass "
          f"{calib['mass']:.3f}. The time follows the tokens read; the quality columns below are of these Gaussian "
          "keys (the a/x + b estimate falls short on them more often than on SmolLM2's), section 2 is SmolLM2's.\n")
    print("| context | full / Tactic (median of paired ratios) | full ms (median; min) | Tactic ms (median; min) | "
          "full / Tactic (medians) | full / Tactic (minima) | tokens read / head (mean; min-max) | exact need / head (mean) | bytes read / full | mean mass | "
          "mass >= 0.85 | rel. error | rounds | prefill s | full / (Tactic + prefill / generated), medians | "
          "load average |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for j, n in enumerate(lengths):
        targets = head_targets(need_t[..., j], 9)
        r = _timed_case(n, layer, targets, cfg, args.repeats)
        amort = r["full_ms"] / (r["tactic_ms"] + 1000 * r["build_s"] / args.generated)
        print(f"| {n:,} | **{r['pair']:.2f}x** | {r['full_ms']:.2f}; {r['full_min']:.2f} | {r['tactic_ms']:.2f}; "
              f"{r['tactic_min']:.2f} | {r['full_ms'] / r['tactic_ms']:.2f}x | {r['full_min'] / r['tactic_min']:.2f}x | "
              f"{r['tokens'].mean():.0f}; {r['tokens'].min():.0f}-{r['tokens'].max():.0f} | {r['need'].mean():.0f} | "
              f"{r['bytes']:.3f} | {r['mass']:.3f} | {r['ok']:.0%} | {r['err']:.3f} | {r['rounds']} | "
              f"{r['build_s']:.1f} | {amort:.2f}x | {r['load']} |", flush=True)
    print(f"\nLoad average at the end {_load()} (the machine is shared; both arms run interleaved in this process, so "
          "the load falls on both alike).")
    return 0


if __name__ == "__main__":
    raise SystemExit(record(main, "tactic"))
