"""Claims of SwiReasoning on the miniature, with the released evaluation's protocols: accuracy runs without a switch
cap (alpha0 0.6), token-efficiency runs with C_max = 2 (alpha0 0.5); sampled decoders at temperature 0.6, top-p 0.95,
top-k 20. Real decodes of the trained tiny reasoner and of SmolLM2-135M-Instruct.

The tiny reasoner solves none of the heldout problems (templates and a number range it never saw in training) with
any decoder, so a gain there is not measurable (claims/swireasoning.toml says so); the gains are measured on
in-distribution problems (split ``train`` drawn from generator seed 0, a stream training never used), paired over the
same problems with intervals (accuracy: Student-t of the per-problem differences; token efficiency, a ratio of means:
a paired bootstrap).

ci tier: a fixed subset of 40 in-distribution problems at budget 56 (tight: their reference solutions, ``<think>``
through ``<eos>``, average 64.6 tokens and 18 of the 40 fit in 56), SwiReasoning greedy against CoT greedy under each
protocol; the per-decoder table on 16 heldout problems at budget 48; three SmolLM2 problems with two decoders.
full tier: the 300 in-distribution problems the subset starts, budgets 56 and 80, greedy and sampled; the heldout
sweep over budgets 24..192 (100 problems, all six decoders); SmolLM2 on 20 heldout problems at budgets 64..512;
Qwen2.5-Coder-1.5B on 12 heldout problems at budget 256 (skipped when it is not installed).

The tiny reasoner's budgets are tight for its problems: its reference solutions (numbers zero-padded to four digits)
average 64.6 tokens on the 40 ci problems, 59.7 on the 300 and 77.2 on the 16 heldout ones. Each budget is a
multiple of 8 below or near that length (W = budget / 8 stays whole):
56 for the ci pairs (18 of the 40 solutions fit), 56 and 80 in the full tier (74 % fit in 80), 48 for the heldout
table (3 of 16 fit).

Token efficiency is accuracy per generated token; its gain is SwiReasoning's over CoT's at the same budget, minus 1.
"""

from __future__ import annotations

import pytest

from backend.reasoning import tasks
from backend.reasoning.swireasoning.decoder import evaluate, protocol_config

CI_N, CI_BUDGETS = 16, (48,)
CI_PAIRED_N, CI_PAIRED_BUDGET, FULL_PAIRED_N, FULL_PAIRED_BUDGETS = 40, 56, 300, (56, 80)
CI_DECODERS = ("swireasoning", "cot_greedy", "soft_thinking", "budget_forced")
PAPER_ACC_GAIN, PAPER_EFF_GAIN = 0.015, 0.56  # the lower ends of the paper's +1.5-2.8 % and +56-79 %


def _table(lm, n, decoders, budgets, seed=0, split="heldout"):
    rows = evaluate(lm, tasks.generate(n, split, seed=seed), list(decoders), list(budgets), protocol_config("accuracy"))
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


def _paired(lm, n, budgets, decoders=("swireasoning", "cot_greedy")) -> dict:
    """Each protocol's rows on the same ``n`` in-distribution problems: ``{(protocol, decoder, budget): EvalRow}``.
    CoT reads neither the switch cap nor alpha, so its rows are decoded once (under the accuracy protocol) and shared."""
    problems = tasks.generate(n, "train", seed=0)
    out = {}
    for protocol in ("accuracy", "efficiency"):
        names = [d for d in decoders if protocol == "accuracy" or d.startswith("swireasoning")]
        for r in evaluate(lm, problems, names, list(budgets), protocol_config(protocol)):
            out[(protocol, r.decoder, r.budget)] = r
    for (protocol, d, b), r in list(out.items()):
        if protocol == "accuracy" and not d.startswith("swireasoning"):
            out[("efficiency", d, b)] = r
    return out


def _accuracy_ci(ours, base):
    from backend.stats import paired_ci

    return paired_ci(ours.correct, base.correct)


def _efficiency_ci(ours, base):
    """Gain of accuracy per token (a ratio of means), paired bootstrap over the problems."""
    import numpy as np

    from backend.stats import paired_bootstrap

    def gain(c1, t1, c0, t0):
        e0 = c0.mean() / max(t0.mean(), 1e-9)
        return (c1.mean() / max(t1.mean(), 1e-9)) / e0 - 1 if e0 > 0 else np.nan

    return paired_bootstrap(gain, ours.correct, ours.tokens, base.correct, base.tokens)


def _record_pair(record_claim, t, protocol, budget, ours="swireasoning", base="cot_greedy", prefix="") -> tuple:
    o, c = t[(protocol, ours, budget)], t[(protocol, base, budget)]
    acc, eff = _accuracy_ci(o, c), _efficiency_ci(o, c)
    record_claim(**acc.numbers(f"{prefix}accuracy_gain"), **eff.numbers(f"{prefix}efficiency_gain"),
                 **{f"{prefix}swir_accuracy": o.accuracy, f"{prefix}cot_accuracy": c.accuracy,
                    f"{prefix}swir_tokens": o.mean_tokens, f"{prefix}cot_tokens": c.mean_tokens})
    return acc, eff


@pytest.fixture(scope="module")
def ci_paired(tiny):
    return _paired(tiny, CI_PAIRED_N, (CI_PAIRED_BUDGET,))


def test_tinyreasoner_heldout_accuracy_and_tokens_per_decoder(ci_table, record_claim) -> None:
    record_claim(**_numbers(ci_table))
    for (_, b), r in ci_table.items():
        assert r.n == CI_N and 0 < r.mean_tokens <= b and 0 <= r.accuracy <= r.answered <= 1
    assert ci_table[("cot_greedy", CI_BUDGETS[0])].answered >= 0.9  # the trained format: it closes its reasoning and answers


EFF_REASON = (
    "Does not hold on the miniature. Released efficiency protocol (C_max = 2, alpha0 0.5), the same 40 problems at "
    "budget 56: SwiReasoning 0.025 in 18.9 tokens vs CoT greedy 0.475 in 45.6; accuracy per token -87 %, paired "
    "bootstrap interval [-100 %, -60 %] (the paper: +56 to +79 %). The cap cuts most answers short.")


def test_swireasoning_accuracy_gain_over_cot_released_protocol(ci_paired, record_claim) -> None:
    """Holds when the gain reaches the paper's smallest one; not resolved when only its interval does (it contains
    zero); does not hold when the interval lies below it."""
    acc, _ = _record_pair(record_claim, ci_paired, "accuracy", CI_PAIRED_BUDGET)
    assert acc.high >= PAPER_ACC_GAIN


@pytest.mark.xfail(strict=True, reason=EFF_REASON)
def test_swireasoning_token_efficiency_gain_over_cot_released_protocol(ci_paired, record_claim) -> None:
    _, eff = _record_pair(record_claim, ci_paired, "efficiency", CI_PAIRED_BUDGET)
    assert eff.high >= PAPER_EFF_GAIN


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
FULL_SMOL_BUDGETS = (64, 128, 256, 512)
FULL_DECODERS = ("swireasoning", "swireasoning_sample", "cot_greedy", "cot_sample", "soft_thinking", "budget_forced")
SMOL_DECODERS = ("swireasoning", "cot_greedy", "soft_thinking", "budget_forced")


@pytest.fixture(scope="module")
def full_tiny(tiny):
    return _table(tiny, 100, FULL_DECODERS, FULL_TINY_BUDGETS)


@pytest.fixture(scope="module")
def full_smol(smollm2):
    return _table(smollm2, 20, SMOL_DECODERS, FULL_SMOL_BUDGETS)


@pytest.mark.full
def test_full_tinyreasoner_sweep(full_tiny, record_claim) -> None:
    record_claim(**_numbers(full_tiny))
    assert all(0 < r.mean_tokens <= b for (_, b), r in full_tiny.items())


@pytest.fixture(scope="module")
def full_paired(tiny):
    return _paired(tiny, FULL_PAIRED_N, FULL_PAIRED_BUDGETS,
                   ("swireasoning", "cot_greedy", "swireasoning_sample", "cot_sample"))


FULL_ACC_REASON = ("On the ci subset the gain is negative, -0.050 with interval [-0.121, +0.021] on 40 problems at budget "
                   "56 (not resolved there); this run measures it on 300 problems at budgets 56 and 80 "
                   "(claims/swireasoning.measured.json)")
FULL_EFF_REASON = ("Does not hold on the ci subset (efficiency gain -87 %, interval [-100 %, -60 %] on 40 problems at "
                   "budget 56); this run measures it on 300 problems at budgets 56 and 80 "
                   "(claims/swireasoning.measured.json)")


@pytest.mark.full
@pytest.mark.timeout(5400)  # 300 problems x 4 decoders x 2 budgets, and the capped SwiReasoning runs
@pytest.mark.xfail(strict=True, reason=FULL_ACC_REASON)
def test_full_swireasoning_accuracy_gain_released_protocol(full_paired, record_claim) -> None:
    gains = []
    for b in FULL_PAIRED_BUDGETS:
        acc, _ = _record_pair(record_claim, full_paired, "accuracy", b, prefix=f"b{b}_")
        _record_pair(record_claim, full_paired, "accuracy", b, "swireasoning_sample", "cot_sample",
                     prefix=f"sampled_b{b}_")
        gains.append(acc.high)
    assert min(gains) >= PAPER_ACC_GAIN


@pytest.mark.full
@pytest.mark.timeout(5400)
@pytest.mark.xfail(strict=True, reason=FULL_EFF_REASON)
def test_full_swireasoning_efficiency_gain_released_protocol(full_paired, record_claim) -> None:
    gains = []
    for b in FULL_PAIRED_BUDGETS:
        _, eff = _record_pair(record_claim, full_paired, "efficiency", b, prefix=f"b{b}_")
        gains.append(eff.high)
    assert min(gains) >= PAPER_EFF_GAIN


@pytest.mark.full
@pytest.mark.timeout(3600)  # the fixture decodes 20 problems x 4 decoders x 4 budgets: about 25 minutes on one core
def test_full_smollm2_sweep(full_smol, record_claim) -> None:
    record_claim(**_numbers(full_smol))
    assert all(0 < r.mean_tokens <= b for (_, b), r in full_smol.items())


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
