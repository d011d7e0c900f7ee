"""Invariants of the self-re-watermarking backend (:mod:`backend.watermark.rewatermark.lipschitz`, :mod:`backend.watermark.rewatermark.core`): spectral
norm after power iteration, encoder range / identity / determinism, the PGD curriculum and its L-inf ball, the adaptive
loss weights, the loss wiring of the re-embedding term, the attacks' interfaces and the bad-input messages. No shipped
weights needed (randomly initialised models)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.watermark.rewatermark import core as R
from backend.watermark.rewatermark import lipschitz as L


def _model(sn: bool = True, seed: int = 0, **kw) -> L.SRWModel:
    torch.manual_seed(seed)
    return L.SRWModel(L.SRWConfig(spectral_norm=sn, **kw))


def _frames(n: int = 4, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 3, 32, 32, generator=g) * 2 - 1


def test_spectral_norm_after_power_iteration_is_at_most_one() -> None:
    m = _model(sn=True)
    m.train()
    x, bits = _frames(), torch.randint(0, 2, (4, 16)).float()
    for _ in range(10):  # power iterations run in train-mode forward passes
        m.embed_frame(x, bits)
        m.decoder(x)
    rows = L.layer_norms(m)
    assert len(rows) >= 12
    for r in rows:
        assert r["reshaped_sigma"] <= 1 + 1e-2, r
    # the reshaped normalisation does not bound the true convolution operator norm by 1 (why no certificate)
    assert max(r["operator_norm"] for r in rows if r["kind"] == "Conv2d") > 1.0
    for r in rows:
        if r["kind"] == "Conv2d":
            assert r["operator_norm"] <= 3.0 * r["reshaped_sigma"] + 1e-3  # sqrt(k*k) with k = 3


def test_conv_operator_norm_matches_a_dense_matrix() -> None:
    torch.manual_seed(1)
    conv = torch.nn.Conv2d(2, 3, 3, 1, 1, bias=False)
    size = 6
    basis = torch.eye(2 * size * size).view(-1, 2, size, size)
    dense = conv(basis).detach().reshape(2 * size * size, -1).T
    exact = float(torch.linalg.matrix_norm(dense, ord=2))
    assert L.conv_operator_norm(conv, size, iters=200) == pytest.approx(exact, rel=1e-3)


def test_encoder_range_identity_and_determinism() -> None:
    x, bits = _frames(), torch.randint(0, 2, (4, 16)).float()
    m = _model().eval()
    out = m.embed_frame(x, bits)
    assert out.min() >= -1 and out.max() <= 1
    zero = _model(strength=0.0).eval()
    assert torch.equal(zero.embed_frame(x, bits), x)
    assert torch.equal(_model(seed=3).eval().embed_frame(x, bits), _model(seed=3).eval().embed_frame(x, bits))
    # the residual cap (a deviation, default 32 dB): frame PSNR >= psnr_floor; psnr_floor = 0 is the paper's encoder
    # x_w = clamp(x + s_f * tanh(.)) with no cap
    r = m.encoder(x, bits)
    psnr = 10 * torch.log10(4.0 / r.pow(2).mean(dim=(1, 2, 3)))
    assert m.cfg.psnr_floor == 32.0 and (psnr >= 32.0 - 1e-3).all()
    with torch.no_grad():
        raw = _model(psnr_floor=0.0).eval().encoder(x, bits)
    assert float(raw.abs().max()) <= m.cfg.strength and torch.allclose(L.cap_residual(raw, 0.0), raw)
    # any size: [0, 1] images of another size keep their shape and range
    big = torch.rand(1, 3, 70, 50)
    e = m.embed(big, bits[:1])
    assert e.shape == big.shape and 0 <= float(e.min()) and float(e.max()) <= 1
    assert m.decode_logits(big).shape == (1, 16)


def test_pgd_epsilon_curriculum() -> None:
    total = 1000
    assert all(L.pgd_epsilon(s, total) == 0.0 for s in range(100))
    ramp = [L.pgd_epsilon(s, total) for s in range(100, 201)]
    assert np.all(np.diff(ramp) > 0)
    assert np.allclose(np.diff(ramp), np.diff(ramp)[0])  # linear
    assert L.pgd_epsilon(200, total) == pytest.approx(0.06)
    assert all(L.pgd_epsilon(s, total) == pytest.approx(0.06) for s in range(200, 1000, 50))


def test_pgd_iterates_stay_in_the_ball_and_range() -> None:
    m = _model().eval()
    x = _frames(2)
    target = torch.randint(0, 2, (2, 16)).float()
    eps = 0.05
    seen = []

    def dec(z):
        seen.append(z.detach().clone())
        return m.decoder(z)

    out = L.pgd_overwrite(dec, x, target, eps, 0.02, 6)
    for z in seen[1:] + [out]:
        assert float((z - x).abs().max()) <= eps + 1e-6
        assert z.min() >= -1 and z.max() <= 1
    assert torch.equal(L.pgd_overwrite(dec, x, target, 0.0, 0.02, 6), x)
    # it works: the BCE toward the target goes down
    f = torch.nn.functional.binary_cross_entropy_with_logits
    with torch.no_grad():
        assert float(f(m.decoder(out), target)) < float(f(m.decoder(x), target))


def test_adaptive_weights() -> None:
    assert L.AdaptiveWeights.targets(0.0) == list(L.BASE_WEIGHTS)
    assert L.AdaptiveWeights.targets(1.0) == pytest.approx([29.5, 5.25, 2.5, 2.5])
    w = L.AdaptiveWeights(weights=[10.0, 10.0, 10.0, 10.0])
    alpha = L.AdaptiveWeights.alpha(0.5, 0.1, 0.3)
    assert alpha == pytest.approx(0.7 * 0.5 + 0.3 * 0.5 * ((1 - 0.5) + 0.0))
    tgt = L.AdaptiveWeights.targets(alpha)
    new = w.update(0.5, 0.1, 0.3)
    assert new == pytest.approx([10 + 0.2 * (t - 10) for t in tgt])


def test_reembedding_loss_is_labelled_with_the_original_message() -> None:
    """With a stub decoder and m' = complement of m, one small gradient step on the re-embedding term lowers the BCE
    of D(x_rw) against m and raises it against m'."""
    torch.manual_seed(0)
    m = _model(sn=False)
    stub = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 16))
    for p in stub.parameters():
        p.requires_grad_(False)
    m.decoder = stub
    x = _frames(8)
    bits = torch.randint(0, 2, (8, 16)).float()
    comp = 1 - bits
    f = torch.nn.functional.binary_cross_entropy_with_logits

    def losses():
        with torch.no_grad():
            lr = m.decoder(m.embed_frame(m.embed_frame(x, bits), comp))
        return float(f(lr, bits)), float(f(lr, comp))

    before = losses()
    out = L.training_step(m, x, bits, comp, [0.0, 0.0, 0.0, 1.0], np.random.default_rng(0), reembed=True,
                          pgd=False, use_noise=False, eps=0.0)
    assert "bce_reembed" in out.terms
    opt = torch.optim.SGD(m.encoder.parameters(), lr=0.05)
    opt.zero_grad()
    out.loss.backward()
    opt.step()
    after = losses()
    assert after[0] < before[0] and after[1] > before[1]


def test_distortions_keep_shape_and_range() -> None:
    rng = np.random.default_rng(0)
    x = _frames(3)
    xw = (x + 0.05).clamp(-1, 1)
    for kind in L.NOISES:
        y = L.distort(xw, x, rng, kind)
        assert y.shape == x.shape and float(y.min()) >= -1 - 1e-6 and float(y.max()) <= 1 + 1e-6, kind
    with pytest.raises(ValueError, match="Valid names"):
        L.distort(xw, x, rng, "rotate")


def test_sensitivity_of_a_linear_map_is_its_norm() -> None:
    a = torch.diag(torch.tensor([3.0, 1.0, 0.5]))
    out = L.sensitivity(lambda z: z @ a.T, torch.zeros(2, 3), n_random=8, radius=0.1, adv_steps=30)
    assert np.all(out["random"] <= 3.0 + 1e-4) and np.all(out["random"] >= 0.5 - 1e-4)
    assert np.allclose(out["adversarial"], 3.0, atol=1e-3)


def test_registry_errors_and_bad_images() -> None:
    with pytest.raises(InputError, match="Valid names: plain"):
        R.get_model("nope")
    with pytest.raises(InputError, match="at least 32 px"):
        R.check_image(np.zeros((20, 200, 3), np.uint8))
    with pytest.raises(InputError, match="limit"):
        R.check_image(np.zeros((3000, 3000, 3), np.uint8))
    with pytest.raises(InputError, match="RGB"):
        R.check_image(np.zeros((64, 64), np.uint8))


def test_attacks_on_a_random_model(tmp_path, monkeypatch) -> None:
    """The attack plumbing (self / cross / PGD) on an untrained model saved to a temporary assets folder."""
    m = _model().eval()
    monkeypatch.setattr(L, "weights_path", lambda v: tmp_path / f"rewatermark_{v}.safetensors")
    L.save(m, tmp_path / "rewatermark_srw.safetensors")
    L.save(_model(sn=False, seed=1).eval(), tmp_path / "rewatermark_plain.safetensors")
    R.get_model.cache_clear()
    try:
        img = (np.random.default_rng(0).random((48, 40, 3)) * 255).astype(np.uint8)
        st = R.run_story("srw", img, rounds=2, seed=0, cross_attacker="plain", pgd=(0.03, 0.007, 5))
        assert set(st.images) >= {"x", "x_w", "rw1", "rw2", "cross", "pgd"}
        assert len(st.acc_a) == 2 and all(0 <= a <= 1 for a in st.acc_a + st.acc_b)
        assert np.abs(st.images["pgd"].astype(int) - st.images["x_w"].astype(int)).max() <= round(0.015 * 255) + 1
        assert st.psnr["x_w"] >= 30.0
        rows = R.story_rows(st)
        assert [r["stage"] for r in rows][:3] == ["watermarked (A)", "self re-watermark round 1",
                                                 "self re-watermark round 2"]
        with pytest.raises(InputError, match="rounds"):
            R.run_story("srw", img, rounds=0)
    finally:
        R.get_model.cache_clear()


def test_round_trip_is_what_the_any_size_decoder_reads() -> None:
    """The training round trip equals the any-size API's path (upsample with the frame's RMS, resize back), is the
    identity at the frame size, and loses part of the residual for a larger image."""
    m = _model().eval()
    x, bits = _frames(2), torch.randint(0, 2, (2, 16)).float()
    with torch.no_grad():
        r = m.encoder(x, bits)
        assert torch.equal(L.round_trip(r, (32, 32)), r)
        up = L.upsample_residual(r, (96, 80))
        assert up.shape == (2, 3, 96, 80)
        assert torch.allclose(L._rms(up), L._rms(r), rtol=1e-4)
        back = L.round_trip(r, (96, 80))
        gain = float((back * r).sum() / (r * r).sum())
        assert 0.3 < gain < 1.0
        img = (x[:1] + 1) / 2
        big = L.resize(img, (96, 80))
        api = m.residual(big, bits[:1], tiles=1)
        assert torch.allclose(api, L.upsample_residual(m.encoder(L.resize(big, (32, 32)) * 2 - 1, bits[:1]) / 2,
                                                       (96, 80)))
    out = L.training_step(m.train(), x, bits, 1 - bits, list(L.BASE_WEIGHTS), np.random.default_rng(0), reembed=True,
                          pgd=True, use_noise=True, eps=0.03, pgd_iters=1, image_size=(64, 48))
    assert torch.isfinite(out.loss) and {"bce_reembed", "bce_pgd"} <= set(out.terms) and "null" not in out.terms
    # the null term: the decoder's squared logits on the unmarked cover, added with its weight
    with torch.no_grad():
        null = float(m.decoder(x).pow(2).mean())
    kw = dict(reembed=False, pgd=False, use_noise=False, eps=0.0)
    base = L.training_step(m.eval(), x, bits, 1 - bits, list(L.BASE_WEIGHTS), np.random.default_rng(0), **kw)
    with_null = L.training_step(m, x, bits, 1 - bits, list(L.BASE_WEIGHTS), np.random.default_rng(0),
                                null_weight=0.5, **kw)
    assert with_null.terms["null"] == pytest.approx(null, rel=1e-4)
    assert float(with_null.loss) == pytest.approx(float(base.loss) + 0.5 * null, rel=1e-4)


def test_tiled_any_size_path() -> None:
    """The shipped any-size path reads an image as TILES x TILES frames: the tiling is lossless and in row-major
    order, every frame carries the same message with its own PSNR cap, the decoder averages the frames' logits, and
    ``tiles=1`` is the whole image as one frame."""
    s, g = 32, L.TILES
    x = torch.rand(2, 3, g * s, g * s)
    t = L.to_tiles(x, g, s)
    assert t.shape == (2 * g * g, 3, s, s)
    assert torch.equal(t[1], x[0, :, :s, s:2 * s]) and torch.equal(t[g], x[0, :, s:2 * s, :s])
    assert torch.equal(t[g * g], x[1, :, :s, :s])
    assert torch.equal(L.from_tiles(t, g, s), x)
    m = _model().eval()
    img, bits = torch.rand(1, 3, 150, 110), torch.randint(0, 2, (1, 16)).float()
    with torch.no_grad():
        r = m.residual(img, bits)
        frames = L.to_tiles(L.resize(img, (g * s, g * s)) * 2 - 1, g, s)
        expect = L.upsample_residual(L.from_tiles(m.encoder(frames, bits.expand(g * g, -1)) / 2, g, s), (150, 110))
        assert r.shape == img.shape and torch.allclose(r, expect, atol=1e-6)
        # each frame is capped on its own: every frame's PSNR >= the floor
        per = m.encoder(frames, bits.expand(g * g, -1))
        assert float(per.pow(2).mean(dim=(1, 2, 3)).sqrt().max()) <= 2 * 10 ** (-m.cfg.psnr_floor / 20) + 1e-6
        w = m.embed(img, bits)
        logits = m.decode_logits(w)
        assert torch.allclose(logits, m.decoder(L.to_tiles(L.resize(w, (g * s, g * s)) * 2 - 1, g, s)).mean(0,
                                                                                                     keepdim=True))
        assert torch.allclose(m.decode_logits(w, tiles=1), m.decoder(L.resize(w, (s, s)) * 2 - 1))
    with pytest.raises(InputError, match="tiles"):
        R.get_model("srw", tiles=0)
