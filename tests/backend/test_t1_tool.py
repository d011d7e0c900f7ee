"""T1's tool verifier and the slip-injected candidate sets: the sandbox checks exactly the calculations, refuses
anything but arithmetic with a reason (never hangs, never evaluates model text as Python), and the two kinds of
slips are what they claim: an arithmetic slip fails exactly one check, a logic slip passes every check."""

from __future__ import annotations

import random
import time

import pytest

from backend.reasoning import tasks
from backend.reasoning.t1.slips import arithmetic_slip, candidate_set, logic_slip
from backend.reasoning.t1.tool import Limits, ToolError, extract_steps, run_program, verify


def test_gold_solutions_pass_and_a_wrong_step_or_answer_is_vetoed():
    for p in tasks.generate(200, "grammar", seed=1, steps=(1, 8)):
        v = verify(tasks.format_solution(p))
        assert v.passed and v.checked == len(p.steps) + 1, (p, v)
    v = verify("<think> 12 + 5 = 17 ; 17 * 3 = 52 </think> 52")
    assert not v.passed and v.failed == (1,) and "step 2" in v.reason and "51 is not 52" in v.reason
    v = verify("<think> 12 + 5 = 17 ; 17 * 3 = 51 </think> 50")
    assert not v.passed and "final answer" in v.reason


def test_free_text_solutions_are_read():
    assert extract_steps("First 3 x 4 = 12, then 20 − 12 = 8; 1,200 ÷ 4 = 300.") == [
        ("3 * 4", "12"), ("20 - 12", "8"), ("1200 / 4", "300")]
    assert verify("Half of 7 is 7 / 2 = 3.5, so 3.5 + 1 = 4.5. The final answer is 4.5").passed
    assert not verify("7 / 2 = 3, so the answer is 3").passed
    v = verify("I think the answer is 12.")
    assert v.passed and v.checked == 0 and "no calculation" in v.reason
    # zero-padded numbers (a literal Python refuses) are read as the numbers they are; decimals keep their zeros
    assert extract_steps("0086 + 0063 = 0149 ; 10.05 * 2 = 20.10") == [("86 + 63", "149"), ("10.05 * 2", "20.10")]
    assert verify("<think> 007 + 05 = 012 </think> 12").passed


@pytest.mark.parametrize("program, words", [
    ("assert 9 ** 9 ** 9 == 1", "Pow"),
    ("assert __import__('os').system('true') == 0", "Call"),
    ("assert x == 1", "Name"),
    ("assert 1 / 0 == 1", "division by zero"),
    ("assert 10" + "0" * 60 + " == 1", "digits"),
    ("assert " + "99999999 * " * 30 + "9 == 1", "digits"),
    ("assert " + "1 + " * 4000 + "1 == 2", "nested"),
])
def test_hostile_expressions_fail_their_check_with_a_reason(program, words):
    t = time.perf_counter()
    try:
        checks = run_program(program)
        assert not checks[0].ok and words in checks[0].reason, checks
    except ToolError as e:  # refused as a whole: it does not parse within the limits
        assert words in str(e) or "parse" in str(e), e
    assert time.perf_counter() - t < 2.0


@pytest.mark.parametrize("program", ["import os", "while True: pass", "def f(): return f()\nf()", "print(1)",
                                     "assert 1 == 1 == 1", "assert (" * 300 + "1" + ")" * 300 + " == 1", "x" * 30_000])
def test_programs_other_than_asserts_are_refused(program):
    with pytest.raises(ToolError):
        run_program(program, Limits())


def test_verify_never_raises_on_bad_candidates():
    for bad in (None, b"\xff", "1 + 1 = 2" * 5000, "(" * 5000 + "1 + 1 = 2", "1 = 1 = 1", ""):
        v = verify(bad)
        assert isinstance(v.passed, bool) and isinstance(v.reason, str)


def test_slips_fail_one_check_or_none_and_change_the_answer():
    rng = random.Random(0)
    kinds = {"arithmetic": 0, "logic": 0}
    for p in tasks.generate(150, "grammar", seed=2, steps=(1, 8)):
        a, lo = arithmetic_slip(p, rng), logic_slip(p, rng)
        if a is not None:
            v = verify(a.text)
            assert not v.passed and len(v.failed) == 1 and a.answer != p.answer and not a.correct
            kinds["arithmetic"] += 1
        if lo is not None:
            assert verify(lo.text).passed and lo.answer != p.answer
            kinds["logic"] += 1
    assert kinds["arithmetic"] > 140 and kinds["logic"] > 120, kinds


def test_candidate_sets_follow_the_rates_and_the_seed():
    p = tasks.generate(1, "grammar", seed=5, steps=(4, 4))[0]
    s = candidate_set(p, 400, arithmetic=0.25, logic=0.5, seed=3)
    assert s == candidate_set(p, 400, arithmetic=0.25, logic=0.5, seed=3)
    share = {k: sum(c.kind == k for c in s) / 400 for k in ("gold", "arithmetic", "logic")}
    assert abs(share["arithmetic"] - 0.25) < 0.08 and abs(share["logic"] - 0.5) < 0.08
    assert all(c.correct == (c.answer == p.answer) for c in s)
    with pytest.raises(ValueError):
        candidate_set(p, 4, arithmetic=0.8, logic=0.5)


def _random_scores(seed=0, P=25, N=12):
    import numpy as np

    from backend.reasoning.t1.select import CandidateScores

    rng = np.random.default_rng(seed)
    correct = rng.random((P, N)) < 0.4
    passed = correct | (rng.random((P, N)) < 0.3)
    rm = np.clip(0.5 + 0.15 * (correct - 0.5) + 0.2 * rng.standard_normal((P, N)), 0.01, 0.99)
    answers = np.where(correct, 1.0, rng.integers(2, 6, (P, N)).astype(float))
    return CandidateScores(passed, rm, answers, correct)


def test_tool_veto_never_lowers_rm_accuracy_when_no_right_candidate_is_vetoed():
    import numpy as np

    from backend.reasoning.t1.select import per_problem

    for seed in range(3):
        c = _random_scores(seed)
        for n in (1, 2, 5, 12):
            assert (per_problem(c, "tool_rm", n) >= per_problem(c, "rm", n) - 1e-12).all()
    # a vetoed right candidate breaks the premise, and then the veto can cost accuracy
    from backend.reasoning.t1.select import CandidateScores

    c = CandidateScores(np.array([[False, True]]), np.array([[0.9, 0.5]]), np.array([[1.0, 2.0]]),
                        np.array([[True, False]]))
    assert per_problem(c, "tool_rm", 2)[0] == 0.0 and per_problem(c, "rm", 2)[0] == 1.0


def test_selector_curves_agree_at_the_ends():
    import numpy as np

    from backend.reasoning.t1.select import SELECTORS, curves

    c = _random_scores(1)
    cv = curves(c, [1, 12], draws=50)
    mean = c.correct.mean()
    for name in ("tool_rm", "tool", "rm", "oracle"):
        assert cv[name][0] == pytest.approx(mean)  # one candidate: no choice to make
    assert cv["oracle"][1] == pytest.approx(c.correct.any(axis=1).mean())
    assert all(cv["oracle"][1] >= v[1] - 1e-12 for v in cv.values())
    assert set(cv) == set(SELECTORS)
    assert np.isfinite(list(cv.values())).all()
