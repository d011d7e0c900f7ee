"""Claims of CatalystBench on the element miniature.

ci tier: the per-seed test metrics of the shipped checkpoints (``python -m backend.train catalystbench``: 5 seeds per
method), recorded in each file at training from the float16 weights that ship (tests/backend/test_catalystbench.py
re-evaluates every method's seed 0 on the ci subset of test elements and checks the stored predictions); the paired
comparisons of the claims with 95 % t intervals over the seeds, with gradient boosting (and the regex extractor) and
MST reported beside them. full tier: every method x seed re-evaluated from the checkpoints on every test row.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.data.catalystbench import jobs as J
from backend.stats import paired_ci

REGRESSION = ("electronegativity", "log_density", "covalent_radius")


@pytest.fixture(scope="module")
def res():
    return J.run_benchmark(J.BenchmarkConfig())


def test_mft_regression_r2_against_ft(res, record_claim) -> None:  # noqa: ANN001
    per = {}
    for t in REGRESSION:
        mft, ft = np.array(res.scores["mft"][t]), np.array(res.scores["ft"][t])
        ci = paired_ci(mft, ft)
        per[t] = ci
        record_claim(**{f"{t}_mft": mft.tolist(), f"{t}_ft": ft.tolist(), f"{t}_gb_mean": res.mean("gb", t),
                        f"{t}_mst_mean": res.mean("mst", t)}, **ci.numbers(f"{t}_gain"))
    assert all(ci.mean > 0 for ci in per.values())


def test_mft_average_against_st(res, record_claim) -> None:  # noqa: ANN001
    mft, st = np.array(res.scores["mft"]["average"]), np.array(res.scores["st"]["average"])
    ci = paired_ci(mft, st)
    record_claim(mft_average=mft.tolist(), st_average=st.tolist(), relative_gain=float(mft.mean() / st.mean() - 1)
                 if st.mean() > 0 else None, mst_average_mean=res.mean("mst", "average"),
                 ft_average_mean=res.mean("ft", "average"), gb_regex_average_mean=res.mean("gb", "average"),
                 **ci.numbers("gain"))
    assert ci.mean > 0


@pytest.mark.xfail(strict=True, reason=(
    "MFT's average (0.387 over 5 seeds) beats ST (+0.265 [0.192, 0.338]) and FT (+0.248 [0.179, 0.317]) but not MST "
    "(0.500; MFT - MST -0.113 [-0.184, -0.042]). Diagnosed by an ablation on seeds 0-2 with the LoRA frozen (learning "
    "rate 0) in both: heads trained MFT-style on mixed-task batches reach a head-task mean of "
    "0.25-0.27, MST-style on whole-task batches 0.43-0.46, and dropping MFT's text loss (w_text = 0) leaves it at "
    "0.27-0.34: the gap comes from optimising each head on the 2-3 rows of its task in every mixed batch of 16 for 3 "
    "epochs, not from sharing the adapter or from the composite loss."))
def test_mft_average_against_every_other_strategy(res, record_claim) -> None:  # noqa: ANN001
    mft = np.array(res.scores["mft"]["average"])
    out, cis = {}, {}
    for other in ("st", "mst", "ft"):
        ci = paired_ci(mft, np.array(res.scores[other]["average"]))
        cis[other] = ci
        out.update(ci.numbers(f"gain_over_{other}"))
    record_claim(mft_average_mean=float(mft.mean()), **{f"{o}_average_mean": res.mean(o, "average")
                                                       for o in ("st", "mst", "ft", "gb")}, **out)
    assert all(ci.mean > 0 for ci in cis.values())


@pytest.mark.full
@pytest.mark.timeout(3600)
def test_full_reevaluation_reproduces_the_recorded_metrics(res, record_claim) -> None:  # noqa: ANN001
    again = J.run_benchmark(J.BenchmarkConfig(source="reevaluate"))
    worst = 0.0
    for m in J.METHOD_NAMES:
        for t, vals in res.scores[m].items():
            worst = max(worst, float(np.max(np.abs(np.array(vals) - np.array(again.scores[m][t])))))
    mft, ft = again.scores["mft"], again.scores["ft"]
    record_claim(max_abs_difference=worst, **{f"{t}_gain": float(np.mean(np.array(mft[t]) - np.array(ft[t])))
                                              for t in REGRESSION})
    assert worst <= 0.02
    assert all(np.mean(np.array(mft[t]) - np.array(ft[t])) > 0 for t in REGRESSION)
