"""MoH claims on the shipped programs (``assets/moh_programs.json``, made by ``python -m backend.train moh``).

The ci tier re-runs the shipped evolved heuristics on the first two evaluation instances per size (seeds 10,000 and
above, never trained on) against the shipped LKH-3 lengths and checks that they reproduce the shipped numbers; the
full tier uses every evaluation instance. The evolutions themselves take about 16 minutes on one core (the training
script); the quick evolution at small sizes is in ``tests/backend/test_moh.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.heuristics.moh import references as R
from backend.heuristics.moh import shipped
from backend.heuristics.moh.language import GRAMMARS, parse
from backend.heuristics.moh.moh import EVAL_SEED
from backend.heuristics.moh.problems import construct_tour, instances, pack_online

VARIANTS = ("moh", "single_size", "no_meta")


def _gaps(problem: str, sizes: tuple[int, ...], count: int, refs: tuple[str, ...] = ()) -> dict:
    """Per variant: per seed, the mean gap (%) at each size; per reference: the mean gap at each size. Checks the
    recomputed per-instance gaps against the shipped record."""
    rec = shipped.load()["problems"][problem]
    ev = rec["evaluation"]
    g = GRAMMARS[problem]
    out: dict = {v: [] for v in VARIANTS}
    out.update({r: [] for r in refs})
    for n in sizes:
        insts = instances(problem, n, count, EVAL_SEED)
        ref = np.array(ev["ref_values"][str(n)][:count])
        for v in VARIANTS:
            per_seed = []
            for run in rec["runs"]:
                key = f"{v}_s{run['seed']}"
                prog = parse(run["variants"][v]["heuristic"], g)
                if problem == "bpp_online":
                    vals = np.array([pack_online(prog, i)[0] for i in insts], dtype=float)
                else:
                    vals = np.array([i.length(construct_tour(prog, i)) for i in insts])
                gap = 100 * (vals / ref - 1)
                np.testing.assert_allclose(gap, ev["per_instance"][key][str(n)][:count], rtol=1e-9, atol=1e-9)
                per_seed.append(float(gap.mean()))
            out[v].append(per_seed)
        for r in refs:
            if problem == "bpp_online":
                vals = np.array([R.BIN_REFERENCES.get(r)(i) for i in insts], dtype=float)
            else:
                vals = np.array([i.length(R.TSP_REFERENCES.get(r)(i)) for i in insts])
            out[r].append(float(np.mean(100 * (vals / ref - 1))))
    return out


def _weighted_vs_ablations(count: int, record_claim) -> None:  # noqa: ANN001
    top = 1000
    gaps = _gaps("tsp_construct", (top,), count)
    m, s, nm = (np.array(gaps[v][0]) for v in VARIANTS)
    record_claim(moh_mean=float(m.mean()), single_size_mean=float(s.mean()), no_meta_mean=float(nm.mean()),
                 moh_per_seed=m.round(4).tolist(), single_size_per_seed=s.round(4).tolist(),
                 no_meta_per_seed=nm.round(4).tolist(), wins_vs_single_size=int((m < s).sum()),
                 wins_vs_no_meta=int((m < nm).sum()), seeds=len(m), size=top, instances=count)
    assert m.mean() < s.mean() and m.mean() < nm.mean()


def test_claim_size_weighted_beats_ablations_at_largest_size(record_claim) -> None:
    _weighted_vs_ablations(2, record_claim)


@pytest.mark.full
def test_claim_size_weighted_beats_ablations_at_largest_size_full(record_claim) -> None:
    _weighted_vs_ablations(shipped.load()["problems"]["tsp_construct"]["evaluation"]["count"], record_claim)


def _vs_farthest_insertion(count: int, record_claim) -> None:  # noqa: ANN001
    sizes = (200, 500, 1000)
    gaps = _gaps("tsp_construct", sizes, count, refs=("farthest_insertion",))
    moh = [float(np.mean(x)) for x in gaps["moh"]]
    fi = gaps["farthest_insertion"]
    record_claim(moh_mean_by_size=[round(x, 4) for x in moh], farthest_insertion_by_size=[round(x, 4) for x in fi],
                 sizes=list(sizes), instances=count)
    assert all(a < b for a, b in zip(moh, fi))


_FI_CAUSE = ("the evolved rules are greedy next-city choices (seven of eight seeds: d_cur - c * avg_rest, the "
             "nearest neighbour pulled towards the remaining cities), which never revise an earlier choice, while "
             "farthest insertion keeps the whole tour cheap at every step")


@pytest.mark.xfail(strict=True, reason="MoH mean gap 14.43 / 17.26 / 16.72 % vs farthest insertion 9.26 / 8.93 / "
                   "11.78 % at 200 / 500 / 1,000 cities (2 instances each): " + _FI_CAUSE)
def test_claim_evolved_construction_beats_farthest_insertion(record_claim) -> None:
    _vs_farthest_insertion(2, record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason="MoH mean gap 14.78 / 16.78 / 17.12 % vs farthest insertion 9.06 / 9.67 / "
                   "11.29 % at 200 / 500 / 1,000 cities (4 instances each): " + _FI_CAUSE)
def test_claim_evolved_construction_beats_farthest_insertion_full(record_claim) -> None:
    _vs_farthest_insertion(shipped.load()["problems"]["tsp_construct"]["evaluation"]["count"], record_claim)


@pytest.mark.xfail(strict=True, reason="MoH excess over L1 5.19 % vs best fit 4.36 % at 1,000 items (means of 3 seeds, "
                   "2 instances): at the training sizes (20-100 items, L1 of 9-45 bins) one bin is a 2-10 % step, so "
                   "many rules tie with best fit and the search keeps the first it met; seed 2's MoH rule is best fit "
                   "itself (rest - item), seeds 0 and 1 evolved rules that favour early bins (idx * item; a ratio with log(idx))")
def test_claim_online_bin_packing_excess(record_claim) -> None:
    sizes = (200, 500, 1000)
    gaps = _gaps("bpp_online", sizes, 2, refs=("best_fit", "first_fit"))
    moh = [float(np.mean(x)) for x in gaps["moh"]]
    record_claim(moh_excess_by_size=[round(x, 4) for x in moh], best_fit_by_size=[round(x, 4) for x in
                                                                                   gaps["best_fit"]],
                 first_fit_by_size=[round(x, 4) for x in gaps["first_fit"]], sizes=list(sizes))
    assert moh[-1] <= gaps["best_fit"][-1]


@pytest.mark.full
def test_claim_lm_operator_parse_rate(record_claim) -> None:
    """SmolLM2-135M-Instruct as the heuristic operator: eight calls (about 10 s each on a loaded core), every reply
    parsed into the language or counted as a failed proposal; the parse rate and the new programs are recorded."""
    from backend.heuristics.moh.operators import smollm2_operator

    op = smollm2_operator(max_calls=8, max_new_tokens=40)
    got = _eight_proposals(op, record_claim)
    assert op.calls == 8 and op.parsed + op.failed == 8 and sum(x is not None for x in got) == op.parsed


def _eight_proposals(op, record_claim) -> list:  # noqa: ANN001 - an LMOperator and the fixture
    """Eight proposals from two fixed parents; records the operator's counts and the programs new to both."""
    from backend.heuristics.moh.language import to_text
    from backend.heuristics.moh.operators import OPS

    rng = np.random.default_rng(0)
    g = GRAMMARS["tsp_construct"]
    parents = [parse("(add d_cur (mul -0.7 avg_rest))", g), parse("(sub d_cur nn_rest)", g)]
    got = [op.propose(OPS[i % len(OPS)], parents[::1 if i % 2 else -1], g, rng) for i in range(8)]
    novel = {to_text(x) for x in got if x is not None} - {to_text(p) for p in parents}
    record_claim(calls=op.calls, parsed=op.parsed, failed=op.failed, parse_rate=op.parse_rate, novel=len(novel))
    return got


@pytest.mark.full
def test_full_scale_evolution_reproduces_the_shipped_seed() -> None:
    """The training command's evolution of seed 0 (every variant, default configuration; about 90 s) gives the
    shipped programs and optimisers."""
    from backend.heuristics.moh.moh import MoHConfig, evolve

    run = shipped.load()["problems"]["tsp_construct"]["runs"][0]
    got = evolve(MoHConfig(seed=run["seed"]))
    for v, r in got.items():
        assert r.heuristic == run["variants"][v]["heuristic"], v
        assert r.optimiser == run["variants"][v]["optimiser"], v
        assert r.task_evals == run["variants"][v]["task_evals"], v


@pytest.mark.full
def test_claim_coder_operator_parse_rate(record_claim) -> None:
    """The optional Qwen2.5-Coder-1.5B-Instruct (``make models-extra``) as the heuristic operator, capped at eight
    calls; skipped when it is not installed."""
    from backend.heuristics.moh.operators import lm_operator
    from backend.models import coder

    if not coder.installed():
        pytest.skip("Qwen2.5-Coder-1.5B-Instruct is not installed (make models-extra)")
    op = lm_operator(coder.load_coder(), max_calls=8, max_new_tokens=48)
    _eight_proposals(op, record_claim)
    assert op.calls == 8 and op.parsed + op.failed == 8
