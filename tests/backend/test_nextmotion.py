"""Invariants of the motion-forecasting miniature: the simulator's ground truth is rigid (each object's trajectory
matrix has rank at most 3, so its LRTL is zero up to float error), LRTL rises monotonically with injected non-rigid
deformation, scenes are reproducible and the ambiguous ones have two distinct futures behind one image, the metrics'
definitions, the configs' refusals, and the shipped models' sampling (shapes, seeds)."""

from __future__ import annotations

import numpy as np
import pytest

from backend.errors import InputError
from backend.forecast.nextmotion import jobs as J
from backend.forecast.nextmotion.metrics import (
    best_of_k,
    coverage,
    deform,
    grid_lrtl,
    lrtl,
    mse,
    object_lrtl,
    trajectory_matrix,
)
from backend.forecast.nextmotion.world import AMBIGUOUS, KINDS, make_scene


@pytest.fixture(scope="module")
def scenes():
    return [make_scene(300_000 + i, kind) for kind in KINDS for i in range(6)]


def test_each_rigid_object_has_rank_at_most_3(scenes) -> None:
    checked = 0
    for sc in scenes:
        for fut in sc.futures:
            for k in range(1, int(sc.segments.max()) + 1):
                m = trajectory_matrix(fut, sc.segments == k)
                if m.shape[0] <= 3 or np.abs(m).max() < 1.0:
                    continue
                checked += 1
                assert lrtl(m, 3) <= 1e-5 * np.linalg.norm(m), (sc.kind, sc.seed, k)
    assert checked >= 20


def test_ground_truth_object_lrtl_is_zero(scenes) -> None:
    for sc in scenes:
        scale = max(np.linalg.norm(sc.future), 1.0)
        assert object_lrtl(sc.future, sc.segments) <= 1e-5 * scale


def test_lrtl_rises_monotonically_with_nonrigid_deformation(scenes) -> None:
    amounts = [0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
    tested = 0
    for sc in scenes:
        for k in range(1, int(sc.segments.max()) + 1):
            mask = sc.segments == k
            rows, cols = np.nonzero(mask)
            if len(set(rows)) < 3 or len(set(cols)) < 3:
                continue
            vals = [object_lrtl(deform(sc.future, mask, a), sc.segments) for a in amounts]
            assert all(b > a for a, b in zip(vals, vals[1:], strict=False)), (sc.seed, vals)
            tested += 1
    assert tested >= 5


def test_scenes_are_reproducible_and_ambiguous_kinds_fork() -> None:
    a, b = make_scene(7, "peak"), make_scene(7, "peak")
    assert np.array_equal(a.image, b.image) and np.array_equal(a.futures, b.futures)
    for kind in AMBIGUOUS:
        sc = make_scene(11, kind)
        assert sc.ambiguous and sc.futures.shape[0] == 2
        left, right = (sc.futures[o][sc.segments > 0][:, -1, 0].mean() for o in range(2))
        assert left < -3 and right > 3, (kind, left, right)
    for kind in ("drop", "ramp"):
        assert not make_scene(11, kind).ambiguous
    assert make_scene(5, "drop").future.shape == (14, 14, 8, 2)
    assert make_scene(5, "drop", stride=16).future.shape == (7, 7, 8, 2)


def test_metric_definitions() -> None:
    sc = make_scene(3, "corner")
    outs = sc.futures
    samples = np.stack([outs[0], outs[1], np.zeros_like(outs[0])])
    assert best_of_k(samples, outs[0]) == 0.0
    assert best_of_k(samples, outs[1]) == 0.0
    assert coverage(samples, outs) == 1.0
    assert coverage(np.zeros_like(samples), outs) == 0.0
    assert coverage((outs[0] + outs[1])[None] / 2, outs) == 0.0  # the mean reaches neither outcome
    assert mse(outs[0], outs[0]) == 0.0
    assert grid_lrtl(np.zeros((14, 14, 8, 2))) == 0.0


@pytest.mark.parametrize("bad", [{"k": 0}, {"k": 33}, {"stride": 4}, {"stride": 12}, {"kind": "spin"},
                                 {"model_seed": 7}, {"methods": ("flow", "oracle")}, {"methods": ()}])
def test_configs_refuse_bad_input(bad) -> None:
    with pytest.raises(InputError):
        J.SampleConfig(**bad)


def test_eval_config_refuses_bad_input() -> None:
    with pytest.raises(InputError, match="scenes"):
        J.EvalConfig(scenes=1)
    with pytest.raises(InputError, match="K"):
        J.EvalConfig(k=100)


def test_preset_sampling_shapes_and_seeds() -> None:
    cfg = J.SampleConfig(kind="corner", scene_seed=200_001, k=4)
    a = J.run_sample(None, cfg)
    b = J.run_sample(None, cfg)
    assert set(a.samples) == {"flow", "regressor", "noisy_regressor", "retrieval", "static"}
    for name, s in a.samples.items():
        assert s.shape == (4, 14, 14, 8, 2)
        assert np.array_equal(s, b.samples[name])
    c = J.run_sample(None, J.SampleConfig(kind="corner", scene_seed=200_001, k=4, seed=1, stride=16))
    assert c.samples["flow"].shape == (4, 7, 7, 8, 2)
    assert not np.array_equal(c.samples["flow"], a.samples["flow"][:, ::2, ::2])
    assert np.array_equal(a.samples["static"], np.zeros_like(a.samples["static"]))
    reg = a.samples["regressor"]
    assert np.array_equal(reg[0], reg[3])
    truth_row = a.rows[-1]
    assert truth_row["method"] == "truth" and truth_row["coverage"] == 1.0


def test_uploaded_image_gets_a_note_and_no_truth() -> None:
    img = np.full((90, 150, 3), 200, np.uint8)
    img[30:60, 60:90] = (200, 30, 30)
    res = J.run_sample(img, J.SampleConfig(k=2, methods=("flow", "static")))
    assert res.truth is None and res.notes
    assert all("best_of_k_mse" not in r for r in res.rows)
    assert res.image.shape == (112, 112, 3)
