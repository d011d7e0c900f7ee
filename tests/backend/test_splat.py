"""Invariants of the differentiable Gaussian splatting renderer (backend/scenes/splat.py): a single Gaussian's image is
its analytic 2-D projection, gradients match finite differences, depth order decides what is seen, a batch renders as
its items do."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.scenes.splat import Gaussians, project, quat_to_rotmat, render_gaussians


def _K(f=60.0, w=48, h=40, dtype=torch.float64):
    return torch.tensor([[f, 0, w / 2], [0, f * 1.1, h / 2], [0, 0, 1]], dtype=dtype)


def _yaw_quat(deg, axis=(0.0, 0.0, 1.0)):
    a = math.radians(deg) / 2
    return torch.tensor([math.cos(a), *(math.sin(a) * np.asarray(axis))], dtype=torch.float64)


def test_quaternions_give_rotations():
    q = torch.randn(20, 4, dtype=torch.float64)
    R = quat_to_rotmat(q)
    assert torch.allclose(R @ R.transpose(-1, -2), torch.eye(3, dtype=torch.float64).expand(20, 3, 3), atol=1e-12)
    assert torch.allclose(torch.det(R), torch.ones(20, dtype=torch.float64))
    R90 = quat_to_rotmat(_yaw_quat(90))
    assert torch.allclose(R90 @ torch.tensor([1.0, 0, 0], dtype=torch.float64),
                          torch.tensor([0, 1.0, 0], dtype=torch.float64), atol=1e-12)


def test_single_gaussian_on_the_axis_is_the_analytic_disc():
    """An isotropic Gaussian of std s at depth z on the optical axis projects to an isotropic screen Gaussian of std
    f s / z centred on (cx, cy): the image is bg (1 - a) + a c with a = o exp(-r^2 / (2 sigma^2))."""
    K, V = _K(), torch.eye(4, dtype=torch.float64)
    s, z, o = 0.08, 2.0, 0.7
    col, bg = torch.tensor([0.9, 0.2, 0.1], dtype=torch.float64), torch.tensor([0.1, 0.3, 0.8], dtype=torch.float64)
    r = render_gaussians(torch.tensor([[0, 0, z]], dtype=torch.float64), torch.full((1, 3), s, dtype=torch.float64),
                         torch.tensor([[1.0, 0, 0, 0]], dtype=torch.float64), torch.tensor([o], dtype=torch.float64),
                         col[None], K, V, 48, 40, background=bg, blur=0.0)
    u, v = np.meshgrid(np.arange(48), np.arange(40))     # pixel centres at integer coordinates
    sx, sy = 60.0 * s / z, 66.0 * s / z
    a = o * np.exp(-0.5 * ((u - 24) ** 2 / sx ** 2 + (v - 20) ** 2 / sy ** 2))
    expect = bg.numpy() * (1 - a[..., None]) + a[..., None] * col.numpy()
    inside = ((u - 24) ** 2 / sx ** 2 + (v - 20) ** 2 / sy ** 2) <= 9.0
    assert np.abs(r.rgb.numpy() - expect)[inside].max() < 1e-9
    assert np.abs(r.rgb.numpy() - expect).max() < 0.02          # beyond 3 sigma only the cut tail differs
    assert abs(float(r.alpha.sum()) - 2 * math.pi * sx * sy * o) < 0.02 * 2 * math.pi * sx * sy * o
    assert torch.allclose(r.depth[20, 24] / r.alpha[20, 24], torch.tensor(z, dtype=torch.float64))


def test_screen_covariance_matches_projected_samples():
    """EWA: for a small rotated anisotropic Gaussian off the axis, the screen mean and covariance match the moments of
    perspective-projected 3-D samples (the local affine approximation is exact as the Gaussian shrinks)."""
    K = _K()
    V = torch.eye(4, dtype=torch.float64)
    V[:3, 3] = torch.tensor([0.1, -0.2, 0.5])
    mean = torch.tensor([[0.4, 0.3, 2.0]], dtype=torch.float64)
    scales = torch.tensor([[0.03, 0.01, 0.02]], dtype=torch.float64)
    q = torch.tensor([[0.9, 0.2, -0.3, 0.25]], dtype=torch.float64)
    mu, cov, depth = project(mean[None], scales[None], q[None], K[None], V[None], blur=0.0)
    R = quat_to_rotmat(q)[0]
    g = torch.Generator().manual_seed(0)
    pts = mean + (torch.randn(400_000, 3, generator=g, dtype=torch.float64) * scales) @ R.T
    cam = pts @ V[:3, :3].T + V[:3, 3]
    uv = (cam[:, :2] / cam[:, 2:]) * torch.stack([K[0, 0], K[1, 1]]) + torch.stack([K[0, 2], K[1, 2]])
    emp_mu, emp_cov = uv.mean(0), torch.cov(uv.T)
    assert torch.allclose(mu[0, 0], emp_mu, atol=0.01)
    assert torch.allclose(cov[0, 0], emp_cov, rtol=0.02, atol=0.005)
    assert abs(float(depth[0, 0]) - 2.5) < 1e-12


def test_rotating_about_the_axis_rotates_the_screen_gaussian():
    K, V = torch.tensor([[60.0, 0, 24], [0, 60.0, 24], [0, 0, 1]], dtype=torch.float64), torch.eye(4, dtype=torch.float64)
    args = (torch.tensor([[0, 0, 2.0]], dtype=torch.float64), torch.tensor([[0.15, 0.03, 0.03]], dtype=torch.float64))
    c0 = project(args[0][None], args[1][None], _yaw_quat(0)[None, None], K[None], V[None], blur=0.0)[1][0, 0]
    c30 = project(args[0][None], args[1][None], _yaw_quat(30)[None, None], K[None], V[None], blur=0.0)[1][0, 0]
    rot = torch.tensor([[math.cos(math.radians(30)), -math.sin(math.radians(30))],
                        [math.sin(math.radians(30)), math.cos(math.radians(30))]], dtype=torch.float64)
    assert torch.allclose(c30, rot @ c0 @ rot.T, atol=1e-9)


def _scene(n=4, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    means = torch.randn(n, 3, generator=g, dtype=dtype) * 0.25 + torch.tensor([0, 0, 2.0], dtype=dtype)
    scales = torch.rand(n, 3, generator=g, dtype=dtype) * 0.06 + 0.05
    quats = torch.randn(n, 4, generator=g, dtype=dtype)
    opac = torch.rand(n, generator=g, dtype=dtype) * 0.6 + 0.2
    cols = torch.rand(n, 3, generator=g, dtype=dtype)
    return means, scales, quats, opac, cols


def test_gradients_match_finite_differences():
    K, V = _K(30.0, 12, 10), torch.eye(4, dtype=torch.float64)
    V[:3, 3] = torch.tensor([0.05, 0.02, 0.1])
    params = [p.clone().requires_grad_(True) for p in _scene(3)]
    bg = torch.tensor([0.2, 0.4, 0.6], dtype=torch.float64, requires_grad=True)
    Kp = K.clone().requires_grad_(True)

    def f(m, s, q, o, c, b, k):
        r = render_gaussians(m, s, q, o, c, k, V, 12, 10, background=b, tile=4)
        return torch.cat([r.rgb.flatten(), r.depth.flatten(), r.alpha.flatten()])

    assert torch.autograd.gradcheck(f, (*params, bg, Kp), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_depth_order_decides_what_is_seen():
    K, V = _K(60.0, 32, 32), torch.eye(4, dtype=torch.float64)          # pixel (16, 16) is centred on the axis
    means = torch.tensor([[0, 0, 2.0], [0, 0, 3.0]], dtype=torch.float64)
    scales = torch.full((2, 3), 0.1, dtype=torch.float64)
    quats = torch.tensor([[1.0, 0, 0, 0]] * 2, dtype=torch.float64)
    opac = torch.tensor([0.95, 0.95], dtype=torch.float64)
    cols = torch.tensor([[1.0, 0, 0], [0, 0, 1.0]], dtype=torch.float64)
    r = render_gaussians(means, scales, quats, opac, cols, K, V, 32, 32, blur=0.0)
    centre = r.rgb[16, 16]
    assert centre[0] > 0.9 and centre[2] < 0.06                               # the near red one hides the blue one
    assert torch.allclose(centre, torch.tensor([0.95, 0, 0.05 * 0.95], dtype=torch.float64), atol=1e-3)
    flipped = render_gaussians(means.flip(0), scales, quats, opac.flip(0), cols.flip(0), K, V, 32, 32, blur=0.0)
    assert torch.allclose(flipped.rgb, r.rgb, atol=1e-12)                     # the input order does not matter
    swapped = render_gaussians(means.flip(0), scales, quats, opac, cols, K, V, 32, 32, blur=0.0)
    assert swapped.rgb[16, 16, 2] > 0.9                                       # now blue is in front
    behind = render_gaussians(means * torch.tensor([1, 1, -1.0], dtype=torch.float64), scales, quats, opac, cols,
                              K, V, 32, 32)
    assert float(behind.alpha.max()) == 0.0                                   # behind the camera: nothing


def test_batch_renders_as_its_items_and_tiles_do_not_matter():
    K = _K(50.0, 30, 26, torch.float32)
    V = torch.eye(4).expand(2, 4, 4).clone()
    V[1, :3, 3] = torch.tensor([0.2, 0.0, 0.3])
    a, b = _scene(300, torch.float32, 1), _scene(300, torch.float32, 2)
    batch = render_gaussians(*(torch.stack([x, y]) for x, y in zip(a, b, strict=True)), K, V, 30, 26,
                             background=torch.tensor([[0.0, 0, 0], [1.0, 1, 1]]))
    one = render_gaussians(*a, K, V[0], 30, 26, background=torch.zeros(3))
    two = render_gaussians(*b, K, V[1], 30, 26, background=torch.ones(3), max_elements=2000)
    assert torch.allclose(batch.rgb[0], one.rgb, atol=1e-5)
    assert torch.allclose(batch.rgb[1], two.rgb, atol=1e-5)
    assert torch.allclose(batch.depth[1], two.depth, atol=1e-4)
    # other tile sizes list other Gaussians only where their cut 3-sigma tails are
    for tile in (5, 16):
        other = render_gaussians(*a, K, V[0], 30, 26, background=torch.zeros(3), tile=tile)
        assert float((other.rgb - one.rgb).abs().max()) < 0.03
        assert float((other.rgb - one.rgb).abs().mean()) < 1e-3


@pytest.mark.parametrize("dtype", [torch.float32])
def test_gaussians_render_through_a_camera_object(dtype):
    class Cam:
        width, height = 20, 16

        def intrinsics(self):
            return np.array([[20.0, 0, 10], [0, 20.0, 8], [0, 0, 1]])

        def world_to_camera(self):
            return np.eye(4)

    g = Gaussians(*_scene(5, dtype))
    r = g.render(Cam(), background=(0.5, 0.5, 0.5))
    assert r.rgb.shape == (16, 20, 3) and r.rgb.dtype == dtype and len(g) == 5


def test_screen_means_follow_the_scene3d_camera():
    """The renderer's projection agrees with :class:`backend.scenes.scene3d.Camera` (OpenCV axes, pixel centres at
    integer coordinates): a small Gaussian at a world point lights the pixel the camera projects the point to."""
    from backend.scenes.scene3d import orbit

    cam = orbit(1, 3.0, 20.0, 24, 20, start_deg=30.0, span_deg=0.0)[0]
    pts = np.array([[0.2, 0.6, -0.1], [-0.4, 0.3, 0.3]])
    uv, z = cam.project(pts)
    g = Gaussians(torch.tensor(pts), torch.full((2, 3), 0.01, dtype=torch.float64),
                  torch.tensor([[1.0, 0, 0, 0]] * 2, dtype=torch.float64), torch.tensor([0.9, 0.9], dtype=torch.float64),
                  torch.eye(3, dtype=torch.float64)[:2])
    from backend.scenes.splat import camera_tensors

    K, W, w, h = camera_tensors(cam, torch.float64)
    mu, _, depth = project(g.means[None], g.scales[None], g.quats[None], K[None], W[None])
    assert np.allclose(mu[0].numpy(), uv, atol=1e-9) and np.allclose(depth[0].numpy(), z, atol=1e-9)
    r = g.render(cam, blur=0.0)
    for i, (u, v) in enumerate(np.rint(uv).astype(int)):
        assert int(r.rgb[..., i].argmax()) == v * w + u
