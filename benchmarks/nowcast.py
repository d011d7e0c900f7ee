"""Benchmark of the nowcasting page: wall time of one full-horizon forecast (32 leads x 15 min = 8 h, 64 x 64 grid)
from the RainPro-8 miniature vs pysteps (LK extrapolation, S-PROG, a 20-member STEPS ensemble, 20-member blended STEPS),
the MSE U-Net, and the same network run one pass per lead (lead-conditioned, as MetNet; timing only, untrained) -- all
in one process on the same held-out synthetic cases; then (``--eval-cases``) the quality of every method pooled over
held-out cases, beside the costs.

    OMP_NUM_THREADS=1 python benchmarks/nowcast.py --cases 3 --repeats 3 --eval-cases 24

Prints markdown tables (medians and ratios, machine labelled) and stores them in benchmarks/results/nowcast.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def machine() -> str:
    import torch

    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"{platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
            f"torch {torch.__version__} with {torch.get_num_threads()} thread(s), "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}{load}")


def time_methods(cases: int, repeats: int) -> dict[str, dict]:
    import torch

    from backend.forecast.nowcast.baselines import NowcastInputs, get_method, network_inputs
    from backend.forecast.nowcast.model import NowcastConfig, NowcastNet, count_macs, count_parameters, lead_maps
    from backend.forecast.nowcast.pipeline import heldout_seeds
    from backend.forecast.nowcast.synthetic import make_case

    torch.manual_seed(0)
    lead_net = NowcastNet(NowcastConfig(kind="lead")).eval()
    names = ["model", "model_per_lead", "unet", "extrapolation", "sprog", "steps", "steps_blended"]
    times: dict[str, list[float]] = {n: [] for n in names}
    costs: dict[str, dict] = {}
    for seed in heldout_seeds(cases, 20500):
        inp = NowcastInputs.from_case(make_case(seed))
        for n in names:
            for _ in range(repeats if n not in ("steps", "steps_blended") else max(1, repeats // 2)):
                if n == "model_per_lead":
                    x = torch.from_numpy(network_inputs(inp, lead_net.cfg))[None]
                    t = time.perf_counter()
                    with torch.no_grad():
                        for lm in lead_maps(32, 64):
                            lead_net(torch.cat([x, lm[None]], 1))
                    times[n].append(time.perf_counter() - t)
                    costs[n] = {"parameters": count_parameters(lead_net), "macs": count_macs(lead_net) * 32,
                                "passes": 32}
                else:
                    t = time.perf_counter()
                    fc = get_method(n)(inp, 32, seed=seed)
                    times[n].append(time.perf_counter() - t)
                    costs[n] = fc.costs
    return {n: {"median_s": statistics.median(v), "runs": len(v), **costs.get(n, {})} for n, v in times.items()}


LABEL = {"model": "RainPro-8 mini (ours), one pass for 32 leads", "model_per_lead": "same net, one pass per lead (x32)",
         "unet": "U-Net (MSE)", "extrapolation": "LK + extrapolation (pysteps)", "sprog": "S-PROG (pysteps)",
         "steps": "STEPS, 20 members (pysteps)", "steps_blended": "Blended STEPS + NWP, 20 members (pysteps)",
         "nwp": "NWP channel", "persistence": "Persistence (pysteps eulerian)"}


def timing_table(res: dict[str, dict]) -> str:
    ref = res["model"]["median_s"]
    lines = ["| method | median wall time (s) | x model | runs | parameters | MACs per forecast |",
             "|---|---:|---:|---:|---:|---:|"]
    for n, r in res.items():
        macs = r.get("macs")
        lines.append(f"| {LABEL.get(n, n)} | {r['median_s']:.3f} | {r['median_s'] / ref:.1f} | {r['runs']} | "
                     f"{r.get('parameters', '-') if r.get('parameters') else '-'} | "
                     f"{f'{macs / 1e9:.2f} G' if macs else '-'} |")
    return "\n".join(lines)


def quality_table(summaries: dict[str, dict], claims: dict) -> str:
    hours = [(0, 4, "0-1 h"), (4, 8, "1-2 h"), (8, 16, "2-4 h"), (16, 32, "4-8 h")]
    head = "| method | " + " | ".join(f"CRPS {h}" for *_, h in hours) + " | " + \
           " | ".join(f"CSI@1 {h}" for *_, h in hours) + " | FSS@1mm,5px 4-8 h | median s |"
    lines = [head, "|---|" + "---:|" * (2 * len(hours) + 2)]
    for n, s in summaries.items():
        crps, csi = np.asarray(s["crps"]), np.asarray(s["csi"]["1.0"])
        fss = np.asarray(s["fss"]["1.0"]["5"])
        lines.append(f"| {LABEL.get(n, n)} | " + " | ".join(f"{crps[a:b].mean():.4f}" for a, b, _ in hours) + " | " +
                     " | ".join(f"{csi[a:b].mean():.3f}" for a, b, _ in hours) +
                     f" | {fss[16:].mean():.3f} | {s['seconds_median']:.2f} |")
    lines.append("")
    lines.append("Claims: " + "; ".join(f"{k}: {'holds' if v['holds'] else 'does NOT hold'}" for k, v in claims.items()))
    return "\n".join(lines)


def hourly_curves(summaries: dict[str, dict], claims: dict) -> str:
    """The curves behind the claims, hour by hour: CRPS and CSI at 1 mm/h per method (mean of the 4 leads of each
    hour), then for each claim where it fails (hours for CRPS, leads for CSI)."""
    n = len(next(iter(summaries.values()))["crps"])
    hrs = [(a, min(a + 4, n)) for a in range(0, n, 4)]
    out = []
    for key, get in (("CRPS (mm/h)", lambda s: np.asarray(s["crps"])),
                     ("CSI at 1 mm/h", lambda s: np.asarray(s["csi"]["1.0"]))):
        out += [f"{key} by hour:", "", "| method | " + " | ".join(f"h{a // 4 + 1}" for a, _ in hrs) + " |",
                "|---|" + "---:|" * len(hrs)]
        for name, s in summaries.items():
            v = get(s)
            out.append(f"| {LABEL.get(name, name)} | " + " | ".join(f"{v[a:b].mean():.4f}" for a, b in hrs) + " |")
        out.append("")
    for k, c in claims.items():
        detail = {kk: vv for kk, vv in c.items() if kk != "holds"}
        out.append(f"- {k}: {'holds' if c['holds'] else 'does NOT hold'}; {detail}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=3, help="cases for the timing table (seeds 20500+)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--eval-cases", type=int, default=0, help="held-out cases for the quality table (seeds 20000+)")
    ap.add_argument("--json-out", default=None, help="also save the evaluation summaries and claims to this JSON file")
    args = ap.parse_args()

    from backend.runtime import setup_torch

    setup_torch()
    out = [f"Machine: {machine()}", ""]
    t0 = time.perf_counter()
    res = time_methods(args.cases, args.repeats)
    out += [f"### Wall time of one 8-hour forecast (64 x 64, 32 leads), {args.cases} cases", "", timing_table(res), ""]
    if args.eval_cases:
        from backend.forecast.nowcast.pipeline import check_claims, evaluate, heldout_seeds

        summ = evaluate(heldout_seeds(args.eval_cases), n_leads=32)
        claims = check_claims(summ)
        out += [f"### Quality pooled over {args.eval_cases} held-out cases (seeds 20000-{20000 + args.eval_cases - 1})",
                "", quality_table(summ, claims), "", hourly_curves(summ, claims), ""]
        if args.json_out:
            import json

            Path(args.json_out).write_text(json.dumps({"summaries": summ, "claims": claims}))
    out.append(f"(benchmark ran {time.perf_counter() - t0:.0f} s)")
    text = "\n".join(out)
    print(text)
    return 0


if __name__ == "__main__":
    from common import record  # benchmarks/common.py: writes benchmarks/results/nowcast.md

    raise SystemExit(record(main, "nowcast"))
