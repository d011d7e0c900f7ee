"""Invariants of the Tactic spec on seeded synthetic q, k, v of SmolLM2's shapes (9 query heads, 3 KV heads, d = 64):
P = 1 is full attention, the error bound holds for any set, the oracle is the minimal prefix, cluster size 1 is the
exact sort, the a/x + b fit is exact on exact curves, GQA unions contain each head's set, Quest's page bound holds,
the window keeps sinks and recent tokens only, Tactic never drops the first token, and bad P is refused."""

from __future__ import annotations

import math

import pytest
import torch

from backend.errors import InputError
from backend.tokens.tactic import sparse_attention as sa
from backend.tokens.tactic.evaluation import synthetic_layer

T, NQ = 512, 6


@pytest.fixture(scope="module")
def layer():
    c = synthetic_layer(T, seed=3)
    n0 = T - NQ
    pos = torch.arange(n0, T)
    q = c["q"][:, n0:].transpose(0, 1).contiguous()
    return c, q, pos, sa.LayerCache(c["k"], n0, c["v"])


@pytest.mark.parametrize("name", ["oracle_top_p", "tactic"])
def test_p_one_is_full_attention(layer, name) -> None:
    c, q, pos, cache = layer
    sel = sa.SELECTORS[name](q, pos, cache, p=1.0)
    assert torch.equal(sel.mask, sa.causal_mask(pos, T).expand_as(sel.mask))
    qu = sa.quality(q, c["k"], c["v"], pos, sel.mask)
    assert torch.allclose(qu.mass, torch.ones_like(qu.mass), atol=1e-9)
    assert float(qu.err.max()) < 1e-9


def test_error_bound_holds_for_random_sets(layer) -> None:
    c, q, pos, _ = layer
    g = torch.Generator().manual_seed(0)
    for frac in (0.01, 0.1, 0.5, 0.9):
        mask = (torch.rand(NQ, 9, T, generator=g) < frac) & sa.causal_mask(pos, T)
        mask[..., 0] |= True  # at least one token per head
        qu = sa.quality(q, c["k"], c["v"], pos, mask)
        assert bool((qu.err <= qu.bound + 1e-9).all())


def test_every_selector_respects_the_bound_and_causality(layer) -> None:
    c, q, pos, cache = layer
    for name in sa.SELECTORS:
        sel = sa.SELECTORS[name](q, pos, cache, p=0.8, budget=64)
        assert not bool((sel.mask & ~sa.causal_mask(pos, T)).any()), name
        qu = sa.quality(q, c["k"], c["v"], pos, sel.mask)
        assert bool((qu.err <= qu.bound + 1e-9).all()), name
        assert bool((sel.bytes > 0).all()), name


def test_oracle_is_minimal_and_monotone_in_p(layer) -> None:
    c, q, pos, cache = layer
    w = sa.attention_weights(q, c["k"], pos)
    prev = None
    for p in (0.5, 0.7, 0.9, 0.95, 0.99):
        sel = sa.select_oracle_top_p(q, pos, cache, p=p)
        mass = (w * sel.mask).sum(-1)
        assert bool((mass >= p - 1e-12).all())
        # dropping the smallest selected weight falls below p
        smallest = w.masked_fill(~sel.mask, float("inf")).amin(-1)
        assert bool((mass - smallest < p).all())
        if prev is not None:
            assert bool((sel.tokens >= prev).all())
        prev = sel.tokens


def test_cluster_size_one_gives_the_exact_order(layer) -> None:
    c, q, pos, _ = layer
    n0 = T - NQ
    cfg = sa.TacticConfig(cluster_size=1, sinks=0, kmeans_iters=1)
    idx = sa.build_index(c["k"], n0, cfg)
    order = sa.cluster_order(q, idx.centroids, idx.sizes)  # clusters of one key each
    g = 3
    for h in (0, 4, 8):
        # cluster j holds the token(s) assigned to it; with size 1 every centroid is a key
        toks = torch.stack([idx.assign[h // g] == j for j in order[0, h]]).float().argmax(1)
        exact = (c["k"][h // g, :n0] @ q[0, h]).argsort(descending=True)
        assert torch.equal(toks, exact)


def test_fit_recovers_a_and_b_on_exact_curves() -> None:
    x = (torch.arange(200, dtype=torch.float64) + 0.5) * 10
    for a, b in ((50.0, 0.2), (3.0, 0.0), (1000.0, 1.5)):
        fa, fb = sa.fit_inverse(x, a / x + b)
        assert math.isclose(float(fa), a, rel_tol=1e-9) and math.isclose(float(fb), b, rel_tol=1e-9, abs_tol=1e-9)
    n = 1000
    tail = sa.inverse_tail(torch.tensor(2.0), torch.tensor(0.5), torch.tensor(10), n)
    exact = sum(2.0 / xx + 0.5 for xx in range(11, n + 1))
    assert math.isclose(float(tail), exact, rel_tol=2e-3)


def test_gqa_union_contains_each_heads_set(layer) -> None:
    _, q, pos, cache = layer
    for name in sa.SELECTORS:
        sel = sa.SELECTORS[name](q, pos, cache, p=0.9, budget=48)
        head_union = sel.union.repeat_interleave(3, 1)
        assert not bool((sel.mask & ~head_union).any()), name
        assert bool((sel.union_tokens >= sel.tokens.view(NQ, 3, 3).amax(-1)).all())


def test_quest_bound_is_above_the_page_maximum(layer) -> None:
    c, q, pos, cache = layer
    lo, hi = cache.pages
    u = sa.quest_upper_bound(q, lo, hi)
    z = sa.logits(q, c["k"], torch.full((NQ,), T - 1))  # every token visible
    n_pages = lo.shape[1]
    zp = torch.nn.functional.pad(z, (0, n_pages * sa.PAGE_SIZE - T), value=float("-inf"))
    true_max = zp.view(NQ, 9, n_pages, sa.PAGE_SIZE).amax(-1)
    assert bool((u >= true_max - 1e-4).all())


def test_window_keeps_sinks_and_recent_only(layer) -> None:
    _, q, pos, cache = layer
    sel = sa.select_window(q, pos, cache, budget=36)
    for i, t in enumerate(pos.tolist()):
        want = set(range(4)) | set(range(t - 31, t + 1))
        got = set(torch.nonzero(sel.mask[i, 0]).flatten().tolist())
        assert got == want


def test_tactic_keeps_first_token_and_generated_tokens(layer) -> None:
    _, q, pos, cache = layer
    sel = sa.select_tactic(q, pos, cache, p=0.5)
    assert bool(sel.mask[..., 0].all())
    for i, t in enumerate(pos.tolist()):
        assert bool(sel.mask[i, :, cache.n0: t + 1].all())
    # overhead: centroids + samples per KV head, counted in the bytes
    c = cache.index.centroids.shape[1] + cache.index.samples.shape[1]
    assert bool((sel.overhead == c).all())
    assert bool((sel.bytes > sel.union_tokens.sum(-1) * 2 * 64 * 2).all())


def test_tactic_reaches_p_when_the_fit_is_good(layer) -> None:
    c, q, pos, cache = layer
    sel = sa.select_tactic(q, pos, cache, p=0.9)
    qu = sa.quality(q, c["k"], c["v"], pos, sel.mask)
    assert float((qu.mass >= 0.85).double().mean()) >= 0.7
    assert float(sel.extras["total_est_ratio"].median()) == pytest.approx(1.0, abs=0.35)


def test_kmeans_clusters_beat_position_pages_on_wcss(layer) -> None:
    c, _, _, cache = layer
    idx = cache.index
    k = c["k"][:, 1: cache.n0]
    pages = k[:, : (k.shape[1] // 16) * 16].reshape(3, -1, 16, 64)
    page_wcss = ((pages - pages.mean(2, keepdim=True)) ** 2).sum((1, 2, 3))
    assert bool((idx.wcss < page_wcss).all())


@pytest.mark.parametrize("p", [0.0, -0.1, 1.01, float("nan"), 2])
def test_bad_p_is_refused(layer, p) -> None:
    _, q, pos, cache = layer
    with pytest.raises(InputError, match="P must be in"):
        sa.select_tactic(q, pos, cache, p=p)


@pytest.mark.parametrize(("settings", "words"), [
    ({"p": 1.5}, "P must be in"), ({"p": 0.0}, "P must be in"), ({"budget": "lots"}, "'match' or a whole number"),
    ({"budget": 0}, "at least 1 token"), ({"methods": ("tactic", "flash")}, "Valid names"), ({"layers": ()}, "layer"),
    ({"tokens": 100, "queries": 64}, "prefill"), ({"preset": "novel"}, "Valid names"), ({"depth": 1.5}, "depth"),
])
def test_job_configs_refuse_bad_settings(settings, words) -> None:
    """The page and the CLI build these configs: both refuse a bad setting with the same words, before any work."""
    from backend.tokens.tactic.jobs import CompareConfig, PerplexityConfig

    with pytest.raises(InputError, match=words):
        CompareConfig(**settings)
    if "queries" not in settings and "layers" not in settings:
        with pytest.raises(InputError, match=words):
            PerplexityConfig(**settings)
    with pytest.raises(InputError, match="real text"):
        PerplexityConfig(preset="synthetic")


def test_same_seed_same_selection(layer) -> None:
    c, q, pos, _ = layer
    a = sa.select_tactic(q, pos, sa.LayerCache(c["k"], T - NQ, c["v"]), p=0.9)
    b = sa.select_tactic(q, pos, sa.LayerCache(c["k"], T - NQ, c["v"]), p=0.9)
    assert torch.equal(a.mask, b.mask)


def test_decode_step_p_one_is_exact_and_reads_only_what_it_selects(layer) -> None:
    from backend.tokens.tactic.decode import build_layout, decode_step, full_bytes, full_step

    c, _, _, _ = layer
    k, v = c["k"], c["v"]
    n0 = T - 4
    q = c["q"][:, T - 1]
    exact = full_step(q, k, v)
    lay1 = build_layout(k, v, n0, sa.TacticConfig(p=1.0))
    # the stored rows are a physical permutation of the prefill: each cluster one contiguous slice
    hkv, n, d = 3, n0 - 1, 64
    assert lay1.kc.shape == lay1.vc.shape == (hkv * n, d) and lay1.kc.is_contiguous() and lay1.vc.is_contiguous()
    for h in range(hkv):
        assert torch.equal(lay1.kc[h * n:(h + 1) * n], k[h, lay1.perm[h]])
        assert torch.equal(lay1.vc[h * n:(h + 1) * n], v[h, lay1.perm[h]])
        assert sorted(lay1.perm[h].tolist()) == list(range(1, n0))
        idx = sa.build_index(k, n0, sa.TacticConfig(p=1.0))
        j = int(idx.sizes[h].argmax())
        st, sz = int(lay1.starts[h, j]), int(lay1.sizes[h, j])
        assert bool((idx.assign[h, lay1.perm[h][st - h * n: st - h * n + sz]] == j).all())
    r1 = decode_step(q, lay1, k[:, n0:], v[:, n0:])
    assert torch.allclose(r1.out, exact, atol=1e-5) and bool((r1.tokens == T).all())
    lay = build_layout(k, v, n0, sa.TacticConfig(p=0.9))
    r = decode_step(q, lay, k[:, n0:], v[:, n0:])
    assert bool((r.tokens < T).any()) and bool((r.tokens >= 1 + 4).all())
    # each head reads a prefix of its clusters in descending q . centroid order, at least the outliers
    zc = torch.einsum("hd,hcd->hc", q, lay.centroids.repeat_interleave(3, 0))
    cum = lay.sizes.repeat_interleave(3, 0).gather(1, zc.argsort(dim=-1, descending=True)).cumsum(-1)
    for h in range(9):
        assert int(r.tokens[h]) - 5 in set(cum[h].tolist())
        assert int(r.tokens[h]) - 5 >= math.ceil(lay.cfg.outlier_frac * n)
    # bytes: centroids and sampled keys once per KV head, K and V rows of every head's clusters, sinks + new tokens
    c_, s_ = lay.centroids.shape[1], lay.ks.shape[1]
    rows_read = int((r.tokens - 1 - 4).sum())
    assert r.bytes == 4 * d * (hkv * (c_ + s_) + 2 * rows_read + 2 * hkv * 5)
    assert r.bytes < full_bytes(k) * 9 / 3  # never more than every head reading everything
    # the realised mass of what it read, and the error bound for that set
    z = torch.einsum("hd,htd->ht", q, k.repeat_interleave(3, 0)) / 8.0
    mass = r.mass / torch.exp(z - r.shift[:, None]).sum(-1)
    err = (r.out - exact).norm(dim=-1)
    assert bool((err <= 2 * (1 - mass) * v.norm(dim=-1).max() + 1e-4).all())


def test_long_context_profile_and_calibration() -> None:
    from backend.tokens.tactic.longctx import calibrate, extrapolate, head_targets, oracle_need, synthetic_cache

    prof = torch.tensor([[[10.0, 20.0, 40.0], [5.0, 5.0, 5.0]]])  # need ~ T and a constant need
    needs, alpha = extrapolate(prof, (1000, 2000, 4000), (8000, 10**9))
    assert torch.allclose(alpha, torch.tensor([[1.0, 0.0]], dtype=torch.float64), atol=1e-9)
    assert torch.allclose(needs[0, :, 0], torch.tensor([80.0, 5.0], dtype=torch.float64))
    assert float(needs[0, 0, 1]) == pytest.approx(1e9 * 0.01)  # below T: not clamped
    assert float(extrapolate(prof * 100, (1000, 2000, 4000), (8000,))[0][0, 0, 0]) == 8000  # at most T
    tg = head_targets(torch.arange(1.0, 19.0).view(2, 9), 9)
    assert float(tg.mean()) == pytest.approx(9.5) and bool((tg[1:] >= tg[:-1]).all())
    c = synthetic_layer(1024, seed=1)
    k, v = synthetic_cache(c["k"], c["v"], 4096, seed=0)
    assert k.shape == (3, 4096, 64) and torch.equal(k[:, 0], c["k"][:, 0])
    targets = torch.tensor([5.0, 20, 50, 100, 200, 300, 500, 800, 1200])
    q, got = calibrate(c["q"][:, -1], k, targets, 0.9)
    z = torch.stack([k[h // 3] @ q[h] for h in range(9)]) / 8.0
    assert bool(((oracle_need(z, 0.9) - got).abs() <= 1 + 0.01 * got).all())  # the scaled q needs what it says
    assert bool(((got.double() - targets).abs() <= 0.1 * targets + 2).all())


def test_fitted_tokens_approach_the_root_from_below() -> None:
    import numpy as np

    from backend.tokens.tactic.decode import fitted_tokens

    a, b, m, r = np.array([2.0, 0.5, 1.0]), np.array([1e-3, -1e-3, 0.0]), np.array([100.0, 50.0, 10.0]), \
        np.array([3.0, 0.5, 0.5])

    def f(x):
        return a * np.log((x + 0.5) / (m + 0.5)) + b * (x - m) - r

    lo, hi = m.copy(), np.where(b < 0, -a / np.minimum(b, -1e-300) - 0.5, 1e6)  # bisection up to the curve's end
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = np.where(f(mid) < 0, mid, lo), np.where(f(mid) < 0, hi, mid)
    x = fitted_tokens(a, b, m, r, 10**6, iters=8)
    assert bool((x <= lo + 1e-6).all()) and bool((x >= 0.99 * lo).all())
    assert bool((fitted_tokens(a, b, m, r, 10**6, iters=1) <= x + 1e-9).all())  # the iterates only increase
    # a mass the curve never adds: the rank where a negative b ends it
    assert float(fitted_tokens(a[1:2], b[1:2], m[1:2], np.array([5.0]), 10**6)[0]) == 499.5
