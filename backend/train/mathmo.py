"""``python -m backend.train mathmo [--what spaces|lm|all] [--seeds 20]``: record MATHMO's logs.

MATHMO trains no weights. Its claims replay searches on recorded model spaces, because running every model of the
space (803 models, 88 of them MILPs) on 20 instances takes minutes:

* ``spaces``: every model on the paired instances ``facility.generate(10, 30, seed)`` -> ``assets/mathmo_spaces.json.gz``.
* ``lm``: the searches with the embedded SmolLM2 as the proposal operator on the first ``--lm-seeds`` logged instances
  (``--lm-rounds`` rounds, ``l = --lm-proposals``), every prompt and reply -> ``assets/mathmo_lm_log.json``.
"""

from __future__ import annotations

import argparse
import json
import time


def record_spaces(seeds: int) -> None:
    from backend.search.mathmo import bilevel as MM
    from backend.search.mathmo import facility as F
    from backend.search.mathmo import logs as L

    entries = []
    for seed in range(seeds):
        clock = time.perf_counter()
        inst = F.generate(*L.SIZE, seed)
        space = MM.Space(inst, seed)
        rows = [space.evaluate(i) for i in range(len(space.models))]
        entries.append({"seed": seed, "digest": L.instance_digest(inst), "rows": [L.encode(r, inst.m) for r in rows]})
        print(f"seed {seed}: {len(rows)} models in {time.perf_counter() - clock:.1f} s", flush=True)
    L.write_spaces(entries)


def record_lm(seeds: int, rounds: int, proposals: int) -> None:
    from backend.models.lm import load_causal_lm
    from backend.search.mathmo import bilevel as MM
    from backend.search.mathmo import logs as L

    lm = load_causal_lm()
    runs = []
    for seed in range(seeds):
        clock = time.perf_counter()
        calls: list[list[str]] = []

        def generate(prompt: str, calls: list[list[str]] = calls) -> str:
            reply = lm.generate(prompt, max_new_tokens=MM.LM_TOKENS)
            calls.append([prompt, reply])
            return reply

        space = MM.logged_space(seed)
        res = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=rounds, proposals=proposals, operator="lm"),
                        seed=seed, generate=generate)
        runs.append({"seed": seed, "rounds": rounds, "proposals": proposals, "calls": calls, "chosen": res.chosen})
        print(f"lm seed {seed}: {len(calls)} calls, parse rate {res.parse_rate:.2f}, "
              f"{time.perf_counter() - clock:.1f} s", flush=True)
    L.LM_FILE.write_text(json.dumps({"model": "SmolLM2-135M-Instruct (embedded)", "max_new_tokens": MM.LM_TOKENS,
                                     "runs": runs}, indent=0) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backend.train mathmo", description=__doc__.splitlines()[0])
    ap.add_argument("--what", choices=("spaces", "lm", "all"), default="all")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--lm-seeds", type=int, default=10)
    ap.add_argument("--lm-rounds", type=int, default=10)
    ap.add_argument("--lm-proposals", type=int, default=1)
    args = ap.parse_args(argv)
    if args.what in ("spaces", "all"):
        record_spaces(args.seeds)
    if args.what in ("lm", "all"):
        record_lm(args.lm_seeds, args.lm_rounds, args.lm_proposals)
    return 0
