"""Claims of the IGGT page, re-evaluated on the shipped networks (``python -m backend.train iggt``: 3 seeds, 400 steps
of 4 scenes from 120 training scenes of boxes and spheres, plain or striped) and real DINOv2 features.

Held-out data: scenes of cylinders (a shape never trained on), scenes of checkered objects (a texture never
trained on) and scenes whose objects all have one colour (training scenes give every object its own), 3 views each. ci tier: the first 3 scenes of each held-out split; full tier: the first 24.

Claims: (1) T-mIoU and (2) T-SR of joint HDBSCAN on the learned features exceed both baselines (per-view DINOv2
clustering matched by the Hungarian algorithm; per-view colour + predicted-depth clustering matched by colour), paired
over scenes after averaging the three seeds (95 % t intervals; "not resolved" when an interval contains zero);
(3) same-instance cross-view pixel pairs lie within the margin M = 1 for at least 90 % of pairs, while pairs of
different instances mostly lie beyond it (so the first share is not a collapse of all features).
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.scenes.iggt import jobs as J
from backend.scenes.iggt.segment import SEGMENTERS
from backend.stats import paired_ci

OURS = SEGMENTERS.names("ours")[0]
BASELINES = SEGMENTERS.names("baseline")
CI_SCENES, FULL_SCENES = 3, 24

CAUSE = (
    "Diagnosed cause: in these scenes every object has its own palette colour (random_scene draws distinct colours), "
    "so per-view clustering of colour plus the network's own predicted depth is close to an oracle for plain and "
    "striped objects, and the learned features do not generalise far enough: on the validation scenes of the "
    "training distribution joint clustering reaches T-mIoU 0.76 / 0.72 / 0.62 (seeds 0 / 1 / 2), on held-out "
    "cylinders 0.55 / 0.63 / 0.35, because different unseen objects are not pushed apart (only 23.7 % of cross-view "
    "pixel pairs of different cylinders lie beyond the margin, 43.3 % for checkered objects). The network is trained "
    "for 400 steps on 120 scenes of two shapes (the paper: a 1B-parameter model on 15,000 real scenes), and seed 2 "
    "trained worse than the others. Against the per-view DINOv2 baseline (the field's per-view alternative) the "
    "learned features score higher on average on the cylinder and checker splits. When every object has the same "
    "colour (the third held-out split) the learned features fall below both baselines, far below DINOv2 (T-mIoU "
    "0.24 vs 0.57 on 24 scenes): trained on scenes where colour identifies the object, the network learned colour "
    "as its instance cue."
)
MEASURED = (
    "ci subset (3 held-out scenes per split, 3 views, seeds 0-2, paired over scenes of the seed-averaged score): "
    "cylinders T-mIoU 0.509 vs DINOv2 + Hungarian 0.370 (gain +0.139, 95 % interval +0.043 to +0.235) and colour + "
    "predicted depth 0.780 (gain -0.271, -0.470 to -0.073); T-SR 0.454 vs 0.111 (+0.343, -0.166 to +0.851) and "
    "0.852 (-0.398, -0.724 to -0.072); checker T-mIoU 0.533 vs 0.457 (+0.075, -0.179 to +0.330) and 0.683 (-0.151, "
    "-0.414 to +0.112); T-SR 0.583 vs 0.167 (+0.417, -0.532 to +1.365) and 0.583 (0.000, -0.548 to +0.548); "
    "one colour T-mIoU 0.247 vs 0.635 (-0.387, -0.567 to -0.208) and 0.405 (-0.158, -0.315 to -0.001); T-SR 0.139 "
    "vs 0.611 (-0.472, -0.903 to -0.041) and 0.167 (-0.028, -0.344 to +0.288). "
)


@pytest.fixture(scope="module")
def heldout() -> J.EvalResult:
    return J.run_eval(J.EvalConfig(scenes=CI_SCENES, views=3))


@pytest.fixture(scope="module")
def heldout_full() -> J.EvalResult:
    return J.run_eval(J.EvalConfig(scenes=FULL_SCENES, views=3))


def _compare(res: J.EvalResult, split: str, metric: str, record_claim) -> dict:  # noqa: ANN001
    ours = J.scene_means(res, split, OURS, metric)
    out: dict = {f"{OURS}_{metric}": round(float(np.nanmean(ours)), 4),
                 f"{OURS}_{metric}_per_seed": [
                     round(float(np.mean([x for x in res.per_scene[split][str(s)][OURS][metric] if x is not None])), 4)
                     for s in res.config["seeds"]]}
    gains = {}
    for b in BASELINES:
        base = J.scene_means(res, split, b, metric)
        ok = np.isfinite(ours) & np.isfinite(base)
        ci = paired_ci(ours[ok], base[ok])
        out.update(ci.numbers(f"gain_vs_{b}"))
        out[f"{b}_{metric}"] = round(float(np.nanmean(base)), 4)
        gains[b] = ci.mean
    record_claim(**out)
    return gains


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: T-mIoU is above the "
                   "DINOv2 baseline but below the colour + predicted-depth baseline on the cylinder and checker "
                   "splits, and below both on the one-colour split; "
                   + MEASURED + CAUSE)
@pytest.mark.parametrize("split", J.HELDOUT)
def test_tmiou_beats_both_baselines_on_heldout(heldout, split, record_claim):  # noqa: ANN001
    gains = _compare(heldout, split, "t_miou", record_claim)
    assert min(gains.values()) > 0, gains


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: T-SR is above the "
                   "DINOv2 baseline but below (cylinders) or equal to (checker) the colour + predicted-depth baseline, "
                   "and below both on the one-colour split; "
                   + MEASURED + CAUSE)
@pytest.mark.parametrize("split", J.HELDOUT)
def test_tsr_beats_both_baselines_on_heldout(heldout, split, record_claim):  # noqa: ANN001
    gains = _compare(heldout, split, "t_sr", record_claim)
    assert min(gains.values()) > 0, gains


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: same-object pixel pairs "
                   "across views lie within the margin for 98.5 % (cylinders; seeds 99.9 / 99.8 / 95.8 %) and 99.2 % "
                   "(checker) and 99.8 % (one colour) of pairs, above the 90 % bound, but only 23.7 % (cylinders), 43.3 % "
                   "(checker) and 21.7 % (one colour) of the "
                   "cross-view pairs of different objects lie beyond it, below the bound of 50 %: on unseen objects "
                   "the features of different objects collapse together, so the within-margin share is not evidence "
                   "of instance grounding. ci subset: 3 held-out scenes per split, 3 views, seeds 0-2. " + CAUSE)
@pytest.mark.parametrize("split", J.HELDOUT)
def test_same_instance_pairs_within_margin(heldout, split, record_claim):  # noqa: ANN001
    within = [x for s in heldout.config["seeds"] for x in heldout.pairs_within_margin[split][str(s)] if x is not None]
    beyond = [x for s in heldout.config["seeds"] for x in heldout.pairs_beyond_margin[split][str(s)] if x is not None]
    per_seed = [round(float(np.mean([x for x in heldout.pairs_within_margin[split][str(s)] if x is not None])), 4)
                for s in heldout.config["seeds"]]
    record_claim(within_margin=round(float(np.mean(within)), 4), within_margin_per_seed=per_seed,
                 different_beyond_margin=round(float(np.mean(beyond)), 4), bound=0.9)
    assert np.mean(within) >= 0.9
    assert np.mean(beyond) >= 0.5


@pytest.mark.full
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: 24 held-out scenes per "
                   "split, 3 views, seeds 0-2, paired over scenes: cylinders T-mIoU 0.502 vs DINOv2 + Hungarian 0.485 "
                   "(gain +0.017, 95 % interval -0.066 to +0.100) and colour + predicted depth 0.746 (-0.244, -0.318 "
                   "to -0.170); T-SR 0.427 vs 0.333 (+0.094, -0.067 to +0.255) and 0.780 (-0.353, -0.488 to -0.218); "
                   "checker T-mIoU 0.633 vs 0.599 (+0.035, -0.040 to +0.109) and 0.778 (-0.145, -0.199 to -0.090); "
                   "T-SR 0.622 vs 0.399 (+0.222, +0.069 to +0.376) and 0.698 (-0.076, -0.178 to +0.025); same-object "
                   "pairs within the margin 97.2 % / 98.5 %, different-object pairs beyond it 31.8 % / 39.6 %; "
                   "per seed T-mIoU on cylinders 0.547 / 0.550 / 0.410; one colour T-mIoU 0.242 vs 0.565 (-0.322, -0.385 to "
                   "-0.260) and 0.417 (-0.175, -0.215 to -0.135), T-SR 0.117 vs 0.441 (-0.324, -0.450 to -0.198) and "
                   "0.171 (-0.054, -0.127 to +0.018), pairs within the margin 99.6 %, different pairs beyond 13.7 %. "
                   + CAUSE)
@pytest.mark.parametrize("split", J.HELDOUT)
def test_full_heldout_against_both_baselines(heldout_full, split, record_claim):  # noqa: ANN001
    g1 = _compare(heldout_full, split, "t_miou", lambda **kw: None)
    g2 = _compare(heldout_full, split, "t_sr", lambda **kw: None)
    within = [x for s in heldout_full.config["seeds"] for x in heldout_full.pairs_within_margin[split][str(s)]
              if x is not None]
    record_claim(**{f"t_miou_gain_vs_{b}": round(v, 4) for b, v in g1.items()},
                 **{f"t_sr_gain_vs_{b}": round(v, 4) for b, v in g2.items()},
                 within_margin=round(float(np.mean(within)), 4), scenes=FULL_SCENES)
    assert min(g1.values()) > 0 and min(g2.values()) > 0 and np.mean(within) >= 0.9
