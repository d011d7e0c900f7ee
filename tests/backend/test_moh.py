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
from backend.heuristics.moh.moh import MoHConfig, evolve
from backend.heuristics.moh.operators import GPOperator, LMOperator, first_sexpr
from backend.heuristics.moh.optimiser import SEED_OPTIMISER, mutate_optimiser, parse_optimiser, random_optimiser
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


def test_optimiser_programs_roundtrip() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        o = random_optimiser(rng)
        assert parse_optimiser(o.text()) == o
        for op in ("subtree", "point", "const", "crossover", "hoist"):
            child = mutate_optimiser(op, [o, SEED_OPTIMISER], rng)
            assert parse_optimiser(child.text()) == child and 2 <= child.population <= 16
    with pytest.raises(InputError):
        parse_optimiser("(optimiser (select roulette))")


def test_two_level_search_is_deterministic_with_equal_budgets() -> None:
    cfg = MoHConfig(sizes=(20, 50), train_instances=2, budget=8, meta_population=3, generations=1, single_size=50,
                    seed=4)
    a, b = evolve(cfg), evolve(cfg)
    assert {k: v.heuristic for k, v in a.items()} == {k: v.heuristic for k, v in b.items()}
    budget = cfg.meta_population * (cfg.generations + 1) * cfg.budget * len(cfg.sizes)
    assert a["moh"].proposals == a["single_size"].proposals == budget
    assert a["no_meta"].proposals * len(cfg.sizes) == budget
    best = [h["best_utility"] for h in a["moh"].history]
    assert best == sorted(best)  # the best optimiser survives and becomes the meta-optimiser
    assert a["moh"].history[-1]["meta_optimiser"] == a["moh"].optimiser
    for v in a.values():
        parse(v.heuristic, TSP)
