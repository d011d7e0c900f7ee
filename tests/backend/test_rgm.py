"""Claims of RGM's SPRM on the shipped tiny reasoner and heads (``python -m backend.train rgm``).

ci tier: the page's first preset (40 unseen problems of 5-8 operations, 16 samples each at temperature 0.8, read
from the T1 page's shipped candidate cache; the heads trained on other problems, generator seed 100): the
first-wrong-step AUROC of the SPR heads against the plain-BCE heads (three training seeds each, paired over seeds),
best-of-8 with the SPRM against majority vote, and the geometric mean against the product on all traces and on
traces of one length. full tier: the held-out phrasings and 120 problems.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.reasoning.rgm import jobs as J
from backend.reasoning.rgm.inputs import PRESETS
from backend.stats import paired_ci


@pytest.fixture(scope="module")
def result():
    from backend.models.tinyreasoner import load_tinyreasoner
    from backend.reasoning.candidates import CandidateCache
    from backend.reasoning.t1.jobs import CACHE_FILE

    cfg = J.EvalConfig(**PRESETS[next(iter(PRESETS))])
    return J.run_eval(cfg, load_tinyreasoner(), J.load_heads(), CandidateCache(CACHE_FILE))


def _auc(res, loss):
    return np.array([res.locate_auroc[f"{loss}_s{s}"] for s in J.SEEDS])


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature: on the reasoner's wrong traces of 40 unseen problems of 5-8 operations x 16 "
    "samples the SPR heads locate the first wrong step with AUROC 0.449 / 0.551 / 0.471 (seeds 0, 1, 2), the "
    "plain-BCE heads with 0.497 / 0.504 / 0.502: both at chance, SPR minus BCE -0.011 [-0.136, +0.114] over seeds"))
def test_spr_locates_the_first_wrong_step_better_than_bce(result, record_claim) -> None:
    spr, bce = _auc(result, "spr"), _auc(result, "bce")
    ci = paired_ci(spr, bce)
    record_claim(**{f"auroc_{k}": v for k, v in result.locate_auroc.items()}, **ci.numbers("spr_minus_bce"),
                 spr_mean=float(spr.mean()), bce_mean=float(bce.mean()))
    assert spr.mean() > bce.mean() and spr.min() > 0.5


@pytest.mark.xfail(strict=True, reason=(
    "Does not hold on our miniature: best-of-8 with the SPR head (geometric mean) 0.718 against majority vote 0.781 "
    "on the same traces (40 problems of 5-8 operations, pass@1 0.722, oracle 0.906; SPRM minus majority -0.063, 95 % "
    "interval [-0.132, +0.007] over problems); the head ranks right and wrong traces of a problem apart less well "
    "than agreement between samples does"))
def test_sprm_best_of_8_against_majority_vote(result, record_claim) -> None:
    i = result.ks.index(8)
    pp = result.per_problem
    ci = paired_ci(np.array(pp["geometric"]), np.array(pp["majority"]))
    record_claim(**{f"{k}_best_of_8": v[i] for k, v in result.bon.items()}, pass_at_1=result.pass_at_1,
                 **ci.numbers("sprm_minus_majority"))
    assert ci.mean > 0, ci


def test_geometric_mean_against_product_with_and_without_length_variation(result, record_claim) -> None:
    rows = list(result.by_length.values())
    ci = paired_ci(np.array(result.per_problem["geometric"]), np.array(result.per_problem["product"]))
    record_claim(all_geometric=rows[0]["geometric"], all_product=rows[0]["product"],
                 **({"matched_geometric": rows[1]["geometric"], "matched_product": rows[1]["product"]}
                    if len(rows) > 1 else {}), length_correlation=result.length_correlation,
                 **ci.numbers("geometric_minus_product"))
    assert ci.mean > 0, ci


def test_one_length_product_ranks_as_the_geometric_mean(result) -> None:
    """On traces of one length the product is a power of the geometric mean: the same choices (an invariant)."""
    rows = list(result.by_length.values())
    if len(rows) > 1:
        assert rows[1]["geometric"] == pytest.approx(rows[1]["product"])


def test_eval_result_is_consistent(result) -> None:
    assert set(result.locate_auroc) == {f"{loss}_s{s}" for loss in ("spr", "bce") for s in J.SEEDS}
    for v in result.bon.values():
        assert all(0 <= x <= 1 for x in v)
    k = result.config["k"]
    for name, v in result.per_problem.items():  # per-problem values average to the pooled ones
        pooled = result.bon[name][result.ks.index(k)] if name == "majority" else result.by_length["all traces"][name]
        assert np.mean(v) == pytest.approx(pooled, abs=2e-3 if name != "majority" else 0.05)
    assert all(result.bon["oracle"][j] >= result.bon[k][j] - 1e-9 for k in result.bon for j in range(len(result.ks)))


@pytest.mark.full
def test_full_spr_against_bce_on_held_out_phrasings(record_claim) -> None:
    from backend.models.tinyreasoner import load_tinyreasoner

    res = J.run_eval(J.EvalConfig(split="grammar_paraphrase", problems=120, n=16, problem_seed=3),
                     load_tinyreasoner(), J.load_heads())
    spr, bce = _auc(res, "spr"), _auc(res, "bce")
    record_claim(**{f"auroc_{k}": v for k, v in res.locate_auroc.items()}, **paired_ci(spr, bce).numbers(
        "spr_minus_bce"), **{f"{k}_best_of_8": v[res.ks.index(8)] for k, v in res.bon.items()})
    assert spr.mean() > bce.mean()
