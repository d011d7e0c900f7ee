"""Invariants of GLOT (spec ``glot.md``): the dense GAT, the graph, the readout, the poolings, the stress-test generator
and the CSV validation. No backbone is loaded here (random token states), so this file runs in seconds."""

from __future__ import annotations

import math

import pytest
import torch

from backend.errors import InputError
from backend.tokens.glot import stress
from backend.tokens.glot.backbone import HiddenStates
from backend.tokens.glot.heads import PooledClassifier, TrainConfig, train_head
from backend.tokens.glot.layers import (
    GLOT,
    AttentionReadout,
    DenseGATLayer,
    GlotConfig,
    edge_density,
    masked_mean,
    token_graph,
)
from backend.tokens.glot.pooling import POOLINGS, build_pooler, get_method
from backend.tokens.glot.stress import parse_labelled_csv, split_indices


def _states(b: int = 3, length: int = 9, d: int = 16, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(b, length, d, generator=g)
    mask = torch.ones(b, length, dtype=torch.bool)
    if b > 2:
        mask[1, 6:] = False
        mask[2, 4:] = False
    return h, mask


# ------------------------------------------------------------------------------------------------------- the graph
def test_graph_symmetric_self_loops_and_padding() -> None:
    h, mask = _states()
    adj = token_graph(h, mask, 0.1)
    assert torch.equal(adj, adj.transpose(1, 2))
    for b in range(h.shape[0]):
        n = int(mask[b].sum())
        assert adj[b, :n, :n].diagonal().all()
        assert not adj[b, n:].any() and not adj[b, :, n:].any()


def test_edge_count_non_increasing_in_tau_and_only_self_loops_at_one() -> None:
    h, mask = _states(d=4, seed=1)  # low dimension: many cosines above each threshold
    counts = [int(token_graph(h, mask, tau).sum()) for tau in (-1.0, -0.5, 0.0, 0.3, 0.6, 0.9, 1.0)]
    assert all(a >= b for a, b in zip(counts, counts[1:]))
    assert counts[0] > counts[-1]
    adj = token_graph(h, mask, 1.0)
    assert int(adj.sum()) == int(mask.sum())  # exactly the self-loops
    assert float(edge_density(adj, mask).max()) == 0.0
    full = token_graph(h, mask, -1.01)
    assert torch.allclose(edge_density(full, mask), torch.ones(3))


def test_threshold_is_strict() -> None:
    h = torch.tensor([[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])
    mask = torch.ones(1, 3, dtype=torch.bool)
    adj = token_graph(h, mask, 0.0)  # cos = 0 between the orthogonal tokens: no edge at tau = 0
    assert adj[0, 0, 1] and not adj[0, 0, 2] and not adj[0, 1, 2]


# ----------------------------------------------------------------------------------------------------- dense GAT
def _gat_loop(layer: DenseGATLayer, u: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
    """Reference: the GAT update node by node, neighbour by neighbour."""
    g = layer.lin(u)
    out = torch.zeros_like(g)
    for i in range(u.shape[0]):
        nbrs = [j for j in range(u.shape[0]) if adj[i, j]]
        e = torch.stack([
            torch.nn.functional.leaky_relu(layer.att_dst @ g[i] + layer.att_src @ g[j], layer.negative_slope)
            for j in nbrs])
        alpha = torch.softmax(e, 0)
        out[i] = sum(a * g[j] for a, j in zip(alpha, nbrs)) + layer.bias
    return out


def test_dense_gat_matches_loop_reference() -> None:
    torch.manual_seed(0)
    layer = DenseGATLayer(6, 5)
    torch.nn.init.normal_(layer.bias)
    u = torch.randn(7, 6)
    adj = torch.rand(7, 7) > 0.6
    adj = adj | adj.T | torch.eye(7, dtype=torch.bool)
    dense = layer(u.unsqueeze(0), adj.unsqueeze(0))[0]
    assert torch.allclose(dense, _gat_loop(layer, u, adj), atol=1e-5)


# -------------------------------------------------------------------------------------------------- the readout
def test_k0_equals_adapool_with_the_same_scorer() -> None:
    h, mask = _states()
    torch.manual_seed(3)
    glot = GLOT(16, GlotConfig(num_layers=0))
    ada = AttentionReadout(16)
    ada.load_state_dict(glot.readout.state_dict())
    a, b = glot(h, mask), ada(h, mask)
    assert torch.allclose(a.z, b.z, atol=1e-6) and torch.allclose(a.weights, b.weights, atol=1e-6)
    reg = build_pooler("adapool", 16)
    assert [p.shape for p in reg.parameters()] == [p.shape for p in glot.readout.parameters()]


def test_k0_with_constant_scorer_is_masked_mean() -> None:
    h, mask = _states()
    glot = GLOT(16, GlotConfig(num_layers=0))
    last = glot.readout.score[-1]
    torch.nn.init.zeros_(last.weight)
    torch.nn.init.constant_(last.bias, 0.7)
    assert torch.allclose(glot(h, mask).z, masked_mean(h, mask), atol=1e-6)


def test_weights_are_a_distribution_over_valid_tokens() -> None:
    h, mask = _states()
    torch.manual_seed(1)
    out = GLOT(16, GlotConfig(num_layers=2, gat_hidden=8, tau=0.0))(h, mask)
    w = out.weights
    assert (w >= 0).all()
    assert torch.allclose(w.sum(1), torch.ones(3), atol=1e-6)
    assert (w[~mask] == 0).all()
    assert out.z.shape == (3, 16 + 2 * 8)


@pytest.mark.parametrize("jk", ["cat", "max", "mean"])
def test_padding_and_token_order_do_not_change_z(jk: str) -> None:
    torch.manual_seed(2)
    model = GLOT(16, GlotConfig(num_layers=2, gat_hidden=8, tau=0.0, jk=jk))
    h, mask = _states(b=1)
    z = model(h, mask).z
    padded = torch.cat([h, torch.randn(1, 5, 16)], 1)
    pmask = torch.cat([mask, torch.zeros(1, 5, dtype=torch.bool)], 1)
    assert torch.allclose(model(padded, pmask).z, z, atol=1e-5)
    perm = torch.randperm(h.shape[1])
    assert torch.allclose(model(h[:, perm], mask[:, perm]).z, z, atol=1e-5)


def test_registry_builds_every_pooling_and_lists_names() -> None:
    h, mask = _states()
    for name in POOLINGS:
        for dec in (False, True):
            out = build_pooler(name, 16, is_decoder=dec, config=GlotConfig(gat_hidden=8))(h, mask)
            assert out.z.shape[0] == 3 and torch.isfinite(out.z).all()
    last = build_pooler("cls", 16, is_decoder=True)(h, mask).z
    assert torch.equal(last[1], h[1, 5]) and torch.equal(last[2], h[2, 3])
    assert torch.equal(build_pooler("cls", 16)(h, mask).z, h[:, 0])
    mx = build_pooler("max", 16)(h, mask).z
    assert torch.equal(mx[2], h[2, :4].amax(0))
    with pytest.raises(ValueError, match="mean, max, cls, adapool, glot"):
        get_method("sum")


def test_heads_round_trip_through_the_weights_layout(tmp_path) -> None:
    """save_heads / load_heads: one file for every pooling, rebuilt from its config, same outputs."""
    from backend.tokens.glot.heads import load_heads, save_heads

    h, mask = _states()
    cfg = GlotConfig(gat_hidden=8)
    torch.manual_seed(0)
    models = {name: PooledClassifier(name, 16, 2, config=cfg).eval() for name in ("mean", "adapool", "glot")}
    path = save_heads(models, tmp_path / "glot_heads_toy.safetensors", command="python -m backend.train glot",
                      config={"backbone": "minilm", "hidden_size": 16, "is_decoder": False, "n_classes": 2,
                              "glot_config": {"num_layers": 2, "gat_hidden": 8, "tau": 0.6, "jk": "cat",
                                              "negative_slope": 0.2, "scorer_hidden": None}, "max_tokens": 160},
                      data_seeds={"variant": "hard", "data_seed": 0}, quality={"accuracy": {"glot": 0.5}})
    loaded, meta = load_heads(path)
    assert list(loaded) == list(models) and meta.config["poolings"] == list(models)
    assert meta.command == "python -m backend.train glot" and meta.quality["accuracy"] == {"glot": 0.5}
    with torch.no_grad():
        for name, m in models.items():
            torch.testing.assert_close(loaded[name](h, mask), m(h, mask), rtol=0, atol=0)


def test_config_validation() -> None:
    with pytest.raises(InputError):
        GlotConfig(tau=1.5)
    with pytest.raises(InputError):
        GlotConfig(jk="lstm")
    with pytest.raises(InputError):
        TrainConfig(epochs=0)


def test_training_on_a_separable_toy_problem_is_deterministic() -> None:
    """Two classes that differ in one token's direction: every trainable pooling learns it; same seed, same result."""
    g = torch.Generator().manual_seed(0)
    n, length, d = 96, 12, 8
    h = torch.randn(n, length, d, generator=g) * 0.3
    y = torch.arange(n) % 2
    h[torch.arange(n), 3, 0] += torch.where(y == 1, 3.0, -3.0)
    states = HiddenStates(h.half(), torch.ones(n, length, dtype=torch.bool), torch.zeros(n, length, dtype=torch.int32),
                          0.0, "toy")
    cfg = TrainConfig(epochs=15, lr=5e-3)
    gc = GlotConfig(gat_hidden=8, tau=0.5)
    _, r1 = train_head("glot", states, y, states, y, glot=gc, cfg=cfg, seed=4)
    _, r2 = train_head("glot", states, y, states, y, glot=gc, cfg=cfg, seed=4)
    assert r1.epoch_accuracy == r2.epoch_accuracy
    assert r1.accuracy >= 0.95
    assert r1.edge_density is not None and 0.0 <= r1.edge_density <= 1.0
    assert r1.params == sum(p.numel() for p in PooledClassifier("glot", d, 2, config=gc).parameters())


# --------------------------------------------------------------------------------------------------- generator
def _has_modifier_needle(words: list[str]) -> bool:
    for ctx in stress.CONTEXTS:
        c = ctx.split(" ")
        for i in range(len(words) - len(c)):
            if words[i:i + len(c)] == c and words[i + len(c)] in stress.MODIFIERS:
                return True
    return False


@pytest.mark.parametrize("variant", ["released", "hard"])
@pytest.mark.parametrize("ratio", stress.RATIOS)
@pytest.mark.parametrize("position", stress.POSITIONS)
def test_generator_single_needle(variant: str, ratio: float, position: str) -> None:
    data = stress.generate(60, ratio, position, variant, seed=5)
    assert data.texts == stress.generate(60, ratio, position, variant, seed=5).texts
    assert data.texts != stress.generate(60, ratio, position, variant, seed=6).texts
    for s in data.samples:
        words = s.words
        assert len(words) <= stress.SEQ_LEN
        start, end = s.needles[0]
        needle = words[start:end]
        assert " ".join(needle[:-1]).startswith(tuple(stress.CONTEXTS)) and needle[-1] in stress.NOUNS
        assert (s.label == 0) == (needle[len(needle) - 2 if s.label else 0] in stress.MODIFIERS or len(needle) > 5)
        assert (s.label == 0) == _has_modifier_needle(words)
        expected = int(stress.SEQ_LEN * ratio) + (11 if variant == "hard" and s.label == 1 else 0)
        assert s.n_distractors == expected
        if position == "start":
            assert start == 0
        if position == "end":
            assert end == len(words)
    if variant == "hard":  # equal lengths per context phrase, distractors include nouns and modifiers
        by_len = {}
        for s in data.samples:
            ctx_len = len(next(c for c in stress.CONTEXTS if s.text[s.text.find(c):].startswith(c)).split())
            by_len.setdefault(ctx_len, set()).add(len(s.words))
        if ratio >= 0.8:
            assert all(len(v) == 1 for v in by_len.values())
        hay = [w for s in stress.generate(200, 0.9, "random", "hard", 1).samples
               for i, w in enumerate(s.words) if not s.needles[0][0] <= i < s.needles[0][1]]
        assert set(stress.NOUNS) <= set(hay) and {"never", "without", "excluding"} <= set(hay)


def test_released_generator_keeps_its_shortcuts() -> None:
    data = stress.generate(300, 0.2, "random", "released", seed=0)
    hay = {w for s in data.samples for i, w in enumerate(s.words) if not s.needles[0][0] <= i < s.needles[0][1]}
    assert not hay & {"never", "without", "excluding"} and not hay & set(stress.NOUNS)
    pos = [len(s.words) for s in data.samples if s.label == 1]
    neg = [len(s.words) for s in data.samples if s.label == 0]
    assert min(neg) > max(pos)  # negatives are longer (the length cue)


@pytest.mark.parametrize("position", stress.POSITIONS)
def test_generator_relational(position: str) -> None:
    data = stress.generate(80, 0.9, position, "relational", seed=2)
    assert {s.label for s in data.samples} == {0, 1}
    for s in data.samples:
        words = s.words
        assert len(words) <= stress.SEQ_LEN
        (a0, a1), (b0, b1) = s.needles
        assert a1 <= b0
        nouns = [w for w in words if w in stress.NOUNS]
        assert nouns == [words[a1 - 1], words[b1 - 1]]
        assert (s.label == 1) == (nouns[0] == nouns[1])
        assert list(s.needle_words) == [a1 - 1, b1 - 1]
        if position == "random":
            assert b0 - a1 >= 0
    far = stress.generate(200, 0.9, "random", "relational", seed=3)
    gaps = [s.needles[1][0] - s.needles[0][1] for s in far.samples]
    assert sum(gaps) / len(gaps) > 30  # far apart on average


def test_generator_bad_settings() -> None:
    with pytest.raises(InputError, match="released, hard, relational"):
        stress.generate(10, 0.5, variant="easy")
    with pytest.raises(InputError, match="random, start, middle, end"):
        stress.generate(10, 0.5, position="left")
    with pytest.raises(InputError):
        stress.generate(10, 1.0)


def test_bag_of_words_controls() -> None:
    tr, ev = stress.splits("released", 0.2, n_train=400, n_eval=200)
    uni = stress.bag_of_words(tr.texts, tr.labels, ev.texts, ev.labels, 1)
    assert uni.accuracy >= 0.95  # the released generator is solvable without a model at low noise
    tr, ev = stress.splits("relational", 0.9, n_train=400, n_eval=200)
    for ng in (1, 2):
        assert stress.bag_of_words(tr.texts, tr.labels, ev.texts, ev.labels, ng).accuracy < 0.65


# ------------------------------------------------------------------------------------------------ CSV validation
GOOD = "text,label\n" + "\n".join(f"sentence number {i},{'pos' if i % 2 else 'neg'}" for i in range(20))


def test_csv_parses_and_splits() -> None:
    data = parse_labelled_csv(GOOD.encode())
    assert len(data.texts) == 20 and data.classes == ["neg", "pos"]
    tr, ev = split_indices(data.labels, 0.25, seed=0)
    assert sorted(tr + ev) == list(range(20)) and 4 <= len(ev) <= 6
    assert {data.labels[i] for i in ev} == {0, 1}


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"text,label\n", "at least 10"),
        (b"sentence,y\nhello,1\n", "lacks the column"),
        (("text,label\n" + "\n".join(f"t{i},same" for i in range(12))).encode(), "only one class"),
        (("text,label\n" + "x" * 2500 + ",a\n" + GOOD.split("\n", 1)[1]).encode(), "2000"),
        (b"text,label\n\xff\xfe bad,1\n", "UTF-8"),
    ],
)
def test_csv_bad_inputs(data: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_labelled_csv(data)


def test_param_counts_are_small() -> None:
    model = PooledClassifier("glot", 384, 2, config=GlotConfig())
    n = sum(p.numel() for p in model.parameters())
    # GAT 384x64 + 64x64 (+ attention vectors, biases), scorer 512->256->1, head 512->2
    expected = 384 * 64 + 3 * 64 + 64 * 64 + 3 * 64 + 512 * 256 + 256 + 256 + 1 + 512 * 2 + 2
    assert n == expected
    assert math.isclose(n, 161_667)


def test_graph_effect_verdicts() -> None:
    from backend.tokens.glot.stress import graph_effect

    rows = [
        {"ratio": 0.5, "method": "glot", "accuracy": 0.95, "accuracy_std": 0.0, "seeds": 1},
        {"ratio": 0.5, "method": "adapool", "accuracy": 0.70, "accuracy_std": 0.0, "seeds": 1},
        {"ratio": 0.9, "method": "glot", "accuracy": 0.925, "accuracy_std": 0.10, "seeds": 3},
        {"ratio": 0.9, "method": "adapool", "accuracy": 0.965, "accuracy_std": 0.02, "seeds": 3},
        {"ratio": 0.9, "method": "mean", "accuracy": 0.545, "accuracy_std": 0.01, "seeds": 3},
        {"ratio": 0.2, "method": "mean", "accuracy": 0.6, "accuracy_std": 0.0, "seeds": 1},
    ]
    out = {r["ratio"]: r for r in graph_effect(rows, n_eval=500)}
    assert set(out) == {0.5, 0.9}  # a ratio without both readouts is skipped
    assert out[0.5]["verdict"] == "GLOT ahead" and math.isclose(out[0.5]["difference"], 0.25)
    assert out[0.9]["verdict"] == "tie within noise" and math.isclose(out[0.9]["noise"], 0.12)
    assert out[0.9]["mean"] == 0.545 and out[0.5]["mean"] is None
    flipped = [dict(r, method={"glot": "adapool", "adapool": "glot"}.get(r["method"], r["method"])) for r in rows]
    assert {r["ratio"]: r["verdict"] for r in graph_effect(flipped, 500)}[0.5] == "AdaPool ahead"
