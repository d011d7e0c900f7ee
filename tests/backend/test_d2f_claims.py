"""Claims of D2F on the shipped models (``python -m backend.train d2f``, ``python -m backend.train tinyreasoner``).

ci tier (models loaded once for the module): the student's block-causal invariance; its KV cache is exact (the
cached and the cache-free run of the same schedule give the same tokens); on a fixed subset of 24 unseen problems of
the training templates and numbers (split ``train``, seed 0; training drew the streams 1,000-5,999 of split ``grammar`` for the tiny
reasoner, 1,000-3,999 for the teacher and 500,000-500,599 for the student), D2F reaches >= 95 % of the best vanilla
accuracy (both vanilla decoders, over the whole length and in semi-autoregressive blocks, at 160 / 80 / 40 / 20 steps,
1 / 2 / 4 / 8 of the 160 trained positions per pass)
with fewer forward passes per token than every vanilla setting that reaches that level (the interval of the paired
per-problem ``d2f - 0.95 * vanilla`` recorded: "not resolved" when it contains zero), and decodes faster than the
autoregressive model read at matched accuracy: the AR model runs through the same module and KV cache, the paired
accuracy difference has an interval that reaches zero, and D2F needs fewer passes per token (tokens/s recorded, not
asserted).
full tier: the same comparisons on the 300 problems the subset starts, seven step counts, D2F at tau_conf 0.99 and 1
beside it (what the parallel acceptance costs), and the held-out split (templates never trained on).
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


CI_N, FULL_N = 24, 300
SPEED = ("tokens_per_s", "matched_note")  # timings move with the machine and its load: recorded by the vs-ar claim


def _record(record_claim, rows, verdict) -> None:
    record_claim(**{k: v for k, v in verdict.items() if k != "evaluated" and not k.startswith("ar_")
                    and k != "matched" and not any(w in k for w in SPEED)},
                 rows={r.label: {"accuracy": r.accuracy, "passes_per_token": round(r.passes_per_token, 4)}
                       for r in rows})


def _record_ar(record_claim, rows, verdict) -> None:
    by = {r.decoder: r for r in rows}
    record_claim(**{k: verdict[k] for k in ("ar_gap", "ar_gap_ci", "ar_gap_pairs", "matched")},
                 d2f_passes_per_token=by["d2f"].passes_per_token, ar_passes_per_token=by["ar"].passes_per_token,
                 d2f_accuracy=by["d2f"].accuracy, ar_accuracy=by["ar"].accuracy,
                 tokens_per_s_vs_ar=verdict["tokens_per_s_vs_ar"], d2f_tokens_per_s=by["d2f"].tokens_per_s,
                 ar_tokens_per_s=by["ar"].tokens_per_s)


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
    return _bench(models, CI_N, (160, 80, 40, 20))


SHORT = ("Does not hold on these 24 problems: the teacher's best vanilla setting solves 0.417 (semi-AR blocks, 160 "
         "steps over 160 positions, 3.96 passes per token; the confidence-threshold decoder 0.208 at 0.26), D2F "
         "distilled with the released loss solves 0.292 at 0.245 passes per token, 0.70 of the best vanilla accuracy "
         "(d2f - 0.95 x vanilla: -0.104, interval [-0.242, +0.034]); the autoregressive model both start from solves "
         "0.958: the masked-diffusion adaptation loses much of the AR model's arithmetic. D2F needs fewer passes per "
         "token than every vanilla setting.")


@pytest.mark.xfail(strict=True, reason=SHORT)
def test_d2f_reaches_vanilla_accuracy_with_fewer_passes_ci(ci_bench, record_claim) -> None:
    rows, v = ci_bench
    _record(record_claim, rows, v)
    assert v["comparable"], v  # best vanilla accuracy >= MIN_VANILLA_ACCURACY (4 of the 16 problems)
    assert v["reaches_95"], v
    assert v["fewer_passes"], v


AR_SHORT = ("Does not hold on the miniature: no D2F setting here matches AR's accuracy (0.292 vs 0.958 on 24 "
            "problems, difference -0.67, interval [-0.87, -0.46]), so its speed is not compared at matched accuracy. "
            "D2F needs fewer forward passes per token (0.245 vs 1.025) and decodes more tokens per second than AR "
            "through the same module and KV cache (about 1,000 vs 830 on a shared core: D2F 1.20x).")


@pytest.mark.xfail(strict=True, reason=AR_SHORT)
def test_d2f_faster_than_ar_at_matched_accuracy_ci(ci_bench, record_claim) -> None:
    rows, v = ci_bench
    _record_ar(record_claim, rows, v)
    by = {r.decoder: r for r in rows}
    assert by["d2f"].passes_per_token < by["ar"].passes_per_token
    assert v["matched"], v["matched_note"]


AR_FULL = ("Does not hold on the ci subset (D2F 0.292 vs AR 0.958 on 24 problems: no matched accuracy); this run "
           "measures it on 300 problems (claims/d2f.measured.json)")
FULL = ("Does not hold on the ci subset (best vanilla 0.417, D2F 0.292, AR 0.958 on 24 problems); this run "
        "measures it on 300 problems with seven step counts, D2F at tau_conf 0.99 and 1 beside it "
        "(claims/d2f.measured.json)")


@pytest.fixture(scope="module")
def full_bench(models):
    from backend.reasoning.d2f.evaluate import VANILLA_STEPS

    return _bench(models, FULL_N, VANILLA_STEPS)


@pytest.mark.full
@pytest.mark.timeout(3600)  # 300 problems x 17 decoder settings, then the tau_conf sweep and the heldout split
@pytest.mark.xfail(strict=True, reason=FULL)
def test_d2f_reaches_vanilla_accuracy_with_fewer_passes_full(models, full_bench, record_claim) -> None:
    from backend.reasoning.d2f.decode import D2FConfig
    from backend.reasoning.d2f.evaluate import evaluate
    from backend.reasoning.tasks import generate

    rows, v = full_bench
    _record(record_claim, rows, v)
    sweep, problems = {}, generate(FULL_N, "train", seed=0, steps=(1, 3))  # the problems _bench drew
    for tau in (0.99, 1.0):
        cfg = D2FConfig(block=models.block, tau_conf=tau, max_new=models.length)
        (r,) = evaluate(models, problems, cfg, decoders=("d2f",))
        sweep[f"tau_conf {tau}"] = {"accuracy": r.accuracy, "passes_per_token": round(r.passes_per_token, 4)}
    record_claim(d2f_tau_conf=sweep)
    held, hv = _bench(models, 50, (160, 40), split="heldout")
    record_claim(heldout={r.label: r.accuracy for r in held})
    assert v["comparable"], v
    assert v["reaches_95"], v
    assert v["fewer_passes"], v


@pytest.mark.full
@pytest.mark.timeout(3600)
@pytest.mark.xfail(strict=True, reason=AR_FULL)
def test_d2f_faster_than_ar_at_matched_accuracy_full(full_bench, record_claim) -> None:
    rows, v = full_bench
    _record_ar(record_claim, rows, v)
    by = {r.decoder: r for r in rows}
    assert by["d2f"].passes_per_token < by["ar"].passes_per_token
    assert v["matched"], v["matched_note"]
