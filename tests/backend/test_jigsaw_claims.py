"""Claims of the Visual Jigsaw page, re-evaluated on the shipped weights (``python -m backend.train jigsaw``).

Policy (a): Plackett-Luce tile policies, 3 seeds x {graded, binary} x {2 x 2, 3 x 3}, 600 GRPO steps each (16 puzzles x
16 samples per step) on 400 procedural training scenes; seed s gives both rewards the same initial weights, images
and shuffles. Scored by the greedy answer on fixed puzzles (each image under 4 fixed shuffles): held-out scenes (all 128
images, 512 puzzles, in both tiers; the full tier adds the 2 x 2 comparison) and scikit-image photographs (another
source; ci: the first 25 crops, full: 200). Claim: at 3 x 3 the graded reward reaches a higher exact-solve rate than the binary one at the same step
budget (paired 95 % t interval over the seeds).

Policy (b): the tiny VLM post-trained with GRPO on 2 x 2 jigsaws (``python -m backend.train jigsaw --part vlm``; its
file records the held-out jigsaw numbers per puzzle and the scene-question answers before and after). Claims: the
post-training teaches the jigsaw (held-out scene puzzles, and photograph puzzles as a second source: solve rate
after minus before with a paired 95 % t interval over puzzles, and p(true order) after against chance 1/24); the
perception change on at least 500 held-out scene questions (paired bootstrap interval over questions). The ci tier
re-scores the first 6 puzzles of each source and re-answers the questions of the first 2 scenes with both models and
checks them against the record; the full tier re-scores and re-answers all of them.
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
CI_PUZZLES = 6  # held-out puzzles per source re-scored by both models in the ci tier (the record holds 100 + 60)


@pytest.fixture(scope="module")
def vlm_pair():  # noqa: ANN201
    """(base VLM, post-trained VLM, the shipped file's metadata)."""
    from backend import weights
    from backend.scenes.jigsaw.vlm import VLM_COMMAND, VLM_FILE, load_base, load_post_trained

    base = load_base()
    _, meta = weights.load(VLM_FILE, made_by=VLM_COMMAND)
    return base, load_post_trained(base), meta


def _rescore(vlm_pair, source: str, count: int) -> None:  # noqa: ANN001
    """Both models re-score the first ``count`` held-out puzzles of ``source``: the same exact solves and
    probabilities of the true order as the record."""
    from backend.scenes.jigsaw import vlm as V

    base, post, meta = vlm_pair
    for model, key in ((base, "jigsaw_before"), (post, "jigsaw_after")):
        sc = V.JigsawScorer(model)
        m = V.jigsaw_metrics(sc, *V.puzzle_tokens(sc, source, count))
        rec = meta.extra[key][source]
        if m["exact"] != rec["exact"][:count] or not np.allclose(m["p_true"], rec["p_true"][:count], atol=2e-3):
            # not an AssertionError: a strict xfail of the claim must not hide a record that does not reproduce
            raise RuntimeError(f"{key} {source}: re-scored {m} != recorded")


def _record_jigsaw(meta, source: str, record_claim) -> dict:  # noqa: ANN001
    d = meta.quality["jigsaw"][source]
    e, p, r = d["exact"], d["p_true"], d["p_true_after_vs_chance"]
    record_claim(puzzles=e["n"], solve_before=e["before"], solve_after=e["after"], solve_gain=e["change"],
                 solve_gain_ci=e["change_ci"], solve_gain_pairs=e["n"], p_true_before=p["before"],
                 p_true_after=p["after"], p_true_over_chance=r["gain"], p_true_over_chance_ci=r["gain_ci"],
                 expected_reward_before=d["reward"]["before"], expected_reward_after=d["reward"]["after"],
                 steps=meta.quality["training"]["steps"], lora_rank=meta.quality["training"]["lora_rank"])
    return d


def _learns(vlm_pair, source: str, count: int, record_claim) -> None:  # noqa: ANN001
    _rescore(vlm_pair, source, count)
    d = _record_jigsaw(vlm_pair[2], source, record_claim)
    assert d["exact"]["change"] > 0 and d["p_true_after_vs_chance"]["gain"] > 0


def test_vlm_learns_the_2x2_jigsaw(vlm_pair, record_claim) -> None:  # noqa: ANN001
    _learns(vlm_pair, "scenes_val", CI_PUZZLES, record_claim)


def test_vlm_learns_the_2x2_jigsaw_on_photos(vlm_pair, record_claim) -> None:  # noqa: ANN001
    _learns(vlm_pair, "photos", CI_PUZZLES, record_claim)


@pytest.mark.full
def test_full_vlm_learns_the_2x2_jigsaw(vlm_pair, record_claim) -> None:  # noqa: ANN001
    """Every recorded held-out scene puzzle re-scored by both models."""
    from backend.scenes.jigsaw.vlm import EVAL_COUNTS

    _learns(vlm_pair, "scenes_val", EVAL_COUNTS["scenes_val"], record_claim)


@pytest.mark.full
def test_full_vlm_learns_the_2x2_jigsaw_on_photos(vlm_pair, record_claim) -> None:  # noqa: ANN001
    from backend.scenes.jigsaw.vlm import EVAL_COUNTS

    _learns(vlm_pair, "photos", EVAL_COUNTS["photos"], record_claim)


VLM_CAUSE = (
    "Cause: GRPO at learning rate 1e-3 with no KL term (the paper: 1e-6 on a 7B model) on the LoRA adapters of the "
    "language model that also answers the questions; the projector is frozen (training it too at 1e-3 for 300 steps "
    "cut the accuracy to 0.366, the projector's drift doing most of the damage). The jigsaw is learned only a little: "
    "held-out scene solve rate 0.000 -> 0.070 (100 puzzles; chance 1/24 = 0.042), p(true order) 0.029 -> 0.075; "
    "photographs 0.000 -> 0.083. The paper's perception gain comes from a model that learns the jigsaw well, with a "
    "small learning rate over many more steps."
)
VLM_MEASURED = ("519 held-out scene questions (90 scenes): accuracy 0.975 before, 0.730 after, change -0.245 (95 % "
                "paired bootstrap interval -0.285 to -0.206). ")


def _record_vlm(v: J.VLMResult, record_claim, **more) -> None:  # noqa: ANN001
    q = v.recorded
    record_claim(qa_questions=q["qa_questions"], accuracy_before=q["qa_accuracy_before"],
                 accuracy_after=q["qa_accuracy_after"], change=q["qa_change"], change_ci=q["qa_change_ci"],
                 jigsaw_solve_before=q["jigsaw_solve_before"], jigsaw_solve_after=q["jigsaw_solve_after"], **more)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: " + VLM_MEASURED
                   + VLM_CAUSE)
def test_vlm_perception_change_after_jigsaw_post_training(vlm_pair, record_claim) -> None:  # noqa: ANN001
    base, _post, meta = vlm_pair
    v = J.run_vlm(J.VLMConfig(recheck_scenes=CI_QA_SCENES), vlm=base)
    n = v.recheck["questions"]
    if v.recheck["before"] != meta.extra["qa_before"][:n] or v.recheck["after"] != meta.extra["qa_after"][:n]:
        raise RuntimeError(f"re-answered questions differ from the record: {v.recheck}")
    _record_vlm(v, record_claim, recheck_questions=n)
    assert v.recorded["qa_questions"] >= 500
    assert v.recorded["qa_change"] > 0


@pytest.mark.full
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="Does not hold on our miniature: re-answered in full, "
                   + VLM_MEASURED + VLM_CAUSE)
def test_full_vlm_perception_change(vlm_pair, record_claim) -> None:  # noqa: ANN001
    base, _post, meta = vlm_pair
    v = J.run_vlm(J.VLMConfig(recheck_scenes=int(meta.quality["qa_scenes"])), vlm=base)
    ci = paired_bootstrap(lambda a, b: float(np.mean(a) - np.mean(b)), v.recheck["after"], v.recheck["before"])
    _record_vlm(v, record_claim, recheck_change=round(ci.mean, 4), recheck_change_ci=[round(ci.low, 4),
                                                                                         round(ci.high, 4)])
    assert v.recheck["questions"] >= 500
    assert ci.mean > 0
