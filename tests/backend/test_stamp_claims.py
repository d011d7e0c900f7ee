"""Claims of STaMP on SmolLM2-135M-Instruct (the embedded model), every decoder linear input fake-quantized during
prefill, windows of 256 tokens, k = 8 (4.125 average bits).

Every comparison has its controls at their own average bits: the sink rule alone (token 0 at 8 bits, no sequence
transform: 4 + 4 / 256 = 4.016 bits; ``a4_tok0``, ``hadamard_tok0``) and the first k raw tokens at 8 bits (STaMP's
4.125 bits without the transform; ``a4_first_k``, ``hadamard_first_k``). A comparison between two collapsed models
(both perplexities above ``COLLAPSE`` times dense) is recorded but does not count as holding.

ci tier: a fixed subset, 2 held-out windows of the Python reference text, the model loaded once per module: Theorem 1
per sample inside the model, the energy concentration per layer and linear input, the perplexity orderings.
full tier: 64 windows of each of two texts of different kinds (the held-out Python reference docs; Debian's
licence texts, English legal prose, evaluated whole), the per-window losses compared paired over windows with a
moving-block bootstrap interval (blocks of 4 consecutive windows); the per-window losses are kept in the user cache
(``EvalConfig(cache=True)``), so a rerun on the same machine reads them. Plus the SmoothQuant / A8 references and
the sink ablation on 8 windows.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.compression.stamp import hooks as sh
from backend.compression.stamp.jobs import COLLAPSE, CONTROLS, paired_gain
from backend.stats import paired_ci

CI_WINDOWS = 2
CI_METHODS = ("dense", "a4", "a4_first_k", "stamp", "hadamard", "hadamard_tok0", "hadamard_first_k",
              "hadamard_stamp")
FULL_WINDOWS = 64
FULL_BATCH = 2
FULL_METHODS = ("dense", "hadamard", "hadamard_tok0", "hadamard_first_k", "hadamard_stamp", "a4", "a4_tok0",
                "a4_first_k", "stamp")
FULL_TEXTS = ("reference", "licences")
TABLE_WINDOWS = 8
ENERGY_MAJORITY = 0.9  # the transform must concentrate more than the raw order in at least 90 % of the inputs
A4_CONTROLS = CONTROLS["stamp"]
HADAMARD_CONTROLS = CONTROLS["hadamard_stamp"]


@pytest.fixture(scope="module")
def smollm2():
    from backend.models import load

    return load("smollm2")


@pytest.fixture(scope="module")
def ci_eval(smollm2):
    cfg = sh.EvalConfig(seqlen=256, n_windows=CI_WINDOWS, methods=CI_METHODS, stats=True, batch_size=2,
                        energy_transforms=("identity", "haar", "dct"))
    res = sh.evaluate(smollm2.model, smollm2.tokenizer, None, cfg)
    print("ci-tier STaMP table:", {r["method"]: round(r["ppl"], 3) for r in res.rows})
    return res


def _ppl(res: sh.StampResult) -> dict[str, float]:
    return {r["method"]: r["ppl"] for r in res.rows}


def _bits(res: sh.StampResult) -> dict[str, float]:
    return {r["method"]: r["avg_bits"] for r in res.rows}


def collapsed(ppl: float, dense: float) -> bool:
    return ppl > COLLAPSE * dense


def test_theorem1_bound_per_sample_in_the_model(ci_eval):
    """Theorem 1 is an algebraic bound (true by construction), so it is an invariant, not a claim: every sample of
    every linear input of the model stays under it (tests/backend/test_stamp.py checks it on random and AR(1)
    sequences); here it rides on the claims' evaluation of the model."""
    rows = {r["method"]: r for r in ci_eval.rows}
    viol = {m: rows[m]["bound_violations"] for m in ("stamp", "hadamard_stamp", "a4", "hadamard")}
    ratio = {m: rows[m]["bound_ratio"] for m in viol}
    assert sum(viol.values()) == 0, viol
    assert all(0 < v < 1 for v in ratio.values()), ratio


def _gain_share(share: dict[str, dict[str, list[float]]], transform: str) -> tuple[list[float], list[bool]]:
    """Per (linear input, layer): the transform's share of the energy in the first 1/8 of the rows minus the raw
    order's, and whether it is larger."""
    gains = [t - r for lin in ("q", "o", "gate", "down")
             for t, r in zip(share[transform][lin], share["identity"][lin], strict=True)]
    return gains, [g > 0 for g in gains]


def test_claim_energy_concentration_per_layer(ci_eval, record_claim):
    """Per decoder layer and linear input (q/k/v, o, gate/up, down: 120 inputs): does the Haar DWT put more of the
    energy in its first 1/8 of the rows than the raw token order has in its first 1/8 of the tokens? Measured on the
    tokens STaMP transforms (token 0 kept outside, ``energy_body``) and on whole windows (token 0 inside)."""
    body, whole = ci_eval.energy_body, ci_eval.energy
    n_layers = ci_eval.layers
    g_body, w_body = _gain_share(body, "haar")
    g_whole, w_whole = _gain_share(whole, "haar")
    _, w_dct = _gain_share(body, "dct")
    # per layer: the share of its 4 linear inputs where Haar concentrates more than the raw order
    per_layer = [sum(w_body[i * n_layers + li] for i in range(4)) / 4 for li in range(n_layers)]
    names = [f"{li}.{lin}" for lin in ("q", "o", "gate", "down") for li in range(n_layers)]
    ci = paired_ci(np.array(g_body), np.zeros(len(g_body)))
    record_claim(haar_wins_share=sum(w_body) / len(w_body), haar_wins_share_token0_inside=sum(w_whole) / len(w_whole),
                 dct_wins_share=sum(w_dct) / len(w_dct), inputs=len(w_body), majority_bound=ENERGY_MAJORITY,
                 layers_all_inputs_win=sum(v == 1.0 for v in per_layer), layer_min_share=min(per_layer),
                 haar_loses_at=[n for n, w in zip(names, w_body, strict=True) if not w],
                 haar_loses_at_token0_inside=[n for n, w in zip(names, w_whole, strict=True) if not w],
                 **ci.numbers("share_gain"))
    assert sum(w_body) / len(w_body) >= ENERGY_MAJORITY
    assert sum(w_whole) / len(w_whole) >= ENERGY_MAJORITY
    assert ci.low > 0


COLLAPSED_REASON = (
    "both models collapsed, so the ordering does not count as holding: 4-bit per-token RTN without a feature "
    "rotation destroys SmolLM2-135M (its linear inputs carry outlier features up to ~2,000x the median token), and "
    "STaMP's 8-bit coefficients cannot repair the 4-bit rest")


@pytest.mark.xfail(strict=True, reason=(
    "ci subset (2 windows of the Python reference text): A4 + STaMP 141.5 < the first 8 raw tokens at 8 bits 5,906 < "
    "A4 61,754, but dense is 15.79 and both A4 + STaMP (9.0x dense) and its same-bits control are above 5x dense "
    "(78.9); " + COLLAPSED_REASON))
def test_claim_stamp_beats_a4_and_same_bits_without_transform(ci_eval, record_claim):
    p, bits = _ppl(ci_eval), _bits(ci_eval)
    record_claim(dense=p["dense"], a4=p["a4"], a4_first_k=p["a4_first_k"], stamp=p["stamp"],
                 avg_bits=bits["stamp"], a4_first_k_bits=bits["a4_first_k"], collapse_bound=COLLAPSE * p["dense"])
    assert bits["stamp"] <= 4.25 and bits["a4_first_k"] == bits["stamp"]
    assert p["stamp"] < p["a4"]
    assert p["stamp"] < p["a4_first_k"]
    # a comparison between two collapsed models does not count
    assert not (collapsed(p["stamp"], p["dense"]) and collapsed(p["a4_first_k"], p["dense"]))


def test_claim_hadamard_stamp_beats_hadamard(ci_eval, record_claim):
    p, bits = _ppl(ci_eval), _bits(ci_eval)
    record_claim(dense=p["dense"], **{m: p[m] for m in (*HADAMARD_CONTROLS, "hadamard_stamp")},
                 **{f"{m}_bits": bits[m] for m in (*HADAMARD_CONTROLS, "hadamard_stamp")})
    assert bits["hadamard_tok0"] < bits["hadamard_first_k"] == bits["hadamard_stamp"]
    for control in HADAMARD_CONTROLS:
        assert p["hadamard_stamp"] < p[control], control
    assert not collapsed(p["hadamard_stamp"], p["dense"])


# ------------------------------------------------------------------------------------------------ full tier
def full_split(tokenizer, text: str):
    """The windows of one full-tier text: ``reference`` is the held-out 30 % of the Python reference docs,
    ``licences`` the whole licence text (calibration from the reference docs; no method here calibrates)."""
    from backend.compression.corpus import tokenize_pair, tokenize_split
    from backend.compression.stamp.inputs import LICENCE_NAME, licence_text

    if text == "reference":
        return tokenize_split(tokenizer)
    prose = licence_text()
    if prose is None:
        pytest.skip("Debian's /usr/share/common-licenses is missing on this machine.")
    return tokenize_pair(tokenizer, None, prose, eval_source=LICENCE_NAME)


def full_config(methods: tuple[str, ...] = FULL_METHODS, windows: int = FULL_WINDOWS, **kw) -> sh.EvalConfig:
    return sh.EvalConfig(seqlen=256, n_windows=windows, methods=methods, stats=False, batch_size=FULL_BATCH,
                         cache=True, **kw)


def run_full(lm, text: str, methods: tuple[str, ...] = FULL_METHODS) -> sh.StampResult:
    return sh.evaluate(lm.model, lm.tokenizer, cfg=full_config(methods), split=full_split(lm.tokenizer, text))


@pytest.fixture(scope="module")
def full_runs(smollm2):
    """``get(text, methods)``: the full-tier evaluation of ``methods`` (with dense) on ``text``, run once."""
    done: dict[tuple[str, tuple[str, ...]], sh.StampResult] = {}

    def get(text: str, methods: tuple[str, ...]) -> sh.StampResult:
        key = (text, ("dense", *methods))
        if key not in done:
            done[key] = run_full(smollm2, text, key[1])
            print(f"full-tier STaMP table ({text}):", {m: round(v, 3) for m, v in _ppl(done[key]).items()},
                  flush=True)
        return done[key]

    return get


def _full_numbers(res: sh.StampResult, ours: str, controls: tuple[str, ...]) -> dict:
    p, bits = _ppl(res), _bits(res)
    out = {"windows": len(res.rows[0]["window_nll"]), "dense": p["dense"], ours: p[ours], f"{ours}_bits": bits[ours]}
    for c in controls:
        out.update({c: p[c], f"{c}_bits": bits[c], **paired_gain(res.rows, ours, c, f"gain_over_{c}")})
    return out


@pytest.mark.full
@pytest.mark.timeout(7200)
def test_claim_full_energy_concentration_per_layer(smollm2, record_claim):
    """64 held-out windows of the Python reference docs (the tokens STaMP transforms: token 0 kept outside): per
    decoder layer and linear input (q/k/v, o, gate/up, down: 120 inputs), the Haar share of the energy in its first
    1/8 of the rows minus the raw order's share in its first 1/8 tokens, per window. An input concentrates when the
    interval of its mean gain over the windows (moving-block bootstrap, blocks of 4 consecutive windows) lies above
    zero; per layer, the share of its 4 inputs that do and the interval of its mean gain."""
    from backend.compression.stamp.jobs import BLOCK_WINDOWS
    from backend.stats import block_bootstrap_mean

    split = full_split(smollm2.tokenizer, "reference")
    ids = split.heldout_segments(FULL_WINDOWS, 256)
    gains = sh.energy_gains(smollm2.model, ids, "haar", 256 // 32, 1)
    n_layers = len(gains["q"])
    names = [f"{li}.{lin}" for lin in ("q", "o", "gate", "down") for li in range(n_layers)]
    per_input = [np.array(gains[lin][li]) for lin in ("q", "o", "gate", "down") for li in range(n_layers)]
    cis = [block_bootstrap_mean(g, BLOCK_WINDOWS) for g in per_input]
    wins = [c.low > 0 for c in cis]
    layer_ci = [block_bootstrap_mean(np.mean([per_input[i * n_layers + li] for i in range(4)], 0), BLOCK_WINDOWS)
                for li in range(n_layers)]
    per_layer = [sum(wins[i * n_layers + li] for i in range(4)) / 4 for li in range(n_layers)]
    overall = block_bootstrap_mean(np.mean(per_input, 0), BLOCK_WINDOWS)
    record_claim(windows=int(ids.shape[0]), inputs=len(wins), haar_wins_share=sum(wins) / len(wins),
                 majority_bound=ENERGY_MAJORITY, per_layer_share=per_layer,
                 per_layer_gain=[c.mean for c in layer_ci], per_layer_gain_low=[c.low for c in layer_ci],
                 per_layer_gain_high=[c.high for c in layer_ci],
                 layers_all_inputs_win=sum(v == 1.0 for v in per_layer), layer_min_share=min(per_layer),
                 haar_loses_at=[n for n, w in zip(names, wins, strict=True) if not w],
                 share_gain=overall.mean, share_gain_ci=[overall.low, overall.high], share_gain_pairs=overall.n)
    assert ids.shape[0] >= FULL_WINDOWS
    assert sum(wins) / len(wins) >= ENERGY_MAJORITY
    assert overall.low > 0


@pytest.mark.full
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("text", FULL_TEXTS)
def test_claim_full_hadamard_stamp(full_runs, text, record_claim):
    res = full_runs(text, ("hadamard_stamp", *HADAMARD_CONTROLS))
    num = _full_numbers(res, "hadamard_stamp", HADAMARD_CONTROLS)
    record_claim(**num)
    assert num["windows"] >= 64
    for c in HADAMARD_CONTROLS:
        assert num[f"gain_over_{c}_ci"][0] > 0, (c, num[f"gain_over_{c}_ci"])
    assert not collapsed(num["hadamard_stamp"], num["dense"])


@pytest.mark.full
@pytest.mark.timeout(7200)
@pytest.mark.xfail(strict=True, reason=(
    "64 windows per text: reference docs A4 + STaMP 121.9 < token 0 at 8 bits 6,922, the first 8 raw tokens at 8 bits "
    "5,537, A4 29,840 against dense 14.34 (STaMP 8.5x dense); licence texts A4 + STaMP 267.4 < 6,938 / 9,116 / 21,280 "
    "against dense 25.83 (10.4x): STaMP and its controls are all above 5x dense; " + COLLAPSED_REASON))
@pytest.mark.parametrize("text", FULL_TEXTS)
def test_claim_full_a4_stamp(full_runs, text, record_claim):
    res = full_runs(text, ("stamp", *A4_CONTROLS))
    num = _full_numbers(res, "stamp", A4_CONTROLS)
    record_claim(**num, collapse_bound=COLLAPSE * num["dense"])
    assert num["windows"] >= 64
    for c in A4_CONTROLS:
        assert num[f"gain_over_{c}_ci"][0] > 0, (c, num[f"gain_over_{c}_ci"])
    # a comparison between two collapsed models does not count
    assert not (collapsed(num["stamp"], num["dense"]) and collapsed(num["a4_first_k"], num["dense"]))


@pytest.mark.full
@pytest.mark.timeout(7200)
def test_full_references_and_sink_ablation(smollm2, record_claim):
    """8 windows of the reference text: A8 and SmoothQuant, and STaMP with the first token inside the transform."""
    split = full_split(smollm2.tokenizer, "reference")
    res = sh.evaluate(smollm2.model, smollm2.tokenizer, cfg=full_config(
        ("dense", "a8", "a4", "smoothquant", "stamp", "hadamard", "hadamard_stamp"), TABLE_WINDOWS), split=split)
    nosink = sh.evaluate(smollm2.model, smollm2.tokenizer, cfg=full_config(
        ("stamp", "hadamard_stamp"), TABLE_WINDOWS, sink_tokens=0), split=split)
    p, q = _ppl(res), _ppl(nosink)
    inside = {r["method"]: r for r in nosink.rows}["hadamard_stamp"]
    rows = [*(r for r in res.rows if r["method"] == "hadamard_stamp"), {**inside, "method": "sink_inside"}]
    gain = paired_gain(rows, "hadamard_stamp", "sink_inside", "sink_rule_gain")
    record_claim(**p, stamp_sink_inside=q["stamp"], hadamard_stamp_sink_inside=q["hadamard_stamp"], **gain)
    assert p["a8"] < p["a4"] and p["dense"] <= p["a8"] * 1.05
    assert p["stamp"] < q["stamp"] and p["hadamard_stamp"] < q["hadamard_stamp"]
    assert gain["sink_rule_gain_ci"][0] > 0


def test_attention_sink_profile_and_short_text(ci_eval, smollm2, record_claim):
    """The diagnosis behind the sink rule: the first token's linear inputs carry massive values in some layers."""
    from backend.errors import InputError

    down = ci_eval.sink["absmax_ratio"]["down"]
    record_claim(down_absmax_ratio_max=max(down), down_absmax_ratio_layer=down.index(max(down)))
    assert max(down) > 10
    with pytest.raises(InputError, match="tokens"):
        sh.evaluate(smollm2.model, smollm2.tokenizer, "def f():\n    return 1\n", sh.EvalConfig(methods=("a4",)))
