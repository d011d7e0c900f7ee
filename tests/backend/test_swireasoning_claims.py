"""Claims of SwiReasoning on the miniature: held-out problems (generator split ``heldout``: templates and a number
range the tiny reasoner never saw in training), real decodes of the trained tiny reasoner and of SmolLM2-135M-Instruct.

The tiny reasoner solves almost none of the heldout problems with any decoder (its manifest row: greedy 0.000 on
the heldout split, 0.060 with held-out numbers only), so every claim test also measures it on in-distribution
problems (split ``train`` drawn from generator seed 0, a stream training never used), where decoders can differ.

ci tier: the tiny reasoner on 16 heldout problems at budget 32 (tight: its solutions average 45 tokens),
four decoders (SwiReasoning greedy, CoT greedy, latent-only soft thinking, budget-forced CoT): accuracy,
tokens-to-answer, answered share; the paper's accuracy and token-efficiency gains at budget 32, heldout and
in-distribution (24 problems); three SmolLM2 problems with two decoders.
full tier: the tiny reasoner on 100 heldout problems at budgets 24..192 and 100 in-distribution problems at the tight
budgets 24 / 32 / 48, all six decoders; SmolLM2 on 20 heldout problems at budgets 64..512; Qwen2.5-Coder-1.5B on 12
heldout problems at budget 256 (skipped when it is not installed).

Token efficiency is accuracy per generated token; its gain is SwiReasoning's over CoT's at the same budget, minus 1.
"""

from __future__ import annotations

import pytest

from backend.reasoning import tasks
from backend.reasoning.swireasoning.decoder import SwiRConfig, evaluate

CI_N, CI_INDIST_N, CI_BUDGETS = 16, 24, (32,)
CI_DECODERS = ("swireasoning", "cot_greedy", "soft_thinking", "budget_forced")
PAPER_ACC_GAIN, PAPER_EFF_GAIN = 0.015, 0.56  # the lower ends of the paper's +1.5-2.8 % and +56-79 %


def _table(lm, n, decoders, budgets, seed=0, split="heldout"):
    rows = evaluate(lm, tasks.generate(n, split, seed=seed), list(decoders), list(budgets), SwiRConfig())
    return {(r.decoder, r.budget): r for r in rows}


def _numbers(t) -> dict:
    out = {}
    for (d, b), r in sorted(t.items()):
        out[f"{d}_{b}_accuracy"] = r.accuracy
        out[f"{d}_{b}_tokens"] = r.mean_tokens
        out[f"{d}_{b}_answered"] = r.answered
    return out


def _gains(t, budgets, ours="swireasoning", base="cot_greedy") -> tuple[float, float | None]:
    """Mean accuracy gain and mean token-efficiency gain of ``ours`` over ``base`` across ``budgets`` (the efficiency
    gain over the budgets where ``base`` answers any problem right; None when it answers none)."""
    acc, eff = [], []
    for b in budgets:
        o, c = t[(ours, b)], t[(base, b)]
        acc.append(o.accuracy - c.accuracy)
        eo, ec = o.accuracy / max(o.mean_tokens, 1e-9), c.accuracy / max(c.mean_tokens, 1e-9)
        eff.append(eo / ec - 1 if ec > 0 else None)
    known = [e for e in eff if e is not None]
    return sum(acc) / len(acc), (sum(known) / len(known) if known else None)


@pytest.fixture(scope="module")
def tiny():
    from backend.reasoning.lm import load_reasoning_lm

    return load_reasoning_lm("tinyreasoner")


@pytest.fixture(scope="module")
def ci_table(tiny):
    return _table(tiny, CI_N, CI_DECODERS, CI_BUDGETS)


@pytest.fixture(scope="module")
def ci_indist(tiny):
    """In-distribution problems (split ``train``, generator seed 0: the training stream drew seeds 1000-6999,
    never 0), where the tiny reasoner is right often enough for decoders to differ."""
    return _table(tiny, CI_INDIST_N, ("swireasoning", "cot_greedy", "soft_thinking"), (32,), split="train")


def test_tinyreasoner_heldout_accuracy_and_tokens_per_decoder(ci_table, record_claim) -> None:
    record_claim(**_numbers(ci_table))
    for (_, b), r in ci_table.items():
        assert r.n == CI_N and 0 < r.mean_tokens <= b and 0 <= r.accuracy <= r.answered <= 1
    assert ci_table[("cot_greedy", 32)].answered >= 0.9  # the trained format: it closes its reasoning and answers


CAP_NOTE = ("With C_max = 2 and W = budget / 8 = 4 the switch cap injects the end marker at the second "
            "latent -> explicit switch, which cuts the reasoning short (12.7 tokens against CoT's 25.3); measured on "
            "the same 24 problems at budget 32: C_max = 4 gives 0.208 in 22.4 tokens, no cap 0.375 in 25.6, "
            "CoT greedy 0.583 in 25.3 (0.625 in 32.7 at budget 64)")


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on the miniature. Heldout split: every decoder at 0 % (the tiny reasoner does not generalise to "
    "the unseen templates and operand range), so the gain is 0. In-distribution (split train, unseen draws, 24 "
    "problems) at budget 32: SwiReasoning 8.3 % vs CoT greedy 58.3 % (-50.0 points), latent-only soft thinking "
    "45.8 %. Latent steps hurt a model that never saw soft embeddings (soft thinking -12.5 points against CoT), and "
    + CAP_NOTE + "."))
def test_swireasoning_accuracy_gain_over_cot_tight_budget(ci_table, ci_indist, record_claim) -> None:
    acc, eff = _gains(ci_table, [32])
    acc_in, eff_in = _gains(ci_indist, [32])
    record_claim(accuracy_gain=acc, swir_accuracy=ci_table[("swireasoning", 32)].accuracy,
                 cot_accuracy=ci_table[("cot_greedy", 32)].accuracy, indist_accuracy_gain=acc_in,
                 indist_swir_accuracy=ci_indist[("swireasoning", 32)].accuracy,
                 indist_cot_accuracy=ci_indist[("cot_greedy", 32)].accuracy,
                 indist_soft_accuracy=ci_indist[("soft_thinking", 32)].accuracy)
    assert acc >= PAPER_ACC_GAIN and acc_in >= PAPER_ACC_GAIN


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on the miniature. In-distribution (split train, unseen draws) at budget 32: SwiReasoning 8.3 % "
    "in 12.7 tokens vs CoT greedy 58.3 % in 25.3 tokens, accuracy per token -72 % (the paper: +56 to +79 %). It "
    "spends half the tokens, but its accuracy falls faster. " + CAP_NOTE + "; accuracy per token stays below "
    "CoT's at every cap (-37 % without a cap). Heldout split: every decoder at 0 %, so no efficiency is defined."))
def test_swireasoning_token_efficiency_gain_over_cot_tight_budget(ci_table, ci_indist, record_claim) -> None:
    acc, eff = _gains(ci_table, [32])
    acc_in, eff_in = _gains(ci_indist, [32])
    record_claim(efficiency_gain=eff, swir_tokens=ci_table[("swireasoning", 32)].mean_tokens,
                 cot_tokens=ci_table[("cot_greedy", 32)].mean_tokens, indist_efficiency_gain=eff_in,
                 indist_swir_tokens=ci_indist[("swireasoning", 32)].mean_tokens,
                 indist_cot_tokens=ci_indist[("cot_greedy", 32)].mean_tokens)
    assert eff_in is not None and eff_in >= PAPER_EFF_GAIN and (eff is None or eff >= PAPER_EFF_GAIN)


@pytest.fixture(scope="module")
def smollm2():
    from backend.reasoning.lm import load_reasoning_lm

    return load_reasoning_lm("smollm2")


def test_smollm2_answers_with_every_decoder(smollm2, record_claim) -> None:
    """A few SmolLM2 generations: the chat prompt makes it close its reasoning and answer."""
    t = _table(smollm2, 3, ("cot_greedy", "swireasoning"), (64,))
    record_claim(**_numbers(t))
    assert t[("cot_greedy", 64)].answered >= 2 / 3


# ------------------------------------------------------------------------------------------------ full tier
FULL_TINY_BUDGETS = (24, 32, 48, 64, 128, 192)
TIGHT_TINY = (24, 32, 48)
FULL_SMOL_BUDGETS = (64, 128, 256, 512)
TIGHT_SMOL = (64, 128)
FULL_DECODERS = ("swireasoning", "swireasoning_sample", "cot_greedy", "cot_sample", "soft_thinking", "budget_forced")
SMOL_DECODERS = ("swireasoning", "cot_greedy", "soft_thinking", "budget_forced")


@pytest.fixture(scope="module")
def full_tiny(tiny):
    return _table(tiny, 100, FULL_DECODERS, FULL_TINY_BUDGETS)


@pytest.fixture(scope="module")
def full_tiny_indist(tiny):
    return _table(tiny, 100, FULL_DECODERS, TIGHT_TINY, split="train")


@pytest.fixture(scope="module")
def full_smol(smollm2):
    return _table(smollm2, 20, SMOL_DECODERS, FULL_SMOL_BUDGETS)


@pytest.mark.full
def test_full_tinyreasoner_sweep(full_tiny, full_tiny_indist, record_claim) -> None:
    record_claim(**_numbers(full_tiny), **{f"indist_{k}": v for k, v in _numbers(full_tiny_indist).items()})
    assert all(0 < r.mean_tokens <= b for t in (full_tiny, full_tiny_indist) for (_, b), r in t.items())


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on the ci subset (SwiReasoning -0.50 against CoT greedy at budget 32 in distribution, both near "
    "zero on the heldout split); this run measures it on 100 problems per split, mean over budgets 24 / 32 / 48 "
    "(claims/swireasoning.measured.json). Causes as on the ci subset: latent steps and the switch cap at C_max = 2"))
def test_full_tinyreasoner_accuracy_gain_tight_budgets(full_tiny, full_tiny_indist, record_claim) -> None:
    acc, eff = _gains(full_tiny, TIGHT_TINY)
    acc_in, eff_in = _gains(full_tiny_indist, TIGHT_TINY)
    acc_s, eff_s = _gains(full_tiny_indist, TIGHT_TINY, "swireasoning_sample", "cot_sample")
    record_claim(accuracy_gain=acc, indist_accuracy_gain=acc_in, indist_sampled_accuracy_gain=acc_s)
    assert acc >= PAPER_ACC_GAIN and acc_in >= PAPER_ACC_GAIN


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on the ci subset (accuracy per token 72 % below CoT greedy's at budget 32 in distribution); this "
    "run measures it on 100 problems per split, mean over budgets 24 / 32 / 48 (claims/swireasoning.measured.json)"))
def test_full_tinyreasoner_efficiency_gain_tight_budgets(full_tiny, full_tiny_indist, record_claim) -> None:
    acc, eff = _gains(full_tiny, TIGHT_TINY)
    acc_in, eff_in = _gains(full_tiny_indist, TIGHT_TINY)
    acc_s, eff_s = _gains(full_tiny_indist, TIGHT_TINY, "swireasoning_sample", "cot_sample")
    record_claim(efficiency_gain=eff, indist_efficiency_gain=eff_in, indist_sampled_efficiency_gain=eff_s)
    assert eff_in is not None and eff_in >= PAPER_EFF_GAIN and (eff is None or eff >= PAPER_EFF_GAIN)


@pytest.mark.full
@pytest.mark.timeout(3600)  # the fixture decodes 20 problems x 4 decoders x 4 budgets: about 25 minutes on one core
def test_full_smollm2_sweep(full_smol, record_claim) -> None:
    record_claim(**_numbers(full_smol))
    assert all(0 < r.mean_tokens <= b for (_, b), r in full_smol.items())


SMOL_REASON = (
    "Does not hold on the miniature: SmolLM2-135M answers every one of the 20 heldout problems (answered 100 % "
    "with every decoder and budget) but none right (0 % for SwiReasoning, CoT greedy, soft thinking and budget "
    "forcing at budgets 64-512; it writes steps such as '32 - 37 = 10'), so the accuracy gain is 0 and no token "
    "efficiency is defined. Mean tokens: CoT 33.4 at every budget; SwiReasoning 25.6 / 33.0 / 32.5 / 35.3; latent-only "
    "soft thinking runs on to 47.5 / 78.0 / 135.7 / 250.8 tokens (latent steps derail a model that never saw soft "
    "embeddings).")


@pytest.mark.full
@pytest.mark.timeout(3600)  # builds the SmolLM2 sweep when run alone
@pytest.mark.xfail(strict=True, reason=SMOL_REASON)
def test_full_smollm2_accuracy_gain_tight_budgets(full_smol, record_claim) -> None:
    acc, eff = _gains(full_smol, TIGHT_SMOL)
    record_claim(accuracy_gain=acc, efficiency_gain=eff)
    assert acc >= PAPER_ACC_GAIN


@pytest.mark.full
@pytest.mark.timeout(3600)  # builds the SmolLM2 sweep when run alone
@pytest.mark.xfail(strict=True, reason=SMOL_REASON)
def test_full_smollm2_efficiency_gain_tight_budgets(full_smol, record_claim) -> None:
    acc, eff = _gains(full_smol, TIGHT_SMOL)
    record_claim(efficiency_gain=eff)
    assert eff is not None and eff >= PAPER_EFF_GAIN


@pytest.mark.full
@pytest.mark.timeout(5400)  # first use converts the GGUF (about 7 minutes); then about 2 tokens/s on one thread
def test_full_qwen_coder_few_problems(record_claim) -> None:
    from backend.models import coder

    if not coder.installed():
        pytest.skip(f"Qwen2.5-Coder-1.5B is not installed ({coder.INSTALL_COMMAND})")
    from backend.reasoning.lm import load_reasoning_lm

    t = _table(load_reasoning_lm("qwen2.5-coder"), 12, ("swireasoning", "cot_greedy"), (256,))
    acc, eff = _gains(t, [256])
    record_claim(**_numbers(t), accuracy_gain=acc, efficiency_gain=eff)
    assert t[("cot_greedy", 256)].answered >= 0.5
