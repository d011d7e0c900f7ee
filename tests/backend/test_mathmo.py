"""MATHMO: hypervolume on known fronts, Pareto-UCB's rules, the facility-location frameworks and objectives, the
recorded model spaces and LM transcripts (re-run and compared), the strategies and operators, and the claims
(Pareto-UCB + surrogate against random search, NSGA-II and its ablations over 20 paired instances; the LM operator on
the rounds where its proposal parsed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.errors import InputError
from backend.search.mathmo import bilevel as MM
from backend.search.mathmo import facility as F
from backend.search.mathmo import logs as L
from backend.search.mathmo.pareto import ParetoUCB, hv_gain, hypervolume, hypervolume_2d, nondominated
from backend.stats import paired_ci


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
def test_space_size_and_knob_grids() -> None:
    models = F.all_models()
    assert len(models) == sum(int(np.prod([len(v) for v in k.values()])) for k in F.KNOBS.values()) == 803
    assert len(F.FRAMEWORKS) == 7 and all("margin" in k for k in F.KNOBS.values())


def test_milp_is_the_cost_optimum_of_the_space() -> None:
    inst = F.generate(8, 20, seed=3)
    exact = F.evaluate(inst, "milp", (0.0, 0.0))
    for f, v in F.all_models()[::23]:  # every 23rd model: all frameworks, many knob settings
        assert F.evaluate(inst, f, v)["cost"] >= exact["cost"] - 1e-6
    # the design's cost through the transport LP equals the MILP objective
    _, obj, _ = F._solve_flp(inst, integer=True, gap=0.0)
    assert exact["cost"] == pytest.approx(obj, rel=1e-7)


def test_objectives_are_deterministic_and_the_reserve_trades_cost_for_robustness() -> None:
    inst = F.generate(8, 20, seed=1)
    a, b = F.evaluate(inst, "lp_round", (0.4, 0.35)), F.evaluate(inst, "lp_round", (0.4, 0.35))
    assert a == b
    assert inst.capacity[a["open"]].sum() >= 1.35 * inst.demand.sum() - 1e-9
    assert a["effort"] == pytest.approx(math.log10(1 + a["work"]))
    # one open set, a growing planned reserve: the planned cost rises and every facility's planned load stays
    # within u_j / (1 + r); the scenario cost reads the plan
    open_ = np.ones(inst.m, bool)
    plans = {r: F.transport_plan(inst, open_, r) for r in (0.0, 0.2, 0.5)}
    costs = [plans[r][0] for r in (0.0, 0.2, 0.5)]
    assert costs[0] <= costs[1] + 1e-9 <= costs[2] + 2e-9
    for r, (_, x) in plans.items():
        assert x.sum(1) == pytest.approx(np.ones(inst.n), abs=1e-7)
        assert np.all(inst.demand @ x <= inst.capacity / (1 + r) + 1e-6)
        assert np.isfinite(F.robust_cost(inst, open_, x))
    # a heuristic's margin only adds capacity to the design it found (cached, not solved again)
    lo, hi = F.evaluate(inst, "swap", (8, 0.0)), F.evaluate(inst, "swap", (8, 0.5))
    assert set(lo["open"]) <= set(hi["open"]) and lo["work"] == hi["work"]


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


# ------------------------------------------------------------------------------------------------ the logs
def test_logged_spaces_are_these_instances_and_rerun_equal() -> None:
    """The shipped log holds the generated instances of seeds 0-19, and a sample of its models re-run gives the
    logged objectives (simplex iteration counts, the effort objective, are those of this HiGHS build)."""
    spaces = L.load_spaces()
    assert spaces is not None and sorted(spaces) == list(range(L.SEEDS))
    for seed in range(L.SEEDS):
        assert spaces[seed]["digest"] == L.instance_digest(F.generate(*L.SIZE, seed))
    rng = np.random.default_rng(5)
    for seed in (0, 7):
        inst = F.generate(*L.SIZE, seed)
        rows = L.logged_rows(inst, seed)
        models = F.all_models()
        sample = [i for i in rng.choice(len(models), 10, replace=False) if models[i][0] != "milp"][:8]
        sample.append(int(rng.choice([i for i, m in enumerate(models) if m[0] == "milp"])))
        for i in sample:
            got = F.evaluate(inst, *models[i], seed=seed)
            want = rows[i]
            assert got["open"] == want["open"], models[i]
            for k in ("cost", "robust", "effort"):
                assert got[k] == pytest.approx(want[k], rel=1e-6), (models[i], k)


@pytest.mark.full
def test_full_logged_spaces_rerun_equal() -> None:
    """Every model of every logged instance re-run (about 20 minutes on a shared core)."""
    for seed in range(L.SEEDS):
        inst = F.generate(*L.SIZE, seed)
        rows = L.logged_rows(inst, seed)
        for i, mdl in enumerate(F.all_models()):
            got = F.evaluate(inst, *mdl, seed=seed)
            assert got["open"] == rows[i]["open"]
            for k in ("cost", "robust", "effort"):
                assert got[k] == pytest.approx(rows[i][k], rel=1e-6), (seed, mdl, k)


def test_twenty_rounds_cannot_enumerate_the_front() -> None:
    """The model space is large enough that 20 rounds cannot enumerate the front: the logged instances' fronts have
    several distinct points each (more than ten on average), and no strategy's 20 rounds reach the whole front's
    hypervolume on any of the 20 instances."""
    sizes = []
    for seed in range(L.SEEDS):
        space = MM.logged_space(seed)
        lo, hi, _ = space.grid()
        N = MM.Space.normalise(np.asarray([space.objectives(i) for i in range(len(space.models))]), lo, hi)
        sizes.append(len(np.unique(N[nondominated(N)].round(9), axis=0)))
    assert min(sizes) >= 3 and np.mean(sizes) > 10, sizes
    res = _paired_finals()
    assert max(max(v) for v in res["finals"].values()) < 1.0 - 1e-9


# ------------------------------------------------------------------------------------------------ operators
def test_parse_knobs_and_the_lm_operator_counts_failures() -> None:
    assert MM.parse_knobs("gap=0.01\nmargin=0.2", "milp") == (0.01, 0.2)
    assert MM.parse_knobs("gap: 0.05, margin: 0", "milp") == (0.05, 0.0)
    assert MM.parse_knobs("gap=0.03\nmargin=0.2", "milp") is None  # off the grid
    assert MM.parse_knobs("I would open the cheapest facility.", "milp") is None
    space = MM.logged_space(0)
    replies = iter(["gap=0.01 margin=0.1", "no idea", "gap=0.2 margin=0.35"])
    props = MM.lm_operator(space, "milp", set(), 3, np.random.default_rng(0), generate=lambda _p: next(replies))
    assert props.attempted == 3 and props.parsed == 2 and len(props.models) == 2
    assert all(space.models[i][0] == "milp" for i in props.models)


def test_grid_operator_proposes_unrun_models_of_the_framework() -> None:
    space = MM.logged_space(0)
    done = set(space.of_framework("milp")[:3])
    props = MM.grid_operator(space, "milp", done, 3, np.random.default_rng(1))
    assert len(props.models) == 3 and not set(props.models) & done
    assert all(space.models[i][0] == "milp" for i in props.models)


def test_search_is_deterministic_and_runs_each_model_once() -> None:
    space = MM.logged_space(2)
    for strategy in MM.STRATEGIES:
        a = MM.search(space, strategy, MM.MathmoConfig(rounds=12), seed=2)
        b = MM.search(space, strategy, MM.MathmoConfig(rounds=12), seed=2)
        assert a.chosen == b.chosen and len(set(a.chosen)) == 12, strategy
        assert all(x <= y + 1e-12 for x, y in zip(a.hv, a.hv[1:]))  # the front only grows
        assert len(a.sources) == 12
    a = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=12), seed=2)
    assert set(a.frameworks[:7]) == set(F.FRAMEWORKS)  # unseen frameworks first
    with pytest.raises(InputError, match="Rounds"):
        MM.search(space, "flat", MM.MathmoConfig(rounds=5000))


def test_nsga2_decodes_onto_every_knob_value_and_uses_its_budget() -> None:
    for opts in (o for k in F.KNOBS.values() for o in k.values()):
        assert {v * len(opts) // MM._LEVELS for v in range(MM._LEVELS)} == set(range(len(opts)))
    space = MM.logged_space(3)
    chosen = MM.nsga2_search(space, 20, np.random.default_rng(0))
    assert len(chosen) == len(set(chosen)) == 20
    assert len({space.models[i][0] for i in chosen}) >= 3
    assert MM.random_search(space, 20, np.random.default_rng(0)) != MM.random_search(space, 20,
                                                                                   np.random.default_rng(1))


def test_proposal_gains_match_the_hypervolume_curve() -> None:
    space = MM.logged_space(4)
    res = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=10), seed=4)
    gains = MM.proposal_gains(space, res, seed=4)
    assert np.cumsum([g["gain"] for g in gains]) == pytest.approx(res.hv, abs=1e-9)
    assert all(g["source"] == "operator" and g["random_gain"] >= 0 and g["grid_gain"] >= 0 for g in gains)


# ------------------------------------------------------------------------------------------------ claims
_CACHE: dict[str, object] = {}
ROUNDS, SEEDS = 20, 20


def _paired_finals() -> dict[str, object]:
    """Every strategy on the 20 logged paired instances, 20 rounds, l = 3, the grid operator (computed once)."""
    if "paired" not in _CACHE:
        _CACHE["paired"] = MM.paired(MM.logged_space, SEEDS, cfg=MM.MathmoConfig(rounds=ROUNDS))
    return _CACHE["paired"]  # type: ignore[return-value]


def _gains(res: dict[str, object], names: tuple[str, ...]) -> dict[str, object]:
    finals = res["finals"]
    out: dict[str, object] = {f"mean_hv_{s.replace('-', '_')}": float(np.mean(v)) for s, v in finals.items()}
    for s in names:
        out.update(paired_ci(finals["pareto-ucb"], finals[s]).numbers(f"gain_over_{s.replace('-', '_')}"))
    return out


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature: over 20 paired instances (803 models, 20 rounds, l = 3) Pareto-UCB + surrogate "
    "reaches 0.816 of the space front's hypervolume, random search 0.806 (gain +0.010, 95 % interval [-0.047, "
    "+0.068], not resolved) and NSGA-II 0.836 (gain -0.020 [-0.060, +0.021]). Cause, measured: neither level adds "
    "a resolvable amount at this budget (the upper level +0.012 [-0.031, +0.055] over a random framework, the "
    "kNN surrogate +0.019 [-0.034, +0.073] over a random proposal), while Pareto-UCB spends 7 of the 20 rounds on "
    "one model of each framework before it can exploit; NSGA-II's population covers frameworks and knobs together"))
def test_claim_front_beats_random_search_and_nsga2(record_claim) -> None:
    """Pareto-UCB + surrogate against the two baselines that use no part of MATHMO, on the same model space:
    20 paired instances (m = 10, n = 30), 20 rounds, final hypervolume as a fraction of the space front's."""
    nums = _gains(_paired_finals(), MM.BASELINES)
    record_claim(**nums)
    for s in MM.BASELINES:
        assert nums[f"gain_over_{s.replace('-', '_')}"] > 0, s


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature: over 20 paired instances Pareto-UCB + surrogate (0.816) beats flat search "
    "(0.695; gain +0.121, 95 % interval [+0.040, +0.202]) but is not told apart from random framework choice "
    "(0.805; +0.012 [-0.031, +0.055]) or the search without surrogate (0.797; +0.019 [-0.034, +0.073]), and is "
    "below the strongest baseline, NSGA-II (0.836; -0.020 [-0.060, +0.021]). Cause, measured: with 803 models "
    "and 20 rounds a round's choice among 3 proposals of one framework moves the front little; the paper's gaps "
    "(2.6-10.1 %) are within this sample's noise"))
def test_claim_pareto_ucb_beats_its_ablations(record_claim) -> None:
    """The paper's ablation: random framework choice, flat search and the search without surrogate each find a
    worse front; the bound also holds Pareto-UCB against the stronger of random search and NSGA-II."""
    res = _paired_finals()
    best = max(MM.BASELINES, key=lambda s: float(np.mean(res["finals"][s])))
    nums = _gains(res, ("random-framework", "flat", "no-surrogate", best))
    record_claim(**nums, strongest_baseline=best)
    for s in ("random-framework", "flat", "no-surrogate", best):
        assert nums[f"gain_over_{s.replace('-', '_')}"] > 0, s


def _replay(run: dict[str, object]) -> tuple[MM.Space, MM.SearchResult]:
    """The logged LM search of one seed, with the logged replies in place of the model (prompts must match)."""
    calls = iter(run["calls"])

    def generate(prompt: str) -> str:
        logged_prompt, reply = next(calls)
        assert prompt == logged_prompt
        return reply

    seed = int(run["seed"])
    space = MM.logged_space(seed)
    res = MM.search(space, "pareto-ucb", MM.MathmoConfig(rounds=int(run["rounds"]), proposals=int(run["proposals"]),
                                                      operator="lm"), seed=seed, generate=generate)
    assert res.chosen == run["chosen"]
    return space, res


def _operator_numbers(runs: list[dict[str, object]], prefix: str = "") -> tuple[dict[str, object], list]:
    """Per seed, the mean hypervolume gain of the rounds where the LM's proposal parsed and ran, against a random
    model of the same framework and the grid operator's pick from the same state; fallbacks counted apart."""
    lm_g, rand_g, grid_g, parsed, fallback, attempted, ok, finals, seeds = [], [], [], 0, 0, 0, 0, [], []
    for run in runs:
        space, res = _replay(run)
        gains = MM.proposal_gains(space, res, seed=int(run["seed"]))
        on = [g for g in gains if g["source"] == "operator"]
        parsed += len(on)
        fallback += sum(g["source"] == "fallback" for g in gains)
        attempted += res.proposals_attempted
        ok += res.proposals_parsed
        finals.append(res.final_hv)
        seeds.append(int(run["seed"]))
        if on:
            lm_g.append(np.mean([g["gain"] for g in on]))
            rand_g.append(np.mean([g["random_gain"] for g in on]))
            grid_g.append(np.mean([g["grid_gain"] for g in on]))
    nums: dict[str, object] = {"parse_rate": ok / attempted if attempted else float("nan"), "parsed_rounds": parsed,
                               "fallback_rounds": fallback, "seeds_with_parsed_rounds": len(lm_g),
                               "mean_final_hv_lm_search": float(np.mean(finals))}
    if len(lm_g) >= 2:
        nums.update(paired_ci(lm_g, rand_g).numbers("gain_over_random_model"))
        nums.update(paired_ci(lm_g, grid_g).numbers("gain_over_grid_operator"))
    return {f"{prefix}{k}": v for k, v in nums.items()}, seeds


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature: SmolLM2-135M as the operator (8 logged instances, 10 rounds, l = 1) parses "
    "0.75 of its replies, but only 41 of 80 rounds run its proposal (39 fall back: 20 replies unparsable, 19 "
    "repeating a model already run). On those 41 rounds its model adds +0.004 of the front's hypervolume over a "
    "random model of the same framework (95 % interval [-0.008, +0.016], not resolved) and -0.014 [-0.047, +0.020] "
    "against the grid operator's pick from the same state. Cause, measured: 49 of its 80 replies copy the prompt's "
    "example values (the middle of each knob's grid), 20 do not parse and only 11 choose other settings, so after "
    "a framework's first visit its proposals mostly repeat a model already run"))
def test_claim_lm_operator_on_parsed_rounds(record_claim) -> None:
    """The embedded SmolLM2 as the proposal operator (the logged transcripts replayed): on the rounds where its
    proposal parsed and ran, the hypervolume it added against a random model of the same framework and against the
    grid operator's pick from the same state, paired over seeds; rounds that fell back are counted, not measured."""
    log = L.load_lm_log()
    assert log is not None
    nums, _ = _operator_numbers(log["runs"])
    record_claim(**nums)
    assert nums["gain_over_random_model"] > 0 and nums["gain_over_grid_operator"] > 0


def test_lm_log_replies_are_the_models() -> None:
    """SmolLM2 itself as the operator: the first logged prompt re-generated gives the logged reply (greedy decoding)."""
    from backend.models.lm import load_causal_lm

    log = L.load_lm_log()
    prompt, reply = log["runs"][0]["calls"][-1]
    assert load_causal_lm().generate(prompt, max_new_tokens=log["max_new_tokens"]) == reply


@pytest.mark.full
def test_claim_coder_operator_on_parsed_rounds(record_claim) -> None:
    """The optional Qwen2.5-Coder-1.5B-Instruct (``make models-extra``) as the operator: two logged instances,
    10 rounds of one proposal (20 calls), measured like the SmolLM2 claim; skipped when it is not installed."""
    from backend.models import coder

    if not coder.installed():
        pytest.skip("Qwen2.5-Coder-1.5B-Instruct is not installed (make models-extra)")
    lm = coder.load_coder()
    runs = []
    for seed in (0, 1):
        calls: list[list[str]] = []

        def generate(prompt: str, calls: list = calls) -> str:
            reply = lm.generate(prompt, max_new_tokens=MM.LM_TOKENS)
            calls.append([prompt, reply])
            return reply

        res = MM.search(MM.logged_space(seed), "pareto-ucb", MM.MathmoConfig(rounds=10, proposals=1, operator="lm"),
                        seed=seed, generate=generate)
        runs.append({"seed": seed, "rounds": 10, "proposals": 1, "calls": calls, "chosen": res.chosen})
    assert sum(len(r["calls"]) for r in runs) <= 20
    nums, _ = _operator_numbers(runs)
    record_claim(**nums)
    assert nums["gain_over_random_model"] > 0 and nums["gain_over_grid_operator"] > 0


def test_cli_search_reports_every_strategy_and_the_operator() -> None:
    import contextlib
    import io
    import json

    from backend.__main__ import main as cli

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli(["mathmo", "search", "--rounds", "6", "--json"])
    assert code == 0
    out = json.loads(buf.getvalue())
    assert set(out["strategies"]) == set(MM.STRATEGIES) and out["config"]["operator"] == "grid"
    assert all(len(s["hv"]) == 6 for s in out["strategies"].values())


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
