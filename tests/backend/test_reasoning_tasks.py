"""The shared reasoning-task generator: exact answers, reproducible draws, and held-out splits that differ from
training by template and by number range."""

from __future__ import annotations

import pytest

from backend.errors import InputError
from backend.reasoning import tasks


@pytest.mark.parametrize("split", list(tasks.SPLITS))
def test_every_step_and_answer_is_exact(split):
    for p in tasks.generate(300, split, seed=3, steps=(1, 6)):
        assert tasks.check_steps(p), p
        assert p.answer >= 0
        assert tasks.extract_answer(tasks.format_solution(p)) == p.answer


def test_same_seed_same_problems_and_splits_do_not_share_streams():
    a = tasks.generate(50, "train", seed=7)
    assert a == tasks.generate(50, "train", seed=7)
    assert a != tasks.generate(50, "train", seed=8)
    train_q = {p.question for p in tasks.generate(2000, "train", seed=0)}
    held_q = {p.question for p in tasks.generate(500, "heldout", seed=0)}
    assert not train_q & held_q


def test_heldout_differs_by_template_and_number_range():
    train = tasks.generate(500, "train", seed=1)
    held = tasks.generate(500, "heldout", seed=1)
    assert {p.template for p in train} <= set(tasks.TRAIN_TEMPLATES)
    assert {p.template for p in held} == set(tasks.HELDOUT_TEMPLATES)
    assert not set(tasks.TRAIN_TEMPLATES) & set(tasks.HELDOUT_TEMPLATES)
    assert all(p.operand_range == tasks.HELDOUT_RANGE for p in held)
    assert tasks.TRAIN_RANGE[1] < tasks.HELDOUT_RANGE[0]
    assert {p.template for p in tasks.generate(200, "heldout_numbers", 0)} <= set(tasks.TRAIN_TEMPLATES)


def test_steps_knob_sets_the_number_of_operations():
    for k in (1, 3, 5):
        assert all(p.meta["ops"] == k for p in tasks.generate(40, "train", seed=2, steps=(k, k)))
    few = sum(len(p.steps) for p in tasks.generate(200, "train", 0, steps=(1, 1)))
    many = sum(len(p.steps) for p in tasks.generate(200, "train", 0, steps=(5, 5)))
    assert many > 2 * few


def test_extract_answer_reads_markers_and_falls_back():
    m = tasks.MARKERS["smollm2"]
    assert tasks.extract_answer("Reasoning: 2 + 3 = 5 Answer: 5", m) == 5
    assert tasks.extract_answer("so 12 then The final answer is 40.", m) == 40
    assert tasks.extract_answer("<think> 1 + 1 = 2 </think> 2") == 2
    assert tasks.extract_answer("no digits here") is None


def test_bad_arguments_name_the_valid_values():
    with pytest.raises(InputError, match="heldout"):
        tasks.generate(1, "test")
    with pytest.raises(InputError, match="chain"):
        tasks.generate(1, templates=("nope",))
    with pytest.raises(InputError):
        tasks.generate(1, steps=(3, 2))


def test_grammar_splits_hold_their_documented_ranges():
    import re

    for split in ("grammar", "grammar_paraphrase"):
        probs = tasks.generate(600, split, seed=4, steps=(1, 8))
        assert {p.template for p in probs} == set(tasks.GRAMMAR_TEMPLATES)
        for p in probs:
            assert tasks.check_steps(p), p
            values = [int(v) for s in p.steps for v in re.findall(r"\d+", s)]
            assert max(values) < tasks.MAX_VALUE
        exprs = [p for p in probs if p.template == "expression"]
        operands = [int(v) for p in exprs for v in re.findall(r"\d+", p.question)]
        lo, hi = tasks.GRAMMAR_RANGE
        assert max(operands) <= hi and min(operands) >= lo
        # every operand length is common (one-digit ones most: every factor and divisor)
        assert all(sum(len(str(v)) == d for v in operands) > len(operands) / 10 for d in range(1, len(str(hi)) + 1))


def test_paraphrase_split_uses_only_held_out_phrasings():
    train = tasks.generate(800, "grammar", seed=0, steps=(1, 3))
    para = tasks.generate(300, "grammar_paraphrase", seed=0, steps=(1, 3))
    last = {t: len(tasks.PHRASINGS[t]) - 1 for t in tasks.PHRASINGS}
    assert all(p.meta["style"] != last[p.template] for p in train)
    assert all(p.meta["style"] == last[p.template] for p in para)
    assert len({p.meta["style"] for p in train if p.template == "inventory"}) == last["inventory"]


def test_expressions_mean_what_the_usual_precedence_says():
    for p in tasks.generate(400, "grammar", seed=2, steps=(1, 8), templates=("expression", "chain")):
        e = p.question
        for form in ("Compute ", "What is ", "Calculate "):
            e = e.removeprefix(form)
        e = e.removesuffix(" = ?").rstrip(".?")
        assert eval(e.replace("/", "//"), {"__builtins__": {}}) == p.answer, p  # noqa: S307 - digits and operators only


def test_domain_labels_the_grammar_and_nothing_else():
    from backend.reasoning.domain import domain

    for p in tasks.generate(300, "grammar", seed=6, steps=(1, 8)):
        d = domain(p.question)
        assert d.in_domain and d.ops == p.meta["ops"] and d.template in (p.template, "expression"), (p, d)
    for split in ("grammar_paraphrase", "heldout_templates"):
        assert not any(domain(p.question).in_domain for p in tasks.generate(200, split, seed=6, steps=(1, 8)))
    assert domain("What is  2+3?").in_domain
    for q, why in (("What is 12 + 34 * 5?", "left to right"), ("Compute 1234 + 5.", "outside the grammar's operands"),
                   ("12 * 13", "one digit"), ("What is 7 / 2?", "whole number"), ("Tell me a joke.", "none"),
                   ("", "none"), ("Compute (((1 + 1) + 1) + 1) + 1 + 1 + 1 + 1 + 1 + 1.", "1-8")):
        d = domain(q)
        assert d.label == "out of domain" and why in d.reason, (q, d)


def test_reasoning_numbers_are_padded_for_the_tiny_reasoner_only():
    p = tasks.Problem("Compute 86 + 63.", ("86 + 63 = 149",), 149, "expression", (1, 99))
    assert tasks.format_solution(p) == "<think> 0086 + 0063 = 0149 </think> 149"
    assert tasks.format_solution(p, tasks.MARKERS["smollm2"]) == "Reasoning: 86 + 63 = 149 Answer: 149"
    assert tasks.extract_answer(tasks.format_solution(p)) == 149
    assert tasks.pad_numbers("7 * 12345 = 0", 4) == "0007 * 12345 = 0000"
