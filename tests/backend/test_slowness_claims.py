"""Claims of the temporal-slowness page, re-evaluated on the shipped encoders (``python -m backend.train slowness``:
4 arms x 3 seeds, 400 MoCo-v3 steps each on the same 160-clip stream).

ci tier: the "Standard" probe preset (10 training and 6 test photos per instance, 32 instances; photos are
object-centred renders, another kind of image than the stream's frames) for all 12 encoders.
full tier: the largest probe sets the configs allow (40 + 40 photos per instance).

Claims: (1) the central + temporal arm's instance-probe accuracy exceeds the full-frame + augmentation arm's, paired
over seeds (95 % t interval); (2) the central + temporal arm loses more category accuracy under a foreground swap
than under a background swap, and the full-frame arm the other way round.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.scenes.slowness import jobs as J
from backend.scenes.slowness.inputs import PRESETS
from backend.scenes.slowness.learn import ARMS
from backend.stats import paired_ci

STANDARD = list(PRESETS)[1]
FULL = {"train_per_instance": J.MAX_PER_INSTANCE, "test_per_instance": J.MAX_PER_INSTANCE}
OURS, BASE = ARMS.names("ours")[0], ARMS.names("baseline")[0]


@pytest.fixture(scope="module")
def standard() -> J.ProbeResult:
    return J.run_probe(J.ProbeConfig(**PRESETS[STANDARD]))


def _instance_gain(res: J.ProbeResult, record_claim) -> None:  # noqa: ANN001
    ours, base = np.array(res.values(OURS, "instance")), np.array(res.values(BASE, "instance"))
    ci = paired_ci(ours, base)
    record_claim(**ci.numbers("instance_gain"), ours_instance=ours.tolist(), full_frame_instance=base.tolist(),
                 **{f"{a}_{k}": res.means[a][k] for a in res.means for k in ("instance", "category", "background")})
    assert ci.mean > 0


def _swaps(res: J.ProbeResult, record_claim) -> None:  # noqa: ANN001
    d = {a: np.array(res.values(a, "fg_drop")) - np.array(res.values(a, "bg_drop")) for a in (OURS, BASE)}
    ci_ours = paired_ci(res.values(OURS, "fg_drop"), res.values(OURS, "bg_drop"))
    ci_base = paired_ci(res.values(BASE, "fg_drop"), res.values(BASE, "bg_drop"))
    record_claim(**ci_ours.numbers("ours_fg_minus_bg_drop"), **ci_base.numbers("full_frame_fg_minus_bg_drop"),
                 **{f"{a}_{k}": res.means[a][k] for a in (OURS, BASE)
                    for k in ("category", "fg_swap", "bg_swap", "fg_drop", "bg_drop")})
    assert d[OURS].mean() > 0 > d[BASE].mean()


def test_central_temporal_beats_full_frame_on_instances(standard, record_claim) -> None:
    _instance_gain(standard, record_claim)


SWAP_REASON = (
    "Does not hold on our miniature: every arm loses far more category accuracy under a foreground swap than under a "
    "background swap (Standard probe, means over seeds 0-2): central + temporal 0.667 against 0.354, full frame + "
    "augmentation 0.583 against 0.293 (difference per seed +0.32 / +0.30 / +0.32 against +0.28 / +0.29 / +0.30). "
    "Every encoder reads the swapped-in object of another category (category accuracy 0.02-0.05 after a foreground "
    "swap, below chance 0.125), the full-frame one too: the probe photos show one large centred object (radius 20-28 "
    "% of the side) on a backdrop that predicts the category only through the 75 % co-occurrence, while the paper's "
    "full frames (Ego4D) and ImageNet-9 photos hold smaller objects in larger scenes. The central + temporal arm's "
    "difference is the larger of the two (+0.31 against +0.29), the paper's direction, but not resolved")


@pytest.mark.xfail(strict=True, reason=SWAP_REASON)
def test_swaps_central_relies_on_the_object_full_frame_on_the_background(standard, record_claim) -> None:
    _swaps(standard, record_claim)


@pytest.mark.full
def test_full_central_temporal_beats_full_frame_on_instances(record_claim) -> None:
    _instance_gain(J.run_probe(J.ProbeConfig(**FULL)), record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature (40 + 40 photos per instance): central + temporal loses 0.714 under a foreground "
    "swap against 0.276 under a background swap, full frame + augmentation 0.642 against 0.289 (differences +0.438 "
    "[0.398, 0.478] and +0.354 [0.257, 0.451] over seeds 0-2): the full-frame model, too, reads the object first; "
    "see the ci-tier test for the diagnosis"))
def test_full_swaps(record_claim) -> None:
    _swaps(J.run_probe(J.ProbeConfig(**FULL)), record_claim)
