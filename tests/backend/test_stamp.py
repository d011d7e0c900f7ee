"""Invariants of the STaMP spec (``backend/compression/stamp/stamp.py``): orthonormal sequence transforms and exact
reconstruction (1-D; PyWavelets as the Haar reference, scipy for the DCT), Theorem 1 per sample with any bit vector,
the AR(1) MSE gain, the average-bits formula, identity + 8 bits = plain 8-bit, infinite bits = no change, the
feature rotation, and bad settings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.compression.stamp import stamp as st
from backend.errors import InputError


@pytest.mark.parametrize("name", ["haar", "dct", "wht", "klt", "identity"])
@pytest.mark.parametrize("s", [64, 256])
def test_transforms_are_orthonormal_and_reconstruct(name, s):
    x = torch.randn(3, s, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    tr = st.make_transform(name, s, 8, x if name == "klt" else None)
    y = tr.forward(x)
    assert torch.allclose(y.pow(2).sum(), x.pow(2).sum(), rtol=1e-6)          # energy preserved
    assert torch.allclose(tr.inverse(y), x, atol=1e-5)                          # exact reconstruction
    m = tr.matrix().double()
    assert torch.allclose(m @ m.T, torch.eye(s, dtype=torch.float64), atol=1e-5)


@pytest.mark.parametrize("s", [255, 100, 17])
def test_haar_odd_lengths_orthonormal(s):
    tr = st.make_transform("haar", s, 8)
    m = tr.matrix()
    assert torch.allclose(m @ m.T, torch.eye(s, dtype=torch.float64), atol=1e-12)


def test_haar_matches_pywavelets_and_dct_matches_scipy():
    import pywt
    import scipy.fft

    x = torch.randn(2, 256, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ours = st.haar_forward(x, 5).numpy()
    ref = np.concatenate(pywt.wavedec(x.numpy(), "haar", level=5, axis=1, mode="periodization"), axis=1)
    assert np.abs(ours - ref).max() < 1e-12
    assert np.abs((st.dct_matrix(256, torch.float64) @ x).numpy()
                  - scipy.fft.dct(x.numpy(), axis=1, norm="ortho")).max() < 1e-10


def test_haar_levels_match_the_high_precision_count():
    assert st.haar_levels_for(2048, 64) == 5 and st.make_transform("haar", 2048, 64).approx == 64
    assert st.haar_levels_for(256, 8) == 5 and st.make_transform("haar", 256, 8).approx == 8
    assert st.make_transform("haar", 255, 7).approx <= 8


def test_wht_is_sequency_ordered():
    w = st.walsh_matrix(16)
    changes = (w[:, 1:] * w[:, :-1] < 0).sum(1)
    assert changes.tolist() == list(range(16))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("name", ["haar", "dct", "identity"])
def test_theorem1_bound_holds_per_sample_any_bits(seed, name):
    """Theorem 1 holds by construction (orthogonal transform, per-token min-max rounding): an invariant of the
    implementation, checked per sample for any bits and a massive first token."""
    g = torch.Generator().manual_seed(seed)
    s, d = 64, 32
    x = torch.randn(6, s, d, generator=g, dtype=torch.float64) * torch.rand(6, s, 1, generator=g, dtype=torch.float64)
    x[:, 0] *= 50  # a massive first token
    bits = torch.tensor(st.SUPPORTED_BITS, dtype=torch.float64)[torch.randint(0, 6, (s,), generator=g)]
    tr = st.make_transform(name, s, 4)
    y = tr.forward(x)
    x_hat = tr.inverse(st.quantize_tokens(y, bits))
    err = (x_hat - x).pow(2).sum((-1, -2))
    bound = st.theorem1_bound(y, bits)
    assert bool((err <= bound * (1 + 1e-9)).all()), (err / bound).max()


def test_theorem1_bound_through_stamp_quantize_with_sink_and_energy_allocation():
    x = st.ar1_sequence(128, 48, 0.9, 3, batch=4).double()
    x[:, 0] *= 80
    for alloc in ("first", "energy"):
        o = st.stamp_quantize(x, st.QuantSpec("haar", 4, 8, 8, sink_tokens=1, allocation=alloc))
        err = (o.x_hat - x).pow(2).sum((-1, -2))
        bound = st.theorem1_bound(o.y, o.bits)
        assert bool((err <= bound * (1 + 1e-9)).all())
        assert math.isclose(float(o.bits.double().mean()), 4 + 4 * 8 / 128)


def test_ar1_haar_mixed_precision_beats_plain_4bit_by_10x(record_claim):
    # the paper's ratio 64 / 2048 (4.125 bits), locally correlated AR(1) features (rho = 0.99), fixed seed
    x = st.ar1_sequence(2048, 64, 0.99, 0)
    plain = float((st.quantize_tokens(x, 4) - x).pow(2).sum())
    o = st.stamp_quantize(x, st.QuantSpec("haar", 4, 8, 64, 0))
    ours = float((o.x_hat - x).pow(2).sum())
    record_claim(plain_4bit_error=plain, stamp_error=ours, error_ratio=plain / ours, ratio_bound=10.0,
                 avg_bits=st.average_bits(o.bits))
    assert math.isclose(st.average_bits(o.bits), 4.125)
    assert plain / ours > 10, plain / ours


def test_average_bits_formula():
    for s, k in ((2048, 64), (256, 8), (256, 16), (512, 16)):
        b = st.bit_vector(s, k, 4, 8)
        assert math.isclose(st.average_bits(b), 4 + 4 * k / s)
        assert math.isclose(st.QuantSpec("haar", 4, 8, k).average_bits(s), 4 + 4 * k / s)


def test_identity_8bit_equals_plain_8bit_and_inf_bits_is_exact():
    x = torch.randn(2, 64, 32, generator=torch.Generator().manual_seed(4))
    o = st.stamp_quantize(x, st.QuantSpec("identity", 8, 8, 64, 0))
    assert torch.equal(o.x_hat, st.quantize_tokens(x, 8))
    lo, hi = x.amin(-1, keepdim=True), x.amax(-1, keepdim=True)
    scale = (hi - lo) / 255
    assert torch.allclose(o.x_hat, torch.round((x - lo) / scale) * scale + lo, atol=1e-6)
    inf = st.stamp_quantize(x, st.QuantSpec("haar", math.inf, math.inf, 8, 0))
    assert torch.allclose(inf.x_hat, x, atol=1e-5)


def test_ar1_first_coefficients_hold_more_than_their_share():
    x = st.ar1_sequence(256, 32, 0.8, 1)
    for lev in (1, 3, 5):
        y = st.haar_forward(x, lev)
        assert st.energy_share(y, 1 / 2**lev) > 1 / 2**lev


def test_block_rotation_is_orthonormal_and_fast_form_matches():
    r = st.block_rotation(576, 64, seed=0)
    m = st.block_hadamard(576, 64, seed=0)
    assert torch.allclose(m @ m.T, torch.eye(576), atol=1e-5)
    x = torch.randn(2, 5, 576)
    assert torch.allclose(r.apply(x), x @ m, atol=1e-5)
    assert torch.allclose(r.apply_t(r.apply(x)), x, atol=1e-5)
    assert st.largest_pow2_block(1536) == 64 and st.largest_pow2_block(576) == 64


def test_smoothquant_scales_and_weight_rtn():
    a = torch.tensor([1.0, 100.0, 4.0])
    w = torch.tensor([[1.0, 1.0, 4.0], [0.5, 0.25, 1.0]])
    s = st.smoothquant_scales(a, w, 0.5)
    assert torch.allclose(s, torch.sqrt(a) / torch.sqrt(w.abs().amax(0)))
    wq = st.quantize_weight_rtn(torch.randn(8, 16), 8)
    assert wq.shape == (8, 16)


def test_optimal_bits_follow_half_log_energy():
    e = torch.tensor([16.0, 4.0, 1.0, 1.0])
    b = st.optimal_bits(e, 4.0)
    assert math.isclose(float(b.mean()), 4.0, rel_tol=1e-9)
    assert math.isclose(float(b[0] - b[1]), 1.0, rel_tol=1e-9)


def test_bad_settings():
    with pytest.raises(InputError, match="one of"):
        st.check_bits(7)
    with pytest.raises(InputError, match="power-of-two"):
        st.make_transform("wht", 255, 8)
    with pytest.raises(InputError, match="sequence transform"):
        st.make_transform("fourier", 64, 8)
    with pytest.raises(InputError, match="divide"):
        st.block_hadamard(100, 64)
    with pytest.raises(InputError, match="allocation"):
        st.stamp_quantize(torch.zeros(1, 8, 4), st.QuantSpec("haar", 4, 8, 2, 0, "random"))


class _CharTokenizer:
    def __call__(self, text, add_special_tokens=False):  # noqa: ARG002
        return {"input_ids": [ord(c) % 97 for c in text]}


def test_evaluate_leaves_the_callers_config_unchanged_on_a_short_text() -> None:
    """A text with fewer held-out windows than asked evaluates the windows it has and reports that count, without
    writing it into the config it was given (which the page and the CLI reuse)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from backend.compression.stamp import hooks as sh

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=64, num_hidden_layers=1,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                         tie_word_embeddings=True)).eval()
    cfg = sh.EvalConfig(seqlen=32, n_windows=8, methods=("a4",), stats=False)
    text = "abcdefghij" * 31  # 310 characters: 93 held-out tokens, two windows of 32
    res = sh.evaluate(model, _CharTokenizer(), text, cfg, source="the text")
    assert res.config["n_windows"] == 2 and res.tokens == 64
    assert cfg.n_windows == 8 and cfg == sh.EvalConfig(seqlen=32, n_windows=8, methods=("a4",), stats=False)


def test_token0_and_first_k_controls_are_at_their_own_average_bits():
    from backend.compression.stamp import hooks as sh

    cfg = sh.EvalConfig(seqlen=256)
    bits = {m: cfg.spec(sh.METHODS[m]).average_bits(256) for m in ("a4", "a4_tok0", "hadamard_tok0", "a4_first_k",
                                                                      "hadamard_first_k", "stamp", "hadamard_stamp")}
    assert bits["a4"] == 4.0 and bits["a4_tok0"] == bits["hadamard_tok0"] == 4 + 4 / 256  # 4.016
    assert bits["a4_first_k"] == bits["hadamard_first_k"] == bits["stamp"] == bits["hadamard_stamp"] == 4.125
    spec = cfg.spec(sh.METHODS["hadamard_tok0"])
    assert spec.transform == "identity" and spec.sink_tokens == 0 and spec.hp_tokens == 1
    x = torch.randn(2, 256, 8, generator=torch.Generator().manual_seed(0))
    x[:, 0] *= 1000  # a sink token: at 8 bits on its own scale, the rest unchanged by it
    out = st.stamp_quantize(x, spec)
    assert torch.equal(out.x_hat[:, 1:], st.quantize_tokens(x[:, 1:], 4))
    assert torch.equal(out.x_hat[:, :1], st.quantize_tokens(x[:, :1], 8))


def test_paired_gain_and_gain_table():
    from backend.compression.stamp import jobs

    rng = np.random.default_rng(0)
    base = rng.normal(3.0, 0.3, 16)
    rows = [{"method": "dense", "label": "d", "ppl": 10.0, "avg_bits": 32.0, "window_nll": list(base)},
            {"method": "hadamard", "ppl": 30.0, "avg_bits": 4.0, "window_nll": list(base + 1.0)},
            {"method": "hadamard_tok0", "ppl": 20.0, "avg_bits": 4.016, "window_nll": list(base + 0.4)},
            {"method": "hadamard_stamp", "ppl": 15.0, "avg_bits": 4.125,
             "window_nll": list(base + 0.4 + rng.normal(0, 0.05, 16))}]
    g = jobs.paired_gain(rows, "hadamard_stamp", "hadamard", "g")
    assert g["g_pairs"] == 16 and g["g_ci"][0] > 0.5 and abs(g["g_ppl_ratio"] - math.exp(g["g"])) < 1e-12
    tie = jobs.paired_gain(rows, "hadamard_stamp", "hadamard_tok0", "t")
    assert tie["t_ci"][0] < 0 < tie["t_ci"][1]  # no difference: the interval holds zero
    one = jobs.paired_gain([{**r, "window_nll": r["window_nll"][:1]} for r in rows], "hadamard_stamp", "hadamard")
    assert one["gain_ci"] == [-math.inf, math.inf]
    table = jobs.gain_table(rows)
    assert [t["control"] for t in table] == ["Hadamard (QuaRot-style)", "Hadamard, token 0 at 8 bits"]
    assert table[0]["resolved"] and not table[1]["resolved"] and not table[0]["both collapsed"]
    collapsed = jobs.gain_table([{**r, "ppl": r["ppl"] * 10} if r["method"] != "dense" else r for r in rows])
    assert all(t["both collapsed"] for t in collapsed)


def test_window_nll_per_window_and_cached(tmp_path, monkeypatch):
    from backend.compression.stamp import hooks as sh

    monkeypatch.setenv("METHOD_LAB_CACHE", str(tmp_path))

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(11, 11)
            self.calls = 0

        def forward(self, input_ids, use_cache=False):
            self.calls += 1
            return type("Out", (), {"logits": self.emb(input_ids)})()

    torch.manual_seed(0)
    m = Tiny()
    ids = torch.randint(0, 11, (5, 9), generator=torch.Generator().manual_seed(1))
    logits = m.emb(ids)[:, :-1]
    want = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none").mean(1)
    got = sh.window_nll(m, ids, batch_size=2, key=lambda x: f"k{int(x.sum())}-{x.shape[0]}")
    assert m.calls == 3 and np.allclose(got, want.tolist(), atol=1e-6)
    again = sh.window_nll(m, ids, batch_size=2, key=lambda x: f"k{int(x.sum())}-{x.shape[0]}")
    assert m.calls == 3 and again == got  # read back from the cache, no forward
    assert len(list((tmp_path / "stamp").glob("*.json"))) == 3


def test_licence_text_is_a_fixed_second_text():
    from backend.compression.stamp import inputs

    text = inputs.licence_text()
    if text is None:
        pytest.skip("Debian's /usr/share/common-licenses is missing on this machine.")
    assert text == inputs.licence_text() and len(text) > 150_000
    assert text.startswith("GNU GENERAL PUBLIC LICENSE") and "Mozilla Public License" in text
