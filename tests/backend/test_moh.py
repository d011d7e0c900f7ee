"""MoH invariants: the typed language and its step-limited interpreter, the runners against the references they must
equal, the readers' refusals, the operators (a reply that does not parse is a failed proposal), the optimiser
programs, and the two-level search (deterministic, equal budgets, the best optimiser becomes the meta-optimiser)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.errors import InputError
from backend.heuristics.moh import problems as P
from backend.heuristics.moh import references as R
from backend.heuristics.moh.language import GRAMMARS, Interpreter, StepLimit, parse, render, to_text
from backend.heuristics.moh.meta_operators import LMMetaOperator, first_program
from backend.heuristics.moh.moh import MoHConfig, evolve
from backend.heuristics.moh.operators import GPOperator, LMOperator, first_sexpr
from backend.heuristics.moh.optimiser import (
    MAX_STAGES,
    SEED_OPTIMISER,
    EditOperator,
    Optimiser,
    Stage,
    parse_optimiser,
    random_optimiser,
    run_loop,
)
from backend.io import registry

TSP = GRAMMARS["tsp_construct"]
BPP = GRAMMARS["bpp_online"]


def test_parse_render_roundtrip_and_refusals() -> None:
    text = "(add d_cur (mul -0.5 (ifgt nn_rest avg_rest d_start (inv frac_left))))"
    prog = parse(text, TSP)
    assert to_text(parse(to_text(prog), TSP)) == to_text(prog)
    assert render(prog).startswith("d_cur + -0.5 * (d_start if nn_rest > avg_rest else inv(frac_left))")
    for bad, why in [("(add d_cur)", "takes 2"), ("(pow d_cur 2)", "Unknown operator"), ("(add d_cur x)", "Unknown"),
                     ("(mul scale 2)", "same score"), ("(add d_cur 1", "not closed"), ("d_cur d_start", "after"),
                     ("(add d_cur nan)", "finite"), ("", "empty"), ("import os", "Unknown name"),
                     ("(neg " * 12 + "d_cur" + ")" * 12, "levels deep"),
                     ("(add " * 300 + "d_cur", "levels deep"), ("(add d_cur " + "(add d_cur 1) " * 30 + ")", "takes 2")]:
        with pytest.raises(InputError, match=why):
            parse(bad, TSP)


def test_interpreter_charges_steps_and_stops() -> None:
    prog = parse("(add (mul d_cur d_cur) (sqrt d_start))", TSP)
    it = Interpreter(budget=10_000)
    out = it.run(prog, {"d_cur": np.ones(10), "d_start": np.full(10, 4.0)}, 10)
    assert np.allclose(out, 3.0) and it.used == 6 * 10
    with pytest.raises(StepLimit):
        Interpreter(budget=50).run(prog, {"d_cur": np.ones(10), "d_start": np.ones(10)}, 10)
    # a program too large for the per-run budget fails as a heuristic (inf), never as an error
    def full(depth: int) -> str:
        return "d_cur" if depth == 1 else f"(add {full(depth - 1)} {full(depth - 1)})"

    big = parse(f"(add {full(5)} {full(4)})", TSP)  # 47 per-candidate nodes: more than 40 steps per candidate
    assert big.size() == 47
    assert math.isinf(P.objective("tsp_construct", big, P.random_tsp(100, 0)))


def test_runners_match_the_references() -> None:
    inst = P.random_tsp(60, 3)
    tour = P.construct_tour(parse("d_cur", TSP), inst)
    assert sorted(tour.tolist()) == list(range(60))
    assert np.array_equal(tour, R.nearest_neighbour(inst))
    bins = P.random_bins(300, 1)
    assert P.pack_online(parse("(sub rest item)", BPP), bins)[0] == R.best_fit(bins)
    assert P.pack_online(parse("idx", BPP), bins)[0] == R.first_fit(bins)
    assert R.best_fit(bins) >= bins.l1


def test_references_are_tours_and_lkh_is_best() -> None:
    inst = P.random_tsp(50, 1)
    lengths = {}
    for name in R.TSP_REFERENCES:
        t = R.TSP_REFERENCES.get(name)(inst)
        assert sorted(np.asarray(t).tolist()) == list(range(50)), name
        lengths[name] = inst.length(t)
    assert lengths["lkh"] <= min(lengths.values()) + 1e-9
    assert lengths["two_opt"] <= lengths["nearest_neighbour"]
    gls = P.gls_improve(parse("(neg (div d_edge (add 1 pen)))", GRAMMARS["tsp_gls"]), inst, iters=10)
    assert inst.length(gls) <= lengths["two_opt"] + 1e-9


def test_readers_refuse_bad_instances() -> None:
    ex = registry.example("tsplib").decode()
    assert registry.decode("tsplib", ex.encode(), name="a.tsp").n == 12
    nan = ex.replace("\n3 ", "\n3 nan ", 1).replace("nan ", "", 0)
    lines = ex.splitlines()
    lines[8] = "3 nan 10.0"
    with pytest.raises(InputError, match="NaN"):
        registry.decode("tsplib", "\n".join(lines).encode(), name="nan.tsp")
    assert nan
    big = "NAME: big\nTYPE: TSP\nNODE_COORD_SECTION\n" + "".join(f"{i + 1} {i} {i * 7 % 13}\n" for i in range(1001))
    with pytest.raises(InputError, match="1000"):
        registry.decode("tsplib", big.encode(), name="big.tsp")
    for text, why in [("NAME: x\nTYPE: ATSP\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 0\n4 0 2\n5 3 3\n", "ATSP"),
                      ("NAME: x\nEDGE_WEIGHT_TYPE: GEO\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\n4 3 0\n5 0 3\n", "GEO"),
                      ("NAME: x\nNODE_COORD_SECTION\n1 0 0\n2 1\n", "index x y"),
                      ("NAME: x\nDIMENSION: 9\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\n4 3 0\n5 0 3\n", "DIMENSION"),
                      ("NAME: x\nEDGE_WEIGHT_SECTION\n0 1\n", "NODE_COORD_SECTION")]:
        with pytest.raises(InputError, match=why):
            registry.decode("tsplib", text.encode(), name="x.tsp")
    for body, why in [("size\n10\n0\n5\n6\n7\n", "positive"), ("10\n-3\n5\n6\n7\n", "positive"),
                      ("10\n120\n5\n6\n7\n", "larger than the bin capacity"), ("1\n2\n", "5 to 2000"),
                      ("size\n" + "5\n" * 2001, "more than 2000"), ("1\n2\nabc\n4\n5\n", "not a number"),
                      ("1\nnan\n3\n4\n5\n", "NaN")]:
        with pytest.raises(InputError, match=why):
            registry.decode("bin_items", body.encode(), name="b.csv")
    with pytest.raises(InputError, match="20 to 1000"):
        P.random_tsp(1500, 0)


def test_operators_and_failed_lm_proposals() -> None:
    rng = np.random.default_rng(0)
    parents = [parse("(add d_cur (mul 0.5 avg_rest))", TSP), parse("(sub d_cur nn_rest)", TSP)]
    gp = GPOperator()
    for op in ("subtree", "point", "const", "crossover", "hoist"):
        for _ in range(5):
            child = gp.propose(op, parents, TSP, rng)
            assert child is None or to_text(child) != to_text(parents[0])
    replies = iter(["(add d_cur (mul 2 d_start))", "import os; os.system('x')", "Sure! Here is: (pow d_cur 3)",
                    "(min d_cur nn_rest) because it is short"])
    lm = LMOperator(lambda prompt: next(replies), max_calls=4)
    got = [lm.propose("subtree", parents, TSP, rng) for _ in range(4)]
    assert [g is not None for g in got] == [True, False, False, True]
    assert lm.parse_rate == 0.5 and lm.failed == 2
    assert lm.propose("point", parents, TSP, rng) is None or lm.fallback.calls == 1  # past the cap: the GP operator
    assert lm.calls == 4 and first_sexpr("x (a (b c)) y") == "(a (b c))" and first_sexpr("none") is None


def test_optimiser_programs_roundtrip_and_refusals() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        o = random_optimiser(rng)
        assert parse_optimiser(o.text()) == o and parse_optimiser(o.pretty()) == o
        assert 1 <= len(o.stages) <= MAX_STAGES
    assert parse_optimiser(SEED_OPTIMISER.text()) == SEED_OPTIMISER
    clamped = parse_optimiser("(optimiser (population 99) (stage (select tournament 9) (vary const) (accept anneal 50) "
                              "(children 40)))")
    assert clamped.population == 16 and clamped.stages[0] == Stage("tournament", 5.0, ("const",), "anneal", 5.0, 16)
    for bad, why in [("(optimiser (population 8))", "at least one"), ("(stage (select best))", "optimiser"),
                     ("(optimiser (stage (select roulette) (vary const) (accept plus)))", "select must"),
                     ("(optimiser (stage (select best) (vary mutate) (accept plus)))", "vary lists"),
                     ("(optimiser (stage (select best) (vary const) (accept never)))", "accept must"),
                     ("(optimiser (stage (select best) (vary const)))", "needs"),
                     ("(optimiser (population x) (stage (select best) (vary const) (accept plus)))", "not a number"),
                     ("(optimiser " + "(stage (select best) (vary const) (accept plus)) " * 5 + ")", "at most 4"),
                     ("(optimiser (stage (select best) (vary const const const const) (accept plus)))", "at most 3")]:
        with pytest.raises(InputError, match=why):
            parse_optimiser(bad)


def test_edit_operator_changes_the_loop_structure() -> None:
    """The hand-written meta operator proposes new structure: stage counts, orders and components change."""
    rng = np.random.default_rng(2)
    ed = EditOperator()
    stage_counts, structures = set(), set()
    parents = [SEED_OPTIMISER, random_optimiser(rng)]
    for k in range(60):
        child = ed.propose(("subtree", "point", "const", "crossover", "hoist")[k % 5], parents, rng)
        assert child is not None and child.text() != parents[0].text()
        assert parse_optimiser(child.text()) == child
        stage_counts.add(len(child.stages))
        structures.add(child.structure())
    assert len(stage_counts) >= 3 and len(structures) >= 20


def _toy_loop(prog: Optimiser, budget: int = 60, seed: int = 0):  # noqa: ANN202
    """Minimise |x - 7| over integers with +-1 / +-3 steps: a check of the interpreter itself."""
    def vary(op, parents, rng):  # noqa: ANN001, ANN202
        if op == "crossover":
            return (parents[0] + parents[1]) // 2
        return parents[0] + int(rng.choice([-3, -1, 1, 3]))

    return run_loop(prog, lambda x: abs(x - 7), [0], budget, vary, lambda i, d, r: int(r.integers(-20, 20)), str,
                    np.random.default_rng(seed))


def test_run_loop_spends_its_budget_and_every_acceptance_rule_works() -> None:
    for acc, arg in (("plus", 0), ("comma", 1), ("parent", 0), ("worst", 0), ("anneal", 0.5)):
        prog = Optimiser(4, 2, 0.0, 2, (Stage("tournament", 2, ("subtree",), acc, arg, 3),
                                        Stage("best", 0, ("point", "crossover"), acc, arg, 1, every=2)))
        log = _toy_loop(prog)
        assert log.proposals == 60 and len(log.curve) == 60
        assert log.curve == sorted(log.curve, reverse=True)  # the best so far never gets worse
        assert log.best_fit == 0, (acc, log.best_fit)


def test_lm_meta_operator_counts_valid_new_programs() -> None:
    rng = np.random.default_rng(0)
    a = SEED_OPTIMISER
    b = parse_optimiser("(optimiser (stage (select best) (vary const) (accept parent) (children 2)))")
    replies = iter(["Here: (optimiser (population 6) (stage (select rank) (vary subtree hoist) (accept worst)",
                    a.text(), "I cannot do that.", "(optimiser (stage (select roulette) (vary x) (accept plus)))"])
    lm = LMMetaOperator(lambda prompt: next(replies), max_calls=4)
    got = [lm.propose("subtree", [a, b], rng) for _ in range(4)]
    assert got[0] is not None and got[0].stages[0].accept == "worst"  # an unclosed reply is closed at the end
    assert got[1:] == [None, None, None]
    assert (lm.calls, lm.parsed, lm.new, lm.failed) == (4, 2, 1, 2)
    assert lm.stats()["valid_new_per_call"] == 0.25
    assert lm.propose("point", [a, b], rng) is not None and lm.fallback.calls == 1  # past the cap: the edits
    assert first_program("x (optimiser (a) (b)) y") == "(optimiser (a) (b))" and first_program("none") is None
    assert "training gap" in lm.prompt("point", a, b)


def test_tuned_constant_line_search() -> None:
    from backend.heuristics.moh.moh import TUNED_GRID, tuned_constant

    cfg = MoHConfig(sizes=(20, 50), train_instances=2, seed=3)
    r = tuned_constant(cfg)
    grid = [h["weighted_gap"] for h in r.history[:len(TUNED_GRID)]]
    assert r.weighted_gap <= min(grid) + 1e-9 and r.heuristic.startswith("(sub d_cur (mul ")
    assert r.proposals == len(TUNED_GRID) + 10


def test_two_level_search_is_deterministic_with_equal_budgets() -> None:
    cfg = MoHConfig(sizes=(20, 50), train_instances=2, budget=8, meta_population=3, generations=1, single_size=50,
                    seed=4)
    a, b = evolve(cfg), evolve(cfg)
    assert {k: v.heuristic for k, v in a.items()} == {k: v.heuristic for k, v in b.items()}
    assert set(a) == {"moh", "single_size", "no_meta", "tuned_constant"}
    budget = cfg.task_budget
    for v in ("moh", "single_size"):
        h = a[v].history
        assert len(h) == cfg.optimiser_evaluations
        assert a[v].proposals <= budget and a[v].task_evals <= budget + len(cfg.sizes) * 3
        best = [x["best_weighted_gap"] for x in h]
        assert best == sorted(best, reverse=True)  # the best optimiser survives and runs the meta level
        assert h[-1]["meta_optimiser"] == a[v].optimiser
    assert a["no_meta"].proposals * len(cfg.sizes) == budget
    for v in a.values():
        parse(v.heuristic, TSP)


def test_lm_measurement_with_a_scripted_model() -> None:
    from backend.heuristics.moh.lm_meta import measure_seed

    cfg = MoHConfig(sizes=(20, 50), train_instances=2, budget=6, meta_population=3, generations=1, seed=5)
    hist = evolve(cfg, ("moh",))["moh"].history
    replies = iter(["(optimiser (population 5) (stage (select best) (vary const point) (accept anneal 1) "
                    "(children 3)))", "no program"])
    got = measure_seed(cfg, hist, 2, lambda p: next(replies))
    assert got["lm"]["calls"] == 2 and got["lm"]["valid_new"] == 1 and got["lm"]["parsed"] == 1
    assert got["edits"]["valid_new"] == 2
    assert got["lm"]["best_gap"] == got["lm"]["proposals"][0]["gap"]
    assert min(p["gap"] for p in got["edits"]["proposals"]) == got["edits"]["best_gap"]
