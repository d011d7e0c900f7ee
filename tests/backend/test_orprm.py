"""Invariants and claims of OR-PRM on generated operations-research problems, the stochastic modeller and the
shipped process reward model (``python -m backend.train orprm``).

Invariants: the five-tuple semantics (index sets shared between a constraint's rows and a variable's entries sum over
the free ones), the templates' optima against ``scipy.optimize.linprog`` on the LP families, bad models refused with
messages, the flaw injectors' first-flawed steps, the step labels, determinism, the selectors' bookkeeping, and the
shipped PRM's recorded quality.

ci tier claims: gates 1 and 2 reject every corrupted label of the kinds they cover (missing constraint, misrecorded
optimum) and no clean formulation, on a 400-sample noisy dataset (generator seed 7, 60 % flawed, equivalent
rewritings half the time), with the table of which gate catches what; PRM-guided BoN-8 against majority and random
selection on 40 problems (seed 1000) whose candidates carry only the flaw kinds held out of the PRM's training, paired
95 % intervals over problems. full tier: the same at 200 problems for every shipped PRM seed, and Qwen2.5-Coder-1.5B
writing formulations for 20 problems as a real-model check of the gates (skipped when Qwen is not installed).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.errors import InputError
from backend.reasoning.orprm import inputs as I
from backend.reasoning.orprm import jobs as J
from backend.reasoning.orprm.formulation import (
    check,
    compile_model,
    read_lp_json,
    solve,
    steps,
    violations,
)
from backend.reasoning.orprm.gates import GATES, audit
from backend.reasoning.orprm.modeller import COVERED, FLAWS, write
from backend.reasoning.orprm.problems import FAMILIES, generate
from backend.stats import paired_ci


# --------------------------------------------------------------------------------------------------- invariants
def test_shared_sets_sum_over_the_free_ones() -> None:
    form = check(json.loads(I.lp_json_odd()["transport.json"]))
    m = compile_model(form)
    # x[s,d] in row-major order s1d1, s1d2, s2d1, s2d2; rows: out[s1], out[s2], in[d1], in[d2]
    assert m.A.tolist() == [[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]]
    assert m.c.tolist() == [1, 2, 3, 1] and m.row_names[2] == "in[d1]"
    sol = solve(m)
    assert sol.status == "optimal" and abs(sol.objective - 11.0) < 1e-9 and not violations(m, sol.x)


def test_example_and_a_coefficient_over_row_and_variable_sets() -> None:
    form = read_lp_json(I.lp_json())
    m = compile_model(form)
    assert m.A.tolist() == [[5, 20, 15], [2, 5, 8]] and m.hi.tolist() == [400, 160] and m.integer.all()
    assert abs(solve(m).objective - 2480) < 1e-6


@pytest.mark.parametrize("family", list(FAMILIES))
def test_template_optima_match_linprog_on_lp_relaxations(family) -> None:
    from scipy.optimize import linprog

    for p in generate(4, seed=11, fams=family):
        m = compile_model(p.form)
        assert not violations(m, np.asarray(p.x)) and abs(float(m.c @ np.asarray(p.x)) - p.optimum) < 1e-6
        sign = -1.0 if m.sense == "max" else 1.0
        ub = np.isfinite(m.hi)
        lb = np.isfinite(m.lo)
        A_ub = np.vstack([m.A[ub & ~(lb & (m.lo == m.hi))], -m.A[lb & ~(ub & (m.lo == m.hi))]])
        b_ub = np.concatenate([m.hi[ub & ~(lb & (m.lo == m.hi))], -m.lo[lb & ~(ub & (m.lo == m.hi))]])
        eq = lb & ub & (m.lo == m.hi)
        r = linprog(sign * m.c, A_ub=A_ub, b_ub=b_ub, A_eq=m.A[eq] if eq.any() else None,
                    b_eq=m.lo[eq] if eq.any() else None, bounds=list(zip(m.lb, np.where(np.isinf(m.ub), None, m.ub),
                                                                         strict=True)))
        relax = sign * r.fun
        if not m.integer.any():
            assert abs(relax - p.optimum) < 1e-6 * max(1, abs(p.optimum))
        else:  # the integer optimum never beats its LP relaxation
            assert (relax >= p.optimum - 1e-6) if m.sense == "max" else (relax <= p.optimum + 1e-6)


BAD = {
    "inconsistent dimensions": ({"sets": {"P": ["a", "b"]}, "parameters": {"c": {"over": ["P"], "values": [1, 2, 3]}},
                                 "variables": [{"name": "x", "over": ["P"]}],
                                 "objective": {"sense": "max", "terms": [{"var": "x", "coef": "c"}]}},
                                "Inconsistent dimensions"),
    "non-numeric parameter": ({"parameters": {"c": "ten"}, "variables": [{"name": "x"}],
                               "objective": {"sense": "min", "terms": [{"var": "x", "coef": "c"}]}}, "must be a number"),
    "unbounded": ({"variables": [{"name": "x"}], "objective": {"sense": "max", "terms": [{"var": "x", "coef": 1}]}},
                  "unbounded"),
    "infeasible": ({"variables": [{"name": "x", "ub": 1}], "objective": {"sense": "max", "terms": [{"var": "x"}]},
                    "constraints": [{"name": "c", "terms": [{"var": "x"}], "sense": ">=", "rhs": 5}]}, "infeasible"),
    "over-size": ({"sets": {f"S{i}": [str(j) for j in range(50)] for i in range(2)},
                   "variables": [{"name": "x", "over": ["S0", "S1"]}],
                   "objective": {"sense": "min", "terms": [{"var": "x", "coef": 1}]}}, "limit here is 600"),
    "coefficient over a foreign set": ({"sets": {"P": ["a"], "R": ["r"]},
                                        "parameters": {"u": {"over": ["R"], "values": [1]}},
                                        "variables": [{"name": "x", "over": ["P"]}],
                                        "objective": {"sense": "min", "terms": [{"var": "x", "coef": "u"}]}},
                                       "not an index of this place"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_models_are_refused_with_a_message(case) -> None:
    model, words = BAD[case]
    with pytest.raises(InputError, match=words):
        read_lp_json(json.dumps(model).encode())
    with pytest.raises(InputError):
        read_lp_json(b'{"parameters": {"c": NaN}}')


def test_flaws_enter_at_the_step_they_name_and_labels_turn_at_it() -> None:
    from backend.reasoning.orprm.prm import step_labels

    rng = np.random.default_rng(0)
    kinds_at = {}
    for p in generate(12, seed=21):
        for k in FLAWS:
            w = write(p, k, rng, variation=0.5)
            kinds_at.setdefault(k, set()).add(steps(w.form)[w.flaw_step].kind)
            y = step_labels(len(steps(w.form)), w.flaw_step)
            assert y[: w.flaw_step].all() and not y[w.flaw_step:].any()
    got = {FLAWS.label(k): v for k, v in kinds_at.items()}
    assert got == {"Wrong objective sense": {"objective"}, "Missing constraint": {"constraint", "solution"},
                   "Unit error": {"parameters"}, "Wrong recorded optimum": {"solution"},
                   "Wrong variable domain": {"variables"}, "Swapped coefficients": {"parameters"}}


def test_equivalent_rewritings_keep_the_optimum_and_pass_gates_1_and_2() -> None:
    rng = np.random.default_rng(1)
    for p in generate(18, seed=22):
        w = write(p, None, rng, variation=1.0)
        assert w.variant is not None and abs(w.answer - p.optimum) <= 1e-6 * max(1, abs(p.optimum))
        a = audit(p.form, w.form)
        assert all(a.passed[g] for g in list(GATES)[:2]), a.reasons


def test_clean_run_is_deterministic_and_counts_add_up() -> None:
    cfg = J.CleanConfig(samples=60, seed=3)
    a, b = J.run_clean(cfg).to_dict(), J.run_clean(cfg).to_dict()
    assert a["table"] == b["table"] and a["flows"] == b["flows"]
    assert sum(r["samples"] for r in a["table"]) == 60 == a["samples"]
    first = list(GATES)[0]
    assert sum(f["count"] for f in a["flows"] if f["source"] == "all") == 60
    assert sum(f["count"] for f in a["flows"] if f["target"] == f"rejected_{first}") == sum(
        r[f"rejected_{first}"] for r in a["table"])


def test_selector_bookkeeping_on_the_shipped_prm() -> None:
    res = J.run_bon(J.BonConfig(problems=10, n=4, problem_seed=4000))
    for k, v in res.curves.items():
        assert abs(v[0] - res.pass_at_1) < 1e-9 or k == "majority", (k, v)
        assert res.curves["oracle"][-1] >= v[-1] - 1e-9
        assert abs(np.mean(res.per_problem[k]) - v[-1]) < 1e-3
    assert all(abs(x - res.pass_at_1) < 1e-9 for x in res.curves["random"])


def test_config_refusals() -> None:
    with pytest.raises(InputError, match="flaw kind"):
        J.CleanConfig(kinds="typos")
    with pytest.raises(InputError, match="between 0 and 1"):
        J.BonConfig(flaw_rate=1.5)
    with pytest.raises(InputError, match="prm_seed"):
        J.BonConfig(prm_seed=7)
    with pytest.raises(InputError, match="empty"):
        J.LpConfig("  ")


@pytest.mark.parametrize("seed", J.PRM_SEEDS)
def test_shipped_prm_keeps_its_recorded_heldout_quality(seed) -> None:
    from backend import weights
    from backend.reasoning.orprm.prm import step_features, step_labels
    from backend.reasoning.rgm.traces import auroc

    meta = weights.read_meta(J.prm_path(seed))
    prm = J.load_prm(seed)
    rng = np.random.default_rng([0, 3])
    s, y = [], []
    for p in generate(30, seed=900):
        for k in ("wrong_domain", "swapped", None):
            w = write(p, FLAWS.key(k) if k else None, rng, 0.5)
            X, _ = step_features(p.form, w.form)
            s.append(prm.step_scores(X))
            y.append(step_labels(len(X), w.flaw_step))
    got = auroc(np.concatenate(s), np.concatenate(y))
    assert got >= meta.quality["heldout_kinds_step_auroc"] - 0.05, (got, meta.quality)


# --------------------------------------------------------------------------------------------------- claims
def _gate_numbers(res: J.CleanResult) -> dict:
    out = {"samples": res.samples, "flawed_share": res.flawed / res.samples,
           "corrupted_share": res.corrupted / res.samples, "kept_flawed": res.kept_flawed}
    for r in res.table:
        for col in ("samples", "corrupted", "rejected_12", "corrupted_missed_12", "rejected_judge", "kept"):
            out[f"{r['kind']}_{col}"] = r[col]
    return out


def test_gates_reject_every_covered_corrupted_label_and_no_clean_one(record_claim) -> None:
    res = J.run_clean(J.CleanConfig(samples=400, flaw_rate=0.6, problem_seed=7, seed=7))
    rows = {r["kind"]: r for r in res.table}
    missed = sum(rows[k]["corrupted_missed_12"] for k in COVERED if k in rows)
    covered_corrupted = sum(rows[k]["corrupted"] for k in COVERED if k in rows)
    record_claim(covered_corrupted=covered_corrupted, covered_missed=missed, **_gate_numbers(res))
    assert covered_corrupted >= 40
    assert missed == 0
    assert rows["clean"]["rejected_12"] == 0


@pytest.fixture(scope="module")
def bon_heldout():
    return J.run_bon(J.BonConfig(**I.BON_PRESETS[next(iter(I.BON_PRESETS))]))


def test_prm_bon8_beats_majority_and_random_on_heldout_flaw_kinds(bon_heldout, record_claim) -> None:
    res = bon_heldout
    per = {k: np.array(v) for k, v in res.per_problem.items()}
    vs_major = paired_ci(per["prm"], per["majority"])
    vs_random = paired_ci(per["prm"], per["random"])
    record_claim(**{f"{k}_bon8": v[-1] for k, v in res.curves.items()}, **vs_major.numbers("gain_over_majority"),
                 **vs_random.numbers("gain_over_random"), pass_at_1=res.pass_at_1, step_auroc=res.step_auroc,
                 answer_auroc=res.answer_auroc)
    assert res.config["kinds"] == "wrong_domain,swapped" and res.config["n"] == 8
    assert vs_major.low > 0 and vs_random.low > 0, (vs_major, vs_random)


@pytest.mark.full
@pytest.mark.parametrize("prm_seed", J.PRM_SEEDS)
def test_full_prm_bon8_on_heldout_flaw_kinds(prm_seed, record_claim) -> None:
    res = J.run_bon(J.BonConfig(problems=200, n=8, kinds="heldout", problem_seed=5000, prm_seed=prm_seed))
    per = {k: np.array(v) for k, v in res.per_problem.items()}
    ci = paired_ci(per["prm"], per["majority"])
    record_claim(**{f"{k}_bon8": v[-1] for k, v in res.curves.items()}, **ci.numbers("gain_over_majority"),
                 **paired_ci(per["prm"], per["random"]).numbers("gain_over_random"), step_auroc=res.step_auroc)
    assert ci.low > 0, ci


QWEN_PROMPT = """Write the optimisation model of this problem as JSON in the five-tuple form. The sets, parameters and
variables are given; add "objective" {{"sense": "max" or "min", "terms": [{{"var", "coef"}}]}} and "constraints"
[{{"name", "over", "terms", "sense", "rhs"}}], where a coef or rhs is a parameter name or a number, and answer with
the JSON object only.

Example problem: {ex_text}
Example answer: {ex_json}

Problem: {text}
Given: {given}
Answer:"""


@pytest.mark.full
@pytest.mark.timeout(6 * 3600)  # Qwen2.5-Coder-1.5B decodes about 2 tokens/s on one thread
def test_full_qwen_formulations_through_the_gates(record_claim) -> None:
    from backend.models import coder

    if not coder.installed():
        pytest.skip("optional model not installed (make models-extra)")
    from backend.reasoning.lm import load_reasoning_lm
    from backend.reasoning.sampling import SamplingConfig, sample

    qwen = load_reasoning_lm("qwen2.5-coder")
    ex = generate(1, seed=77)[0]
    probs = generate(20, seed=78)
    prompts = []
    for p in probs:
        given = {k: p.form[k] for k in ("sets", "parameters", "variables")}
        prompts.append(QWEN_PROMPT.format(ex_text=ex.text, ex_json=json.dumps(
            {k: ex.form[k] for k in ("sets", "parameters", "variables", "objective", "constraints")}),
            text=p.text, given=json.dumps(given)))
    out = sample(qwen, prompts, SamplingConfig(n=1, max_new_tokens=600, temperature=0.0))
    parsed = executes = passed = right = false_rejections = missed_wrong = 0
    for i, p in enumerate(probs):
        text = out.text[i][0]
        try:
            obj = json.loads(text[text.index("{") : text.rindex("}") + 1])
            form = check({**{k: p.form[k] for k in ("sets", "parameters", "variables")}, **obj})
        except (ValueError, InputError):
            continue
        parsed += 1
        sol = solve(compile_model(form))
        ok = sol.status == "optimal" and abs(sol.objective - p.optimum) <= 1e-6 * max(1, abs(p.optimum))
        form["label"] = sol.objective
        a = audit(p.form, form)
        g12 = all(a.passed[g] for g in list(GATES)[:2])
        executes += a.passed["execution"]
        passed += g12
        right += ok
        false_rejections += ok and not g12
        missed_wrong += (not ok) and g12
    record_claim(problems=len(probs), parsed=parsed, executes=executes, passed_gates_12=passed, right=right,
                 false_rejections=false_rejections, wrong_passing_gates_12=missed_wrong)
    assert false_rejections == 0
