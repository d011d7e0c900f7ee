"""Dual randomized smoothing: CERTIFY invariants, the dual composition, data validation, and the paper's two claims."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import norm

from backend.errors import InputError
from backend.robustness.dualrs import attack, data2d
from backend.robustness.dualrs import dualrs as dr


class Linear(dr.MLP):
    """A fixed linear classifier: class 1 iff x . w > b (its exact smoothed vote is Phi((x . w - b) / sigma))."""

    def __init__(self, w=(1.0, 0.0), b: float = 0.0) -> None:
        super().__init__(2, hidden=2, depth=1)
        self.w = torch.tensor(w) / torch.tensor(w).norm()
        self.b = b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x @ self.w - self.b
        return torch.stack([-s, s], -1)


class Constant(dr.MLP):
    def __init__(self, classes: int, c: int) -> None:
        super().__init__(classes, hidden=2, depth=1)
        self.c = c

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(x.shape[0], self.classes)
        out[:, self.c] = 1.0
        return out


def test_clopper_pearson_and_constant_classifier_radius() -> None:
    lcb = dr.lower_confidence_bound(np.array([0, 50, 100]), 100, 0.001)
    assert lcb[0] == 0 and 0 < lcb[1] < 0.5 and lcb[2] == pytest.approx(0.001 ** (1 / 100))
    gen = torch.Generator().manual_seed(0)
    c = dr.certify(Constant(3, 2), np.zeros((4, 2), np.float32), 0.5, 10, 1000, 0.001, gen)
    assert (c.pred == 2).all()
    np.testing.assert_allclose(c.radius, 0.5 * norm.ppf(0.001 ** (1 / 1000)))


def test_certify_is_sound_for_a_linear_classifier() -> None:
    """The certified radius never exceeds the true distance to the decision boundary (the exact robust radius)."""
    gen = torch.Generator().manual_seed(1)
    x = np.stack([np.linspace(-1.5, 1.5, 61), np.zeros(61)], 1).astype(np.float32)
    c = dr.certify(Linear(), x, 0.5, 100, 5000, 0.001, gen)
    dist = np.abs(x[:, 0])
    assert (c.radius <= dist + 1e-9).all()
    far = dist > 0.3
    assert (c.pred[far] == (x[far, 0] > 0)).all()
    assert np.all(c.radius[dist > 1.0] > 0.8 * dist[dist > 1.0])  # and is not uselessly loose


def test_dual_certify_composition() -> None:
    gen = torch.Generator().manual_seed(2)
    x = np.array([[2.0, 0.0], [-2.0, 0.0], [0.05, 0.0]], np.float32)
    experts = [Linear(), Linear()]
    # estimator always picks sigma index 1: R_sigma is the constant-vote radius at alpha/2
    d = dr.dual_certify(Constant(2, 1), experts, [0.25, 0.5], 0.5, x, dr.CertifyConfig(n=4000), gen)
    assert (d.sigma_idx == 1).all()
    np.testing.assert_allclose(d.r_sigma, 0.5 * norm.ppf((0.001 / 2) ** (1 / 4000)))
    ok = d.pred != dr.ABSTAIN
    np.testing.assert_allclose(d.radius[ok], np.minimum(d.r_sigma, d.r_c)[ok])
    assert d.pred[0] == 1 and d.pred[1] == 0
    # an estimator that cannot decide makes dual RS abstain
    flip = Linear(w=(0.0, 1.0))
    d2 = dr.dual_certify(flip, experts, [0.25, 0.5], 0.5, np.zeros((2, 2), np.float32), dr.CertifyConfig(n=2000), gen)
    assert (d2.pred == dr.ABSTAIN).all() and (d2.radius == 0).all()


def test_registry_and_config_errors() -> None:
    assert set(dr.METHODS) == {"global", "dual"}
    with pytest.raises(ValueError, match="global, dual"):
        dr.get_method("bogus")
    with pytest.raises(InputError):
        dr.train_models(data2d.make_dataset("moons", 40, 10), dr.TrainConfig(sigmas=(0.5, 1.0), sigma_e=0.25))


def test_presets_and_csv_validation() -> None:
    d = data2d.make_dataset("circles", 100, 30, seed=3)
    assert d.x_train.shape == (100, 2) and set(np.unique(d.y_train)) == {0, 1} and d.x_test.shape == (30, 2)
    rng = np.random.default_rng(0)
    rows = "\n".join(f"{a:.3f},{b:.3f},{'red' if a > 0 else 'blue'}" for a, b in rng.normal(size=(60, 2)) * 5)
    up = data2d.load_csv(("x,y,label\n" + rows).encode())
    assert up.class_names == ["blue", "red"] and len(up.x_train) + len(up.x_test) == 60
    assert abs(np.sqrt((np.concatenate([up.x_train, up.x_test]) ** 2).sum(1).mean() / 2) - 1) < 1e-5
    bad = {
        b"x,y,label\n1,2,a\n": "at least 20",
        ("x,y,label\n" + "\n".join(f"{i},1,a" for i in range(30))).encode(): "2..10 classes",
        ("x,y,label\n" + "\n".join(f"{i},oops,a" for i in range(30))).encode(): "must be numbers",
        b"\x00\x01\x02binary": "binary",
        ("x,y\n" + "\n".join(f"{i},1" for i in range(30))).encode(): "x, y and a label",
    }
    for payload, msg in bad.items():
        with pytest.raises(InputError, match=msg):
            data2d.load_csv(payload)


def test_determinism_small() -> None:
    d = data2d.make_dataset("moons", 200, 40, seed=1)
    cfg = dr.TrainConfig(sigmas=(0.25, 1.0), expert_steps=60, estimator_steps=60)
    a = dr.run(d, cfg, dr.CertifyConfig(n=300), seed=5, map_resolution=8, map_samples=20)
    b = dr.run(d, cfg, dr.CertifyConfig(n=300), seed=5, map_resolution=8, map_samples=20)
    np.testing.assert_array_equal(a.dual["radius"], b.dual["radius"])
    np.testing.assert_array_equal(a.map_sigma_idx, b.map_sigma_idx)


# ---------------------------------------------------------------------------------------------- claims (ci tier)
@pytest.fixture(scope="module")
def moons_run() -> dr.DualRSResult:
    data = data2d.make_dataset("moons", seed=0)
    return dr.run(
        data,
        dr.TrainConfig(),
        dr.CertifyConfig(n=2000),
        seed=0,
        max_test=240,
        map_resolution=20,
        map_samples=100,
        keep_models=True,
    )


def test_claim_attack_never_flips_inside_certified_radius(moons_run: dr.DualRSResult, record_claim) -> None:
    r, m = moons_run, moons_run.models
    args = (m["estimator"], m["dual_experts"], m["sigmas"], m["sigma_e"], r.x_test, r.dual["pred"], r.dual["sigma_idx"])
    inside = attack.attack_dual(*args, r.dual["radius"], attack.AttackConfig(factor=1.0), seed=1)
    assert inside.attacked >= 200
    assert inside.flips == 0
    assert inside.min_class_vote.min() > 0.5 - 0.03 and inside.min_sigma_vote.min() > 0.5 - 0.03
    # control: the same attack in twice the certified radius finds many real flips (the attack has teeth)
    cheap = attack.AttackConfig(factor=2.0, pgd_steps=8, random_points=16, keep=2, eval_samples=2000)
    outside = attack.attack_dual(*args, r.dual["radius"], cheap, seed=1)
    record_claim(attacked=inside.attacked, flips_inside=inside.flips, attacked_at_2x=outside.attacked,
                 flips_at_2x=outside.flips)
    assert outside.flips >= 0.1 * outside.attacked


def test_claim_dual_at_least_best_single_sigma_at_most_radii(moons_run: dr.DualRSResult, record_claim) -> None:
    s = moons_run.summary()
    share = s["dual_vs_best_single"]["share_of_radii_where_dual_ge_best"]
    record_claim(share_of_radii_dual_ge_best=share,
                 **{f"{row['method']} acc@0.5": row["acc@0.5"] for row in s["table"]})
    assert share > 0.5, s["dual_vs_best_single"]
    # the mechanism: far blobs routed to the largest sigma, the moons to a smaller one
    assert max(s["chosen_sigma_share_test"][:-1]) > 0.5 and s["chosen_sigma_share_test"][-1] > 0.2


@pytest.mark.full
def test_claims_full_scale(record_claim) -> None:
    record_claim(attacked_required=400, share_bound=0.5)
    for name in ("moons", "circles"):
        data = data2d.make_dataset(name, seed=0)
        r = dr.run(data, dr.TrainConfig(), dr.CertifyConfig(n=10_000), seed=0, max_test=500, keep_models=True)
        res = attack.attack_run(
            r, attack.AttackConfig(eval_samples=20_000, pgd_steps=30, random_starts=2, random_points=64), seed=1
        )
        record_claim(**{f"{name}_attacked": res.attacked, f"{name}_flips_inside": res.flips,
                        f"{name}_share_of_radii_dual_ge_best":
                            r.summary()["dual_vs_best_single"]["share_of_radii_where_dual_ge_best"]})
        assert res.attacked >= 400 and res.flips == 0
        assert r.summary()["dual_vs_best_single"]["share_of_radii_where_dual_ge_best"] > 0.5
