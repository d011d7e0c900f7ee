"""Claims of the Visual Jigsaw page, re-evaluated on the shipped weights (``python -m backend.train jigsaw``).

Policy (a): Plackett-Luce tile policies, 3 seeds x {graded, binary} x {2 x 2, 3 x 3}, 600 GRPO steps each (16 puzzles x
16 samples per step) on 400 procedural training scenes; seed s gives both rewards the same initial weights, images
and shuffles. Scored by the greedy answer on fixed puzzles (each image under 4 fixed shuffles): held-out scenes (all 128
images, 512 puzzles, in both tiers; the full tier adds the 2 x 2 comparison) and scikit-image photographs (another
source; ci: the first 25 crops, full: 200). Claim: at 3 x 3 the graded reward reaches a higher exact-solve rate than the binary one at the same step
budget (paired 95 % t interval over the seeds).

Policy (b): the tiny VLM with its jigsaw post-trained projector; its change on at least 500 held-out scene questions
(recorded by the training script with a paired bootstrap interval over questions); ci re-answers the questions of the
first 2 held-out scenes with both models and checks them against the record; the full tier re-answers all of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.scenes.jigsaw import jobs as J
from backend.scenes.jigsaw.reward import REWARDS
from backend.stats import paired_bootstrap, paired_ci

OURS = REWARDS.names("ours")[0]
BINARY = REWARDS.names("baseline")[0]
CI_SCENES, CI_PHOTOS, CI_QA_SCENES = 128, 25, 2


def _solve(res: J.EvalResult, reward: str, grid: int) -> list[float]:
    return [r["solve"] for r in sorted(res.rows, key=lambda r: r["seed"]) if r["reward"] == reward
            and r["grid"] == grid]


def _claim(res: J.EvalResult, grid: int, record_claim) -> None:  # noqa: ANN001
    a, b = _solve(res, OURS, grid), _solve(res, BINARY, grid)
    ci = paired_ci(a, b)
    tiles = {rw: [r["tile_acc"] for r in res.rows if r["reward"] == rw and r["grid"] == grid] for rw in REWARDS}
    record_claim(**ci.numbers("solve_gain"), graded_solve_per_seed=a, binary_solve_per_seed=b,
                 graded_tile_acc=round(float(np.mean(tiles[OURS])), 4),
                 binary_tile_acc=round(float(np.mean(tiles[BINARY])), 4), puzzles=res.puzzles)
    assert ci.mean > 0


def test_graded_beats_binary_at_3x3_on_heldout_scenes(record_claim) -> None:
    res = J.run_evaluate(J.EvalConfig(source="scenes_val", count=CI_SCENES, grids=(3,)))
    _claim(res, 3, record_claim)


PHOTOS_CAUSE = (
    "Diagnosed cause: the policies learned from 400 procedural scenes (flat shapes on synthetic backdrops, where "
    "backdrop gradients and objects cut by the tile borders give the order away) and do not transfer to "
    "photographs: at 3 x 3 their tiles-right rate on photographs is at chance (1/9 = 0.111), and even at 2 x 2 they "
    "solve 0.13-0.18 of the photo puzzles against 0.58-0.73 of held-out scenes. With no exact solve under either "
    "reward there is nothing to compare; the paper trains on real photographs (COCO) with a 7B model."
)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: 3 x 3 exact-solve "
                   "rate on scikit-image photographs 0.000 with the graded and 0.000 with the binary reward (25 crops "
                   "x 4 shuffles, 3 seeds; tiles right 0.116 vs 0.110). " + PHOTOS_CAUSE)
def test_graded_beats_binary_at_3x3_on_photos(record_claim) -> None:
    res = J.run_evaluate(J.EvalConfig(source="photos", count=CI_PHOTOS, grids=(3,)))
    _claim(res, 3, record_claim)


@pytest.mark.full
def test_full_graded_beats_binary_at_3x3(record_claim) -> None:
    """All held-out scenes at both grids: the 3 x 3 claim, with the 2 x 2 solve rates per seed recorded beside it."""
    res = J.run_evaluate(J.EvalConfig(source="scenes_val"))
    record_claim(graded_solve_2x2=_solve(res, OURS, 2), binary_solve_2x2=_solve(res, BINARY, 2))
    _claim(res, 3, record_claim)


@pytest.mark.full
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: 3 x 3 exact-solve "
                   "rate on scikit-image photographs 0.000 with both rewards (200 crops x 4 shuffles, 3 seeds; tiles "
                   "right 0.121 vs 0.120). " + PHOTOS_CAUSE)
def test_full_graded_beats_binary_at_3x3_on_photos(record_claim) -> None:
    res = J.run_evaluate(J.EvalConfig(source="photos", grids=(3,)))
    _claim(res, 3, record_claim)


# ------------------------------------------------------------------------------------------------------------- vlm
def _record_vlm(v: J.VLMResult, record_claim, **more) -> None:  # noqa: ANN001
    q = v.recorded
    record_claim(qa_questions=q["qa_questions"], accuracy_before=q["qa_accuracy_before"],
                 accuracy_after=q["qa_accuracy_after"], change=q["qa_change"], change_ci=q["qa_change_ci"],
                 jigsaw_solve_before=q["jigsaw_solve_before"], jigsaw_solve_after=q["jigsaw_solve_after"], **more)


VLM_CAUSE = (
    "Diagnosed cause: the post-training did not teach the tiny VLM the jigsaw, so there is no perception gain to carry "
    "over: its 2 x 2 solve rate is 0 of 12 held-out scenes and 0 of 12 photographs both before and after, and the "
    "probability it gave the true order stayed below chance during training (mean 0.019 over steps 1-10, 0.010 over "
    "steps 11-20, 0.019 over steps 21-24; chance 1/24 = 0.042; mean reward of the 8 answers 0.24, 0.26 and 0.31 over "
    "the same steps against 0.28 expected from uniform answers). 24 GRPO steps "
    "of one puzzle on the projector alone (the CPU budget: about 30 s per step on a shared core) move the 135M-"
    "parameter model's scores little, and its scene answers barely change (19 of 519 differ: 9 right only after, "
    "10 only before). The paper runs thousands of steps of 16 samples on every weight of Qwen2.5-VL-7B."
)
VLM_MEASURED = ("519 held-out scene questions (90 scenes): accuracy 0.975 before, 0.973 after, change -0.0019 (95 % "
                "paired bootstrap interval -0.0173 to +0.0154). ")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: " + VLM_MEASURED
                   + VLM_CAUSE)
def test_vlm_perception_change_after_jigsaw_post_training(record_claim) -> None:
    from backend import weights
    from backend.scenes.jigsaw.vlm import VLM_COMMAND, VLM_FILE

    v = J.run_vlm(J.VLMConfig(recheck_scenes=CI_QA_SCENES))
    _, meta = weights.load(VLM_FILE, made_by=VLM_COMMAND)
    n = v.recheck["questions"]
    assert v.recheck["before"] == meta.extra["qa_before"][:n]
    assert v.recheck["after"] == meta.extra["qa_after"][:n]
    _record_vlm(v, record_claim, recheck_questions=n)
    assert v.recorded["qa_questions"] >= 500
    assert v.recorded["qa_change_ci"][0] > 0


@pytest.mark.full
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: re-answered in full, "
                   + VLM_MEASURED + VLM_CAUSE)
def test_full_vlm_perception_change(record_claim) -> None:
    v = J.run_vlm(J.VLMConfig(recheck_scenes=v_scenes()))
    ci = paired_bootstrap(lambda a, b: float(np.mean(a) - np.mean(b)), v.recheck["after"], v.recheck["before"])
    _record_vlm(v, record_claim, recheck_change=round(ci.mean, 4), recheck_change_ci=[round(ci.low, 4),
                                                                                         round(ci.high, 4)])
    assert v.recheck["questions"] >= 500
    assert ci.low > 0


def v_scenes() -> int:
    from backend import weights
    from backend.scenes.jigsaw.vlm import VLM_COMMAND, VLM_FILE

    _, meta = weights.load(VLM_FILE, made_by=VLM_COMMAND)
    return int(meta.quality["qa_scenes"])
