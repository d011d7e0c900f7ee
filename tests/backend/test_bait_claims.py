"""The claims of the BAIT page on the shipped victim grid (``assets/bait_grid.json``: every method x {scratch,
pretrained} x 3 seeds on both sources; ``tests/backend/test_bait.py`` re-evaluates the shipped seed-0 victims against
this log), paired over victim seeds with 95% intervals; the full tier retrains the protectors and the grid."""

from __future__ import annotations

import numpy as np
import pytest

from backend.robustness.bait import jobs
from backend.robustness.bait.data import SOURCES
from backend.robustness.bait.experiment import METHODS
from backend.stats import paired_ci

SRC = list(SOURCES)
DIGITS = ("digits: no method protects the upsampled digits even from scratch (clean 0.961, EMN 0.957, BAIT 0.966; "
          "from the prior clean 0.976, EMN 0.967, targeted 0.972, BAIT 0.974, 3 seeds): the smooth high-contrast "
          "strokes carry the class so plainly that 8 epochs learn them as fast as any 8/255 shortcut")
BAIT_WEAK = ("BAIT's outer level never binds the wrong label: the inner-trained surrogate predicts (y + 1) mod 10 on "
             "8.6% of the protected shapes at the end (chance 10%), so BAIT acts as a weak targeted perturbation")


def _xfail(reason_by_source: dict[str, str]) -> list:
    return [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=reason_by_source[s]))
            if s in reason_by_source else s for s in SRC]
CLEAN = METHODS.names("reference")[0]
OURS = METHODS.names("ours")[0]
ABLATION = METHODS.names("ablation")[0]
EMN = METHODS.key("emn")


@pytest.fixture(scope="module")
def grid() -> jobs.GridResult:
    return jobs.run_grid()


def _acc(grid: jobs.GridResult, src: str, m: str, init: str) -> np.ndarray:
    return np.asarray(grid.accuracies(src, m, init))


@pytest.mark.parametrize("source", _xfail({
    "shapes": "Does not hold on our miniature for BAIT: from scratch EMN cuts shapes accuracy by 0.189 [0.112, 0.266] "
              "but BAIT only by 0.018 [-0.005, 0.041] (clean 0.649, BAIT 0.631). " + BAIT_WEAK,
    "digits": "Does not hold on our miniature: " + DIGITS}))
def test_from_scratch_emn_and_bait_cut_clean_accuracy(grid, source, record_claim) -> None:
    clean = _acc(grid, source, CLEAN, "scratch")
    drops = {m: paired_ci(clean, _acc(grid, source, m, "scratch")) for m in (EMN, OURS)}
    record_claim(clean=float(clean.mean()), **drops[EMN].numbers("emn_drop"), **drops[OURS].numbers("bait_drop"))
    assert all(d.low > 0 for d in drops.values()), drops


@pytest.mark.parametrize("source", _xfail({
    "shapes": "Does not hold on our miniature: fine-tuned from our small prior, EMN still costs 0.144 [0.089, 0.199] "
              "of clean accuracy on shapes (0.661 -> 0.517), above the 10-point bound: the prior (colour, texture and "
              "quarter-turn labels, 43k parameters) gives the fine-tune almost no head start (clean from scratch "
              "0.649), so it cannot see past the shortcut as an ImageNet backbone does"}))
def test_from_the_prior_emn_stays_within_10_points_of_clean(grid, source, record_claim) -> None:
    clean, emn = _acc(grid, source, CLEAN, "pretrained"), _acc(grid, source, EMN, "pretrained")
    ci = paired_ci(clean, emn)
    record_claim(clean=float(clean.mean()), emn=float(emn.mean()), **ci.numbers("emn_drop"), bound=0.10)
    assert ci.mean <= 0.10


@pytest.mark.parametrize("source", _xfail({
    "shapes": "Does not hold on our miniature: from the prior BAIT leaves 0.573 against EMN's 0.517 on shapes, gain "
              "-0.056 [-0.095, -0.017] (bound +0.10). " + BAIT_WEAK,
    "digits": "Does not hold on our miniature: gain -0.007 [-0.023, 0.009]; " + DIGITS}))
def test_from_the_prior_bait_is_10_points_below_emn(grid, source, record_claim) -> None:
    emn, bait = _acc(grid, source, EMN, "pretrained"), _acc(grid, source, OURS, "pretrained")
    ci = paired_ci(emn, bait)
    record_claim(emn=float(emn.mean()), bait=float(bait.mean()), **ci.numbers("gain"), bound=0.10)
    assert ci.mean >= 0.10 and ci.low > 0


@pytest.mark.parametrize("source", _xfail({
    "shapes": "Does not hold on our miniature: from the prior the targeted poison is the strongest protection on "
              "shapes (0.472) and BAIT trails it, gain -0.101 [-0.177, -0.025]. " + BAIT_WEAK,
    "digits": "Does not hold on our miniature: gain -0.007 [-0.023, 0.009]; " + DIGITS}))
def test_from_the_prior_bait_beats_the_strongest_baseline(grid, source, record_claim) -> None:
    base = np.min([_acc(grid, source, m, "pretrained") for m in METHODS.names("baseline")], axis=0)
    bait = _acc(grid, source, OURS, "pretrained")
    ci = paired_ci(base, bait)
    record_claim(strongest_baseline=float(base.mean()), bait=float(bait.mean()), **ci.numbers("gain"))
    assert ci.low > 0


@pytest.mark.parametrize("source", _xfail({
    "shapes": "Does not hold on our miniature: 3 unrolled steps and none give the same protection from the prior on "
              "shapes (0.573 against 0.568, gain -0.005 [-0.027, 0.018]). " + BAIT_WEAK,
    "digits": "Does not hold on our miniature: gain 0.001 [-0.001, 0.003]; " + DIGITS}))
def test_unrolled_inner_steps_help_from_the_prior(grid, source, record_claim) -> None:
    k0, bait = _acc(grid, source, ABLATION, "pretrained"), _acc(grid, source, OURS, "pretrained")
    ci = paired_ci(k0, bait)
    record_claim(unroll0=float(k0.mean()), bait=float(bait.mean()), **ci.numbers("gain"))
    assert ci.low > 0


@pytest.mark.full
def test_full_rerun_reproduces_the_grid(tmp_path) -> None:
    """Retrain everything (about 10 minutes of one core) into a temporary folder and compare with the log."""
    import json
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "backend.train", "bait", "--out-dir", str(tmp_path)], check=True,
                   cwd=jobs.ASSETS.parent)
    new = json.loads((tmp_path / jobs.GRID_FILE.name).read_text())
    old = jobs.grid_log()
    a = {(r["source"], r["method"], r["init"], r["seed"]): r["test_accuracy"] for r in old["rows"]}
    b = {(r["source"], r["method"], r["init"], r["seed"]): r["test_accuracy"] for r in new["rows"]}
    diff = max(abs(a[k] - b[k]) for k in a)
    assert a.keys() == b.keys() and diff <= 0.05


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "Does not hold at full scale on our data: fine-tuning the ImageNet EfficientNet-Lite0 (96 px, 3 epochs, 3 seeds) "
    "on protected shapes gives BAIT 0.567 against EMN 0.623 (clean 0.672): BAIT is lower but by 0.057 "
    "[-0.001, 0.114], under the 10-point bound. EMN costs only 0.049 from this real prior, as the paper observes; "
    "BAIT's perturbations are crafted against the small CNN prior and transferred, and there its outer level binds "
    "the wrong label only at chance level"))
def test_full_imagenet_prior_bait_below_emn(record_claim) -> None:
    """The real pretrained prior: EfficientNet-Lite0 (ImageNet) fine-tuned on the shapes set protected by the shipped
    protectors (EMN re-applied with its min-min surrogate, BAIT's generator), 3 seeds."""
    from backend.robustness.bait.data import load_source
    from backend.robustness.bait.perturb import accuracy
    from backend.robustness.bait.victims import train_effnet_victim

    train, test = load_source("shapes", "train"), load_source("shapes", "test")
    prot = jobs.load_protectors("shapes")
    sets = {m: METHODS.get(m)(train.images, train.labels, prot, 8) for m in (CLEAN, EMN, OURS)}
    accs = {m: [accuracy(train_effnet_victim(x, train.labels, s), test.images, test.labels) for s in range(3)]
            for m, x in sets.items()}
    ci = paired_ci(accs[EMN], accs[OURS])
    record_claim(clean=float(np.mean(accs[CLEAN])), emn=float(np.mean(accs[EMN])), bait=float(np.mean(accs[OURS])),
                 **ci.numbers("gain"), bound=0.10)
    assert ci.mean >= 0.10 and ci.low > 0
