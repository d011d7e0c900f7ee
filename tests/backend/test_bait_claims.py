"""The claims of the BAIT page on the shipped victim grid (``assets/bait_grid.json``: every method x {scratch,
pretrained} x 5 seeds on both sources, and BAIT's generator training logs; ``tests/backend/test_bait.py``
re-evaluates the shipped victims and generators against this log), paired over seeds (a seed draws the protectors
and the victims) with 95% intervals; the full tier retrains the protectors and the grid."""

from __future__ import annotations

import numpy as np
import pytest

from backend.robustness.bait import jobs
from backend.robustness.bait.data import SOURCES
from backend.robustness.bait.experiment import METHODS
from backend.stats import paired_ci

SRC = list(SOURCES)
DIGITS = ("digits: no method protects the upsampled digits by more than 2 points, even from scratch (clean 0.965, "
          "EMN 0.949, BAIT 0.962; from the prior clean 0.976, EMN 0.971, targeted 0.975, BAIT 0.976; 5 seeds): the "
          "smooth high-contrast strokes carry the class so plainly that 8 epochs learn them as fast as any 8/255 "
          "shortcut")
UNBOUND = ("BAIT's outer level does not bind the wrong label at eps 8/255: over the 5 seeds' generators the "
           "inner-trained surrogate's outer loss falls from 14.23 to 8.82 on shapes (chance 2.30) and it predicts "
           "(y + 1) mod 10 on 6.6% of the protected batch; the surrogate (the prior fine-tuned on clean shapes) is "
           "confident and robust at this budget, as per-sample targeted PGD against it reaches only 37% wrong-label "
           "predictions (loss 5.28), while the same generator objective binds at larger budgets "
           "(benchmarks/results/bait.md: final outer loss 8.97 at 8/255, 4.77 at 16/255, 0.71 and 85.5% wrong labels "
           "at 32/255); so the generator acts as a class-wise shortcut (from scratch it cuts 0.117) that the prior's "
           "features partly see past")
# The measured numbers and diagnosed causes quoted by the strict xfails below (python -m backend.train bait).
REASONS: dict[str, dict[str, str]] = {
    "bait_binds_the_wrong_label": {
        "shapes": "Does not hold on our miniature: " + UNBOUND,
        "digits": "Does not hold on our miniature: over the 5 seeds the outer loss falls from 18.19 to 13.73 (chance "
                  "2.30), 0.05% wrong-label predictions; per-sample targeted PGD against the digits surrogate reaches "
                  "0.8% (loss 11.88): 8/255 cannot move a confident digit classifier towards another digit"},
    "from_scratch_emn_and_bait_cut_clean_accuracy": {
        "digits": "Does not hold on our miniature: EMN drop 0.016 [0.006, 0.026], BAIT drop 0.003 [-0.009, "
                  "0.014]; " + DIGITS},
    "from_the_prior_bait_is_10_points_below_emn": {
        "digits": "Does not hold on our miniature: gain -0.006 [-0.010, -0.001]; " + DIGITS},
    "from_the_prior_bait_beats_the_strongest_baseline": {
        "shapes": "Does not hold on our miniature: from the prior the targeted poison (per-sample PGD against the "
                  "same fine-tuned surrogate BAIT starts from) is the strongest protection on shapes in every seed "
                  "(0.606) and BAIT (0.671) trails it, gain -0.065 [-0.113, -0.017]: per-sample PGD reaches 37% "
                  "wrong-label predictions where the generator reaches 7%; the same objective over a free "
                  "per-sample table instead of the generator protects as well as the targeted poison "
                  "(benchmarks/results/bait.md)",
        "digits": "Does not hold on our miniature: gain -0.006 [-0.010, -0.002]; " + DIGITS},
    "unrolled_inner_steps_help_from_the_prior": {
        "shapes": "Does not hold on our miniature: 3 unrolled steps and none give the same protection from the prior "
                  "on shapes (0.671 against 0.660, gain -0.010 [-0.027, 0.006]): at the inner learning rate where "
                  "the inner steps still lower the surrogate's loss (0.003; 0.01 already raises it) three steps "
                  "barely move a surrogate that starts fine-tuned, so the outer gradient is nearly the ablation's",
        "digits": "Does not hold on our miniature: gain -0.001 [-0.004, 0.002]; " + DIGITS},
}


def _xfail(reason_by_source: dict[str, str]) -> list:
    return [pytest.param(s, marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                                        reason=reason_by_source[s]))
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


@pytest.mark.parametrize("source", SRC)
def test_the_prior_gives_fine_tuning_a_head_start(grid, source, record_claim) -> None:
    """Clean training from the prior beats clean training from scratch (paired over seeds; an interval that
    contains zero leaves the claim unresolved): the premise that the prior carries semantics a victim can use."""
    scratch, prior = _acc(grid, source, CLEAN, "scratch"), _acc(grid, source, CLEAN, "pretrained")
    ci = paired_ci(prior, scratch)
    record_claim(scratch=float(scratch.mean()), prior=float(prior.mean()), **ci.numbers("head_start"))
    assert ci.mean > 0


@pytest.mark.parametrize("source", _xfail(REASONS.get("bait_binds_the_wrong_label", {})))
def test_bait_binds_the_wrong_label(source, record_claim) -> None:
    """BAIT's outer level binds the wrong label: at the end of training the inner-trained surrogate's outer loss is
    below chance (ln 10) and it predicts (y + 1) mod 10 on more than a tenth of the protected batch (means over the
    seeds' generators). Recorded beside it: what per-sample targeted PGD (20 steps at the same eps) reaches against
    seed 0's warm start."""
    import torch
    import torch.nn.functional as F

    from backend.robustness.bait.data import load_source
    from backend.robustness.bait.perturb import target_of, targeted_poison, to_float

    log = jobs.grid_log()
    per_seed = [e[OURS] for e in log["sources"][source]["seeds"]]
    s = {k: float(np.mean([e[k] for e in per_seed])) for k in ("final_outer_loss", "first_outer_loss",
                                                                 "final_target_rate")}
    s["chance_loss"] = per_seed[0]["chance_loss"]
    prot, train = jobs.load_protectors(source), load_source(source, "train", 256)
    adv = targeted_poison(prot.crafting, train.images, train.labels, log["eps"])
    t = target_of(torch.from_numpy(train.labels))
    with torch.no_grad():
        logits = prot.crafting(to_float(adv))
    record_claim(outer_loss=s["final_outer_loss"], first_outer_loss=s["first_outer_loss"], seeds=len(per_seed),
                 chance_loss=s["chance_loss"], target_rate=s["final_target_rate"], chance_rate=0.1,
                 pgd_target_rate=float((logits.argmax(1) == t).float().mean()),
                 pgd_outer_loss=float(F.cross_entropy(logits, t)))
    assert s["final_outer_loss"] < s["chance_loss"] and s["final_target_rate"] > 0.1


@pytest.mark.parametrize("source", _xfail(REASONS.get("from_scratch_emn_and_bait_cut_clean_accuracy", {})))
def test_from_scratch_emn_and_bait_cut_clean_accuracy(grid, source, record_claim) -> None:
    clean = _acc(grid, source, CLEAN, "scratch")
    drops = {m: paired_ci(clean, _acc(grid, source, m, "scratch")) for m in (EMN, OURS)}
    record_claim(clean=float(clean.mean()), **drops[EMN].numbers("emn_drop"), **drops[OURS].numbers("bait_drop"))
    assert all(d.low > 0 for d in drops.values()), drops


@pytest.mark.parametrize("source", _xfail(REASONS.get("from_the_prior_emn_stays_within_10_points_of_clean", {})))
def test_from_the_prior_emn_stays_within_10_points_of_clean(grid, source, record_claim) -> None:
    clean, emn = _acc(grid, source, CLEAN, "pretrained"), _acc(grid, source, EMN, "pretrained")
    ci = paired_ci(clean, emn)
    record_claim(clean=float(clean.mean()), emn=float(emn.mean()), **ci.numbers("emn_drop"), bound=0.10)
    assert ci.mean <= 0.10


@pytest.mark.parametrize("source", _xfail(REASONS.get("from_the_prior_bait_is_10_points_below_emn", {})))
def test_from_the_prior_bait_is_10_points_below_emn(grid, source, record_claim) -> None:
    emn, bait = _acc(grid, source, EMN, "pretrained"), _acc(grid, source, OURS, "pretrained")
    ci = paired_ci(emn, bait)
    record_claim(emn=float(emn.mean()), bait=float(bait.mean()), **ci.numbers("gain"), bound=0.10)
    assert ci.mean >= 0.10 and ci.low > 0


@pytest.mark.parametrize("source", _xfail(REASONS.get("from_the_prior_bait_beats_the_strongest_baseline", {})))
def test_from_the_prior_bait_beats_the_strongest_baseline(grid, source, record_claim) -> None:
    base = np.min([_acc(grid, source, m, "pretrained") for m in METHODS.names("baseline")], axis=0)
    bait = _acc(grid, source, OURS, "pretrained")
    ci = paired_ci(base, bait)
    record_claim(strongest_baseline=float(base.mean()), bait=float(bait.mean()), **ci.numbers("gain"))
    assert ci.low > 0


@pytest.mark.parametrize("source", _xfail(REASONS.get("unrolled_inner_steps_help_from_the_prior", {})))
def test_unrolled_inner_steps_help_from_the_prior(grid, source, record_claim) -> None:
    k0, bait = _acc(grid, source, ABLATION, "pretrained"), _acc(grid, source, OURS, "pretrained")
    ci = paired_ci(k0, bait)
    record_claim(unroll0=float(k0.mean()), bait=float(bait.mean()), **ci.numbers("gain"))
    assert ci.low > 0


@pytest.mark.full
@pytest.mark.timeout(3600)
def test_full_rerun_reproduces_the_grid(tmp_path) -> None:
    """Retrain everything (the prior, 5 seeds of protectors per source and their victims: about 65 minutes of one
    core, the two sources in two processes) into a temporary folder and compare with the log."""
    import json
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "backend.train", "bait", "--workers", "2", "--out-dir", str(tmp_path)],
                   check=True, cwd=jobs.ASSETS.parent)
    new = json.loads((tmp_path / jobs.GRID_FILE.name).read_text())
    old = jobs.grid_log()
    a = {(r["source"], r["method"], r["init"], r["seed"]): r["test_accuracy"] for r in old["rows"]}
    b = {(r["source"], r["method"], r["init"], r["seed"]): r["test_accuracy"] for r in new["rows"]}
    diff = max(abs(a[k] - b[k]) for k in a)
    assert a.keys() == b.keys() and diff <= 0.05


@pytest.mark.full
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "Does not hold at full scale on our data: fine-tuning the ImageNet EfficientNet-Lite0 (96 px, 3 epochs, 5 seeds) "
    "on protected shapes gives BAIT 0.584 against EMN 0.634 (clean 0.682): BAIT is lower, gain 0.050 [0.006, 0.094] "
    "with the interval above zero, but under the 10-point bound. EMN costs only 0.048 from this real prior, as "
    "the paper observes; BAIT's generators are trained against the small CNN prior's fine-tuned surrogates and "
    "transferred, and at 8/255 their outer level does not bind the wrong label even there (outer loss 8.82, chance "
    "2.30)"))
def test_full_imagenet_prior_bait_below_emn(record_claim) -> None:
    """The real pretrained prior: EfficientNet-Lite0 (ImageNet) fine-tuned on the shapes set protected by the shipped
    protectors (EMN re-applied with its min-min surrogate, BAIT's generator), the victim of seed s on the sets of
    seed s's protectors."""
    from backend.robustness.bait.data import load_source
    from backend.robustness.bait.perturb import accuracy
    from backend.robustness.bait.victims import train_effnet_victim

    train, test = load_source("shapes", "train"), load_source("shapes", "test")
    accs: dict[str, list[float]] = {m: [] for m in (CLEAN, EMN, OURS)}
    for s in jobs.grid_log()["seeds"]:
        prot = jobs.load_protectors("shapes", s)
        for m in accs:
            x = METHODS.get(m)(train.images, train.labels, prot, 8)
            accs[m].append(accuracy(train_effnet_victim(x, train.labels, s), test.images, test.labels))
    ci = paired_ci(accs[EMN], accs[OURS])
    record_claim(clean=float(np.mean(accs[CLEAN])), emn=float(np.mean(accs[EMN])), bait=float(np.mean(accs[OURS])),
                 **ci.numbers("gain"), bound=0.10)
    assert ci.mean >= 0.10 and ci.low > 0
