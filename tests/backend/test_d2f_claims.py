"""Claims of D2F on the shipped models (``python -m backend.train d2f``, ``python -m backend.train tinyreasoner``).

ci tier (models loaded once for the module): the student's block-causal invariance; its KV cache is exact (the
cached and the cache-free run of the same schedule give the same tokens); on 16 unseen problems of the training
templates and numbers (split ``train``, seed 0; training drew the streams 1,000-6,999 for the tiny reasoner,
1,000-3,999 for the teacher and 500,000-500,599 for the student), D2F reaches >= 95 % of the best vanilla accuracy
(both vanilla decoders, over the whole length and in semi-autoregressive blocks, at 96 / 48 / 24 / 12 steps) with fewer
forward passes per token than every vanilla setting that reaches that level, and needs fewer passes per token than the
autoregressive baseline (tokens/s are recorded beside it, not asserted).
full tier: the same comparison on 100 problems and seven step counts, D2F at tau_conf 0.99 and 1 beside it (what the
parallel acceptance costs), and the held-out split (templates never trained on).
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def models():
    from backend.reasoning.d2f.evaluate import load_models

    return load_models()


def _bench(models, n: int, steps: tuple[int, ...], split: str = "train"):
    from backend.reasoning.d2f.evaluate import claim_verdict, evaluate
    from backend.reasoning.tasks import generate

    rows = evaluate(models, generate(n, split, seed=0, steps=(1, 3)),
                    decoders=("d2f", "vanilla", "vanilla_blocks", "threshold", "ar"), vanilla_steps=steps)
    return rows, claim_verdict(rows)


def _record(record_claim, rows, verdict) -> None:
    # tokens/s move with the machine and its load: the vs-ar claim records them with a wide tolerance, not here
    record_claim(**{k: v for k, v in verdict.items() if k not in ("evaluated",) and "tokens_per_s" not in k},
                 rows={r.label: {"accuracy": r.accuracy, "passes_per_token": round(r.passes_per_token, 4)}
                       for r in rows})


def test_block_causal_invariance_of_the_shipped_student(models, record_claim) -> None:
    from backend.reasoning.d2f.evaluate import block_invariance

    inv = block_invariance(models, seed=0, trials=4)
    record_claim(**inv)
    assert inv["student_max_abs_change"] <= 1e-6
    assert inv["teacher_max_abs_change"] > 1e-3  # the bidirectional teacher does depend on later blocks


def test_cache_is_exact_on_the_shipped_student(models) -> None:
    from backend.reasoning.d2f.evaluate import run_one
    from backend.reasoning.tasks import generate

    for p in generate(4, "heldout", seed=3, steps=(1, 3)):
        a, b = run_one(models, p.question, "d2f"), run_one(models, p.question, "d2f_nocache")
        assert a["result"].tokens == b["result"].tokens
        assert a["forward_passes"] == b["forward_passes"]


@pytest.fixture(scope="module")
def ci_bench(models):
    return _bench(models, 16, (96, 48, 24, 12))


SHORT = ("Does not hold: the comparison is not even comparable on this tiny model. On these 16 problems the "
         "teacher adapted from the retrained tiny reasoner solves at most 2 (best vanilla 0.125 at 96 steps over the "
         "whole length, 4.02 passes per token; the threshold decoder 0.125), D2F 0.0625 at 0.73 passes per token, "
         "while the autoregressive model it starts from solves 0.6875: 3,000 steps of masked-diffusion adaptation on "
         "the five original templates lose most of the AR model's arithmetic. D2F needs fewer passes per token than "
         "every vanilla setting of 24 steps or more (at 12 steps vanilla uses 0.48-0.53). The full tier measures it "
         "on 100 problems.")


@pytest.mark.xfail(strict=True, reason=SHORT)
def test_d2f_reaches_vanilla_accuracy_with_fewer_passes_ci(ci_bench, record_claim) -> None:
    rows, v = ci_bench
    _record(record_claim, rows, v)
    assert v["comparable"], v  # best vanilla accuracy >= MIN_VANILLA_ACCURACY (4 of the 16 problems)
    assert v["reaches_95"], v
    assert v["fewer_passes"], v


def test_d2f_fewer_passes_per_token_than_ar_ci(ci_bench, record_claim) -> None:
    rows, v = ci_bench
    by = {r.decoder: r for r in rows}
    record_claim(d2f_passes_per_token=by["d2f"].passes_per_token, ar_passes_per_token=by["ar"].passes_per_token,
                 d2f_accuracy=by["d2f"].accuracy, ar_accuracy=by["ar"].accuracy,
                 tokens_per_s_vs_ar=v["tokens_per_s_vs_ar"], d2f_tokens_per_s=by["d2f"].tokens_per_s,
                 ar_tokens_per_s=by["ar"].tokens_per_s)
    assert by["d2f"].passes_per_token < by["ar"].passes_per_token


FULL = ("Does not hold on the ci subset (best vanilla 0.125, D2F 0.0625, AR 0.6875 on 16 problems); this run "
        "measures it on 100 problems with seven step counts, D2F at tau_conf 0.99 and 1 beside it "
        "(claims/d2f.measured.json)")


@pytest.mark.full
@pytest.mark.timeout(1800)  # 100 problems x 11 decoder settings, then the tau_conf sweep and the heldout split
@pytest.mark.xfail(strict=True, reason=FULL)
def test_d2f_reaches_vanilla_accuracy_with_fewer_passes_full(models, record_claim) -> None:
    from backend.reasoning.d2f.decode import D2FConfig
    from backend.reasoning.d2f.evaluate import VANILLA_STEPS, evaluate
    from backend.reasoning.tasks import generate

    rows, v = _bench(models, 100, VANILLA_STEPS)
    _record(record_claim, rows, v)
    sweep, problems = {}, generate(100, "train", seed=0, steps=(1, 3))  # the problems _bench drew
    for tau in (0.99, 1.0):
        cfg = D2FConfig(block=models.block, tau_conf=tau, max_new=models.length)
        (r,) = evaluate(models, problems, cfg, decoders=("d2f",))
        sweep[f"tau_conf {tau}"] = {"accuracy": r.accuracy, "passes_per_token": round(r.passes_per_token, 4)}
    record_claim(d2f_tau_conf=sweep)
    held, hv = _bench(models, 50, (96, 24), split="heldout")
    record_claim(heldout={r.label: r.accuracy for r in held})
    assert v["comparable"], v
    assert v["reaches_95"], v
    assert v["fewer_passes"], v
