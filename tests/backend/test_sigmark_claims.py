"""SIGMark's claims on the project's trained tiny latent video diffusion model (real DDIM sampling and inversion; the
analytic channel is never used here). ci tier: a fixed small subset; @pytest.mark.full: the full-scale reruns.

Claims (issue 5): bit accuracy >= 0.95 without attack; with SGO >= 0.85 after dropping or inserting frames, the
no-SGO ablation clearly lower; no false detection on unwatermarked videos at FPR 1e-6 per video; generated videos'
statistics match unwatermarked ones (distortion-free)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from backend.watermark import sigmark as S
from backend.watermark.video_diffusion import WEIGHTS

# ci tier: a fixed small subset (2 videos x 3 attacks, 100 unwatermarked videos); @pytest.mark.full: 16 videos x 9
# attacks and 1,000 unwatermarked videos.
pytestmark = pytest.mark.skipif(not WEIGHTS.is_file(), reason="tiny video diffusion weights not shipped")

CI_VIDEOS = 2
CI_ATTACKS = (None, "drop:2", "insert:2")


@pytest.fixture(scope="module")
def channel():
    from backend.watermark.video_diffusion import get_channel

    return get_channel("tiny")


def _messages(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2, 32).astype(np.uint8) for _ in range(n)]


def run_attacks(channel, n_videos: int, attacks, methods=("sigmark", "sigmark_nosgo"), seed0: int = 500):
    out = {}
    msgs = _messages(n_videos)
    for attack in attacks:
        rows = [S.evaluate_attack(channel, seed0 + i, msgs[i], attack, methods=methods, attack_seed=i)
                for i in range(n_videos)]
        out[attack or "none"] = S.aggregate(rows)
    return out


@pytest.fixture(scope="module")
def ci_eval(channel):
    return run_attacks(channel, CI_VIDEOS, CI_ATTACKS)


def false_detections(channel, n: int, seed0: int = 90_000, batch: int = 50) -> int:
    cfg = S.SIGMarkConfig()
    keys = S.global_keys(channel, cfg)
    hits = 0
    for b0 in range(0, n, batch):
        zs = np.stack([S.initial_noise(channel, seed0 + i, None, cfg) for i in range(b0, min(n, b0 + batch))])
        z_hat = channel.recover_noise_batch(channel.generate_batch(zs))
        hits += sum(S.detect_noise(keys, z, cfg) for z in z_hat)  # = extract_noise(...).detected, without BP
    return hits


def test_bit_accuracy_without_attack(ci_eval):
    assert ci_eval["none"]["sigmark"]["message_acc"] >= 0.95, ci_eval["none"]
    assert ci_eval["none"]["sigmark"]["detect_rate"] == 1.0


NOSGO_XFAIL = pytest.mark.xfail(strict=False, reason=(
    "KNOWN FAILURE (measured, session 2, 4 videos): the no-SGO ablation is NOT clearly lower in message bit accuracy "
    "on our miniature: drop:2 SIGMark 0.992 vs no-SGO 0.992 (frame acc 0.786 vs 0.809), insert:2 1.000 vs 0.984 "
    "(frame acc 0.919 vs 0.848). The 32-bit message is a majority vote over 6 latent frames and the frames before "
    "the edit survive without SGO; on drop:2 SGO's frame-difference segmentation misses cuts in the tiny model's "
    "flickering samples. Bound unchanged."))


@pytest.mark.parametrize("attack", ["drop:2", "insert:2"])
def test_sgo_accuracy_after_temporal_edits(ci_eval, attack):
    r = ci_eval[attack]
    assert r["sigmark"]["message_acc"] >= 0.85, r


@NOSGO_XFAIL
@pytest.mark.parametrize("attack", ["drop:2", "insert:2"])
def test_nosgo_ablation_clearly_lower(ci_eval, attack):
    r = ci_eval[attack]
    assert r["sigmark"]["message_acc"] - r["sigmark_nosgo"]["message_acc"] >= 0.05, r


def test_no_false_detection_ci(channel):
    # 100 videos keep the ci tier near its time budget (200 took 213 s on one thread: decoder inversion + DDIM
    # inversion per video); the full tier checks 1,000
    assert false_detections(channel, 100) == 0


def test_generated_statistics_match_unwatermarked(channel):
    """Distortion-free: per-video mean, std and temporal difference of 24 watermarked vs 24 plain videos (disjoint
    seeds) are indistinguishable by a two-sample KS test."""
    msgs = _messages(24, seed=1)
    wm = channel.generate_batch(np.stack([S.initial_noise(channel, 700 + i, msgs[i]) for i in range(24)]))
    pl = channel.generate_batch(np.stack([S.initial_noise(channel, 800 + i, None) for i in range(24)]))
    for f in (lambda v: v.mean(axis=(1, 2, 3, 4)), lambda v: v.std(axis=(1, 2, 3, 4)),
              lambda v: np.abs(np.diff(v, axis=1)).mean(axis=(1, 2, 3, 4))):
        assert stats.ks_2samp(f(wm), f(pl)).pvalue > 0.01


@pytest.fixture(scope="module")
def full_eval(channel):
    attacks = (None, "drop:2", "drop:2x2", "insert:2", "insert:2x2", "swap:1", "clip:12", "jpeg:50", "noise:0.03")
    return run_attacks(channel, 16, attacks, seed0=5000)


@pytest.mark.full
def test_full_attacks_and_fpr(channel, full_eval):
    res = full_eval
    assert res["none"]["sigmark"]["message_acc"] >= 0.95, res["none"]
    for a in ("drop:2", "insert:2"):
        assert res[a]["sigmark"]["message_acc"] >= 0.85, res[a]
    assert false_detections(channel, 1000, seed0=200_000) == 0


@pytest.mark.full
@NOSGO_XFAIL
@pytest.mark.parametrize("attack", ["drop:2", "insert:2"])
def test_full_nosgo_ablation_clearly_lower(full_eval, attack):
    r = full_eval[attack]
    assert r["sigmark"]["message_acc"] - r["sigmark_nosgo"]["message_acc"] >= 0.05, r
