"""Claims of STaMP on SmolLM2-135M-Instruct (the embedded model), every decoder linear input fake-quantized during
prefill, held-out windows of the built-in Python reference text.

ci tier: 2 held-out windows of 256 tokens, the model loaded once per module: Theorem 1 per sample inside the model,
the per-layer energy concentration of the Haar coefficients, and the perplexity ordering at 4-bit activations
(A4 + STaMP below A4 and below the same average bits without a transform; Hadamard + STaMP below Hadamard).
full tier: 8 windows of 256 tokens, the whole table (A4, A4 + STaMP, Hadamard, Hadamard + STaMP, SmoothQuant, A8,
dense) and the sink ablation (the first token inside the transform, the first measurement of the diagnosis).
"""

from __future__ import annotations

import pytest

from backend.compression.stamp import hooks as sh

CI_WINDOWS = 2
FULL_WINDOWS = 8
HEADLINE = ("dense", "a4", "a4_first_k", "stamp", "hadamard", "hadamard_stamp")


@pytest.fixture(scope="module")
def smollm2():
    from backend.models import load

    return load("smollm2")


@pytest.fixture(scope="module")
def ci_eval(smollm2):
    cfg = sh.EvalConfig(seqlen=256, n_windows=CI_WINDOWS, methods=HEADLINE, stats=True, batch_size=2,
                        energy_transforms=("identity", "haar", "dct"))
    res = sh.evaluate(smollm2.model, smollm2.tokenizer, None, cfg)
    print("ci-tier STaMP table:", {r["method"]: round(r["ppl"], 3) for r in res.rows})
    return res


def _ppl(res: sh.StampResult) -> dict[str, float]:
    return {r["method"]: r["ppl"] for r in res.rows}


def test_claim_theorem1_bound_per_sample_in_the_model(ci_eval, record_claim):
    rows = {r["method"]: r for r in ci_eval.rows}
    viol = {m: rows[m]["bound_violations"] for m in ("stamp", "hadamard_stamp", "a4", "hadamard")}
    ratio = {m: rows[m]["bound_ratio"] for m in viol}
    record_claim(violations=sum(viol.values()), stamp_error_over_bound=ratio["stamp"],
                 hadamard_stamp_error_over_bound=ratio["hadamard_stamp"])
    assert sum(viol.values()) == 0, viol
    assert all(0 < v < 1 for v in ratio.values()), ratio


def test_claim_energy_concentration_per_layer(ci_eval, record_claim):
    share = ci_eval.energy  # {transform: {linear: [per layer]}}
    haar_min = min(min(v) for v in share["haar"].values())
    dct_min = min(min(v) for v in share["dct"].values())
    haar_mean = sum(sum(v) / len(v) for v in share["haar"].values()) / len(share["haar"])
    raw_mean = sum(sum(v) / len(v) for v in share["identity"].values()) / len(share["identity"])
    record_claim(haar_min_share=haar_min, dct_min_share=dct_min, haar_mean_share=haar_mean, raw_mean_share=raw_mean)
    assert haar_min > 1 / 8 and dct_min > 1 / 8
    assert haar_mean > raw_mean


def test_claim_stamp_beats_a4_and_same_bits_without_transform(ci_eval, record_claim):
    p = _ppl(ci_eval)
    bits = {r["method"]: r["avg_bits"] for r in ci_eval.rows}
    record_claim(a4=p["a4"], a4_first_k=p["a4_first_k"], stamp=p["stamp"], avg_bits=bits["stamp"])
    assert bits["stamp"] <= 4.25 and bits["a4_first_k"] == bits["stamp"]
    assert p["stamp"] < p["a4"]
    assert p["stamp"] < p["a4_first_k"]


def test_claim_hadamard_stamp_beats_hadamard(ci_eval, record_claim):
    p = _ppl(ci_eval)
    record_claim(hadamard=p["hadamard"], hadamard_stamp=p["hadamard_stamp"])
    assert p["hadamard_stamp"] < p["hadamard"]


@pytest.fixture(scope="module")
def full_eval(smollm2):
    cfg = sh.EvalConfig(seqlen=256, n_windows=FULL_WINDOWS, stats=False, batch_size=2)
    res = sh.evaluate(smollm2.model, smollm2.tokenizer, None, cfg)
    print("full-tier STaMP table:", {r["method"]: round(r["ppl"], 3) for r in res.rows}, flush=True)
    nosink = sh.evaluate(smollm2.model, smollm2.tokenizer, None, sh.EvalConfig(
        seqlen=256, n_windows=FULL_WINDOWS, stats=False, batch_size=2, sink_tokens=0,
        methods=("stamp", "hadamard_stamp")))
    print("without the sink rule:", {r["method"]: round(r["ppl"], 3) for r in nosink.rows}, flush=True)
    return res, nosink


@pytest.mark.full
@pytest.mark.timeout(7200)
def test_claim_full_table(full_eval, record_claim):
    res, nosink = full_eval
    p = _ppl(res)
    q = _ppl(nosink)
    record_claim(**{m: p[m] for m in p}, stamp_sink_inside=q["stamp"], hadamard_stamp_sink_inside=q["hadamard_stamp"])
    assert p["stamp"] < p["a4"] and p["stamp"] < p["a4_first_k"]
    assert p["hadamard_stamp"] < p["hadamard"] and p["hadamard_stamp"] < p["hadamard_first_k"]
    assert p["a8"] < p["a4"] and p["dense"] <= p["a8"] * 1.05


def test_attention_sink_profile_and_short_text(ci_eval, smollm2, record_claim):
    """The diagnosis behind the sink rule: the first token's linear inputs carry massive values in some layers."""
    from backend.errors import InputError

    down = ci_eval.sink["absmax_ratio"]["down"]
    record_claim(down_absmax_ratio_max=max(down), down_absmax_ratio_layer=down.index(max(down)))
    assert max(down) > 10
    with pytest.raises(InputError, match="tokens"):
        sh.evaluate(smollm2.model, smollm2.tokenizer, "def f():\n    return 1\n", sh.EvalConfig(methods=("a4",)))
