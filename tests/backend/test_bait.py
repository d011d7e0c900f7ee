"""Invariants of BAIT's package: the sources and the prior's disjoint classes, the exact L-infinity projection (also
after uint8 rounding), every method's perturbation inside its epsilon ball, EMN's min-min and the gradient of BAIT's
generator through the unrolled inner steps, the jobs' validation, and the shipped victims re-evaluated against their
evaluation log."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.robustness.bait import data, generator, jobs, perturb
from backend.robustness.bait.experiment import METHODS
from backend.robustness.bait.nets import SmallCNN, from_prior


def test_sources_are_balanced_10_class_32px() -> None:
    for name in data.SOURCES:
        s = data.load_source(name, "test", 100)
        assert s.images.shape == (100, 32, 32, 3) and s.images.dtype == np.uint8
        assert set(s.labels.tolist()) == set(range(10)) and len(s.class_names) == 10
    assert len(data.load_source("shapes", "train")) == 1000 and len(data.load_source("digits", "test")) == 797


def test_prior_classes_are_disjoint_from_the_shape_classes() -> None:
    from backend.scenes import SHAPES

    assert len(data.PRIOR_SHAPES) == 10 and not set(data.PRIOR_SHAPES) & set(SHAPES)
    x, y = data.prior_set(40, seed0=300_000)
    assert x.shape == (40, 32, 32, 3) and x.dtype == np.uint8 and y.tolist() == [i % 10 for i in range(40)]
    assert np.array_equal(data.prior_image(300_000, 0), x[0])  # the same seed draws the same image
    # the same scene seed with a target shape differs only where the outline differs (same backdrop and colours)
    img, _ = data.shape_image(300_000, 0)
    assert 0 < np.mean(np.any(img != x[0], axis=-1)) < 0.5


@pytest.mark.parametrize("eps", [1, 3, 8, 16, 32])
def test_projection_is_exact_after_uint8_rounding(eps: int) -> None:
    rng = np.random.default_rng(eps)
    imgs = rng.integers(0, 256, size=(16, 8, 8, 3), dtype=np.uint8)
    imgs[0] = 0
    imgs[1] = 255
    for scale in (0.5, 1.0, 1.0001, 10.0):
        delta = torch.from_numpy(rng.uniform(-1, 1, size=(16, 3, 8, 8)) * scale * eps / 255)
        out = perturb.protect_uint8(imgs, delta, eps)
        assert out.dtype == np.uint8 and perturb.linf(imgs, out) <= eps
    big = perturb.protect_uint8(imgs, torch.full((16, 3, 8, 8), 1.0), eps)
    assert perturb.linf(imgs[2:], big[2:]) == eps


def test_eps_out_of_range_is_refused() -> None:
    for bad in (0, 33, 2.5, True, -1):
        with pytest.raises(InputError, match="epsilon"):
            perturb.check_eps(bad)
    with pytest.raises(InputError):
        jobs.ProtectConfig(eps=40)
    with pytest.raises(InputError):
        jobs.ProtectConfig(methods=("nope",))
    with pytest.raises(InputError):
        jobs.ProtectConfig(label=10)
    with pytest.raises(InputError):
        jobs.GridConfig(n_test=0)


@pytest.mark.parametrize("eps", [2, 8, 16])
def test_every_shipped_method_stays_inside_its_epsilon_ball(eps: int) -> None:
    res = jobs.run_protect(None, jobs.ProtectConfig(source="digits", eps=eps))
    assert set(res.protected) == set(METHODS)
    for r in res.rows:
        out = res.protected[r["method"]]
        assert out.dtype == np.uint8 and out.shape == res.clean.shape
        assert r["linf"] == perturb.linf(res.clean, out) <= eps
    assert res.rows[0]["linf"] == 0  # the clean reference
    ours = METHODS.names("ours")[0]
    assert next(r for r in res.rows if r["method"] == ours)["linf"] == eps  # BAIT uses its budget


def test_user_image_any_size_and_downscaled() -> None:
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=(300, 90, 3), dtype=np.uint8)
    res = jobs.run_protect(img, jobs.ProtectConfig(eps=4))
    assert res.clean.shape == (1, 256, 77, 3) and res.label_from == "predicted"
    assert all(r["linf"] <= 4 for r in res.rows)
    res = jobs.run_protect(img[:40, :40], jobs.ProtectConfig(eps=4, label=3, methods=("emn",)))
    assert res.labels == [3] and res.label_from == "given" and list(res.protected) == ["emn"]


def test_emn_min_min_fits_its_surrogate_within_the_ball() -> None:
    s = data.load_source("digits", "train", 64)
    cfg = perturb.EMNConfig(train_steps=5, pgd_steps=3, rounds=3, batch=32)
    out, net, log = perturb.emn(s.images, s.labels, 8, cfg, seed=0)
    out2, _, _ = perturb.emn(s.images, s.labels, 8, cfg, seed=0)
    assert np.array_equal(out, out2)  # same seed, same noise
    assert perturb.linf(s.images, out) <= 8 and log["rounds"] <= 3
    # error-minimising: the noise lowers the surrogate's loss under the true labels
    x, xp, y = perturb.to_float(s.images), perturb.to_float(out), torch.from_numpy(s.labels)
    with torch.no_grad():
        assert torch.nn.functional.cross_entropy(net(xp), y) < torch.nn.functional.cross_entropy(net(x), y)


def test_bait_gradient_flows_through_the_unrolled_inner_steps() -> None:
    """The outer loss's gradient on the protected images depends on the unrolled inner steps (second-order terms
    through functional_call), so generators trained with 0 and 2 unrolled steps differ; same seed, same
    generator; the generator's output lies strictly inside the ball before the uint8 projection."""
    s = data.load_source("digits", "train", 64)
    theta0 = {k: v for k, v in from_prior(SmallCNN().state_dict(), seed=0).state_dict().items()}
    x, y = perturb.to_float(s.images[:16]), torch.from_numpy(s.labels[:16])
    grads = []
    for k in (0, 2):
        xp = x.clone().requires_grad_(True)
        loss, _ = generator.unrolled_outer_loss(SmallCNN(), theta0, xp, y, k, 0.005)
        grads.append(torch.autograd.grad(loss, xp)[0])
    assert not torch.allclose(grads[0], grads[1])
    cfg = {k: generator.BaitConfig(iters=2, unroll=k, batch=32, width=4) for k in (0, 2)}
    outs = {k: generator.train_bait(s.images, s.labels, theta0, 8, cfg[k], seed=0) for k in (0, 2)}
    assert not np.array_equal(outs[0][0], outs[2][0])
    assert all(perturb.linf(s.images, o[0]) <= 8 for o in outs.values())
    again = generator.train_bait(s.images, s.labels, theta0, 8, cfg[2], seed=0)
    assert np.array_equal(again[0], outs[2][0]) and len(again[2]["curve"]) == 2
    gen = outs[2][1]
    odd = np.random.default_rng(0).integers(0, 256, size=(2, 40, 70, 3), dtype=np.uint8)  # any size: tiled pattern
    delta = generator.generate(gen, perturb.to_float(odd), torch.tensor([1, 2]), 3 / 255)
    assert delta.shape == (2, 3, 40, 70) and float(delta.abs().max()) < 3 / 255
    assert perturb.linf(odd, generator.bait_apply(gen, odd, np.array([1, 2]), 3)) <= 3
    with pytest.raises(InputError):
        generator.BaitConfig(unroll=11)


def test_victim_from_prior_keeps_the_trunk_and_a_fresh_head() -> None:
    prior = SmallCNN(19)
    net = from_prior(prior.state_dict(), seed=3)
    assert torch.equal(net.features[0].weight, prior.features[0].weight) and net.head.out_features == 10
    assert not torch.equal(from_prior(None, seed=3).features[0].weight, prior.features[0].weight)


def test_shipped_victims_reproduce_their_logged_accuracy() -> None:
    log = jobs.grid_log()
    rows = jobs.reevaluate_victims(log, 500)
    assert len(rows) == 2 * len(METHODS)
    for r in rows:
        assert r["logged"] is not None and abs(r["measured"] - r["logged"]) <= 0.004, r


def test_every_seeds_shipped_generator_reproduces_its_victims_accuracy() -> None:
    """Every seed of the grid ships its protectors: each seed's BAIT generator, re-applied to the training set, stays
    inside the ball, and a victim fine-tuned from the prior on it (that seed) matches its logged accuracy."""
    from backend.robustness.bait.generator import bait_apply
    from backend.robustness.bait.victims import VictimConfig, train_victim

    log = jobs.grid_log()
    assert len(log["seeds"]) >= 3
    logged = {(r["source"], r["method"], r["init"], r["seed"]): r["test_accuracy"] for r in log["rows"]}
    for src in data.SOURCES:
        train, test = data.load_source(src, "train"), data.load_source(src, "test")
        for seed in log["seeds"][1:]:
            prot = jobs.load_protectors(src, seed)
            imgs = bait_apply(prot.bait_generator, train.images, train.labels, log["eps"])
            assert perturb.linf(train.images, imgs) <= log["eps"]
            net = train_victim(imgs, train.labels, "pretrained", jobs.load_prior(), seed,
                               VictimConfig(**log["victim"]))
            acc = perturb.accuracy(net, test.images, test.labels)
            assert abs(acc - logged[(src, "bait", "pretrained", seed)]) <= 0.015, (src, seed, acc)


def test_unknown_protector_seed_names_the_shipped_ones() -> None:
    from backend.weights import WeightsError

    with pytest.raises(WeightsError, match="seeds"):
        jobs.load_protectors("shapes", 97)


def test_grid_has_every_cell_with_three_seeds() -> None:
    g = jobs.run_grid()
    assert len(g.cells) == len(data.SOURCES) * len(METHODS) * 2
    for c in g.cells:
        assert c["n"] >= 3 and c["ci"][0] <= c["mean"] <= c["ci"][1]


def test_prior_keeps_its_recorded_quality() -> None:
    from backend import weights

    meta = weights.read_meta(jobs.PRIOR_WEIGHTS)
    x, y = data.prior_set(300, seed0=300_000)
    net = SmallCNN(len(data.PRIOR_SHAPES))
    net.load_state_dict(jobs.load_prior())
    assert perturb.accuracy(net, x, y) >= meta.quality["heldout_accuracy"] - 0.06
