"""Claims of the motion-forecasting miniature on the shipped models of three training seeds
(``python -m backend.train nextmotion``), on held-out ambiguous scenes (a ball on a peak and a square on its
corner, alternating; seeds from 200,000, never trained on; each has two known outcomes, one realised).

Each comparison is paired over scenes: a scene's number is the mean over the three training seeds' models (K = 8
samples each, noise seed 0), with a Student-t 95 % interval over scenes; the per-seed means are recorded beside it.
ci tier: 40 scenes; full tier: 200.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from backend.forecast.nextmotion import jobs as J
from backend.stats import paired_ci

CI_SCENES, FULL_SCENES = 40, 200


@functools.lru_cache(maxsize=2)
def _evals(scenes: int) -> dict[int, J.EvalResult]:
    return {s: J.run_eval(J.EvalConfig(scenes=scenes, k=8, model_seed=s)) for s in J.SEEDS}


def _per_scene(evals: dict[int, J.EvalResult], metric: str, method: str) -> np.ndarray:
    return np.mean([getattr(r, metric)[method] for r in evals.values()], axis=0)


def _per_seed(evals: dict[int, J.EvalResult], metric: str, method: str) -> list[float]:
    return [round(float(np.mean(getattr(r, metric)[method])), 4) for r in evals.values()]


def _best_of_8(scenes: int, record_claim) -> None:  # noqa: ANN001
    ev = _evals(scenes)
    ours = _per_scene(ev, "best_of_k", "flow")
    nums: dict = {}
    cis = {}
    for base in ("noisy_regressor", "retrieval", "regressor"):
        ci = paired_ci(_per_scene(ev, "best_of_k", base), ours)
        cis[base] = ci
        nums.update(ci.numbers(f"gain_over_{base}"))
    for m in ("flow", "regressor", "noisy_regressor", "retrieval", "static"):
        nums[f"{m}_best_of_8"] = round(float(_per_scene(ev, "best_of_k", m).mean()), 4)
        nums[f"{m}_per_seed"] = _per_seed(ev, "best_of_k", m)
        nums[f"{m}_frechet"] = round(float(np.mean([r.frechet[m] for r in ev.values()])), 4)
    record_claim(scenes=scenes, **nums)
    assert cis["noisy_regressor"].low > 0 and cis["retrieval"].low > 0, cis


def _coverage(scenes: int, record_claim) -> None:  # noqa: ANN001
    ev = _evals(scenes)
    ours = _per_scene(ev, "coverage", "flow")
    ci = paired_ci(ours, _per_scene(ev, "coverage", "regressor"))
    nums = {f"{m}_coverage": round(float(_per_scene(ev, "coverage", m).mean()), 4)
            for m in ("flow", "regressor", "noisy_regressor", "retrieval", "static")}
    per_seed = {f"{m}_coverage_per_seed": _per_seed(ev, "coverage", m) for m in ("flow", "regressor")}
    record_claim(scenes=scenes, **ci.numbers("gain_over_regressor"), **nums, **per_seed)
    assert ci.low > 0, ci


def _lrtl(scenes: int, record_claim) -> None:  # noqa: ANN001
    ev = _evals(scenes)
    ours = _per_scene(ev, "lrtl", "flow")
    cis = {base: paired_ci(_per_scene(ev, "lrtl", base), ours) for base in ("noisy_regressor", "regressor")}
    nums = {f"{m}_lrtl": round(float(_per_scene(ev, "lrtl", m).mean()), 4)
            for m in ("flow", "regressor", "noisy_regressor", "retrieval", "static")}
    nums["truth_lrtl_max"] = float(np.max([np.max(r.truth_lrtl) for r in ev.values()]))
    record_claim(scenes=scenes, **nums, **cis["noisy_regressor"].numbers("gain_over_noisy_regressor"),
                 **cis["regressor"].numbers("gain_over_regressor"),
                 flow_lrtl_per_seed=_per_seed(ev, "lrtl", "flow"))
    assert cis["noisy_regressor"].low > 0 and cis["regressor"].low > 0, cis


def test_generator_best_of_8_beats_noisy_regressor_and_retrieval(record_claim) -> None:
    _best_of_8(CI_SCENES, record_claim)


def test_generator_covers_more_outcomes_than_regressor(record_claim) -> None:
    _coverage(CI_SCENES, record_claim)


def test_generator_lrtl_below_regressors(record_claim) -> None:
    _lrtl(CI_SCENES, record_claim)


@pytest.mark.full
def test_full_generator_best_of_8(record_claim) -> None:
    _best_of_8(FULL_SCENES, record_claim)


@pytest.mark.full
def test_full_generator_coverage(record_claim) -> None:
    _coverage(FULL_SCENES, record_claim)


@pytest.mark.full
def test_full_generator_lrtl(record_claim) -> None:
    _lrtl(FULL_SCENES, record_claim)
