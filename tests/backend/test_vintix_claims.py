"""Claims of Vintix II / DPT on the shipped models (``python -m backend.train vintix``), on held-out task priors.

ci tier (one ``backend.icrl.vintix.claims.measure`` call for the module, 64 held-out tasks per measurement, context 64,
horizon 64, seed 0): the mean policy entropy on held-out K-armed tasks decreases with context length (0, 4, 16, 64)
and the flow head's sample entropy on held-out bimodal tasks is lower at 64 tuples than at none; on held-out bimodal
tasks the flow head puts more mass within +-0.1 of a peak than the Gaussian head and at least as much as the mixture
head; online on held-out K-armed tasks the DPT's regret is at most 1.5x the strongest baseline's (UCB1, Thompson
sampling with the held-out prior, Algorithm Distillation) and below AD's; online on held-out continuous bandits the
flow-head DPT acting by posterior sampling has at most 1.5x the regret of the strongest baseline (GP-UCB, discretised
Thompson sampling); in the dark room on held-out goals the DPT's return exceeds AD's. Every comparison is paired over
tasks (runs for the dark room) with a 95 % interval (``backend.stats.paired_ci``). Outputs are unchanged (<= 1e-6)
when the context is shuffled (an invariant of the mask, not a claim).
full tier: the same on 256 tasks per measurement and seeds 1, 2, 3, pooled over the 768 paired tasks (horizon 128
for the online runs, past the 64-tuple context: FIFO).
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


XFAIL_CONT = (
    "Measured on 64 held-out continuous bandits (two equal peaks, widths 0.05-0.09), horizon 64, paired over tasks: "
    "cumulative regret flow-head DPT 15.49, GP-UCB 3.21 (the strongest), discretised Thompson sampling 12.87, "
    "mixture-head DPT 12.97, Gaussian-head DPT 15.08, uniform actions 42.16; gain = 1.5 x GP-UCB - DPT = -10.68, "
    "95 % interval [-12.64, -8.71]. Cause: the DPT's posterior sampling does not concentrate on its own history: its "
    "regret per round over the last 16 rounds is 0.165 (GP-UCB 0.008, uniform 0.654), no better than discretised "
    "Thompson sampling's 0.133. It was pretrained on contexts of a demonstrator (noise rising to uniform) or uniform "
    "actions, labelled with the optimum, never on its own sampling histories, and the held-out peaks are narrower "
    "than any training peak; GP-UCB knows the held-out length scale and prior."
)
XFAIL_DARK = (
    "Measured in the 5x5 dark room on the 5 held-out goals x 8 runs, 5 episodes of 12 steps: total return DPT 6.43, "
    "Algorithm Distillation 16.00, posterior sampling over the goal 40.65, random walk 2.20 (optimal 10.4 per "
    "episode); DPT - AD = -9.58, 95 % interval [-13.96, -5.19] over 40 paired runs. Cause: the DPT does not "
    "generalise to goals it never saw as targets: on 20 training goals x 2 runs the same agents collect DPT 25.95, "
    "AD 33.90 (last episode 6.97 and 9.25 of 10.65). The DPT's head maps the context to the optimal action towards a "
    "goal and was supervised on 20 goal cells only; AD imitates a goal-agnostic search (rule out visited cells, "
    "return to the rewarded one) that carries over to unseen cells. DPT's Dark Room trains on 80 of 100 goals."
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
        final=r["final"], sem=r["sem"], at_horizons=r["at_horizons"], ratio_dpt_thompson=r["ratio_dpt_thompson"],
        ratio_dpt_ucb=r["ratio_dpt_ucb"], ratio_dpt_ad=r["ratio_dpt_ad"], strongest=r["strongest"], gain=r["gain"],
        gain_ci=r["gain_ci"], gain_pairs=r["gain_pairs"],
    )
    assert r["gain"] > 0, r  # DPT <= 1.5 x the strongest baseline, on average over the paired tasks


def _vs_ad(record_claim, m) -> None:
    r = m["regret"]
    record_claim(final=r["final"], ratio_dpt_ad=r["ratio_dpt_ad"], gain_vs_ad=r["gain_vs_ad"],
                 gain_vs_ad_ci=r["gain_vs_ad_ci"], gain_vs_ad_pairs=r["gain_vs_ad_pairs"])
    assert r["gain_vs_ad"] > 0, r


def _cont(record_claim, m) -> None:
    c = m["cont_online"]
    record_claim(final=c["final"], sem=c["sem"], late_regret_per_round=c["late_regret_per_round"],
                 strongest=c["strongest"], gain=c["gain"], gain_ci=c["gain_ci"], gain_pairs=c["gain_pairs"])
    assert c["gain"] > 0, c


def _dark(record_claim, m) -> None:
    d = m["dark"]
    record_claim(total=d["total"], returns=d["returns"], optimal_per_episode=d["optimal_per_episode"],
                 gain_vs_ad=d["gain_vs_ad"], gain_vs_ad_ci=d["gain_vs_ad_ci"], gain_vs_ad_pairs=d["gain_vs_ad_pairs"],
                 gain_vs_psrl=d["gain_vs_psrl"])
    assert d["gain_vs_ad"] > 0, d


def _pooled(full, part: str, key: str, ours: str, other: str | None, scale: float = 1.0) -> dict:
    """Paired interval over the tasks of every full-tier seed: ``scale x other - ours`` (regret) or ``ours - other``
    (dark-room return); ``other=None``: the strongest baseline of each seed."""
    from backend.stats import paired_ci

    a, b = [], []
    for m in full:
        per = m[part][key]
        o = other or m[part]["strongest"]
        if part == "dark":
            a += per[ours]
            b += per[o]
        else:
            a += [scale * x for x in per[o]]
            b += per[ours]
    return paired_ci(a, b).numbers("gain" if other is None else f"gain_vs_{other}")


def test_entropy_decreases_with_context_ci(ci, record_claim) -> None:
    _entropy(record_claim, ci)


def test_flow_head_more_mass_near_peaks_than_gaussian_ci(ci, record_claim) -> None:
    _peaks(record_claim, ci, "gaussian")


@pytest.mark.xfail(strict=True, reason=XFAIL_MIXTURE)
def test_flow_head_mass_near_peaks_at_least_mixture_ci(ci, record_claim) -> None:
    _peaks(record_claim, ci, "mixture")


def test_online_regret_vs_strongest_baseline_ci(ci, record_claim) -> None:
    _regret(record_claim, ci)


def test_online_regret_below_algorithm_distillation_ci(ci, record_claim) -> None:
    _vs_ad(record_claim, ci)


@pytest.mark.xfail(strict=True, reason=XFAIL_CONT)
def test_continuous_online_regret_vs_strongest_baseline_ci(ci, record_claim) -> None:
    _cont(record_claim, ci)


@pytest.mark.xfail(strict=True, reason=XFAIL_DARK)
def test_dark_room_return_above_algorithm_distillation_ci(ci, record_claim) -> None:
    _dark(record_claim, ci)


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
@pytest.mark.timeout(3600)  # 3 seeds x 256 tasks, horizon 128, every agent
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
@pytest.mark.timeout(3600)  # 3 seeds x 256 tasks, horizon 128, every agent
def test_flow_head_more_mass_near_peaks_than_gaussian_full(full, record_claim) -> None:
    record_claim(
        per_seed={str(m["seed"]): {"peak_mass": m["peak_mass"], "minor_peak_mass": m["minor_peak_mass"]} for m in full}
    )
    for m in full:
        assert m["peak_mass"]["flow"] > m["peak_mass"]["gaussian"], m["peak_mass"]


@pytest.mark.full
@pytest.mark.timeout(3600)  # 3 seeds x 256 tasks, horizon 128, every agent
@pytest.mark.xfail(strict=True, reason="as the ci subset: " + XFAIL_MIXTURE)
def test_flow_head_mass_near_peaks_at_least_mixture_full(full, record_claim) -> None:
    record_claim(per_seed={str(m["seed"]): {"peak_mass": m["peak_mass"]} for m in full})
    for m in full:
        assert m["peak_mass"]["flow"] >= m["peak_mass"]["mixture"], m["peak_mass"]


@pytest.mark.full
@pytest.mark.timeout(3600)  # 3 seeds x 256 tasks, horizon 128, every agent
def test_online_regret_vs_strongest_baseline_full(full, record_claim) -> None:
    pooled = _pooled(full, "regret", "per_task", "dpt", None, 1.5)
    record_claim(
        per_seed={str(m["seed"]): {k: m["regret"][k] for k in ("final", "strongest", "gain", "gain_ci", "at_horizons")}
                  for m in full},
        **pooled,
    )
    assert pooled["gain"] > 0, pooled


@pytest.mark.full
@pytest.mark.timeout(3600)  # 3 seeds x 256 tasks, horizon 128, every agent
def test_online_regret_below_algorithm_distillation_full(full, record_claim) -> None:
    pooled = _pooled(full, "regret", "per_task", "dpt", "ad")
    record_claim(per_seed={str(m["seed"]): {"final": m["regret"]["final"]} for m in full}, **pooled)
    assert pooled["gain_vs_ad"] > 0, pooled


@pytest.mark.full
@pytest.mark.timeout(3600)  # 3 seeds x 256 tasks, horizon 128, every agent
@pytest.mark.xfail(strict=True, reason="as the ci subset: " + XFAIL_CONT)
def test_continuous_online_regret_vs_strongest_baseline_full(full, record_claim) -> None:
    pooled = _pooled(full, "cont_online", "per_task", "dpt_flow", None, 1.5)
    record_claim(per_seed={str(m["seed"]): {"final": m["cont_online"]["final"]} for m in full}, **pooled)
    assert pooled["gain"] > 0, pooled


@pytest.mark.full
@pytest.mark.timeout(3600)  # 3 seeds x 256 tasks, horizon 128, every agent
@pytest.mark.xfail(strict=True, reason="as the ci subset: " + XFAIL_DARK)
def test_dark_room_return_above_algorithm_distillation_full(full, record_claim) -> None:
    pooled = _pooled(full, "dark", "per_run", "dpt", "ad")
    record_claim(per_seed={str(m["seed"]): {"total": m["dark"]["total"]} for m in full}, **pooled)
    assert pooled["gain_vs_ad"] > 0, pooled
