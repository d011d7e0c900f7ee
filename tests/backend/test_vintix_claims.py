"""Claims of Vintix II / DPT on the shipped models (``python -m backend.train vintix``), on held-out task priors.

ci tier (one ``backend.icrl.vintix.claims.measure`` call for the module, 64 held-out tasks per measurement, context 64,
horizon 64, seed 0): the mean policy entropy on held-out K-armed tasks decreases with context length (0, 4, 16, 64)
and the flow head's sample entropy on held-out bimodal tasks is lower at 64 tuples than at none; on held-out bimodal
tasks the flow head puts more mass within +-0.1 of a peak than the Gaussian head and at least as much as the mixture
head; the DPT's online regret on held-out K-armed tasks is at most 1.5x Thompson sampling's; outputs are unchanged
(<= 1e-6) when the context is shuffled.
full tier: the same on 256 tasks per measurement and seeds 1, 2, 3 (horizon 128 for the regret, past the context:
FIFO).
"""

from __future__ import annotations

import pytest

XFAIL_MIXTURE = (
    "Measured on 64 held-out bimodal tasks (64 uniform context tuples, 256 samples): mass within 0.1 of a peak "
    "flow 0.750, Gaussian 0.342, mixture 0.813; on training-prior tasks 0.844, 0.688, 0.862. Where the flow head "
    "loses mass: 0.186 of its samples fall between the two peaks (mixture 0.112, Gaussian 0.468) and 0.064 outside "
    "them (mixture 0.075). The held-out peaks are narrower (width 0.05-0.09 against 0.10-0.25 in training) and of "
    "equal height: the velocity net, whose field must split the noise between two modes and narrow each near t = 1, "
    "extrapolates that shift less well than the mixture head's explicit means and widths. More Heun steps do not close the gap "
    "(M = 8 / 16 / 32 / 64: 0.699 / 0.750 / 0.761 / 0.763), and refitting only the heads on the frozen trunks for "
    "1,000 more continuous-task steps raises the mixture head further (0.853) while the flow head reads 0.728 after "
    "200 of them."
)


@pytest.fixture(scope="module")
def ci():
    from backend.icrl.vintix.claims import measure

    return measure(n_tasks=64, context=64, horizon=64, seed=0)


def _entropy(record_claim, m) -> None:
    e = m["entropy"]
    record_claim(
        entropy_at=e["at"],
        p_best_last=e["p_best_last"],
        uniform_entropy=e["uniform"],
        cont_lengths=e["cont_lengths"],
        cont_entropy=e["cont_entropy"],
    )
    vals = list(e["at"].values())
    assert all(a > b for a, b in zip(vals, vals[1:], strict=False)), e["at"]
    assert e["cont_entropy"][-1] < e["cont_entropy"][0]


def _peaks(record_claim, m, against: str) -> None:
    pm = m["peak_mass"]
    record_claim(peak_mass=pm, minor_peak_mass=m["minor_peak_mass"])
    if against == "gaussian":
        assert pm["flow"] > pm["gaussian"], pm
    else:
        assert pm["flow"] >= pm["mixture"], pm


def _regret(record_claim, m) -> None:
    r = m["regret"]
    record_claim(
        final=r["final"], sem=r["sem"], ratio_dpt_thompson=r["ratio_dpt_thompson"], ratio_dpt_ucb=r["ratio_dpt_ucb"]
    )
    assert r["ratio_dpt_thompson"] <= 1.5, r


def test_entropy_decreases_with_context_ci(ci, record_claim) -> None:
    _entropy(record_claim, ci)


def test_flow_head_more_mass_near_peaks_than_gaussian_ci(ci, record_claim) -> None:
    _peaks(record_claim, ci, "gaussian")


@pytest.mark.xfail(strict=True, reason=XFAIL_MIXTURE)
def test_flow_head_mass_near_peaks_at_least_mixture_ci(ci, record_claim) -> None:
    _peaks(record_claim, ci, "mixture")


def test_online_regret_vs_thompson_ci(ci, record_claim) -> None:
    _regret(record_claim, ci)


def test_permutation_invariance_of_the_shipped_model(ci, record_claim) -> None:
    inv, inv32 = ci["invariance"], ci["invariance_float32"]
    record_claim(
        max_abs_change_float64=inv["max"],
        max_abs_change_float32=inv32["max"],
        per_family_float64={k: inv[k] for k in ("karm", "cont", "dark")},
    )
    assert inv["max"] <= 1e-6, inv
    assert inv32["max"] <= 1e-4, inv32  # float32 summation order only


@pytest.fixture(scope="module")
def full():
    from backend.icrl.vintix.claims import measure

    return [measure(n_tasks=256, context=64, horizon=128, seed=s) for s in (1, 2, 3)]


@pytest.mark.full
def test_entropy_decreases_with_context_full(full, record_claim) -> None:
    record_claim(
        per_seed={
            str(m["seed"]): {"entropy_at": m["entropy"]["at"], "cont_entropy": m["entropy"]["cont_entropy"]}
            for m in full
        }
    )
    for m in full:
        vals = list(m["entropy"]["at"].values())
        assert all(a > b for a, b in zip(vals, vals[1:], strict=False)), m["entropy"]["at"]
        assert m["entropy"]["cont_entropy"][-1] < m["entropy"]["cont_entropy"][0]


@pytest.mark.full
def test_flow_head_more_mass_near_peaks_than_gaussian_full(full, record_claim) -> None:
    record_claim(
        per_seed={str(m["seed"]): {"peak_mass": m["peak_mass"], "minor_peak_mass": m["minor_peak_mass"]} for m in full}
    )
    for m in full:
        assert m["peak_mass"]["flow"] > m["peak_mass"]["gaussian"], m["peak_mass"]


@pytest.mark.full
@pytest.mark.xfail(strict=True, reason="as the ci subset: " + XFAIL_MIXTURE)
def test_flow_head_mass_near_peaks_at_least_mixture_full(full, record_claim) -> None:
    record_claim(per_seed={str(m["seed"]): {"peak_mass": m["peak_mass"]} for m in full})
    for m in full:
        assert m["peak_mass"]["flow"] >= m["peak_mass"]["mixture"], m["peak_mass"]


@pytest.mark.full
def test_online_regret_vs_thompson_full(full, record_claim) -> None:
    record_claim(
        per_seed={
            str(m["seed"]): {"final": m["regret"]["final"], "ratio_dpt_thompson": m["regret"]["ratio_dpt_thompson"]}
            for m in full
        }
    )
    for m in full:
        assert m["regret"]["ratio_dpt_thompson"] <= 1.5, m["regret"]
