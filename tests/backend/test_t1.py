"""Claims and invariants of T1 on the shipped tiny reasoner, its reward model and the presets' candidate cache
(``python -m backend.train t1``).

ci tier: the page's first two presets (40 unseen problems of 1-4 operations, N = 16 of the reasoner's own samples at
temperature 0.8, read from the shipped cache; the reward model was trained on other problems, generator seed 100):
T1's BoN@16 gain over the reward model alone with its paired 95 % interval over problems, on the training phrasings
and on the held-out phrasings; the tool's false-veto rate on right candidates; the same comparison on slip-injected
gold solutions, where logic slips alone leave the tool nothing to veto; the per-problem invariant.
full tier: 200 problems per split, and the tiny reasoner with T1 at N = 16 against Qwen2.5-Coder-1.5B greedy on the
same 50 held-out problems (skipped when Qwen is not installed).
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.reasoning.t1 import jobs as J
from backend.reasoning.t1.inputs import PRESETS
from backend.stats import paired_ci

PRESET_NAMES = list(PRESETS)


@pytest.fixture(scope="module")
def models():
    from backend.models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner(), J.load_rm()


@pytest.fixture(scope="module")
def cache():
    from backend.reasoning.candidates import CandidateCache

    return CandidateCache(J.CACHE_FILE)


@pytest.fixture(scope="module")
def runs(models, cache):
    """``runs(preset)`` -> (config, result), each preset run once for the module."""
    done: dict = {}

    def get(name: str):
        if name not in done:
            cfg = J.BonConfig(**PRESETS[name])
            done[name] = cfg, J.run_bon(cfg, *models, cache)
        return done[name]

    return get


@pytest.mark.parametrize("preset", PRESET_NAMES[:2])
def test_t1_beats_the_reward_model_alone_at_n16(preset, runs, record_claim) -> None:
    cfg, res = runs(preset)
    a, b = np.array(res.per_problem["tool_rm"]), np.array(res.per_problem["rm"])
    ci = paired_ci(a, b)
    record_claim(**{f"{k}_bon16": v[-1] for k, v in res.curves.items()}, **ci.numbers("gain_over_rm"),
                 pass_at_1=res.pass_at_1, false_veto_rate=res.false_veto_rate, true_veto_rate=res.true_veto_rate,
                 wrong_arithmetic=res.wrong_kinds["arithmetic"], wrong_logic=res.wrong_kinds["logic"],
                 rm_auroc=res.rm_auroc)
    assert np.allclose(a.mean(), res.curves["tool_rm"][-1], atol=1e-3)
    # the direction is asserted; whether the sample resolves it is the recorded interval's verdict
    assert ci.mean > 0, ci


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature: 1.95 % of the tiny reasoner's right final answers (40 problems of 5-8 operations "
    "x 16 samples) come from solutions with a wrong calculation that a later step compensates; the tool vetoes them, "
    "rightly about the steps. T1 still gains 0.25 over the reward model at N = 16 (0.75 against 0.50)"))
def test_tool_never_vetoes_a_right_answer_of_the_reasoner(runs, record_claim) -> None:
    cfg, res = runs(PRESET_NAMES[0])
    record_claim(false_veto_rate=res.false_veto_rate, true_veto_rate=res.true_veto_rate)
    assert res.false_veto_rate <= 0.01


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold by the margin on our miniature: the gain does vanish with logic slips only (0.000, the tool vetoes "
    "none of them), but with 30 % arithmetic slips it is 0.050 (2 of 40 problems), not above 0.05: the reward head "
    "already ranks most arithmetic-slipped gold solutions below the clean ones, although the tool vetoes 47 % of "
    "the candidates"))
def test_gain_vanishes_on_logic_slips_only(runs, record_claim) -> None:
    _, mixed = runs(PRESET_NAMES[2])
    _, logic = runs(PRESET_NAMES[3])
    gain_mixed = mixed.curves["tool_rm"][-1] - mixed.curves["rm"][-1]
    gain_logic = logic.curves["tool_rm"][-1] - logic.curves["rm"][-1]
    record_claim(gain_mixed_slips=gain_mixed, gain_logic_slips=gain_logic,
                 veto_rate_logic_slips=logic.true_veto_rate, veto_rate_mixed_slips=mixed.true_veto_rate)
    assert logic.true_veto_rate == 0.0 and abs(gain_logic) < 1e-9
    assert gain_mixed > 0.05


def test_per_problem_invariant_on_the_reasoners_candidates(models, cache) -> None:
    from backend.reasoning.t1.select import per_problem

    cfg = J.BonConfig(**PRESETS[PRESET_NAMES[0]])
    c = J.candidate_scores(cfg, *models, cache)
    clean = ~((~c.passed) & c.correct).any(axis=1)
    for n in (1, 2, 4, 8, 16):
        a, b = per_problem(c, "tool_rm", n), per_problem(c, "rm", n)
        assert (a[clean] >= b[clean] - 1e-12).all()


@pytest.mark.full
@pytest.mark.parametrize("split", ["grammar", "grammar_paraphrase"])
def test_full_t1_gain_over_rm(split, models, record_claim) -> None:
    ops = (5, 8) if split == "grammar" else (1, 4)  # the ci presets' difficulties
    cfg = J.BonConfig(split=split, problems=200, n=16, problem_seed=1, ops=ops)
    res = J.run_bon(cfg, *models, None)
    ci = paired_ci(res.per_problem["tool_rm"], res.per_problem["rm"])
    record_claim(**{f"{k}_bon16": v[-1] for k, v in res.curves.items()}, **ci.numbers("gain_over_rm"),
                 pass_at_1=res.pass_at_1, false_veto_rate=res.false_veto_rate)
    assert ci.low > 0, ci


@pytest.mark.full
@pytest.mark.timeout(4 * 3600)  # Qwen2.5-Coder-1.5B decodes about 2 tokens/s on one thread
def test_full_tiny_reasoner_with_t1_against_qwen_greedy(models, record_claim) -> None:
    from backend.models import coder

    if not coder.installed():
        pytest.skip("optional model not installed (make models-extra)")
    from backend.reasoning.lm import load_reasoning_lm
    from backend.reasoning.sampling import SamplingConfig, sample
    from backend.reasoning.tasks import MARKERS, extract_answer, generate

    cfg = J.BonConfig(split="grammar", problems=50, n=16, ops=(1, 4), problem_seed=2)
    t1 = J.run_bon(cfg, *models, None)
    qwen = load_reasoning_lm("qwen2.5-coder")
    probs = generate(cfg.problems, cfg.split, seed=cfg.problem_seed, steps=cfg.ops)
    out = sample(qwen, [p.question for p in probs], SamplingConfig(n=1, max_new_tokens=400, temperature=0.0))
    right = [extract_answer(out.text[i][0], MARKERS["qwen2.5-coder"]) == p.answer for i, p in enumerate(probs)]
    record_claim(t1_bon16=t1.curves["tool_rm"][-1], qwen_greedy=float(np.mean(right)),
                 tiny_greedy_pass1=t1.pass_at_1)
    assert t1.curves["tool_rm"][-1] > float(np.mean(right))
