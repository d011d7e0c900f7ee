"""MATHMO: hypervolume on known fronts, Pareto-UCB's rules, the facility-location frameworks and objectives, the
proposal operators, and the claim (Pareto-UCB's final hypervolume against random framework, flat search and no
surrogate over paired seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.errors import InputError
from backend.search.mathmo import bilevel as MM
from backend.search.mathmo import facility as F
from backend.search.mathmo.pareto import ParetoUCB, hv_gain, hypervolume, hypervolume_2d, nondominated


# ------------------------------------------------------------------------------------------------ Pareto tools
def test_hypervolume_on_known_fronts() -> None:
    ref = np.array([2.0, 2.0])
    assert hypervolume(np.array([[0.0, 1.0], [1.0, 0.0]]), ref) == pytest.approx(3.0, abs=1e-12)
    assert hypervolume(np.array([[1.0, 1.0]]), ref) == pytest.approx(1.0, abs=1e-12)
    # a dominated point and a point outside the reference box add nothing
    assert hypervolume(np.array([[0.0, 1.0], [1.0, 0.0], [1.5, 1.5], [3.0, -1.0]]), ref) == pytest.approx(3.0)
    assert hypervolume(np.array([[0.5, 0.5, 0.5]]), np.ones(3)) == pytest.approx(0.125, abs=1e-12)
    # three-point staircase: 1*3 + 1*2 + 1*1 = 6 with ref (3, 3) and points (0,2), (1,1), (2,0)
    assert hypervolume(np.array([[0.0, 2.0], [1.0, 1.0], [2.0, 0.0]]), np.array([3.0, 3.0])) == pytest.approx(6.0)


def test_pymoo_hypervolume_equals_the_exact_sweep() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        P = rng.uniform(0, 1, (int(rng.integers(1, 15)), 2))
        assert hypervolume(P, np.array([1.1, 1.1])) == pytest.approx(hypervolume_2d(P, np.array([1.1, 1.1])),
                                                                      abs=1e-12)


def test_nondominated_and_gain() -> None:
    P = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [0.6, 0.6], [1.0, 1.0]])
    assert nondominated(P).tolist() == [0, 1, 2]
    ref = np.array([1.1, 1.1])
    assert hv_gain(P[:2], P[2], ref) == pytest.approx(0.25, abs=1e-12)
    assert hv_gain(P[:3], P[3], ref) == pytest.approx(0.0, abs=1e-12)


def test_pareto_ucb_plays_unseen_first_then_non_dominated() -> None:
    ucb = ParetoUCB(["a", "b", "c"], 2)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(3):
        arm = ucb.choose(rng)
        assert arm not in seen
        seen.add(arm)
        ucb.update(arm, {"a": [0.9, 0.9], "b": [0.1, 0.1], "c": [0.95, 0.2]}[arm])
    for _ in range(3):
        ucb.update("a", [0.9, 0.9])
        ucb.update("b", [0.1, 0.1])
        ucb.update("c", [0.95, 0.2])
    picks = {ucb.choose(np.random.default_rng(s)) for s in range(30)}
    assert "b" not in picks and picks <= {"a", "c"}  # b's UCB vector is dominated by a's


# ------------------------------------------------------------------------------------------------ the problem
def test_milp_is_the_cost_optimum_of_the_grid() -> None:
    inst = F.generate(8, 20, seed=3)
    exact = F.evaluate(inst, "milp", (0.0, 0.0))
    for f, v in F.all_models():
        assert F.evaluate(inst, f, v)["cost"] >= exact["cost"] - 1e-6
    # the design's cost through the transport LP equals the MILP objective
    _, obj, _ = F._solve_flp(inst, integer=True, gap=0.0)
    assert exact["cost"] == pytest.approx(obj, rel=1e-7)


def test_objectives_are_deterministic_and_margin_raises_capacity() -> None:
    inst = F.generate(8, 20, seed=1)
    a, b = F.evaluate(inst, "lp_round", (0.4, 0.35)), F.evaluate(inst, "lp_round", (0.4, 0.35))
    assert a == b
    assert inst.capacity[a["open"]].sum() >= 1.35 * inst.demand.sum() - 1e-9
    assert a["effort"] == pytest.approx(math.log10(1 + a["work"]))


def test_instance_csv_validation() -> None:
    ok = b"kind,x,y,amount,fixed_cost\nfacility,0,0,10,1\nfacility,1,1,10,1\ncustomer,0.5,0.5,3,\ncustomer,0,1,2,\n"
    assert F.read_facility_csv(ok).m == 2
    with pytest.raises(InputError, match="positive"):
        F.read_facility_csv(ok.replace(b",3,", b",0,"))
    with pytest.raises(InputError, match="kind must be"):
        F.read_facility_csv(ok.replace(b"customer,0,1", b"depot,0,1"))
    with pytest.raises(InputError, match="below the total demand"):
        F.read_facility_csv(ok.replace(b",10,1\n", b",1,1\n"))
    with pytest.raises(InputError, match="lacks the column"):
        F.read_facility_csv(b"kind,x,y\nfacility,0,0\n")


# ------------------------------------------------------------------------------------------------ operators
def test_parse_knobs_and_the_lm_operator_counts_failures() -> None:
    assert MM.parse_knobs("gap=0.01\nmargin=0.2", "milp") == (0.01, 0.2)
    assert MM.parse_knobs("gap: 0.05, margin: 0", "milp") == (0.05, 0.0)
    assert MM.parse_knobs("gap=0.03\nmargin=0.2", "milp") is None  # off the grid
    assert MM.parse_knobs("I would open the cheapest facility.", "milp") is None
    space = MM.Space(F.generate(6, 12, 0))
    replies = iter(["gap=0.01 margin=0.1", "no idea", "gap=0.2 margin=0.35"])
    props = MM.lm_operator(space, "milp", set(), 3, np.random.default_rng(0), generate=lambda _p: next(replies))
    assert props.attempted == 3 and props.parsed == 2 and len(props.models) == 2
    assert all(space.models[i][0] == "milp" for i in props.models)


def test_grid_operator_proposes_unrun_models_of_the_framework() -> None:
    space = MM.Space(F.generate(6, 12, 0))
    done = set(space.of_framework("milp")[:3])
    props = MM.grid_operator(space, "milp", done, 3, np.random.default_rng(1))
    assert len(props.models) == 3 and not set(props.models) & done
    assert all(space.models[i][0] == "milp" for i in props.models)


def test_search_is_deterministic_and_runs_each_model_once() -> None:
    space = MM.Space(F.generate(6, 15, 2), 2)
    a = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=12), seed=2)
    b = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=12), seed=2)
    assert a.chosen == b.chosen and len(set(a.chosen)) == 12
    assert a.frameworks[:5] and set(a.frameworks[:5]) == set(F.FRAMEWORKS)  # unseen frameworks first
    assert all(x <= y + 1e-12 for x, y in zip(a.hv, a.hv[1:]))  # the front only grows
    with pytest.raises(InputError, match="Rounds"):
        MM.search(space, "flat", MM.MathmoConfig(rounds=500))


# ------------------------------------------------------------------------------------------------ claims
def test_claim_pareto_ucb_beats_random_and_flat(record_claim) -> None:
    """20 paired seeds, m = 10 facilities, n = 30 customers, 20 rounds, l = 3, the grid operator."""
    res = MM.paired(lambda s: F.generate(10, 30, s), 20, cfg=MM.MathmoConfig(rounds=20))
    summ = res["summary"]
    record_claim(**{f"mean_hv_{s.replace('-', '_')}": v["mean"] for s, v in summ.items()},
                 **{f"relative_{s.replace('-', '_')}": v["relative_to_first"] for s, v in summ.items()
                    if s != "pareto-ucb"})
    assert summ["pareto-ucb"]["mean"] >= summ["random-framework"]["mean"]
    assert summ["pareto-ucb"]["mean"] >= summ["flat"]["mean"]


@pytest.mark.full
def test_claim_lm_operator_parse_rate(record_claim) -> None:
    """The embedded SmolLM2 as the proposal operator: its parse rate and the search it drives (one seed, 10 rounds)."""
    from backend.models.lm import load_causal_lm

    lm = load_causal_lm()
    space = MM.Space(F.generate(10, 30, 0), 0)
    cfg = MM.MathmoConfig(rounds=10, operator="lm")
    res = MM.search(space, "pareto-ucb", cfg, seed=0, generate=lambda p: lm.generate(p, max_new_tokens=40))
    grid = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=10), seed=0)
    record_claim(parse_rate=res.parse_rate, failed_rounds=res.fallbacks, final_hv_lm=res.final_hv,
                 final_hv_grid=grid.final_hv)
    assert 0.0 <= res.parse_rate <= 1.0 and len(res.chosen) == 10


def test_cli_search_reports_every_strategy_and_the_operator() -> None:
    import contextlib
    import io
    import json

    from backend.__main__ import main as cli

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli(["mathmo", "search", "--facilities", "5", "--customers", "10", "--rounds", "6", "--json"])
    assert code == 0
    out = json.loads(buf.getvalue())
    assert set(out["strategies"]) == set(MM.STRATEGIES) and out["config"]["operator"] == "grid"
    assert all(len(s["hv"]) == 6 for s in out["strategies"].values())


@pytest.mark.full
def test_claim_coder_operator_parse_rate(record_claim) -> None:
    """The optional Qwen2.5-Coder-1.5B-Instruct (``make models-extra``) as the proposal operator: one seed, 8 rounds
    of 2 proposals (16 calls at most); skipped when it is not installed."""
    from backend.models import coder

    if not coder.installed():
        pytest.skip("Qwen2.5-Coder-1.5B-Instruct is not installed (make models-extra)")
    lm = coder.load_coder()
    space = MM.Space(F.generate(10, 30, 0), 0)
    res = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=8, proposals=2, operator="lm"), seed=0,
                    generate=lambda p: lm.generate(p, max_new_tokens=40))
    record_claim(parse_rate=res.parse_rate, failed_rounds=res.fallbacks, final_hv=res.final_hv)
    assert res.proposals_attempted == 16 and len(res.chosen) == 8


def test_solves_in_a_process_that_loaded_or_tools() -> None:
    """The app serves MoH (OR-Tools, which carries its own HiGHS) and MATHMO from one process: the facility models
    must solve after OR-Tools is loaded."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("from ortools.constraint_solver import pywrapcp; from backend.search.mathmo import facility as F; "
            "r = F.evaluate(F.generate(6, 12, 0), 'milp', (0.0, 0.0)); print(r['cost'] > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr[-500:]
