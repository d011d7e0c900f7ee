"""Invariants of SIGMark's building blocks: PRC, GF-PRC keys, distortion-freeness, causal VAE grouping, SGO, attacks,
video i/o, CLI parsing. Fast: PRC in numpy and the analytic channel (never used for a claim); the causal-VAE check
uses freshly initialised modules, no weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from backend.errors import InputError
from backend.watermark import prc
from backend.watermark import sigmark as S
from backend.watermark.attacks import apply_video_chain as apply_chain
from backend.watermark.attacks import names as attack_names
from backend.watermark.sigmark.channel import AnalyticChannel, synthetic_clips


@pytest.fixture(scope="module")
def key():
    return prc.keygen(1024, 32, 1e-5, bp_iters=200, seed=0)


def _noisy(z, s, rng):
    return (z + s * rng.standard_normal(z.shape)) / math.sqrt(1 + s * s)


# -------------------------------------------------------------------------------------------------------- PRC
def test_keygen_parameters(key):
    assert (key.b, key.g, key.k, key.r) == (17, 27, 76, 921)
    assert key.eta == pytest.approx(1 - 2 ** (-1 / 27))
    assert key.checks.shape == (921, 3)
    assert all(len(set(row)) == 3 for row in key.checks.tolist())  # every check has weight 3


def test_clean_codeword_meets_every_check():
    k0 = prc.keygen(1024, 32, 1e-5, noise_rate=0.0, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        c = prc.encode(k0, rng.integers(0, 2, 32), rng)
        assert prc.syndrome_ok(k0, c)


def test_latent_is_gaussian_and_carries_the_signs(key):
    rng = np.random.default_rng(1)
    zs = []
    for _ in range(20):
        c = prc.encode(key, rng.integers(0, 2, 32), rng)
        z = prc.sample_latent(c, rng)
        assert np.array_equal(np.sign(z), c)
        zs.append(z)
    assert stats.kstest(np.concatenate(zs), "norm").pvalue > 0.01


def test_noiseless_detect_and_decode(key):
    rng = np.random.default_rng(2)
    msg = rng.integers(0, 2, 32).astype(np.uint8)
    z = prc.sample_latent(prc.encode(key, msg, rng), rng)
    post = prc.posterior(z)
    assert prc.detect(key, post, 1e-6)
    res = prc.decode(key, post)
    assert res.ok and np.array_equal(res.message, msg)


def test_pure_noise_is_rejected(key):
    rng = np.random.default_rng(4)
    false_detect = sum(prc.detect(key, prc.posterior(rng.standard_normal(1024)), 1e-6) for _ in range(200))
    assert false_detect == 0
    false_decode = sum(prc.decode(key, prc.posterior(rng.standard_normal(1024))).ok for _ in range(50))
    assert false_decode <= 1


def test_decode_survives_noise(key):
    rng = np.random.default_rng(5)
    accs = []
    for _ in range(8):
        msg = rng.integers(0, 2, 32).astype(np.uint8)
        z = prc.sample_latent(prc.encode(key, msg, rng), rng)
        res = prc.decode(key, prc.posterior(_noisy(z, 1.0, rng)))
        accs.append((res.message == msg).mean())
    assert np.mean(accs) >= 0.99


def test_posterior_odd_monotone_bounded():
    x = np.linspace(-6, 6, 101)
    p = prc.posterior(x)
    assert np.allclose(p, -prc.posterior(-x))
    assert np.all(np.diff(p) > 0) and np.all(np.abs(p) < 1)


def test_bp_matches_ldpc_when_installed(key):
    ldpc = pytest.importorskip("ldpc")
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    z = prc.sample_latent(prc.encode(key, rng.integers(0, 2, 32), rng), rng)
    q = np.clip(prc._corrected(key, prc.posterior(_noisy(z, 0.8, rng))), -1 + 1e-9, 1 - 1e-9)
    H = sp.csr_matrix((np.ones(key.checks.size), (np.repeat(np.arange(key.r), 3), key.checks.reshape(-1))),
                      shape=(key.r, key.n))
    hard_in = (q < 0).astype(np.uint8)
    dec = ldpc.BpDecoder(H, error_channel=list((1 - np.abs(q)) / 2), max_iter=20, bp_method="product_sum")
    error = dec.decode((H @ hard_in) % 2)  # syndrome decoding: the flips that make hard_in a codeword
    theirs = hard_in ^ np.asarray(error, dtype=np.uint8)
    ours = (prc.belief_propagation(key.checks, key.n, np.log1p(q) - np.log1p(-q), 20) < 0).astype(np.uint8)
    assert (ours == theirs).mean() >= 0.99


# ---------------------------------------------------------------------------------------------------- GF-PRC
@pytest.fixture(scope="module")
def analytic():
    return AnalyticChannel()


def test_message_helpers():
    bits = S.parse_hex("a5f00f12", (32, 64))
    assert S.bits_to_hex(bits) == "a5f00f12"
    with pytest.raises(InputError):
        S.parse_hex("xyz", (32,))
    with pytest.raises(InputError):
        S.parse_hex("abc", (32,))
    blocks = S.frame_blocks(np.arange(64) % 2, 6, 32)  # 64 bits over 6 frames: fr = 3
    assert np.array_equal(blocks[0], blocks[2]) and blocks.shape == (6, 32)


def test_key_index_on_shuffled_frames_and_permutation_undone(analytic):
    cfg = S.SIGMarkConfig()
    keys = S.global_keys(analytic, cfg)
    rng = np.random.default_rng(7)
    msg = rng.integers(0, 2, 32 * 6).astype(np.uint8)  # fr = 1: a different block per latent frame
    z = S.initial_noise(analytic, 11, msg, cfg)
    perm = np.array([3, 0, 5, 1, 4, 2])  # inverted latent frame i holds original frame perm[i] + 1
    z_shuf = np.concatenate([z[:, :1], z[:, 1:][:, perm]], axis=1)
    z_hat = _noisy(z_shuf, 1.0, rng)
    ex = S.extract_noise(keys, z_hat, cfg, message_bits=msg.size)
    assert np.array_equal(ex.key_idx, perm + 1)
    truth = S.frame_blocks(msg, 6, 32)
    assert np.array_equal(ex.frame_bits, truth)  # out[key_idx[f]] = decoded[f], not the inverse permutation
    assert np.array_equal(ex.message, msg) and ex.detected


def test_majority_vote_over_copies(analytic):
    cfg = S.SIGMarkConfig()
    keys = S.global_keys(analytic, cfg)
    rng = np.random.default_rng(8)
    msg = rng.integers(0, 2, 32).astype(np.uint8)  # fr = 6
    z = S.initial_noise(analytic, 12, msg, cfg)
    z[:, 1:3] = rng.standard_normal(z[:, 1:3].shape)  # destroy 2 of 6 copies
    ex = S.extract_noise(keys, z, cfg, message_bits=32)
    assert np.array_equal(ex.message, msg)


def test_frame_zero_unwatermarked_and_same_magnitudes(analytic):
    msg = np.zeros(32, np.uint8)
    z_w = S.initial_noise(analytic, 5, msg)
    z_0 = S.initial_noise(analytic, 5, None)
    assert np.array_equal(z_w[:, 0], z_0[:, 0])
    assert np.allclose(np.abs(z_w), np.abs(z_0))
    keys = S.global_keys(analytic)
    post = prc.posterior(z_w[:, 0].reshape(-1))
    assert not any(prc.detect(k, post, 1e-6) for k in keys.keys)


def _sign_stats(signs: np.ndarray, pairs: np.ndarray) -> tuple[float, float]:
    """Chi-square-style statistics normalised to ~1 under independent fair signs: per-coordinate balance and
    pairwise correlation over the given coordinate pairs."""
    N = len(signs)
    bal = (N * signs.mean(axis=0) ** 2).mean()
    corr = (N * ((signs[:, pairs[:, 0]] * signs[:, pairs[:, 1]]).mean(axis=0)) ** 2).mean()
    return float(bal), float(corr)


def test_distortion_free_sign_statistics(analytic):
    """Over 1,000 watermarked initial noises (one fixed message), sign balance and pairwise sign correlations match
    N(0, I) samples; a fixed sign template fails the same test."""
    N = 1000
    rng = np.random.default_rng(9)
    msg = rng.integers(0, 2, 32).astype(np.uint8)
    wm = np.stack([S.initial_noise(analytic, 1000 + i, msg)[:, 1:].reshape(-1) for i in range(N)])
    ref = rng.standard_normal(wm.shape)
    n = wm.shape[1]
    pairs = np.stack([rng.integers(0, n, 4000), rng.integers(0, n, 4000)], axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    b_w, c_w = _sign_stats(np.sign(wm), pairs)
    b_r, c_r = _sign_stats(np.sign(ref), pairs)
    # under the null both statistics are ~ chi2(k)/k: mean 1, sd sqrt(2/k) (<= 0.03 here); allow 6 sd
    assert abs(b_w - 1) < 6 * math.sqrt(2 / n) and abs(b_r - 1) < 6 * math.sqrt(2 / n)
    assert abs(c_w - 1) < 6 * math.sqrt(2 / len(pairs)) and abs(c_r - 1) < 6 * math.sqrt(2 / len(pairs))
    assert stats.kstest(wm[:, :200].reshape(-1), "norm").pvalue > 1e-3
    template = np.sign(wm[0])[None] * np.abs(ref)  # a fixed sign template (non-distortion-free)
    b_t, _ = _sign_stats(np.sign(template), pairs)
    assert b_t > 100


# ----------------------------------------------------------------------------------------- causal VAE grouping
def test_causal_vae_grouping_and_causality():
    torch = pytest.importorskip("torch")
    from backend.watermark.sigmark.channel import TinyConfig, build_models, check_frames

    torch.manual_seed(0)
    vae, _ = build_models(TinyConfig())
    x = torch.randn(1, 3, 13, 16, 16)
    with torch.no_grad():
        mean, _ = vae.encode(x)
        assert mean.shape[2] == 1 + (13 - 1) // 4 == check_frames(13)
        for i in (1, 5, 6, 12):
            x2 = x.clone()
            x2[:, :, i] += 1.0
            m2, _ = vae.encode(x2)
            first_changed = math.ceil(i / 4)
            assert torch.allclose(m2[:, :, :first_changed], mean[:, :, :first_changed], atol=1e-6)
            assert not torch.allclose(m2[:, :, first_changed], mean[:, :, first_changed])
        out = vae.decode(mean)
        assert out.shape == (1, 3, 13, 16, 16)
    with pytest.raises(InputError):
        check_frames(12)


@pytest.mark.parametrize("prediction_type,attention", [("epsilon", False), ("v_prediction", True)])
def test_ddim_inversion_inverts_the_sampler_for_both_targets(tmp_path, prediction_type, attention):
    """The exact DDIM inverse (fixed-point iterations) undoes the DDIM sampler whichever target the denoiser was
    trained on (a fresh untrained net: the check is the bookkeeping of eps vs v, not the weights); the temporal
    attention layers load from the file's config."""
    torch = pytest.importorskip("torch")
    from backend.watermark.sigmark.channel import TinyChannel, TinyConfig, build_models, save_weights

    torch.manual_seed(0)
    cfg = TinyConfig(frames=9, prediction_type=prediction_type, steps=10, decoder_inv_steps=0,
                     den_temporal_attention=attention)
    vae, den = build_models(cfg)
    if attention:  # give the zero-initialised attention outputs weights, so that the check covers them
        for blk in den.blocks:
            torch.nn.init.normal_(blk.ta.attn.out_proj.weight, std=0.05)
    path = save_weights(tmp_path / "tiny.safetensors", vae, den, cfg)
    ch = TinyChannel(path)
    assert ch.ddim.config.prediction_type == ch.inverse.config.prediction_type == prediction_type
    z = np.random.default_rng(1).standard_normal(ch.latent_shape).astype(np.float32)
    z0 = ch.sample(z)
    assert np.abs(z0 - z).mean() > 0.05  # the sampler moved
    z_hat = ch.invert(z0)
    assert np.abs(z_hat - z).max() < 0.02 * np.abs(z).max()


# --------------------------------------------------------------------------------------- analytic channel + SGO
def test_analytic_roundtrip_exact(analytic):
    z = np.random.default_rng(0).standard_normal(analytic.latent_shape).astype(np.float32)
    assert np.allclose(analytic.recover_noise(analytic.generate(z)), z, atol=1e-4)


def test_drop_breaks_later_groups_and_sgo_restores(analytic):
    cfg = S.SIGMarkConfig()
    msg = np.random.default_rng(10).integers(0, 2, 32).astype(np.uint8)
    ch = AnalyticChannel(noise=0.5)
    video = ch.generate(S.initial_noise(ch, 21, msg, cfg))
    drop_at = 6  # group 2 (frames 5..8)
    attacked = np.delete(video, drop_at, axis=0)
    naive = S.extract(ch, attacked, cfg, sgo=False, message_bits=32)
    later = naive.passes[2:]  # latent frames after group 2 fail Detect
    assert not later.any(), naive.passes
    per = S.bit_accuracy(naive, msg, 6, 32)["per_frame"]
    assert np.mean(per[2:]) < 0.75
    # SGO with the two segments the cut gives (the analytic channel's frames carry no motion to segment on)
    segs = [list(range(1, drop_at)), list(range(drop_at, len(attacked)))]
    fixed = S.extract(ch, attacked, cfg, sgo=True, message_bits=32, segments=segs)
    acc = S.bit_accuracy(fixed, msg, 6, 32)
    assert acc["frame_acc_real"] >= 0.9 and acc["message_acc"] >= 0.9
    assert fixed.interpolated.sum() == 1


def test_sgo_identity_on_undisturbed(analytic):
    keys = S.global_keys(analytic)
    msg = np.ones(32, np.uint8)
    video = analytic.generate(S.initial_noise(analytic, 22, msg))
    out, interp, info = S.segment_group_ordering(analytic, keys, video, segments=[list(range(1, 25))])
    assert not interp.any() and np.array_equal(out, video)


def test_segmentation_finds_drop_and_insert_cuts():
    clip = synthetic_clips(1, seed=99)[0]
    segs, _ = S.segment_frames(clip)
    assert len(segs) == 1  # undisturbed: one segment
    dropped = np.delete(clip, [9, 10], axis=0)
    segs, _ = S.segment_frames(dropped)
    assert any(s[0] == 9 for s in segs)
    ins, fmap = apply_chain(clip, "insert:1", seed=1)
    segs, _ = S.segment_frames(ins)
    new = int(np.flatnonzero(fmap == -1)[0])
    assert any(s == [new] for s in segs)


def test_cut_segments_from_frame_maps():
    """The true segments (for the SGO-given-true-cuts diagnostic) follow the attack's frame map."""
    clip = np.zeros((25, 4, 4, 3), np.float32)
    _, fmap = apply_chain(clip, "drop:2", seed=3)
    segs = S.cut_segments(fmap)
    assert sum(len(s) for s in segs) == len(fmap) - 1 and len(segs) == (2 if fmap[1] == 1 else 1)
    _, fmap = apply_chain(clip, "insert:2", seed=3)
    segs = S.cut_segments(fmap)
    assert [len(s) for s in segs if all(fmap[i] == -1 for i in s)] == [1, 1]


# ---------------------------------------------------------------------------------------------------- attacks
def test_attack_registry_shapes_and_frame_maps():
    clip = synthetic_clips(1, seed=3)[0]
    for name in attack_names("video"):
        out, fmap = apply_chain(clip, name, seed=0)
        assert out.ndim == 4 and out.shape[1:] == clip.shape[1:] and len(fmap) == len(out)
        assert fmap[0] == 0  # frame 0 is kept
        assert out.min() >= 0 and out.max() <= 1
    out, fmap = apply_chain(clip, "drop:2x2", seed=0)
    assert len(out) == 21 and np.array_equal(out, clip[fmap])
    out, _ = apply_chain(clip, "drop:1+jpeg:50", seed=0)
    assert len(out) == 24
    with pytest.raises(InputError, match="Valid for videos: jpeg"):
        apply_chain(clip, "wobble:3")
    with pytest.raises(InputError, match="Valid for videos"):
        apply_chain(clip, "wevade-w:4")  # an image-only attack


# --------------------------------------------------------------------------------------------------- video i/o
def test_video_io_roundtrip_and_bad_inputs():
    from backend.io import video as vio

    clip = np.round(synthetic_clips(1, seed=99)[0] * 255) / 255
    for enc in (vio.encode_npz, vio.encode_png_zip):
        dec = vio.decode_video(enc(clip), "x." + ("npz" if enc is vio.encode_npz else "zip"))
        assert np.array_equal(dec.frames, clip.astype(np.float32))
    gif = vio.decode_video(vio.encode_gif(clip), "x.gif")
    assert gif.frames.shape == clip.shape
    mp4 = vio.decode_video(vio.encode_mp4(vio.upscale(clip, 4)), "x.mp4")
    assert mp4.frames.shape[0] == len(clip)
    with pytest.raises(InputError, match="not a supported video"):
        vio.decode_video(b"hello world, not a video at all", "x.txt")
    with pytest.raises(InputError, match="at least"):
        vio.decode_video(vio.encode_npz(clip[:3]), "short.npz")
    with pytest.raises(InputError, match="limit"):
        vio.decode_video(b"\x00" * (vio.MAX_BYTES + 1), "big.mp4")
    with pytest.raises(InputError):
        vio.decode_video(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200, "broken.mp4")


def test_method_registry_lists_names():
    with pytest.raises(InputError, match="sigmark_nosgo"):
        S.get_method("nope")
    assert S.extraction_cost("sigmark", 10, 6, 1024) == S.extraction_cost("sigmark", 10_000, 6, 1024)
    assert S.extraction_cost("videoshield", 10_000, 6, 1024) == 1000 * S.extraction_cost("videoshield", 10, 6, 1024)


# ------------------------------------------------------------------------------------ VideoMark-style baseline
def _levenshtein_dp(a, b) -> int:
    """Textbook dynamic programme (reference for the bit-vector implementation)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def test_levenshtein_bit_vector_matches_dp():
    rng = np.random.default_rng(3)
    for m, mt in ((32, 32), (7, 12), (64, 64), (1, 5), (40, 9)):
        q = rng.integers(0, 2, m).astype(np.uint8)
        t = rng.integers(0, 2, (30, mt)).astype(np.uint8)
        t[0, : min(m, mt)] = q[: min(m, mt)]
        got = S.levenshtein_many(q, t)
        assert got.tolist() == [_levenshtein_dp(q.tolist(), row.tolist()) for row in t]
    q = rng.integers(0, 2, 32).astype(np.uint8)
    assert S.levenshtein_many(q, q[None])[0] == 0
    assert S.levenshtein_many(q, np.roll(q, 1)[None])[0] <= 2  # a rotation is a delete + an insert


@pytest.mark.parametrize("bits", [32, 192])
def test_videomark_exact_retrieval_undisturbed(bits):
    """Analytic channel, no attack: every latent frame passes Detect with the ONE key, decodes, and each block is
    retrieved exactly from a store of 50 videos (decoys included); the edit-distance count is blocks x stored."""
    ch = AnalyticChannel(noise=0.5)
    store = S.VideoMarkStore(ch, 32)
    blocks = bits // 32
    store.register_random(30, blocks)
    msg = np.random.default_rng(bits).integers(0, 2, bits).astype(np.uint8)
    idx = store.register(msg)
    store.register_random(19, blocks)
    z = store.initial_noise(idx, 31)
    assert (np.abs(z) == np.abs(S.initial_noise(ch, 31, None))).all()  # same magnitudes: only signs carry it
    res = store.extract_noise(ch.recover_noise(ch.generate(z)), bits)
    assert np.array_equal(res["message"], msg) and res["index"] == idx and res["detected"]
    assert all(o[0] == idx for o in res["owners"])
    assert res["edit_distances"] == blocks * 50 * blocks
    assert not np.isin(res["decoded"], [0.5]).any()  # every latent frame detected and decoded


def test_videomark_cost_grows_with_stored_messages():
    ch = AnalyticChannel()
    small, big = S.VideoMarkStore(ch), S.VideoMarkStore(ch)
    small.register_random(10, 6)
    big.register_random(1000, 6)
    z_hat = ch.recover_noise(ch.generate(np.random.default_rng(0).standard_normal(ch.latent_shape)))
    e_small = small.extract_noise(z_hat, 192)["edit_distances"]
    e_big = big.extract_noise(z_hat, 192)["edit_distances"]
    assert e_big == 100 * e_small == 6 * 6 * 1000  # N L edit distances per latent frame
    assert S.extraction_cost("videomark", 10_000, 6, 1024) > 100 * S.extraction_cost("videomark", 10, 6, 1024)
    assert S.get_method("videomark").blind is False
