"""Invariants of the Lyra miniature (backend/scenes/lyra): camera paths in the first camera's frame, pixel-aligned
Gaussians that land on their pixels, a depth warp with true depth that beats copying the first view, the configs'
refusals, and the render job on a held-out scene and on an upload with the shipped networks."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from backend.errors import InputError
from backend.scenes.lyra import jobs as J
from backend.scenes.lyra.evaluate import depth_warp, psnr, ssim
from backend.scenes.lyra.models import NetConfig, Student, gaussians_from_maps
from backend.scenes.lyra.views import EVAL_SEEDS, intrinsics, make_viewset, relative_viewmats
from backend.scenes.splat import project


def test_path_views_are_relative_to_the_first_camera():
    vm = relative_viewmats([0.0, 20.0])
    assert torch.allclose(vm[0], torch.eye(4), atol=1e-6)
    # the orbit centre (on the first camera's axis at the orbit radius) stays on every view's axis
    c = torch.tensor([0.0, 0.0, 3.6, 1.0])
    p = vm[1] @ c
    assert abs(float(p[0])) < 1e-4 and abs(float(p[1])) < 1e-4 and abs(float(p[2]) - 3.6) < 1e-4


def test_pixel_aligned_gaussians_project_onto_their_cells():
    image = torch.rand(2, 3, 32, 32)
    maps = torch.zeros(2, 1, 15, 16, 16)
    maps[:, :, 1:4] = 0.0                                            # no offset
    g = gaussians_from_maps(maps, image, intrinsics())
    mu, _, z = project(g.means, g.scales, g.quats, intrinsics()[None], torch.eye(4)[None], blur=0.0)
    v, u = np.mgrid[0:16, 0:16]
    cells = torch.as_tensor(np.stack([2 * u + 0.5, 2 * v + 0.5], -1).reshape(-1, 2), dtype=torch.float32)
    assert torch.allclose(mu[0], cells, atol=1e-4) and bool((z > 0.5).all())
    assert torch.allclose(g.colors[0].reshape(16, 16, 3),
                          torch.nn.functional.avg_pool2d(image, 2)[0].permute(1, 2, 0).clamp(0.02, 0.98), atol=1e-5)
    assert Student(NetConfig())(image).shape == (2, 1, 15, 16, 16)


def test_metrics():
    x = torch.rand(4, 3, 32, 32)
    assert torch.allclose(ssim(x, x), torch.ones(4), atol=1e-5)
    assert bool((psnr(x, x) > 90).all())
    assert abs(float(psnr(torch.zeros(1, 3, 8, 8), torch.full((1, 3, 8, 8), 0.1))[0]) - 20.0) < 1e-4


def test_true_depth_warp_beats_copying_the_first_view():
    vs = make_viewset(EVAL_SEEDS[:4], deltas=[-20.0, 20.0])
    warped = depth_warp(vs.first, vs.first_depth, vs.deltas)
    copied = vs.first[:, None].expand_as(vs.targets)
    assert float(psnr(warped, vs.targets).mean()) > float(psnr(copied, vs.targets).mean()) + 1.0
    same = depth_warp(vs.first, vs.first_depth, torch.zeros(4, 1))[:, 0]
    assert float(psnr(same, vs.first).mean()) > 20.0


def test_configs_refuse_bad_values():
    for kw in ({"views": 0}, {"views": 99}, {"path": "spiral"}, {"seed": 7}, {"methods": "nope"}, {"steps": 0},
               {"deltas": (50.0,)}, {"scene": -1}):
        with pytest.raises(InputError):
            J.RenderConfig(**kw)
    with pytest.raises(InputError):
        J.EvalConfig(scenes=0)
    cfg = J.RenderConfig(methods="lyra,warp")
    assert pickle.loads(pickle.dumps(cfg)) == cfg and pickle.loads(pickle.dumps(J.run_render)) is J.run_render


def test_render_job_on_a_held_out_scene_and_an_upload():
    res = J.run_render(J.RenderConfig(scene=1, views=3, methods="lyra,warp,upper_bound,teacher_views"))
    assert res.reference == "truth" and set(res.psnr) == {"lyra", "warp", "upper_bound", "teacher_views"}
    assert res.images["lyra"].shape == (3, 32, 32, 3) and res.truth.shape == (3, 32, 32, 3)
    assert all(np.isfinite(v).all() for v in res.psnr.values())
    assert res.costs["lyra"]["gaussians"] == 256
    rng = np.random.default_rng(0)
    up = J.run_render(J.RenderConfig(views=2, methods="lyra,teacher_views"),
                      image=(rng.random((40, 60, 3)) * 255).astype(np.uint8))
    assert up.reference == "teacher" and set(up.psnr) == {"lyra"} and "40 x 60" in up.source.replace("60 x 40", "40 x 60")


def test_per_scene_optimisation_runs_and_is_not_a_default():
    assert J.method_key(J.per_scene_views) not in J.RenderConfig().methods.split(",")
    res = J.run_render(J.RenderConfig(scene=2, views=2, methods="per_scene", steps=2))
    assert res.costs["per_scene"]["gaussians"] == 256 and np.isfinite(res.psnr["per_scene"]).all()
