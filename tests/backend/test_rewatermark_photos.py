"""SRW on the second held-out set (:mod:`backend.watermark.photos`): real photographs from other sources than the
training photos, untouched test split only.

ci tier: the fixed ci subset of the test split (``photos.split("ci")``, the written rule in :mod:`backend.watermark.photos`),
SRW and its undefended twin, five self-re-watermarking rounds (no PGD, cross-model or distortions: those run in the
full tier and in ``python -m backend.watermark.photo_eval``). Full tier: every model on the whole test split.

Bounds: SRW's mean clean bit accuracy >= 0.99 and every photo >= 15 of 16 bits; the original message kept
at a mean >= 0.95 after every one of five self-re-watermarking rounds; PSNR >= 32 dB; the plain twin's rounds recorded
beside it. The any-size path reads a photo as 4 x 4 frames of 32 x 32 (:data:`backend.watermark.rewatermark.lipschitz.TILES`);
with a single frame per photo the detailed, high-contrast frames of this set outvote the 32 dB residual in the
spectral-normed decoder (``python -m backend.watermark.rewatermark.diagnose`` measures both paths).
"""

from __future__ import annotations

import pytest

from backend.watermark import photos as P
from backend.watermark.rewatermark import core as R
from backend.watermark.rewatermark import lipschitz as L

pytestmark = pytest.mark.skipif(not (L.weights_path("srw").is_file() and L.weights_path("plain").is_file()),
                                reason="shipped rewatermark weights missing")
ROUNDS_ONLY = R.EvalConfig(rounds=5, pgd_eps=(), cross=False, distortions=(), matched_psnr=None, seed=0)


@pytest.fixture(scope="module")
def ci_eval() -> dict:
    images = P.load_split("ci")
    res = R.evaluate(["plain", "srw"], list(images.values()), ROUNDS_ONLY, names=list(images))
    for m, d in res.items():
        print(m, {k: d[k] for k in ("clean_acc", "clean_acc_min", "psnr", "self_acc_a", "self_acc_b", "worst")})
    return res


def test_ci_subset_is_the_written_rule() -> None:
    ci = P.split("ci")
    assert len(ci) >= 10 and set(ci) <= set(P.split("test"))


def test_srw_clean_accuracy_on_photos(ci_eval, record_claim) -> None:
    srw, plain = ci_eval["srw"], ci_eval["plain"]
    record_claim(srw_clean_acc=srw["clean_acc"], srw_clean_acc_min=srw["clean_acc_min"],
                 plain_clean_acc=plain["clean_acc"], photos=srw["n_images"])
    assert srw["n_images"] >= 10
    assert srw["clean_acc"] >= 0.99
    assert srw["clean_acc_min"] >= 15 / 16, srw["worst"]


def test_srw_keeps_first_message_through_five_rounds_on_photos(ci_eval, record_claim) -> None:
    srw, plain = ci_eval["srw"], ci_eval["plain"]
    record_claim(srw_acc_a_rounds=srw["self_acc_a"], srw_acc_b_rounds=srw["self_acc_b"], srw_psnr=srw["psnr"],
                 plain_acc_a_rounds=plain["self_acc_a"], plain_acc_b_rounds=plain["self_acc_b"],
                 plain_psnr=plain["psnr"])
    assert len(srw["self_acc_a"]) == 5
    assert min(srw["self_acc_a"]) >= 0.95
    assert srw["psnr"] >= 32.0
    # the undefended twin beside it: the attack works on it from the second round (reported, bounded by the
    # first held-out set's claims)
    assert all(0.0 <= a <= 1.0 for a in plain["self_acc_a"] + plain["self_acc_b"])


@pytest.fixture(scope="module")
def full_eval() -> dict:
    """Every available model on the whole test split with the photo report's settings
    (:func:`backend.watermark.photo_eval.rewatermark_cfg`: five rounds, cross-model, PGD, distortions)."""
    from backend.watermark import photo_eval as PE

    res = PE.evaluate_rewatermark(R.available_models(), "test")
    for m, d in res.items():
        print(m, {k: d.get(k) for k in ("clean_acc", "clean_acc_min", "psnr", "self_acc_a", "self_acc_b", "cross",
                                        "pgd", "distortions", "worst")})
    return res


@pytest.mark.full
def test_full_every_model_on_the_test_split(full_eval, record_claim) -> None:
    res = full_eval
    srw = res["srw"]
    record_claim(**{f"{m}_clean_acc": d["clean_acc"] for m, d in res.items()},
                 **{f"{m}_acc_a_rounds": d["self_acc_a"] for m, d in res.items()},
                 srw_psnr=srw["psnr"], srw_acc_a_min=min(srw["self_acc_a"]))
    assert srw["n_images"] == len(P.split("test"))
    assert min(srw["self_acc_a"]) >= 0.95
    assert srw["psnr"] >= 32.0


@pytest.mark.full
def test_full_srw_clean_on_the_test_split(full_eval, record_claim) -> None:
    srw = full_eval["srw"]
    record_claim(srw_clean_acc=srw["clean_acc"], srw_clean_acc_min=srw["clean_acc_min"], worst=srw["worst"])
    assert srw["clean_acc"] >= 0.99
    assert srw["clean_acc_min"] >= 15 / 16, srw["worst"]


@pytest.mark.full
def test_full_ablation_on_the_test_split(full_eval, record_claim) -> None:
    """The ablation reading on the second held-out set: after one self-re-watermarking round the variants trained
    with the re-embedding loss (reemb, sn_reemb, srw) keep A at least 0.2 better than those without (plain, sn)."""
    if not set(L.VARIANTS) <= set(full_eval):
        pytest.skip("not every ablation variant is shipped")
    with_re = {m: full_eval[m]["self_acc_a"][0] for m in ("reemb", "sn_reemb", "srw")}
    without = {m: full_eval[m]["self_acc_a"][0] for m in ("plain", "sn")}
    record_claim(**{f"{m}_acc_a_after_1_round": v for m, v in {**with_re, **without}.items()})
    assert min(with_re.values()) >= max(without.values()) + 0.2, (with_re, without)
