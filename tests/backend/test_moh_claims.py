"""MoH claims on the shipped per-seed logs: ``assets/moh_programs.json`` (``python -m backend.train moh``: every
seed's evolved heuristics and their gaps on the evaluation instances) and ``assets/moh_lm.json`` (``python -m
backend.train moh --part lm``: the LM meta operator against the edit operator from the same parents).

The ci tier re-evaluates the logged heuristics of the first ``CHECK_SEEDS`` training seeds on the evaluation
instances (seeds 10,000 and above, never trained on) against the logged LKH-3 lengths and checks that they reproduce
the log, then computes the paired statistics over every logged seed; the full tier re-evaluates every seed. The
searches themselves take about 4 minutes of one core (the training script); the quick search at small sizes is in
``tests/backend/test_moh.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.heuristics.moh import references as R
from backend.heuristics.moh import shipped
from backend.heuristics.moh.language import GRAMMARS, parse, to_text
from backend.heuristics.moh.moh import EVAL_SEED
from backend.heuristics.moh.problems import construct_tour, instances, pack_online
from backend.stats import paired_ci

CHECK_SEEDS = 2
TOP = 1000


def _gaps(problem: str, sizes: tuple[int, ...], check_seeds: int | None, refs: tuple[str, ...] = (),
          variants: tuple[str, ...] | None = None) -> dict:
    """Per variant: per seed, the logged mean gap (%) at each size (``[size][seed]``); the heuristics of the first
    ``check_seeds`` seeds (None: all) are run again and must reproduce the logged per-instance gaps. Per reference:
    the mean gap at each size, recomputed."""
    rec = shipped.load()["problems"][problem]
    ev = rec["evaluation"]
    g = GRAMMARS[problem]
    variants = variants or tuple(rec["runs"][0]["variants"])
    count = ev["count"]
    out: dict = {v: [] for v in variants}
    out.update({r: [] for r in refs})
    for n in sizes:
        insts = instances(problem, n, count, EVAL_SEED)
        ref = np.array(ev["ref_values"][str(n)][:count])
        done: dict[str, np.ndarray] = {}
        for v in variants:
            per_seed = []
            for k, run in enumerate(rec["runs"]):
                key = f"{v}_s{run['seed']}"
                logged = np.array(ev["per_instance"][key][str(n)][:count])
                if check_seeds is None or k < check_seeds:
                    prog = parse(run["variants"][v]["heuristic"], g)
                    text = to_text(prog)
                    if text not in done:
                        if problem == "bpp_online":
                            vals = np.array([pack_online(prog, i)[0] for i in insts], dtype=float)
                        else:
                            vals = np.array([i.length(construct_tour(prog, i)) for i in insts])
                        done[text] = 100 * (vals / ref - 1)
                    np.testing.assert_allclose(done[text], logged, rtol=1e-9, atol=1e-9)
                per_seed.append(float(logged.mean()))
            out[v].append(per_seed)
        for r in refs:
            if problem == "bpp_online":
                vals = np.array([R.BIN_REFERENCES.get(r)(i) for i in insts], dtype=float)
            else:
                vals = np.array([i.length(R.TSP_REFERENCES.get(r)(i)) for i in insts])
            out[r].append(float(np.mean(100 * (vals / ref - 1))))
    return out


OTHERS = ("single_size", "no_meta", "tuned_constant")


def _headline(check_seeds: int | None, record_claim) -> None:  # noqa: ANN001
    gaps = _gaps("tsp_construct", (TOP,), check_seeds)
    m = np.array(gaps["moh"][0])
    nums: dict = {"moh_mean": float(m.mean()), "seeds": int(len(m)), "size": TOP}
    diffs = {}
    for v in OTHERS:
        b = np.array(gaps[v][0])
        ci = paired_ci(m, b)
        diffs[v] = ci.mean
        nums.update(ci.numbers(f"moh_minus_{v}"))
        nums[f"{v}_mean"] = float(b.mean())
        nums[f"wins_vs_{v}"] = int((m < b).sum())
    record_claim(**nums)
    assert all(d < 0 for d in diffs.values()), diffs


_HEADLINE = ("MoH mean gap at 1,000 cities 20.46 % vs single-size 18.73 %, no meta level 19.25 %, tuned constant "
             "16.05 % (20 paired seeds, 2 unseen instances): MoH minus single-size +1.73 pp [-0.74, +4.21], 6 of 20 "
             "seeds won; minus no meta +1.21 pp [-0.84, +3.26], 6 of 20; minus tuned constant +4.41 pp [+2.85, +5.96], "
             "1 of 20. Cause: at this CPU budget MoH splits its task evaluations over 12 optimiser programs x 3 "
             "sizes, so each optimiser run has 16 evaluations per size and barely leaves its seed, and the meta level "
             "ranks programs by noisy 2-instance gaps; MoH is already behind on the training sizes (mean weighted "
             "training gap 13.38 % vs 11.02 % for the one long run of the fixed loop and 10.15 % for the line search "
             "over c, which searches the one-parameter family most evolved rules fall into)")


@pytest.mark.xfail(strict=True, reason=_HEADLINE)
def test_claim_size_weighted_beats_ablations_and_tuned_constant(record_claim) -> None:
    _headline(CHECK_SEEDS, record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=_HEADLINE)
def test_claim_size_weighted_beats_ablations_and_tuned_constant_full(record_claim) -> None:
    _headline(None, record_claim)


def _vs_farthest_insertion(check_seeds: int | None, record_claim) -> None:  # noqa: ANN001
    sizes = (200, 500, 1000)
    gaps = _gaps("tsp_construct", sizes, check_seeds, refs=("farthest_insertion",), variants=("moh",))
    moh = [float(np.mean(x)) for x in gaps["moh"]]
    fi = gaps["farthest_insertion"]
    record_claim(moh_mean_by_size=[round(x, 4) for x in moh], farthest_insertion_by_size=[round(x, 4) for x in fi],
                 sizes=list(sizes), seeds=len(gaps["moh"][0]))
    assert all(a < b for a, b in zip(moh, fi))


_FI = ("MoH mean gap 18.15 / 21.87 / 20.46 % vs farthest insertion 9.26 / 8.93 / 11.78 % at 200 / 500 / 1,000 "
       "cities (20 seeds, 2 instances each): the evolved rules are greedy next-city choices (most are d_cur - c * "
       "avg_rest or d_cur - c * d_start variants, the nearest neighbour pulled towards the remaining cities or the "
       "start), which never revise an earlier choice, while farthest insertion keeps the whole tour cheap at every "
       "step")


@pytest.mark.xfail(strict=True, reason=_FI)
def test_claim_evolved_construction_beats_farthest_insertion(record_claim) -> None:
    _vs_farthest_insertion(CHECK_SEEDS, record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=_FI)
def test_claim_evolved_construction_beats_farthest_insertion_full(record_claim) -> None:
    _vs_farthest_insertion(None, record_claim)


_BPP = ("MoH excess over L1 4.81 % vs best fit 4.36 % at 1,000 items (means of 3 seeds, 2 instances): seeds 1 and 2 "
        "evolved best fit itself (rest - item); seed 0 kept fill * rest (5.73 %), which its training sizes (20-100 "
        "items, L1 of 9-45 bins, where one bin is a 2-10 % step) could not tell from best fit")


@pytest.mark.xfail(strict=True, reason=_BPP)
def test_claim_online_bin_packing_excess(record_claim) -> None:
    sizes = (200, 500, 1000)
    gaps = _gaps("bpp_online", sizes, None, refs=("best_fit", "first_fit"))
    moh = [float(np.mean(x)) for x in gaps["moh"]]
    record_claim(moh_excess_by_size=[round(x, 4) for x in moh], best_fit_by_size=[round(x, 4) for x in
                                                                                   gaps["best_fit"]],
                 first_fit_by_size=[round(x, 4) for x in gaps["first_fit"]], sizes=list(sizes))
    assert moh[-1] <= gaps["best_fit"][-1]


# ------------------------------------------------------------------------------------------------ LM meta operator
def _lm_claim(rescore_seeds: int, record_claim) -> None:  # noqa: ANN001
    """Re-checks the LM log (the parents are the shipped MoH run's two best programs; every logged reply parses to
    the logged program or fails; the logged gaps of the first ``rescore_seeds`` seeds are re-scored), then records
    the valid new programs per call and the paired difference of the best gap reached (LM minus edits)."""
    from backend.heuristics.moh.lm_meta import parents_of
    from backend.heuristics.moh.meta_operators import first_program
    from backend.heuristics.moh.moh import MoHConfig, _utility, make_tasks, weights_for
    from backend.heuristics.moh.operators import GPOperator
    from backend.heuristics.moh.optimiser import parse_optimiser

    lm = shipped.load_lm()
    runs = {r["seed"]: r for r in shipped.load()["problems"]["tsp_construct"]["runs"]}
    base = MoHConfig(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in lm["config"].items()})
    for k, s in enumerate(lm["seeds"]):
        if s["seed"] in runs:
            want = [t for t, _ in parents_of(runs[s["seed"]]["variants"]["moh"]["history"])]
            assert [p["program"] for p in s["parents"]] == want
        for reply, prop in zip(s["lm"]["replies"], s["lm"]["proposals"]):
            try:
                got = parse_optimiser(first_program(reply) or reply[:300]).text()
            except Exception:  # noqa: BLE001 - a failed reply
                got = None
            assert prop["program"] is None or prop["program"] == got
        if k < rescore_seeds:
            cfg = MoHConfig(**{**base.__dict__, "seed": s["seed"]})
            tasks, w = make_tasks(cfg.problem, cfg.sizes, cfg.train_instances, cfg.seed), weights_for(cfg)
            for j, prop in enumerate(s["lm"]["proposals"]):
                if prop["gap"] is not None:
                    u = _utility(parse_optimiser(prop["program"]), tasks, w, cfg, GPOperator(), (cfg.seed, 1000 + j))
                    assert abs(-u["utility"] - prop["gap"]) < 1e-9
    s = shipped.lm_summary(lm)
    lm_b = np.array([r["LM best gap (%)"] for r in s["rows"]])
    ed_b = np.array([r["edits best gap (%)"] for r in s["rows"]])
    ci = paired_ci(lm_b, ed_b)
    record_claim(calls=s["calls"], lm_valid_new_per_call=s["lm_valid_new_per_call"],
                 edits_valid_new_per_call=s["edits_valid_new_per_call"], lm_better=int((lm_b < ed_b).sum()),
                 lm_new_structures=int(sum(r["LM new structures"] for r in s["rows"])),
                 **ci.numbers("lm_minus_edits_best_gap"))
    assert s["lm_valid_new_per_call"] >= 0.5 and ci.mean < 0


LM_REASON = ("SmolLM2-135M-Instruct wrote 0.925 valid new optimiser programs per call (37 of 40 calls over 20 "
             "seeds; the edit operator 1.0), 27 of them with a loop structure new to both parents, but the best "
             "training gap they reached is not lower than the hand-written edits': LM minus edits +0.58 pp "
             "[-0.88, +2.04] paired over 20 seeds, LM lower in 6. Cause: the 135M model mostly copies a parent's "
             "stages with a few components changed or drops stages (often to one tournament>crossover>plus "
             "stage), and the training gaps it is shown do not steer it: its programs beat parent A's re-scored gap "
             "in 9 of 20 seeds, the edits' in 12")


@pytest.mark.xfail(strict=True, reason=LM_REASON)
def test_claim_lm_meta_operator_adds_programs(record_claim) -> None:
    _lm_claim(1, record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=LM_REASON)
def test_claim_lm_meta_operator_adds_programs_full(record_claim) -> None:
    _lm_claim(len(shipped.load_lm()["seeds"]), record_claim)


@pytest.mark.full
def test_full_scale_evolution_reproduces_the_shipped_seed() -> None:
    """The training command's search of seed 0 (every variant, default configuration) gives the shipped programs
    and optimisers."""
    from backend.heuristics.moh.moh import MoHConfig, evolve

    run = shipped.load()["problems"]["tsp_construct"]["runs"][0]
    got = evolve(MoHConfig(seed=run["seed"]))
    for v, r in got.items():
        assert r.heuristic == run["variants"][v]["heuristic"], v
        assert r.optimiser == run["variants"][v]["optimiser"], v
        assert r.task_evals == run["variants"][v]["task_evals"], v


@pytest.mark.full
def test_coder_meta_operator_calls() -> None:
    """The optional Qwen2.5-Coder-1.5B-Instruct (``make models-extra``) as the meta operator on two seeds, two calls
    each (at most 20 calls in a run); skipped when it is not installed. Bookkeeping only: every reply parsed or
    counted as failed."""
    from backend.heuristics.moh.lm_meta import measure_seed
    from backend.heuristics.moh.moh import MoHConfig, evolve
    from backend.models import coder

    if not coder.installed():
        pytest.skip("Qwen2.5-Coder-1.5B-Instruct is not installed (make models-extra)")
    model = coder.load_coder()
    for seed in (0, 1):
        cfg = MoHConfig(seed=seed)
        got = measure_seed(cfg, evolve(cfg, ("moh",))["moh"].history, 2,
                           lambda p: model.generate(p, max_new_tokens=100))
        assert got["lm"]["calls"] == 2 and got["lm"]["parsed"] <= 2
