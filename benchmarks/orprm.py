"""OR-PRM benchmark: what the gates and the process reward model cost per candidate formulation, next to solving it.

For ``--problems`` generated problems (seed 7) x N = 8 candidate formulations from the stochastic modeller (70 %
flawed over all six kinds, half rewritten equivalently): the time to compile and solve each candidate with HiGHS
(``scipy.optimize.milp``, fresh, no memo), then, given that solution, gate 1 (status), gate 2 (the solution on the
stated model, the recorded optimum against the stated objective), gate 3 (the structural judge) and the PRM (the
step features and the logistic head). Ratios are against solving. Then the best-of-8 accuracy of every selector on the
same candidates.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/orprm.py [--problems 40]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    import numpy as np

    from backend.reasoning.orprm import jobs as J
    from backend.reasoning.orprm.formulation import compile_model, solve
    from backend.reasoning.orprm.gates import GATES, Context
    from backend.reasoning.orprm.modeller import draw_kinds, kinds, write
    from backend.reasoning.orprm.prm import step_features
    from backend.reasoning.orprm.problems import generate

    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=40)
    ap.add_argument("--n", type=int, default=8)
    args = ap.parse_args()
    prm = J.load_prm(0)
    rng = np.random.default_rng(7)
    probs = generate(args.problems, seed=7)
    cands = [(p, write(p, k, rng, 0.5)) for p in probs for k in draw_kinds(rng, args.n, 0.7, kinds("all"))]
    t = dict.fromkeys(["solve", *GATES, "prm"], 0.0)
    ints = 0
    for p, w in cands:
        t0 = time.perf_counter()
        m = compile_model(w.form)
        sol = solve(m)
        t["solve"] += time.perf_counter() - t0
        ints += bool(m.integer.any())
        ctx = Context(p.form, w.form, model=m, solution=sol)
        for g in GATES:
            t0 = time.perf_counter()
            GATES.get(g)(ctx)
            t[g] += time.perf_counter() - t0
        t0 = time.perf_counter()
        X, _ = step_features(p.form, w.form, ctx)
        prm.score(X)
        t["prm"] += time.perf_counter() - t0
    m = len(cands)
    print(f"{args.problems} problems x N = {args.n} = {m} candidate formulations ({ints} with integer variables)\n")
    print("| stage | ms per candidate | x solving |")
    print("|---|---|---|")
    names = {"solve": "compile + solve (HiGHS via scipy.optimize.milp)", "prm": "PRM (step features + logistic head)"}
    for k, s in t.items():
        print(f"| {names.get(k, GATES.label(k) + ' (given the solution)')} | {1000 * s / m:.3f} | {s / t['solve']:.3f} |")
    gates = sum(t[g] for g in GATES)
    print(f"\nGates 1-3 together: {1000 * gates / m:.3f} ms per candidate ({gates / t['solve']:.3f} x solving); "
          f"with the PRM {1000 * (gates + t['prm']) / m:.3f} ms ({(gates + t['prm']) / t['solve']:.3f} x).\n")
    res = J.run_bon(J.BonConfig(problems=args.problems, n=args.n, kinds="all", problem_seed=7), prm=prm)
    print("| selector (all six flaw kinds) | BoN@1 | BoN@4 | BoN@8 |")
    print("|---|---|---|---|")
    for k, v in res.curves.items():
        print(f"| {res.labels[k]} | {v[0]:.3f} | {v[3]:.3f} | {v[-1]:.3f} |")
    print(f"\npass@1 {res.pass_at_1:.3f}; PRM step AUROC {res.step_auroc:.3f}; answer AUROC {res.answer_auroc:.3f}")
    return 0


if __name__ == "__main__":
    from common import record

    sys.exit(record(main, "orprm"))
