"""``python -m backend.train depo``: every GRPO run of the DEPO page from the shipped tiny reasoner, their logs
(``assets/depo_runs.json``) and two fp16 policies (``assets/depo_policy_depo.safetensors``,
``assets/depo_policy_full.safetensors``: DEPO and full-data GRPO, seed 0).

Pool: ``TrainConfig().pool`` problems of the ``grammar`` split (5-8 operations, generator seed 11); held-out: 150
problems of the same split with seed 777; the starting policy's held-out accuracy is measured once. Offline pass
rates: G = 4 rollouts of the starting policy for every pool prompt, once (DEPO is charged the tokens of the rollouts of
its greedy-DPP candidates only, the prompts it rates; the page's difficulty histograms read the whole pool's rates).
Runs: full-data GRPO, DEPO and random 20 % with seeds 0-2; top-PageRank, k-center and DEPO without pruning with seed
0 (``--seeds`` and ``--strategies`` narrow it; ``--steps`` shortens every run). The log records the sha256 of the
tiny reasoner it started from. ``--out-dir`` writes elsewhere (a smoke test: ``--steps 2 --seeds 1 --out-dir DIR``).
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

SINGLE_SEED = ("pagerank", "kcenter", "depo_noprune")
CHECK_PROBLEMS = 30


def policy_accuracy(reasoner, heldout, cfg) -> float:  # noqa: ANN001
    """Held-out accuracy of a policy on the first ``CHECK_PROBLEMS`` held-out problems (the tests' re-evaluation)."""
    from ..reasoning.depo.loop import evaluate

    return round(float(evaluate(reasoner, heldout[:CHECK_PROBLEMS], cfg).mean()), 6)


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from .. import weights
    from ..models.tinyreasoner import WEIGHTS, load_tinyreasoner
    from ..reasoning.depo.jobs import RUNS_FILE, embed, pool_problems
    from ..reasoning.depo.loop import STRATEGIES, TrainConfig, _rewards, evaluate, train
    from ..reasoning.depo.select import context, greedy_logdet, subset_size
    from ..reasoning.sampling import SamplingConfig, sample
    from ..runtime import ASSETS, sha256_file, write_json_atomic

    ap = argparse.ArgumentParser(prog="python -m backend.train depo")
    ap.add_argument("--steps", type=int, default=TrainConfig().steps)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--strategies", default="all")
    ap.add_argument("--out-dir", type=Path, default=None)
    ap.add_argument("--part", type=Path, default=None, help="write this process's runs to PART (see --merge)")
    ap.add_argument("--merge", type=Path, nargs="+", default=None,
                    help="join the run files of processes started with --strategies ... --part into the log")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.out_dir)

    t_all = time.perf_counter()
    base = load_tinyreasoner()
    sha = sha256_file(WEIGHTS)
    cfg0 = TrainConfig(steps=args.steps)
    pool, held = pool_problems(cfg0)
    x = embed([p.question for p in pool])
    ctx = context(x, None, 10, cfg0.candidates, cfg0.mu, cfg0.sigma)
    start = evaluate(base, held, cfg0)
    print(f"start accuracy {start.mean():.4f} ({time.perf_counter() - t_all:.0f}s)", flush=True)
    sc = SamplingConfig(n=cfg0.group, max_new_tokens=cfg0.max_new_tokens, temperature=cfg0.temperature)
    k = subset_size(len(pool), cfg0.share)
    cands = greedy_logdet(ctx.x, ctx.weights, min(len(pool), int(round(cfg0.candidates * k))), ctx.h)[0]
    pool_rates, pool_tokens = np.full(len(pool), np.nan), np.zeros(len(pool), dtype=int)
    names = list(STRATEGIES) if args.strategies == "all" else STRATEGIES.keys_of(args.strategies)
    if not {"depo", "depo_noprune"} & set(names):
        cands = cands[:0]
    for a in range(0, len(cands), 48):
        part = cands[a:a + 48]
        s = sample(base, [pool[int(i)].question for i in part], sc, seed=7_000_003)
        pool_rates[part] = _rewards(s, [pool[int(i)].answer for i in part]).mean(1)
        pool_tokens[part] = s.lengths.sum(1).numpy()
    print(f"candidates' pass rates mean {np.nanmean(pool_rates):.3f}, {int(pool_tokens.sum()):,} tokens", flush=True)
    names = list(STRATEGIES) if args.strategies == "all" else STRATEGIES.keys_of(args.strategies)
    order = [n for n in ("full", "depo", "random", "pagerank", "kcenter", "depo_noprune") if n in names]
    runs, policies = [], {}
    out_dir = args.out_dir or ASSETS
    out = args.part or ((args.out_dir / RUNS_FILE.name) if args.out_dir else RUNS_FILE)
    command = "python -m backend.train depo" + (f" --steps {args.steps}" if args.steps != TrainConfig().steps else "")
    data = {"command": command, "model_sha256": sha, "train_config": asdict(cfg0),
            "start_accuracy": float(start.mean()), "start_per_problem": [float(a) for a in start],
            "rated": [int(i) for i in cands], "rated_pass_rates": [float(pool_rates[i]) for i in cands],
            "rated_tokens": [int(pool_tokens[i]) for i in cands], "runs": runs, "seconds": 0.0}
    for name in order:
        for seed in range(1 if name in SINGLE_SEED else args.seeds):
            cfg = replace(cfg0, strategy=name, seed=seed)
            lm = copy.deepcopy(base)
            log = train(lm, pool, ctx, cfg, held, start=start, rates=(pool_rates, pool_tokens))
            runs.append(log.to_dict())
            print(f"{name} seed {seed}: final {log.curve[-1]['accuracy']:.4f}, tokens {log.tokens:,}, "
                  f"pruned {log.pruned_rollouts}, {log.seconds:.0f}s", flush=True)
            if seed == 0 and name in ("depo", "full"):
                policies[name] = lm
            data["seconds"] = round(time.perf_counter() - t_all, 1)
            write_json_atomic(out, json.loads(json.dumps(data)), indent=None)  # each finished run is kept
    for name, lm in policies.items():
        state = {k: v.detach().to(torch.float16) for k, v in lm.model.state_dict().items() if k != "lm_head.weight"}
        check = copy.deepcopy(base)
        check.model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
        acc = policy_accuracy(check, held, cfg0)
        path = out_dir / f"depo_policy_{name}.safetensors"
        weights.save(path, state, config=base.meta["config"], command=command,
                     data_seeds={"pool": [cfg0.pool_seed], "heldout": [cfg0.heldout_seed], "seed": 0},
                     quality={"check_accuracy": acc, "check_problems": CHECK_PROBLEMS,
                              "final_accuracy": next(r["curve"][-1]["accuracy"] for r in runs
                                                     if r["config"]["strategy"] == name and r["config"]["seed"] == 0),
                              "start_sha256": sha},
                     extra={"strategy": name})
        data.setdefault("policies", {})[name] = {"file": path.name, "check_accuracy": acc}
        print(f"wrote {path} (check accuracy {acc:.4f})", flush=True)
    data["seconds"] = round(time.perf_counter() - t_all, 1)
    write_json_atomic(out, json.loads(json.dumps(data)), indent=None)
    print(f"wrote {out} ({data['seconds']:.0f}s)", flush=True)
    return 0


def merge(parts: list[Path], out_dir: Path | None) -> int:
    """Join run files written with ``--part`` (same pool, held-out set and starting policy) into the run log."""
    from ..reasoning.depo.jobs import RUNS_FILE
    from ..runtime import write_json_atomic

    data = [json.loads(Path(p).read_text()) for p in parts]
    head = dict(data[0])
    for d in data[1:]:
        if d["model_sha256"] != head["model_sha256"] or d["start_accuracy"] != head["start_accuracy"]:
            raise SystemExit("the parts start from different policies or held-out sets")
        head["runs"] = head["runs"] + d["runs"]
        if d.get("rated") and not head.get("rated"):
            for key in ("rated", "rated_pass_rates", "rated_tokens"):
                head[key] = d[key]
        head.setdefault("policies", {}).update(d.get("policies", {}))
        head["seconds"] = head["seconds"] + d["seconds"]
    head["command"] = head["command"].split(" --strategies")[0]
    out = (out_dir / RUNS_FILE.name) if out_dir else RUNS_FILE
    write_json_atomic(out, head, indent=None)
    print(f"wrote {out}: {len(head['runs'])} runs, {head['seconds']:.0f} s of training in all")
    return 0
