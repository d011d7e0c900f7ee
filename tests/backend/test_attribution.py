"""Invariants of watermark-based attribution (arXiv 2404.04254): bounds, matching, selection, users database, attacks,
CLI plumbing. No trained weights needed (see test_attribution_model.py for the learned watermark and the claims)."""

from __future__ import annotations

import argparse
import json
import math
import sqlite3

import numpy as np
import pytest
from scipy.stats import binom

from backend.errors import InputError, JobCancelled
from backend.watermark import attacks as W
from backend.watermark import codes as C
from backend.watermark.attribution import bounds as A


# ----------------------------------------------------------------------------------------------------- bounds
def test_table5_values_to_12_decimals():
    t = A.paper_table5()
    assert t["tdr_lower"] == pytest.approx(0.9999962280431393, abs=1e-12)
    assert t["fdr_upper_thm3"] == pytest.approx(0.05998120543727691, abs=1e-12)
    assert t["tar_lower"] == pytest.approx(0.9999962280431393, abs=1e-12)
    assert t["fdr_upper_thm2"] == 1.0  # vacuous at this setting (57.6 -> P[B <= 57] ~ 1)


def test_official_boundary_cases():
    assert A.tdr_lower_bound(10, 0.9, 0.7, 0.2) == pytest.approx(binom.sf(6, 10, 0.9) + binom.cdf(1, 10, 0.9))
    assert A.attribution_threshold(10, 0.7, 0.6) == 9
    assert A.tar_lower_bound(10, 0.9, 0.7, 0.6) == pytest.approx(binom.sf(8, 10, 0.9))


def test_extra_exact_values():
    assert A.attribution_threshold(32, 0.9, 0.72) == 29
    assert A.tar_lower_bound(32, 0.99, 0.9, 0.72) == pytest.approx(0.99971, abs=5e-6)
    assert A.fdr_upper_bound_independent(200, 32, 0.9, 0.0) == pytest.approx(2.56e-4, rel=5e-3)
    assert A.attribution_threshold(48, 0.85, 0.71) == 42
    assert A.tar_lower_bound(48, 0.98, 0.85, 0.71) == pytest.approx(0.999954, abs=5e-7)
    assert A.fdr_upper_bound_independent(1000, 48, 0.85, 0.0) == pytest.approx(3.12e-4, rel=5e-3)


def test_bounds_are_monotone():
    betas = np.linspace(0.8, 1.0, 11)
    tar_b = [A.tar_lower_bound(64, b, 0.85, 0.7) for b in betas]
    assert all(x <= y + 1e-15 for x, y in zip(tar_b, tar_b[1:]))
    alphas = np.linspace(0.5, 0.95, 10)
    tar_a = [A.tar_lower_bound(64, 0.97, 0.85, a) for a in alphas]
    assert all(x >= y - 1e-15 for x, y in zip(tar_a, tar_a[1:]))
    s_vals = [1, 10, 10**3, 10**6, 10**8]
    f_s = [A.fdr_upper_bound_independent(s, 64, 0.85, 0.02) for s in s_vals]
    assert all(x <= y for x, y in zip(f_s, f_s[1:]))
    f_g = [A.fdr_upper_bound_independent(10**4, 64, 0.85, g) for g in (0.0, 0.02, 0.05, 0.1)]
    assert all(x <= y for x, y in zip(f_g, f_g[1:]))
    f_t = [A.fdr_upper_bound_independent(10**4, 64, t, 0.0) for t in (0.6, 0.7, 0.8, 0.9, 1.0)]
    assert all(x >= y for x, y in zip(f_t, f_t[1:]))


def test_bound_argument_checks():
    with pytest.raises(ValueError):
        A.tdr_lower_bound(64, 0.8, 0.9, 0.2)  # tau >= beta
    with pytest.raises(ValueError):
        A.tar_lower_bound(64, 0.99, 0.5, 0.7)  # tau must exceed 0.5
    with pytest.raises(ValueError):
        A.fdr_upper_bound_independent(10, 64, 0.9, 0.6)


def test_tau_for_fpr_meets_target():
    for users, fpr in ((10**4, 1e-4), (10**6, 1e-3), (100, 1e-2)):
        tau = A.tau_for_fpr(64, users, fpr)
        assert A.fdr_upper_bound_independent(users, 64, tau) <= fpr
        assert A.fdr_upper_bound_independent(users, 64, tau - 1 / 64) > fpr  # smallest such tau


def test_p_value_matches_thm3_with_gamma0():
    # same quantity; the p-value uses the survival function directly (more accurate in the far tail)
    assert A.detection_p_value(58, 64, 10**8) == pytest.approx(A.fdr_upper_bound_independent(10**8, 64, 58 / 64, 0),
                                                                rel=1e-5)


# --------------------------------------------------------------------------------------------------- matching
POOL = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 1, 1]], np.uint8)
DECODED = np.array([[0, 0, 0, 1], [1, 1, 1, 1], [0, 1, 0, 1]], np.uint8)


def test_inclusive_threshold_toy():
    pool = A.UserPool.from_bits(POOL)
    m = pool.match(DECODED, 0.75)
    np.testing.assert_array_equal(m.detected, [True, True, False])
    np.testing.assert_array_equal(m.user_index[:2], [0, 1])
    assert m.score[0] == 0.75
    r = A.detection_attribution_rates(DECODED, np.array([0, 1, 2]), pool, 0.75)
    assert r.tdr == pytest.approx(2 / 3) and r.tar == pytest.approx(2 / 3)
    assert A.false_detection_rate(DECODED, pool, 0.75) == pytest.approx(2 / 3)
    assert C.max_pairwise_accuracy(POOL) == 0.5


def test_packed_matching_equals_reference_with_ties():
    rng = np.random.default_rng(3)
    for n, N in ((8, 60), (48, 500), (64, 2000)):
        bits = C.unpack_bits(C.select_random(N, n=n, seed=n), n)
        dec = rng.integers(0, 2, (40, n)).astype(np.uint8)
        dec[:5] = bits[rng.choice(N, 5)]  # exact hits
        pool = A.UserPool.from_bits(bits)
        m = pool.match(dec, 0.7, k=5)
        det, idx, score = A.match_reference(dec, bits, 0.7)
        np.testing.assert_array_equal(m.user_index, idx)  # ties -> lowest index
        np.testing.assert_allclose(m.score, score)
        np.testing.assert_array_equal(m.detected, det)
        assert np.all(m.top_index[:, 0] == idx)
        assert np.all(np.diff(m.top_score, axis=1) <= 0)
        full = (bits[None] == dec[:, None]).mean(-1)
        for row in range(dec.shape[0]):  # top-5 = the five best, ties by index
            order = sorted(range(N), key=lambda j: (-full[row, j], j))[:5]
            assert list(m.top_index[row]) == order


def test_pack_unpack_roundtrip():
    rng = np.random.default_rng(0)
    for n in (1, 16, 48, 64):
        bits = rng.integers(0, 2, (100, n)).astype(np.uint8)
        np.testing.assert_array_equal(C.unpack_bits(C.pack_bits(bits), n), bits)
    with pytest.raises(ValueError):
        C.pack_bits(np.zeros((1, 65), np.uint8))


def test_simulation_respects_bounds():
    n, N, beta, tau = 64, 1000, 0.96, 0.84
    pool = A.UserPool(C.select_absta(N, n=n, seed=0), n)
    stats = C.pool_stats(pool.codes, n)
    rng = np.random.default_rng(1)
    targets = rng.choice(N, 20_000)
    dec = A.simulate_decodes(pool, targets, beta, seed=2)
    r = A.detection_attribution_rates(dec, targets, pool, tau)
    lb = A.tar_lower_bound(n, beta, tau, stats.max_ba)
    se = math.sqrt(lb * (1 - lb) / targets.size)
    assert r.tar >= lb - 3 * se
    assert r.tdr >= A.tdr_lower_bound(n, beta, tau, stats.min_ba) - 3 * se
    clean = rng.integers(0, 2, (20_000, n)).astype(np.uint8)
    fdr_ub = A.fdr_upper_bound_independent(N, n, tau, 0.0)
    assert A.false_detection_rate(clean, pool, tau) <= fdr_ub + 3 * math.sqrt(max(fdr_ub, 1e-6) / clean.shape[0])


# --------------------------------------------------------------------------------------------------- selection
@pytest.mark.parametrize("method", ["random", "nrg", "absta"])
def test_selection_deterministic_binary_unique(method):
    a = C.unpack_bits(C.select(method, 12, n=16, seed=7), 16)
    b = C.unpack_bits(C.select(method, 12, n=16, seed=7), 16)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (12, 16) and set(np.unique(a)) <= {0, 1}
    assert np.unique(a, axis=0).shape[0] == 12


def test_bsta_toy_respects_match_limit():
    existing = C.pack_bits(np.array([[0, 0, 0, 0], [1, 1, 1, 1]], np.uint8))
    cand = int(C.pack_bits(np.array([0, 0, 0, 1], np.uint8))[0])
    found = C.bsta(existing, cand, depth=1, max_matches=2, n=4, rng=np.random.default_rng(0))
    assert found is not None
    assert (4 - C.hamming(existing, found)).max() <= 2


def test_selection_extends_existing_pool_and_prefix_is_stable():
    first = C.select_absta(300, n=64, seed=0)
    longer = C.select_absta(500, n=64, seed=0)
    np.testing.assert_array_equal(first, longer[:300])  # sequential: a cached longer pool serves shorter requests
    more = C.select_absta(50, n=64, seed=1, existing=first)
    assert len(np.unique(np.concatenate([first, more]))) == 350


def test_absta_claim_n64_N1000(record_claim):
    """Claim: at n=64 and 1,000 users A-BSTA's largest pairwise BA is <= 0.70 and >= 0.08 below random."""
    absta = C.pool_stats(C.select_absta(1000, n=64, seed=0, depth=4), 64).max_ba
    rand = C.pool_stats(C.select_random(1000, n=64, seed=0), 64).max_ba
    record_claim(absta_max_pairwise_ba=absta, random_max_pairwise_ba=rand)
    assert absta <= 0.70
    assert rand - absta >= 0.08


def test_get_method_lists_valid_names():
    with pytest.raises(ValueError, match="absta, random, nrg"):
        C.get_method("greedy")
    assert C.get_method("A-BSTA").name == "absta" and C.get_method("abst").name == "absta"


def test_random_codes_million_unique_fast():
    import time

    t = time.perf_counter()
    p = C.select_random(1_000_000, n=64, seed=0)
    assert time.perf_counter() - t < 10
    assert p.size == 1_000_000 and np.unique(p).size == 1_000_000


# ------------------------------------------------------------------------------------------------- users DB
def test_users_db_create_get_and_errors(tmp_path):
    from backend.watermark.attribution.users import UserRegistry

    db = tmp_path / "u.sqlite"
    with pytest.raises(InputError, match="No users database"):
        UserRegistry(db, create=False)
    reg = UserRegistry(db)
    ids = reg.create_users(40, "absta", seed=0)
    assert ids == list(range(1, 41)) and reg.count() == 40
    ids2 = reg.create_users(30, "random", seed=1)
    assert ids2[0] == 41
    pool = reg.pool()
    assert len(pool) == 70 and pool.ids[0] == 1
    np.testing.assert_array_equal(pool.bits(0), reg.get(1).bits(64))
    assert len(np.unique(pool.codes)) == 70
    with pytest.raises(InputError, match="No user with id 999"):
        reg.get(999)
    assert reg.strategies() == {"absta": 40, "random": 30}
    with pytest.raises(InputError, match="superlinearly"):
        reg.create_users(20_000, "absta")


def test_users_db_failed_write_leaves_nothing(tmp_path):
    from backend.watermark.attribution.users import UserRegistry

    reg = UserRegistry(tmp_path / "u.sqlite")
    reg.create_users(5, "random", seed=0)

    def cancel(fraction, message=""):
        if fraction >= 0.95:
            raise JobCancelled("stop")

    with pytest.raises(JobCancelled):
        reg.create_users(100, "random", seed=3, progress=cancel)
    assert reg.count() == 5
    # a duplicate code in the same batch violates UNIQUE: all-or-nothing
    with sqlite3.connect(reg.path) as con:
        code = con.execute("SELECT code FROM users WHERE id = 1").fetchone()[0]
    import backend.watermark.codes as codes_mod

    orig = codes_mod.get_method
    dup = codes_mod.Strategy("random", lambda k, **kw: np.array([np.int64(code).view(np.uint64)] * k, np.uint64),
                             "dup", 10)
    try:
        codes_mod.get_method = lambda name: dup
        with pytest.raises(InputError, match="nothing was written"):
            reg.create_users(3, "random")
    finally:
        codes_mod.get_method = orig
    assert reg.count() == 5


def test_users_db_corrupt_file(tmp_path):
    from backend.watermark.attribution.users import UserRegistry

    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(InputError, match="not a usable users database"):
        UserRegistry(bad)


# ------------------------------------------------------------------------------------------------------ attacks
def test_attack_registry_and_chains():
    img = (np.random.default_rng(0).random((96, 128, 3)) * 255).astype(np.uint8)
    for name in W.names("image"):
        a = W.ATTACKS[name]
        if a.adversarial:
            continue
        out = W.apply_chain(img, f"{name}:{a.default}", seed=1)
        assert out.dtype == np.uint8 and out.ndim == 3
    assert W.apply_chain(img, "resize:0.5").shape == (48, 64, 3)
    crop = W.apply_chain(img, "crop:0.25", seed=0)
    assert crop.shape[0] * crop.shape[1] == pytest.approx(0.75 * 96 * 128, rel=0.03)
    np.testing.assert_array_equal(W.apply_chain(img, "none"), img)
    np.testing.assert_array_equal(W.apply_chain(img, "jpeg:50+crop:0.3", seed=4),
                                  W.apply_chain(img, "jpeg:50+crop:0.3", seed=4))
    with pytest.raises(InputError, match="Valid for images: jpeg"):
        W.parse_chain("sharpen:2")
    with pytest.raises(InputError, match="outside"):
        W.parse_chain("jpeg:500")
    with pytest.raises(InputError, match="Valid names: jpeg"):
        W.get_attack("sharpen")
    with pytest.raises(InputError, match="Valid for images"):
        W.parse_chain("drop:2")  # a video-only attack
    with pytest.raises(InputError, match="backend"):
        W.apply_chain(img, "wevade-bq:100")


def test_black_box_attack_on_a_toy_detector():
    """HopSkipJump with a query budget against a toy detector (correlation with a +-6 noise pattern): JPEG
    initialisation evades it, then the search moves back toward the original and ends closer, still evading."""
    pattern = np.random.default_rng(0).choice([-1.0, 1.0], (64, 64))
    img = np.clip(128 + 6 * pattern[..., None] + np.zeros((1, 1, 3)), 0, 255).astype(np.uint8)

    def detect(imgs):
        return np.array([float(((im.astype(float).mean(-1) - 128) * pattern).mean()) > 3.0 for im in imgs])

    assert detect([img])[0] and not detect([W.image.jpeg(img, 70)])[0]
    ctx = W.AdversarialContext(detect=detect, n_bits=8)
    out = W.black_box_attack(img, 400, ctx, seed=0)
    assert not detect([out])[0]
    assert ctx.queries_used <= 400 + 2
    start_linf = np.abs(W.image.jpeg(img, 70).astype(int) - img).max()
    assert np.abs(out.astype(int) - img).max() < start_linf


# ----------------------------------------------------------------------------------------------------------- CLI
def _cli(argv):
    from backend.watermark.attribution.cli import add_parser

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="group"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_users_and_bounds(tmp_path, capsys):
    db = str(tmp_path / "cli.sqlite")
    assert _cli(["attribution", "users", "create", "--count", "25", "--strategy", "absta", "--db", db, "--json",
                 "--stats"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["created"] == 25 and out["total_users"] == 25 and "provenance" in out
    assert _cli(["attribution", "users", "show", "3", "--db", db, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["bits"]) == 64
    assert _cli(["attribution", "users", "show", "99", "--db", db]) == 2  # an InputError: exit code 2
    assert "error" in capsys.readouterr().err
    assert _cli(["attribution", "users", "list", "--db", str(tmp_path / "missing.sqlite"), "--json"]) == 2
    assert "error" in json.loads(capsys.readouterr().out)
    assert _cli(["attribution", "bounds", "--json"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert b["tar_lower_bound_thm4"] == pytest.approx(0.9999962280431393, abs=1e-12)


def test_shipped_absta_pool_matches_the_selection():
    """assets/attribution_pool_absta_n64_N10000_seed0_d4.npy is A-BSTA's output (sequential: its prefix is the
    1,000-user pool of the same seed) and keeps the pairwise accuracy recorded in the manifest."""
    from backend.runtime import ASSETS

    path = ASSETS / "attribution_pool_absta_n64_N10000_seed0_d4.npy"
    shipped = np.load(path, allow_pickle=False)
    assert shipped.dtype == np.uint64 and shipped.size == 10_000 and np.unique(shipped).size == 10_000
    np.testing.assert_array_equal(shipped[:1000], C.select_absta(1000, n=64, seed=0, depth=4))
    assert C.pool_stats(shipped, 64).max_ba == pytest.approx(0.734375)


def test_macs_counts_both_learned_architectures():
    """`learned.macs` works for the shipped tile model (whose decode is a search) and the frame model."""
    from backend.watermark import learned

    tile = learned.load().eval()
    frame = learned.TinyHiDDeN(learned.TinyHiDDeNConfig()).eval()
    for model in (tile, frame):
        assert learned.macs(model, "encoder") > 0
        assert learned.macs(model, "decoder") > 0
