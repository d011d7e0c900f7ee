"""Invariants of RCPU structured pruning (backend/compression/pruning/pruning.py) on synthetic data and a tiny random Llama.

Everything here runs in a few seconds; the claims on SmolLM2 live in test_pruning_claims.py.
"""

from __future__ import annotations

import copy

import pytest
import torch

from backend.compression import corpus
from backend.compression.pruning import lmtools
from backend.compression.pruning.pruning import (
    COMPENSATIONS,
    SCORES,
    PruneConfig,
    apply_attention,
    apply_mlp,
    column_stats,
    compensate,
    config_for,
    geometry,
    get_compensation,
    get_method,
    get_score,
    head_scores,
    n_to_drop,
    output_error,
    procrustes,
    prune_llama,
    score_columns,
    select_keep,
)
from backend.errors import InputError


# ------------------------------------------------------------------------------------------------------ fixtures
def _correlated(n: int, d: int, seed: int) -> torch.Tensor:
    """Token features [n, d] with unequal variances, correlations and non-zero means (like LLM activations)."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(n, d, generator=g, dtype=torch.float64)
    mix = torch.randn(d, d, generator=g, dtype=torch.float64) / d**0.5
    scales = torch.logspace(-1, 1, d, dtype=torch.float64)
    return (base @ mix) * scales + torch.randn(d, generator=g, dtype=torch.float64)


@pytest.fixture(scope="module")
def sublayer():
    g = torch.Generator().manual_seed(1)
    W = torch.randn(24, 40, generator=g, dtype=torch.float64)
    X = _correlated(400, 40, 2)
    return W, X


def _tiny_llama(seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=97, hidden_size=48, intermediate_size=40, num_hidden_layers=2,
                      num_attention_heads=6, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
                      tie_word_embeddings=True)
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def tiny():
    model = _tiny_llama()
    g = torch.Generator().manual_seed(3)
    return model, torch.randint(0, 97, (6, 16), generator=g), torch.randint(0, 97, (3, 16), generator=g)


# -------------------------------------------------------------------------------------------------------- scores
def test_scores_match_hand_computation_on_3x4():
    W = torch.tensor([[1.0, 0.0, 2.0, -1.0], [2.0, 1.0, 0.0, 0.0], [2.0, 0.0, -2.0, 1.0]])  # 3 x 4
    X = torch.tensor([[1.0, 2.0, 0.0, 1.0], [3.0, -2.0, 0.0, 1.0]])  # 2 tokens x 4 inputs
    st = column_stats(X)
    col_norm = torch.tensor([3.0, 1.0, 8**0.5, 2**0.5])
    x_l2 = torch.tensor([10**0.5, 8**0.5, 0.0, 2**0.5])
    x_mabs = torch.tensor([2.0, 2.0, 0.0, 1.0])
    var = torch.tensor([1.0, 4.0, 0.0, 0.0])  # population variance over the 2 tokens
    torch.testing.assert_close(score_columns("wanda_sp", W, st, "l2"), col_norm * x_l2)
    torch.testing.assert_close(score_columns("wanda_sp", W, st, "mean_abs"), col_norm * x_mabs)
    torch.testing.assert_close(score_columns("variance", W, st, "l2"), col_norm * x_l2 * var)
    torch.testing.assert_close(score_columns("variance", W, st, "mean_abs"), col_norm * x_mabs * var)
    torch.testing.assert_close(score_columns("fluctuation", W, st), col_norm**2 * var * 2)  # sample var = 2 x pop.


def test_wanda_sp_equals_variance_score_when_every_variance_is_one():
    X = _correlated(300, 12, 5)
    X = (X - X.mean(0)) / X.std(0, unbiased=False) + torch.linspace(-2, 2, 12, dtype=torch.float64)
    W = torch.randn(7, 12, dtype=torch.float64)
    st = column_stats(X)
    torch.testing.assert_close(st.var, torch.ones(12), atol=1e-5, rtol=0)
    for stat in ("l2", "mean_abs"):
        torch.testing.assert_close(score_columns("variance", W, st, stat), score_columns("wanda_sp", W, st, stat),
                                   atol=1e-4, rtol=1e-5)


def test_selection_rule_counts_and_heads():
    assert [n_to_drop(r, 9) for r in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)] == [0, 0, 1, 2, 3, 4]  # 9 heads: ratios round
    assert [n_to_drop(r, 1536) for r in (0.1, 0.2, 0.3, 0.5)] == [153, 307, 460, 768]
    scores = torch.tensor([5.0, 1.0, 3.0, 1.0, 9.0])
    assert select_keep(scores, 0.4).tolist() == [True, False, True, False, True]
    assert select_keep(torch.ones(10), 0.3).sum() == 7  # ties: still exactly the target count
    col = torch.tensor([1.0, 1.0, 5.0, 5.0, 2.0, 2.0])
    assert head_scores(col, 2).tolist() == [2.0, 10.0, 4.0]
    assert head_scores(col, 2, "sum_sq").tolist() == [2.0, 50.0, 8.0]


# -------------------------------------------------------------------------------------------------- compensation
def test_error_ordering_on_calibration_data(sublayer):
    W, X = sublayer
    keep = select_keep(score_columns("variance", W, column_stats(X)), 0.3)
    err = {}
    comps = {name: compensate(name, W, X, keep, lam=1e-4) for name in ("none", "rotation", "rotation_scale", "ls")}
    for name, c in comps.items():
        err[name] = output_error(W, X, keep, c)[0]  # squared Frobenius error on the calibration tokens
    assert err["rotation"] <= err["none"]  # Q = I is feasible
    assert err["rotation_scale"] <= err["rotation"] * (1 + 1e-9)  # s = 1 is feasible
    assert err["ls"] <= err["none"]  # W = W_K is feasible for the ridge objective
    Q = comps["rotation"].Q.double()
    W_K = W[:, keep]
    slack = 1e-4 * float((Q @ W_K - W_K).pow(2).sum())
    assert err["ls"] <= err["rotation"] + slack
    plain = compensate("ls", W, X, keep, lam=0.0)  # plain least squares beats every other linear map
    assert output_error(W, X, keep, plain)[0] <= err["rotation_scale"] * (1 + 1e-9)


def test_rotation_is_orthogonal_and_preserves_norms(sublayer):
    W, X = sublayer
    keep = select_keep(score_columns("wanda_sp", W, column_stats(X)), 0.5)
    Y = X @ W.T
    Z = X[:, keep] @ W[:, keep].T
    Q, S = procrustes(Y, Z)
    torch.testing.assert_close(Q.T @ Q, torch.eye(Q.shape[0]), atol=1e-5, rtol=0)
    QZ = Z.float() @ Q.T
    assert abs(float(QZ.norm()) - float(Z.norm())) <= 1e-5 * float(Z.norm())
    assert torch.all(S[:-1] >= S[1:])
    # reflections are allowed: Q is whatever U V^T gives, det = +-1
    assert abs(abs(float(torch.linalg.det(Q.double()))) - 1) < 1e-4


def test_ratio_zero_gives_identity(sublayer):
    W, X = sublayer
    keep = torch.ones(W.shape[1], dtype=torch.bool)
    c = compensate("rotation", W, X, keep)
    torch.testing.assert_close(c.Q, torch.eye(W.shape[0]), atol=1e-4, rtol=0)


def test_flap_bias_is_mean_of_dropped_contribution(sublayer):
    W, X = sublayer
    keep = select_keep(score_columns("fluctuation", W, column_stats(X)), 0.25)
    c = compensate("bias", W, X, keep)
    torch.testing.assert_close(c.bias, (X[:, ~keep] @ W[:, ~keep].T).mean(0))
    assert output_error(W, X, keep, c)[0] <= output_error(W, X, keep, compensate("none", W, X, keep))[0]


def test_registries_list_valid_names():
    with pytest.raises(ValueError, match="wanda_sp, variance, fluctuation"):
        get_score("magnitude")
    with pytest.raises(ValueError, match="none, ls, rotation, rotation_scale, bias"):
        get_compensation("svd")
    with pytest.raises(ValueError, match="rcpu"):
        get_method("nope")
    assert get_compensation("rotation+scale") is COMPENSATIONS["rotation_scale"]
    assert get_score("Wanda-SP") is SCORES["wanda_sp"]
    assert config_for("flap").propagate == "dense"
    with pytest.raises(InputError):
        PruneConfig(ratio=1.2).validate()


# ---------------------------------------------------------------------------------------------- tiny Llama model
def test_ratio_zero_leaves_the_model_unchanged(tiny):
    model, calib, held = tiny
    m = copy.deepcopy(model)
    res = prune_llama(m, calib, PruneConfig(ratio=0.0, n_calib=6, seqlen=16))
    with torch.no_grad():
        assert torch.equal(m(held).logits, model(held).logits)
    assert res.heads_dropped == 0 and res.intermediate_size == 40


@pytest.mark.parametrize("comp", ["none", "ls", "rotation", "rotation_scale", "bias"])
def test_physical_equals_masked(tiny, comp):
    # in float64: the two paths are the same arithmetic up to summation order, and in float32 the calibration
    # statistics of layer 2 (taken on layer 1's pruned output) differ in the last bits, which the least-squares and
    # rotation solves amplify to ~1e-5 on some CPUs; in float64 the logits agree to far below the bound
    model, calib, held = tiny
    a, b = copy.deepcopy(model).double(), copy.deepcopy(model).double()
    ra = prune_llama(a, calib, PruneConfig(ratio=0.5, compensation=comp, n_calib=6, seqlen=16))
    prune_llama(b, calib, PruneConfig(ratio=0.5, compensation=comp, n_calib=6, seqlen=16, physical=False))
    with torch.no_grad():
        torch.testing.assert_close(a(held).logits, b(held).logits, atol=1e-10, rtol=1e-10)
    assert lmtools.effective_parameters(a) == lmtools.effective_parameters(b)
    assert lmtools.stored_parameters(a) < lmtools.stored_parameters(b)
    # kept counts equal the targets: 6 heads -> 3 kept, 40 channels -> 20 kept, in every layer
    assert [sum(h) for h in ra.head_keep] == [3, 3]
    assert [sum(c) for c in ra.channel_keep] == [20, 20] and a.config.intermediate_size == 20
    for layer in a.model.layers:
        assert layer.mlp.gate_proj.out_features == layer.mlp.up_proj.out_features == layer.mlp.down_proj.in_features


def test_gqa_partial_and_whole_group_removal_is_exact(tiny):
    """Drop all 3 query heads of KV group 1 (physical removal) and one head of group 0 (zeroed)."""
    model, _, held = tiny
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    geo = geometry(model)
    keep = torch.tensor([True, False, True, False, False, False])  # 6 query heads, groups of 3
    for m, physical in ((a, True), (b, False)):
        layer = m.model.layers[0]
        W = layer.self_attn.o_proj.weight.detach()[:, keep.repeat_interleave(geo.head_dim)]
        counts = apply_attention(layer, geo, keep, W, physical=physical)
        assert counts["heads_dropped"] == 4 and counts["groups_removed"] == 1
    attn = a.model.layers[0].self_attn
    assert attn.q_proj.out_features == 3 * attn.k_proj.out_features == 3 * geo.head_dim  # groups stay consistent
    assert attn.o_proj.in_features == 3 * geo.head_dim
    with torch.no_grad():
        la, lb = a(held).logits, b(held).logits
    torch.testing.assert_close(la, lb, atol=1e-5, rtol=1e-5)
    # generation with a KV cache works on the physically pruned layer
    out = a.generate(held[:1, :5], max_new_tokens=4, do_sample=False, pad_token_id=0)
    assert out.shape == (1, 9)


def test_mlp_masked_equals_physical(tiny):
    model, _, held = tiny
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    keep = torch.zeros(40, dtype=torch.bool)
    keep[::3] = True
    for m, physical in ((a, True), (b, False)):
        layer = m.model.layers[1]
        apply_mlp(layer, keep, layer.mlp.down_proj.weight.detach()[:, keep], physical=physical)
    with torch.no_grad():
        torch.testing.assert_close(a(held).logits, b(held).logits, atol=1e-5, rtol=1e-5)


def test_heldout_tracking_does_not_change_the_pruning(tiny):
    model, calib, held = tiny
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    ra = prune_llama(a, calib, PruneConfig(ratio=0.3, n_calib=6, seqlen=16), heldout_ids=held)
    rb = prune_llama(b, calib, PruneConfig(ratio=0.3, n_calib=6, seqlen=16))
    assert ra.head_keep == rb.head_keep and ra.channel_keep == rb.channel_keep
    assert all(r.heldout_err is not None for r in ra.records)
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)


@pytest.mark.parametrize("comp", ["rotation", "bias"])
def test_saved_folder_reloads_as_standard_checkpoint(tiny, tmp_path, comp):
    from transformers import AutoModelForCausalLM

    model, calib, held = tiny
    m = copy.deepcopy(model)
    res = prune_llama(m, calib, PruneConfig(ratio=0.5, compensation=comp, n_calib=6, seqlen=16))
    info = lmtools.save_pruned(m, None, res, tmp_path / "out", {"recipe": True}, dtype="float32")
    assert "model.safetensors" in info["files"] and "pruning_recipe.json" in info["files"]
    again = AutoModelForCausalLM.from_pretrained(str(tmp_path / "out")).eval()
    with torch.no_grad():
        torch.testing.assert_close(again(held).logits, m(held).logits, atol=1e-5, rtol=1e-5)
    with pytest.raises(InputError, match="not empty"):
        lmtools.save_pruned(m, None, res, tmp_path / "out", {}, dtype="float32")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left behind


def test_non_llama_model_is_refused():
    from transformers import GPT2Config, GPT2LMHeadModel

    gpt = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=32))
    with pytest.raises(InputError, match="not a Llama-family"):
        prune_llama(gpt, torch.zeros(1, 8, dtype=torch.long), PruneConfig(n_calib=1, seqlen=8))


# -------------------------------------------------------------------------------------------------------- corpus
class _CharTokenizer:
    def __call__(self, text, add_special_tokens=False):  # noqa: ARG002
        return {"input_ids": [ord(c) % 256 for c in text]}


def test_corpus_split_and_segments():
    text = corpus.builtin_text()
    assert len(text) > 400_000
    calib, held = corpus.split_text(text)
    assert 0.65 < len(calib) / len(text) < 0.75 and held
    sp = corpus.tokenize_split(_CharTokenizer(), "word " * 2000, source="test")
    a, b = sp.calib_segments(4, 64, seed=1), sp.calib_segments(4, 64, seed=1)
    assert a.shape == (4, 64) and torch.equal(a, b)
    assert sp.heldout_segments(3, 64).shape == (3, 64)


def test_bad_text_inputs():
    with pytest.raises(InputError, match="empty"):
        corpus.decode_upload(b"")
    with pytest.raises(InputError, match="UTF-8"):
        corpus.decode_upload("caf\u00e9".encode("latin-1") + b" more text")
    sp = corpus.tokenize_split(_CharTokenizer(), "short text " * 30, source="the upload")
    with pytest.raises(InputError, match="fewer calibration segments"):
        sp.calib_segments(8, 128)
    with pytest.raises(InputError):
        corpus.tokenize_split(_CharTokenizer(), "   ", source="the upload")


# ------------------------------------------------------------------------------------------------------ the lab
def test_lab_gram_statistics_match_raw_activations(tiny):
    """The lab's Gram-matrix errors equal pruning.compensate/output_error on the raw captured activations."""
    from backend.compression.pruning import lab
    from backend.compression.pruning.pruning import _capture, _layer_inputs, _run_layer

    model, calib, held = tiny
    caps = lab.capture_layer(model, 1, calib[:4], held, [2, 4])
    batches = _run_layer(model.model.layers[0], _layer_inputs(model, calib[:4], 8))
    hb = _run_layer(model.model.layers[0], _layer_inputs(model, held, 8))
    X, _ = _capture(model.model.layers[1], batches, ("mlp.down_proj",))
    Xh, _ = _capture(model.model.layers[1], hb, ("mlp.down_proj",))
    cap = caps["mlp"]
    p = lab.study_point(cap, 0.4, 4, lam=1e-4, score="variance")
    W, Xd, Xhd = cap.W, X["mlp.down_proj"].double(), Xh["mlp.down_proj"].double()
    keep = torch.tensor(p["keep"])
    assert keep.tolist() == select_keep(score_columns("variance", W.float(), column_stats(Xd)), 0.4).tolist()
    for name in ("none", "rotation", "rotation_scale", "ls"):
        c = compensate(name, W, Xd, keep, lam=1e-4)
        e, y = output_error(W, Xd, keep, c)
        eh, yh = output_error(W, Xhd, keep, c)
        assert abs(p["errors"][name]["calib"] - (e / y) ** 0.5) < 1e-4, name
        assert abs(p["errors"][name]["heldout"] - (eh / yh) ** 0.5) < 1e-4, name
    rows = lab.n_sweep(cap, 0.4)
    assert {r["n_calib"] for r in rows} == {2, 4} and len(rows) == 8
    geo = lab.output_geometry(cap, p)
    assert len(geo["dense_norm"]) == held.numel() and max(geo["rotation_angle"]) <= 180
    # the rotation preserves every output norm of Z: ||Q z|| = ||z|| token by token
    torch.testing.assert_close(torch.tensor(geo["rotation_norm"]), torch.tensor(geo["none_norm"]), atol=1e-6, rtol=1e-6)
