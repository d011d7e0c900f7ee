"""Invariants of the temporal-slowness package (stream, saliency gaze, crops, positives, MoCo v3) and the shipped
encoders' loading; configs refuse out-of-range crop sides and DeltaT with a clear message (page and CLI alike)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.scenes.ego import EgoConfig, make_ego_clip, make_photo
from backend.scenes.slowness import jobs as J
from backend.scenes.slowness.gaze import crop_boxes, crops, gaze_points, spectral_residual
from backend.scenes.slowness.learn import ARMS, TrainConfig, build_stream, temporal_partner, train
from backend.scenes.slowness.model import MoCo, ModelConfig, info_nce

SMALL = EgoConfig(frames=8)


def test_stream_is_deterministic_and_labelled() -> None:
    a, b = make_ego_clip(5, SMALL), make_ego_clip(5, SMALL)
    assert np.array_equal(a.images, b.images) and np.array_equal(a.instances, b.instances)
    assert a.images.shape == (8, 64, 64, 3) and a.instances.dtype == np.int32
    assert SMALL.category_of(a.instance) == a.category
    assert not np.array_equal(make_ego_clip(6, SMALL).images, a.images)


def test_a_pan_moves_the_backdrop_but_not_the_held_object() -> None:
    """The stream's premise: across a pan the held object keeps its place (up to its own slow drift) while the
    backdrop moves by the pan over its depth."""
    cfg = EgoConfig(frames=24, drift=0.0, growth=0.0, spin=0.0)
    clip = make_ego_clip(3, cfg)
    pans = np.linalg.norm(np.diff(clip.camera, axis=0), axis=1)
    t = int(np.argmax(pans))
    assert pans[t] > 5.0
    centre = [np.argwhere(clip.instances[i] == 1).mean(0) for i in (t, t + 1)]
    assert np.abs(centre[0] - centre[1]).max() < 1.0
    assert not np.array_equal(clip.images[t][clip.instances[t] == 0][:50], clip.images[t + 1][clip.instances[t] == 0][:50])


def test_photo_swaps_change_only_what_they_swap() -> None:
    a = make_photo(11)
    fg = make_photo(11, instance=(a.instance + SMALL.instances_per_category) % SMALL.n_instances)
    bg = make_photo(11, background=(a.background + 1) % 8)
    assert fg.background == a.background and fg.category != a.category
    outside = ~(a.mask | fg.mask)
    assert np.array_equal(a.image[outside], fg.image[outside])
    assert np.array_equal(a.mask, bg.mask) and np.array_equal(a.image[a.mask], bg.image[bg.mask])
    assert not np.array_equal(a.image[~a.mask], bg.image[~bg.mask])


def test_saliency_finds_a_lone_object_and_gaze_stays_off_the_border() -> None:
    rng = np.random.default_rng(0)  # a pale backdrop with pixel noise, as the scene package paints them

    def backdrop() -> np.ndarray:
        return np.clip(200 + rng.normal(0, 3, (1, 64, 64, 3)), 0, 255).astype(np.uint8)

    img = backdrop()
    img[0, 40:48, 14:22] = (30, 30, 200)
    sal = spectral_residual(img)
    assert sal.shape == (1, 64, 64) and 0 <= sal.min() and sal.max() <= 1
    x, y = gaze_points(sal)[0]
    assert 10 <= x <= 26 and 36 <= y <= 52
    corner = backdrop()
    corner[0, :3, :3] = 0
    gx, gy = gaze_points(spectral_residual(corner))[0]
    assert 5 <= gx <= 58 and 5 <= gy <= 58


@pytest.mark.parametrize("size", [16, 24, 32, 48, 64])
def test_crops_stay_inside_the_frame(size: int) -> None:
    gaze = np.array([[0.0, 0.0], [63.0, 63.0], [32.0, 10.0]])
    boxes = crop_boxes(gaze, size, (64, 64))
    assert (boxes[:, :2] >= 0).all() and (boxes[:, 2:] <= 64).all()
    assert ((boxes[:, 2:] - boxes[:, :2]) == size).all()
    frames = np.random.default_rng(0).integers(0, 255, (3, 64, 64, 3), dtype=np.uint8)
    assert crops(frames, gaze, size).shape == (3, size, size, 3)


@pytest.mark.parametrize("delta", [1, 3, 12])
def test_temporal_partners_are_other_frames_within_delta(delta: int) -> None:
    rng = np.random.default_rng(0)
    t = rng.integers(0, 24, 2000)
    u = temporal_partner(t, 24, delta, rng)
    assert ((u >= 0) & (u < 24)).all() and (u != t).all() and (np.abs(u - t) <= delta).all()


def test_info_nce_and_the_key_branch() -> None:
    torch.manual_seed(0)
    q = torch.randn(16, 8)
    assert float(info_nce(q, q, 0.2)) < float(info_nce(q, torch.randn(16, 8), 0.2))
    m = MoCo(ModelConfig())
    with torch.no_grad():
        for p in m.encoder.parameters():
            p.add_(1.0)
    m.update_keys(0.0)
    for a, b in zip(m.encoder.parameters(), m.key_encoder.parameters(), strict=True):
        assert torch.equal(a, b) and not b.requires_grad


def test_training_is_deterministic_per_seed() -> None:
    stream = build_stream(4, SMALL)
    runs = [train(TrainConfig(arm=a, steps=2, batch=8, clips=4, seed=0), stream) for a in ("central-temporal",
                                                                                             "central-temporal")]
    for a, b in zip(runs[0].model.encoder.state_dict().values(), runs[1].model.encoder.state_dict().values(),
                    strict=True):
        assert torch.equal(a, b)
    assert runs[0].losses == runs[1].losses


@pytest.mark.parametrize("kw,words", [
    ({"crop": 8}, "crop size"), ({"crop": 65}, "crop size"), ({"delta_t": 0}, "DeltaT"), ({"delta_t": 13}, "DeltaT"),
    ({"crop": 24.5}, "crop size"),
])
def test_out_of_range_crop_or_delta_is_refused(kw: dict, words: str) -> None:
    with pytest.raises(InputError, match=words):
        J.StreamConfig(**kw)
    with pytest.raises(InputError, match=words):
        TrainConfig(**kw)


def test_other_bad_settings_are_refused() -> None:
    with pytest.raises(InputError, match="Seeds"):
        J.ProbeConfig(seeds=(7,))
    with pytest.raises(InputError, match="training arm"):
        J.ProbeConfig(models=("central-slow",))
    with pytest.raises(InputError, match="Photos per instance"):
        J.ProbeConfig(train_per_instance=1)
    with pytest.raises(InputError, match="Neighbours"):
        J.NeighbourConfig(k=0)


@pytest.mark.parametrize("argv", [["stream", "--crop", "80"], ["stream", "--delta-t", "0"],
                                  ["probe", "--seeds", "0,x"]])
def test_cli_refuses_bad_settings(argv: list[str], capsys) -> None:  # noqa: ANN001
    from backend.__main__ import main

    assert main(["slowness", *argv, "--json"]) == 2
    assert set(json.loads(capsys.readouterr().out)) == {"error"}


def test_every_shipped_encoder_loads_with_its_quality() -> None:
    files = [(a, J.CROP, J.DELTA_T, s) for a in ARMS for s in J.SEEDS]
    files += [(ARMS.names("ours")[0], c, J.DELTA_T, 0) for c in J.SWEEP_CROPS]
    files += [(ARMS.names("ours")[0], J.CROP, d, 0) for d in J.SWEEP_DELTAS]
    for arm, crop, delta, seed in files:
        enc, meta = J.load_encoder(arm, crop, delta, seed)
        assert meta["config"]["arm"] == arm and meta["config"]["crop"] == crop and meta["config"]["delta_t"] == delta
        assert 0 <= meta["quality"]["instance"] <= 1
        assert enc(torch.rand(2, 3, 32, 32)).shape == (2, 64)
    total = sum(J.weights_path(*f).stat().st_size for f in set(files))
    assert total < 5 * 2**20


def test_stream_job_pairs_and_crops() -> None:
    res = J.run_stream(J.StreamConfig(clip=2, crop=24, delta_t=2, pairs=3))
    assert res.frames.shape == (24, 64, 64, 3) and res.crops.shape == (24, 32, 32, 3)
    assert ((res.boxes[:, 2:] - res.boxes[:, :2]) == 24).all()
    for arm, fr in res.pair_frames.items():
        assert res.pairs[arm].shape == (3, 2, 32, 32, 3)
        gaps = [abs(a - b) for a, b in fr]
        assert all(1 <= g <= 2 for g in gaps) if ARMS[arm].positive_name == "temporal" else all(g == 0 for g in gaps)
    assert 0 <= res.gaze_on_object <= 1
    json.dumps(res.to_dict())


def test_neighbours_of_a_scene_photo_are_scene_photos() -> None:
    from backend.scenes.slowness.probe import PHOTO_SEEDS

    img = make_photo(PHOTO_SEEDS + 900_000).image
    res = J.run_neighbours(img, J.NeighbourConfig(k=3, scenes_per_instance=1))
    for arm, ns in res.neighbours.items():
        assert len(ns) == 3 and ns[0]["similarity"] >= ns[-1]["similarity"]
        assert ns[0]["source"] == "scene", arm


def test_sweep_covers_crop_sides_and_delta_t() -> None:
    res = J.run_sweep(J.SweepConfig(train_per_instance=2, test_per_instance=1))
    assert [r["crop"] for r in res.crop] == [*J.SWEEP_CROPS, 64]
    assert [r["delta_t"] for r in res.delta_t] == list(J.SWEEP_DELTAS)
    assert res.crop[-1]["arm"] != res.crop[0]["arm"]  # 64 px is the full-frame + temporal arm
    assert all(0 <= r["instance"] <= 1 for r in res.crop + res.delta_t)
