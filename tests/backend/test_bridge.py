"""Claims of Bridge on the shipped checkpoints and training log (``python -m backend.train bridge``).

ci tier: the shipped checkpoints of both arms (training seed 0) re-sampled on the first 8 held-out problems at the
training width reproduce the log's per-problem numbers; the claims read the log's final evaluation (24 held-out
problems x 3 training seeds, paired over (seed, problem)): Bridge against independent sampling with the same SFT data
and GRPO budget at the training width (mean accuracy over the N samples, pass@N), at other widths (trained at 4), and
the relative RLVR gain over the untrained base.
full tier: the same claims re-evaluated from the checkpoints (every seed, 48 problems, widths 1, 2, 4, 8).

Tests that compare with the starting policy skip when the shipped tiny reasoner is not the one the log was made with.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from backend.reasoning.bridge import jobs as J
from backend.reasoning.bridge.checkpoints import EVAL_SEED, TRAIN_WIDTH, eval_problems, read_log
from backend.stats import paired_ci


@pytest.fixture(scope="module")
def log():
    from backend.models.tinyreasoner import WEIGHTS

    d = read_log()
    if hashlib.sha256(WEIGHTS.read_bytes()).hexdigest() != d["base_sha256"]:
        pytest.skip("the shipped tiny reasoner differs from the one the Bridge log was made with: rerun "
                    "`python -m backend.train bridge`")
    return d


@pytest.fixture(scope="module")
def shipped(log):
    return J.run_scaling(J.ScalingConfig(source="log"))


@pytest.fixture(scope="module")
def reasoner():
    from backend.models.tinyreasoner import load_tinyreasoner

    return load_tinyreasoner()


def _compare(res, aggregate: str, width: int):
    a = res.per_problem["bridge"][str(width)][aggregate]
    b = res.per_problem["independent"][str(width)][aggregate]
    return paired_ci(a, b), float(np.mean(a)), float(np.mean(b))


@pytest.mark.parametrize("arm", ["bridge", "independent"])
def test_checkpoints_reproduce_the_log(arm, log, reasoner) -> None:
    from backend.reasoning.bridge.rl import sample_width, score

    probs = eval_problems(8)
    model = J.MODES.get(arm)(reasoner, 0)
    sc = score(sample_width(reasoner, model, [p.question for p in probs], TRAIN_WIDTH, 1.0, EVAL_SEED), probs)
    logged = np.array(log["runs"][J.MODES.get(arm).run_key(0)]["eval"][str(TRAIN_WIDTH)]["right"][:8])
    assert np.abs(sc.right - logged).sum() <= 2, (sc.right.tolist(), logged.tolist())


def _record(shipped, record_claim, aggregate: str, width: int):
    ci, ours, base = _compare(shipped, aggregate, width)
    seeds = shipped.per_seed
    record_claim(bridge=ours, independent=base, **ci.numbers("gain"), width=width, train_width=TRAIN_WIDTH,
                 bridge_per_seed=seeds["bridge"][str(width)][aggregate],
                 independent_per_seed=seeds["independent"][str(width)][aggregate],
                 parameters_added=shipped.parameters["bridge_added"], parameters_base=shipped.parameters["base"])
    return ci


_SAME_SAMPLES = (
    "Does not hold on our miniature: on 24 held-out problems of 5-8 operations x 3 seeds the Bridge arm's {what} "
    "equals the independent arm's in every seed ({value}; gain 0.000, 95 % interval [0.000, 0.000] over 72 "
    "(seed, problem) pairs): under the same random numbers the two arms' samples have the same outcome on every "
    "problem. Cause: the reasoner is nearly deterministic per step at 5-8 operations (a problem's 4 samples are "
    "mostly all right or all wrong), so GRPO's groups carry little signal; after the SFT warm-up and 16 GRPO steps "
    "the blocks' output stays small and both arms move the base only from 0.615 to 0.635 mean accuracy at N = 4")


# Each comparison asserts the direction (Bridge's mean paired gain > 0) and records its 95 % interval: the claims
# verdict is "holds" when the interval excludes zero and "not resolved" when it does not.

@pytest.mark.xfail(strict=True, reason=_SAME_SAMPLES.format(what="mean accuracy over the N = 4 samples",
                                                              value="0.635"))
def test_bridge_beats_independent_sampling_at_the_training_width(shipped, record_claim) -> None:
    ci = _record(shipped, record_claim, "mean", TRAIN_WIDTH)
    assert ci.mean > 0, ci


@pytest.mark.xfail(strict=True, reason=_SAME_SAMPLES.format(what="pass@4", value="0.750"))
def test_bridge_pass_at_n_beats_independent_sampling(shipped, record_claim) -> None:
    ci = _record(shipped, record_claim, "pass", TRAIN_WIDTH)
    assert ci.mean > 0, ci


@pytest.mark.xfail(strict=True, reason=_SAME_SAMPLES.format(what="majority vote over N = 4", value="0.667"))
def test_bridge_majority_vote_beats_independent_sampling(shipped, record_claim) -> None:
    ci = _record(shipped, record_claim, "majority", TRAIN_WIDTH)
    assert ci.mean > 0, ci


@pytest.mark.parametrize("width", [pytest.param(2, marks=pytest.mark.xfail(strict=True, reason=_SAME_SAMPLES.format(
    what="mean accuracy at width 2", value="0.688"))), 8])
def test_bridge_trained_at_one_width_beats_independent_at_others(width, shipped, record_claim) -> None:
    ci = _record(shipped, record_claim, "mean", width)
    assert ci.mean > 0, ci


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature: RLVR improves the starting policy (mean accuracy at N = 4 on 24 held-out "
    "problems of 5-8 operations x 3 seeds: base 0.615, independent arm 0.635, gain +0.021 with 95 % interval "
    "[+0.004, +0.037]), but Bridge's gain is the same (0.635), a relative gain of 1.00: the two arms' samples have "
    "the same outcome on every problem"))
def test_larger_relative_rlvr_gain(shipped, record_claim) -> None:
    m = shipped.metrics
    i = shipped.widths.index(TRAIN_WIDTH)
    base, ind, ours = m["base"]["mean"][i], m["independent"]["mean"][i], m["bridge"]["mean"][i]
    ci = paired_ci(shipped.per_problem["independent"][str(TRAIN_WIDTH)]["mean"],
                   shipped.per_problem["base"][str(TRAIN_WIDTH)]["mean"])
    ratio = (ours - base) / (ind - base) if ind != base else float("nan")
    record_claim(base=base, independent=ind, bridge=ours, gain_ratio=ratio, **ci.numbers("independent_rlvr_gain"))
    assert ci.low > 0, ci                # the RLVR gain must be measurable before its relative size means anything
    assert ratio > 1.0


# ------------------------------------------------------------------------------------------------ full tier

@pytest.fixture(scope="module")
def resampled(log, reasoner):
    return J.run_scaling(J.ScalingConfig(source="live", problems=48), reasoner)


_FULL = (
    "Does not hold on our miniature: re-sampled from the checkpoints on 48 held-out problems of 5-8 operations x 3 "
    "seeds, Bridge's {what} is {ours} against {ind} for independent sampling (gain {gain}, 95 % interval {ci}, 144 "
    "(seed, problem) pairs): the blocks change few samples and not for the better (see the ci-tier reasons)")
_PASS_FULL = pytest.mark.xfail(strict=True, reason=_FULL.format(
    what="pass@4", ours="0.771", ind="0.778", gain="-0.007", ci="[-0.021, +0.007]"))
_MEAN_FULL = pytest.mark.xfail(strict=True, reason=_FULL.format(
    what="mean accuracy at N = 4", ours="0.615", ind="0.620", gain="-0.005", ci="[-0.014, +0.004]"))


@pytest.mark.full
@pytest.mark.timeout(3600)  # the first test re-samples every arm and seed (about 25 core-minutes)
@pytest.mark.parametrize("aggregate", [pytest.param("mean", marks=_MEAN_FULL), pytest.param("pass", marks=_PASS_FULL),
                                       "majority"])
def test_full_bridge_beats_independent_resampled(aggregate, resampled, record_claim) -> None:
    ci, ours, base = _compare(resampled, aggregate, TRAIN_WIDTH)
    record_claim(bridge=ours, independent=base, **ci.numbers("gain"))
    assert ci.mean > 0, ci


@pytest.mark.full
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("width", [
    pytest.param(2, marks=pytest.mark.xfail(strict=True, reason=_FULL.format(
        what="mean accuracy at width 2", ours="0.628", ind="0.639", gain="-0.010", ci="[-0.026, +0.005]"))),
    pytest.param(8, marks=pytest.mark.xfail(strict=True, reason=_FULL.format(
        what="mean accuracy at width 8", ours="0.582", ind="0.588", gain="-0.006", ci="[-0.016, +0.004]")))])
def test_full_width_generalisation_resampled(width, resampled, record_claim) -> None:
    ci, ours, base = _compare(resampled, "mean", width)
    record_claim(bridge=ours, independent=base, **ci.numbers("gain"), width=width)
    assert ci.mean > 0, ci
