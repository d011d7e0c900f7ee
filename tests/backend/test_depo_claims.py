"""Claims of DEPO on the miniature: the shipped GRPO runs (``python -m backend.train depo``, read from
``assets/depo_runs.json``) and the offline selector on MiniLM embeddings.

ci tier: coverage of DEPO's training subsets (3 seeds) against random (3 seeds), top-PageRank and k-center subsets of
the same size over the 240-prompt task pool, paired over prompts; the same for the selector on a second source (the
example prompt list, where no pass rates exist and DEPO keeps the greedy weighted-DPP order); full-data GRPO's
held-out gain over the starting policy (paired over the 150 held-out problems, the three seeds' mean), the
precondition of the speed-up measurement (``python -m backend depo report`` prints the speed-up table); DEPO's final
held-out accuracy against random 20 %.
The run logs are read, not rerun (training is in no tier); the tests skip when the shipped tiny reasoner differs from
the one the runs started from.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.reasoning.depo import jobs as J
from backend.stats import paired_ci

BASELINES = ("random", "pagerank", "kcenter")
NO_GAIN = (
    "Does not hold on our miniature: after 24 GRPO steps (8 prompts x 4 rollouts, Adam 5e-5) on problems of 5-8 "
    "operations full-data GRPO's held-out accuracy is 0.573 (3 seeds: 0.573, 0.593, 0.553) against 0.560 for the "
    "starting policy, a gain of +0.013 with 95 % CI [-0.041, +0.068] over the 150 problems. Cause: with 32 rollouts "
    "per step the policy gradient of the 1.8M-parameter reasoner is dominated by noise, so Adam's normalised steps "
    "random-walk around the pretrained policy (a learning-rate probe: 2e-4 drops sampled accuracy from 0.58 to 0.39 "
    "within 16 steps on 100 held-out problems); a measurable gain needs far more rollouts per step than the page's "
    "budget of about 50 core-minutes for all 12 runs allows")
SAME_AS_RANDOM = (
    "Does not hold on our miniature: DEPO's final held-out accuracy (3 seeds: 0.567, 0.547, 0.520; mean 0.544) is "
    "below random 20 %'s (0.587, 0.533, 0.587; mean 0.569), gain -0.024 with 95 % CI [-0.073, +0.024] over the 150 "
    "problems. Cause: no strategy improves measurably on the starting policy in 24 GRPO steps (full-data GRPO: "
    "+0.013 [-0.041, +0.068]), so which prompts are trained on cannot show in held-out accuracy")
LESS_COVERAGE = (
    "Does not hold on the pool of 5-8 operations: DEPO's training subsets (3 seeds) leave a mean distance of 0.490 "
    "from a prompt to its nearest selected one, against 0.469 for k-center, 0.475 for random and 0.506 for "
    "top-PageRank subsets of 48 (gain over k-center -0.021, 95 % CI [-0.071, +0.028] over the 240 prompts). Cause: "
    "the difficulty sampling, not the selector: the greedy weighted-DPP's first 48 prompts cover better than "
    "k-center (0.445), but DEPO keeps 48 of its 96 candidates by pass rate (mean 0.50 against 0.56 over the "
    "candidates, a third of which the starting policy always solves), trading coverage for prompts of medium "
    "difficulty")


@pytest.fixture(scope="module")
def runs():
    from backend.models.tinyreasoner import WEIGHTS
    from backend.runtime import sha256_file

    data = J.load_runs()
    if data["model_sha256"] != sha256_file(WEIGHTS):
        pytest.skip("the shipped tiny reasoner is not the policy the DEPO runs started from")
    return data


def _by(runs: dict, strategy: str) -> list[dict]:
    return [r for r in runs["runs"] if r["config"]["strategy"] == strategy]


@pytest.mark.xfail(strict=True, reason=LESS_COVERAGE)
def test_depo_subsets_cover_the_task_pool_better(runs, record_claim) -> None:
    from backend.reasoning.depo.loop import TrainConfig
    from backend.reasoning.depo.select import SUBSETS, context, nearest

    cfg = TrainConfig()
    pool, _ = J.pool_problems(cfg)
    ctx = context(J.embed([p.question for p in pool]))
    depo = np.mean([nearest(ctx.x, r["subset"]) for r in _by(runs, "depo")], axis=0)
    base = {"random": np.mean([nearest(ctx.x, r["subset"]) for r in _by(runs, "random")], axis=0),
            "pagerank": nearest(ctx.x, SUBSETS["pagerank"](ctx, len(_by(runs, "depo")[0]["subset"]), 0)),
            "kcenter": nearest(ctx.x, SUBSETS["kcenter"](ctx, len(_by(runs, "depo")[0]["subset"]), 0))}
    strongest = min(base, key=lambda k: base[k].mean())
    ci = paired_ci(base[strongest], depo)
    record_claim(depo_coverage=float(depo.mean()), **{f"{k}_coverage": float(v.mean()) for k, v in base.items()},
                 strongest=strongest, **ci.numbers("gain_over_strongest"))
    assert ci.mean > 0, ci


def test_depo_selector_covers_a_second_source_better(record_claim) -> None:
    res = J.run_select(None, J.SelectConfig(source="example"))
    d = np.array(res.strategies["depo"]["distances"])
    cov = {k: res.strategies[k]["coverage"] for k in BASELINES}
    strongest = min(cov, key=cov.get)
    ci = paired_ci(np.array(res.strategies[strongest]["distances"]), d)
    record_claim(depo_coverage=res.strategies["depo"]["coverage"], **{f"{k}_coverage": v for k, v in cov.items()},
                 strongest=strongest, **ci.numbers("gain_over_strongest"))
    assert ci.mean > 0, ci


@pytest.mark.xfail(strict=True, reason=NO_GAIN)
def test_full_data_grpo_improves_heldout_accuracy(runs, record_claim) -> None:
    start = np.array(runs["start_per_problem"])
    final = np.mean([r["final_per_problem"] for r in _by(runs, "full")], axis=0)
    ci = paired_ci(final, start)
    record_claim(start_accuracy=float(start.mean()), full_final_accuracy=float(final.mean()),
                 full_final_per_seed=[r["curve"][-1]["accuracy"] for r in _by(runs, "full")], **ci.numbers("gain"))
    assert ci.low > 0, ci


@pytest.mark.xfail(strict=True, reason=SAME_AS_RANDOM)
def test_depo_final_accuracy_beats_random_subsets(runs, record_claim) -> None:
    depo = np.mean([r["final_per_problem"] for r in _by(runs, "depo")], axis=0)
    rand = np.mean([r["final_per_problem"] for r in _by(runs, "random")], axis=0)
    ci = paired_ci(depo, rand)
    record_claim(depo_final=float(depo.mean()), random_final=float(rand.mean()), **ci.numbers("gain"))
    assert round(ci.mean, 9) > 0, ci  # per-problem accuracies are multiples of 1/3: a mean of 0 is exact
