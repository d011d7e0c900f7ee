"""Invariants of the IGGT package (backend/scenes/iggt): the contrastive loss is the paper's formula, the global
attention carries information across views (and frame attention alone does not), the metrics score consistent
tracking and only consistent tracking, clustering and cross-view matching recover planted structure, the splits hold
what they say, the view-count rules refuse bad uploads, and the shipped networks load with their recorded quality."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.scenes.iggt import data as D
from backend.scenes.iggt import inputs as I
from backend.scenes.iggt import jobs as J
from backend.scenes.iggt.model import IGGTNet, LossConfig, NetConfig, contrastive_loss, sample_pixels
from backend.scenes.iggt.segment import ClusterConfig, cluster, match_views, pair_distances, track_metrics


# ----------------------------------------------------------------------------------------------------- the loss
def test_contrastive_loss_is_the_papers_formula():
    cfg = LossConfig()
    assert (cfg.lambda_pull, cfg.lambda_push, cfg.margin) == (2.0, 1.0, 1.0)
    f = torch.tensor([[0.0, 0.0], [0.5, 0.0], [0.0, 0.3], [3.0, 0.0]])
    lab = torch.tensor([1, 1, 2, 3])
    loss, parts = contrastive_loss(f, lab, cfg)
    # same-instance pairs: (0, 1) and (1, 0), distance 0.5
    assert parts["pull"] == pytest.approx(0.5, abs=1e-4)
    # different pairs (ordered): (0,2) 0.3, (1,2) sqrt(0.34), (0,3) 3, (1,3) 2.5, (2,3) sqrt(9.09), each twice
    d = np.array([0.3, np.sqrt(0.34), 3.0, 2.5, np.sqrt(9.09)])
    assert parts["push"] == pytest.approx(np.maximum(0, 1 - d).mean(), abs=1e-4)
    assert float(loss) == pytest.approx(2 * 0.5 + np.maximum(0, 1 - d).mean(), abs=1e-4)


def test_loss_gradient_pulls_same_and_pushes_different():
    f = torch.tensor([[0.0, 0.0], [0.4, 0.0], [0.0, 0.2]], requires_grad=True)
    loss, _ = contrastive_loss(f, torch.tensor([1, 1, 2]), LossConfig())
    loss.backward()
    g = (f - 0.01 * f.grad).detach()
    assert torch.dist(g[0], g[1]) < torch.dist(f[0], f[1])  # same instance: closer
    assert torch.dist(g[0], g[2]) > torch.dist(f[0], f[2])  # different, within the margin: farther


def test_pixel_sampling_reaches_small_instances():
    inst = torch.zeros(2, 64, 64, dtype=torch.long)
    inst[:, :4, :4] = 1  # 16 pixels of 4096
    idx = sample_pixels(inst, 400, torch.Generator().manual_seed(0))
    share = (inst.reshape(2, -1).gather(1, idx) == 1).float().mean()
    assert 0.35 < float(share) < 0.65  # about half, not 16 / 4096


# ------------------------------------------------------------------------------------------------- the network
@pytest.mark.parametrize("cross", [True, False])
def test_global_attention_carries_information_across_views(cross):
    torch.manual_seed(0)
    net = IGGTNet(NetConfig(cross_view=cross)).eval()
    dino = torch.randn(1, 2, 16, 16, 384)
    rgb = torch.rand(1, 2, 64, 64, 3)
    ld, f = net(dino, rgb)
    assert ld.shape == (1, 2, 64, 64) and f.shape == (1, 2, 64, 64, 8)
    dino2 = dino.clone()
    dino2[0, 1] = torch.randn(16, 16, 384)
    ld2, f2 = net(dino2, rgb)
    changed = float((f2[0, 0] - f[0, 0]).abs().max().detach())
    if cross:
        assert changed > 1e-4
    else:
        assert changed == 0.0


# --------------------------------------------------------------------------------------------------- metrics
def _gt() -> np.ndarray:
    gt = np.zeros((2, 16, 16), np.int64)
    gt[:, 2:7, 2:7] = 1
    gt[:, 8:14, 8:14] = 2
    return gt


def test_perfect_tracks_score_one_whatever_their_ids():
    gt = _gt()
    pred = np.where(gt == 1, 7, np.where(gt == 2, 3, 0))
    m = track_metrics(pred, gt)
    assert m["t_miou"] == pytest.approx(1.0) and m["t_sr"] == 1.0
    assert m["matches"] == {"1": 7, "2": 3}


def test_swapped_ids_in_one_view_fail_tracking_not_segmentation():
    gt = _gt()
    pred = gt.copy()
    pred[1] = np.where(gt[1] == 1, 2, np.where(gt[1] == 2, 1, 0))  # perfect masks per view, ids swapped in view 2
    m = track_metrics(pred, gt)
    assert m["t_sr"] == 0.0
    assert m["t_miou"] < 0.6


def test_merged_instances_lose_iou():
    gt = _gt()
    pred = (gt > 0).astype(np.int64)
    m = track_metrics(pred, gt)
    assert m["t_sr"] == 0.5  # the larger instance keeps IoU >= 0.5 in both views, the smaller is lost
    assert m["t_miou"] < 0.8


def test_cluster_recovers_separated_blobs_and_assigns_every_point():
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0, 0], [3, 0, 0], [0, 3, 0]], np.float32)
    truth = rng.integers(0, 3, 3000)
    x = centres[truth] + 0.1 * rng.standard_normal((3000, 3)).astype(np.float32)
    lab = cluster(x, ClusterConfig(sample=800))
    assert lab.shape == (3000,) and lab.min() >= 0
    m = track_metrics(lab.reshape(1, 3000, 1), truth.reshape(1, 3000, 1) + 1)
    assert m["t_miou"] > 0.99


def test_match_views_follows_descriptors_not_ids():
    a = np.array([[0, 0, 1, 1], [2, 2, 1, 1]])
    b = np.array([[1, 1, 0, 0], [2, 2, 0, 0]])  # view 2: ids permuted 0 -> 1, 1 -> 0
    da = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    db = np.array([[5.0, 0.1], [0.1, 0.0], [9.0, 9.0]])  # cluster 2 of view 2 is new
    out = match_views([a, b], [da, db], lambda x, y: np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)), 1.0)
    assert (out[1][b == 1] == 0).all() and (out[1][b == 0] == 1).all()
    assert (out[1][b == 2] == 3).all()


def test_pair_distances_are_cross_view_same_instance():
    gt = _gt()
    f = np.zeros((2, 16, 16, 2), np.float32)
    f[1][gt[1] == 1] = (0.0, 0.5)
    d = pair_distances(f, gt)
    assert d.size > 0
    assert set(np.round(np.unique(d), 4)) <= {0.0, 0.5}


# ------------------------------------------------------------------------------------------------------ data
def test_splits_hold_their_shapes_and_textures():
    for i in range(6):
        tr = D.make_scene("train", i)
        assert {p.kind for p in tr.primitives} <= {"box", "sphere"}
        assert {p.texture for p in tr.primitives} <= {"plain", "stripes"}
        assert {p.kind for p in D.make_scene("heldout_shape", i).primitives} == {"cylinder"}
        assert {p.texture for p in D.make_scene("heldout_texture", i).primitives} == {"checker"}
    assert D.make_scene("val", 3) == D.make_scene("val", 3) != D.make_scene("train", 3)


def test_rendered_views_are_deterministic_and_labelled():
    imgs, depth, inst = D.render_views("heldout_shape", 0, 2)
    imgs2, _, inst2 = D.render_views("heldout_shape", 0, 2)
    assert imgs.shape == (2, D.IMAGE, D.IMAGE, 3) and depth.shape == inst.shape == (2, D.OUT, D.OUT)
    np.testing.assert_array_equal(imgs, imgs2)
    np.testing.assert_array_equal(inst, inst2)
    assert (inst > 0).any()
    assert np.isfinite(depth[inst > 0]).all()


class _FakeEncoder:
    """A stand-in for DINOv2 in unit tests: zeros of the right shape."""

    def patch_features(self, images, size=224):  # noqa: ANN001, ANN201
        return torch.zeros(len(images), (size // 14) ** 2, 384)


def test_photos_of_different_sizes_are_resized_with_a_note():
    from PIL import Image

    photos = [Image.new("RGB", (80, 60), "red"), Image.new("RGB", (50, 50), "blue")]
    vs, notes = D.photo_viewset(photos, _FakeEncoder())
    assert vs.images.shape == (2, D.IMAGE, D.IMAGE, 3) and vs.dino.shape == (2, 16, 16, 384)
    assert vs.instance is None
    assert notes and "different sizes" in notes[0]
    with pytest.raises(InputError, match="2-4 photos"):
        D.photo_viewset(photos[:1], _FakeEncoder())


# ------------------------------------------------------------------------------------------------------ inputs
def test_view_count_rules():
    I.check_view_count(2)
    I.check_view_count(4)
    with pytest.raises(InputError, match="Add 1 more photo"):
        I.check_view_count(1)
    with pytest.raises(InputError, match="at most 4"):
        I.check_view_count(5)


def test_zip_of_views_decodes_and_counts():
    got = I.decode_views(I.image_views())
    assert [n for n, _ in got] == ["view_1.png", "view_2.png"]
    one = I._zip({"a.png": I.view_pngs(size=16)[0]})
    with pytest.raises(InputError, match="needs 2-4 views"):
        I.decode_views(one)
    five = I._zip({f"{i}.png": p for i, p in enumerate(I.view_pngs("val", 0, 4, 16) + I.view_pngs(size=16)[:1])})
    with pytest.raises(InputError, match="at most 4"):
        I.decode_views(five)
    with pytest.raises(InputError, match="not a ZIP"):
        I.decode_views(I.view_pngs(size=16)[0])
    for name, data in I.image_views_odd().items():
        assert 2 <= len(I.decode_views(data, name=name)) <= 4


def test_configs_refuse_bad_settings_and_pickle():
    with pytest.raises(InputError):
        J.SegmentConfig(views=5)
    with pytest.raises(InputError):
        J.SegmentConfig(split="nowhere")
    with pytest.raises(InputError):
        J.SegmentConfig(seed=7)
    with pytest.raises(InputError):
        J.SegmentConfig(methods=("sam2",))
    with pytest.raises(InputError):
        J.EvalConfig(scenes=0)
    for obj in (J.run_segment, J.run_eval, J.SegmentConfig(), J.EvalConfig()):
        assert pickle.loads(pickle.dumps(obj)) == obj
    assert set(J.SegmentConfig().methods) == {"iggt", "iggt_per_view", "dinov2_hungarian", "colour_depth"}


# --------------------------------------------------------------------------------------------- shipped weights
@pytest.mark.parametrize("seed", J.SEEDS)
def test_shipped_networks_load_with_their_quality(seed):
    from backend import weights
    from backend.scenes.iggt.learn import load_model, weights_path

    model = load_model(seed)
    meta = weights.read_meta(weights_path(seed))
    assert meta.command.startswith("python -m backend.train iggt")
    q = meta.quality
    assert {"val_t_miou", "val_t_sr", "val_depth_absrel", "val_cross_view_pairs_within_margin"} <= set(q)
    assert q["val_depth_absrel"] < 0.25
    assert sum(p.numel() for p in model.parameters()) == q["parameters"]
