"""The 3-D scene module (backend/scenes/scene3d.py): determinism, placement, camera conventions and the ray-cast
renderer's geometry (depth unprojects onto the surface the instance map names, and onto the same world point from a
second view)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from backend.scenes.scene3d import (
    Camera,
    Primitive,
    RenderResult,
    Scene3D,
    orbit,
    random_scene,
    render,
)


def _signed_distance(p: Primitive, x: np.ndarray) -> np.ndarray:
    """Signed distance of world points ``[N, 3]`` to the surface of ``p`` (0 on it)."""
    c, s = math.cos(p.yaw), math.sin(p.yaw)
    rot = np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]])
    q = (x - np.asarray(p.center)) @ rot.T
    if p.kind == "sphere":
        return np.linalg.norm(q, axis=1) - p.size[0]
    if p.kind == "box":
        d = np.abs(q) - np.asarray(p.size)
        return np.linalg.norm(np.maximum(d, 0), axis=1) + np.minimum(d.max(1), 0)
    d = np.stack([np.hypot(q[:, 0], q[:, 2]) - p.size[0], np.abs(q[:, 1]) - p.size[1]], 1)
    return np.linalg.norm(np.maximum(d, 0), axis=1) + np.minimum(d.max(1), 0)


def test_random_scene_is_deterministic_and_varies():
    assert random_scene(5) == random_scene(5)
    assert random_scene(5) != random_scene(6)


@pytest.mark.parametrize("seed", range(12))
def test_objects_rest_on_the_floor_and_do_not_intersect(seed):
    scene = random_scene(seed, n_objects=(3, 6))
    assert 3 <= len(scene.primitives) <= 6
    assert [p.instance for p in scene.primitives] == list(range(1, len(scene.primitives) + 1))
    for i, a in enumerate(scene.primitives):
        assert a.bottom == pytest.approx(0.0, abs=1e-12)
        for b in scene.primitives[i + 1:]:
            gap = math.hypot(a.center[0] - b.center[0], a.center[2] - b.center[2])
            assert gap > a.footprint + b.footprint


def test_random_scene_respects_kinds_textures_and_palette():
    pal = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 0.0)]
    for seed in range(6):
        s = random_scene(seed, kinds=("sphere",), textures=("checker",), palette=pal)
        assert all(p.kind == "sphere" and p.texture == "checker" and p.color in pal for p in s.primitives)
        assert len({p.color for p in s.primitives}) == len(s.primitives)
    with pytest.raises(ValueError):
        random_scene(0, kinds=("cone",))


def test_primitive_and_scene_validate():
    with pytest.raises(ValueError):
        Primitive("box", (0, 1, 0), (1, 1, 1), instance=0)
    with pytest.raises(ValueError):
        Primitive("sphere", (0, 1, 0), (1, 2, 1))
    with pytest.raises(ValueError):
        Primitive("box", (0, 1, 0), (1, 1, 1), color=(2, 0, 0))
    p = Primitive("box", (0, 1, 0), (1, 1, 1))
    with pytest.raises(ValueError):
        Scene3D((p, p))


def test_camera_conventions():
    cam = Camera((1.0, 2.0, 3.0), (0.0, 0.5, 0.0), fov_deg=60.0, width=80, height=60)
    k = cam.intrinsics()
    assert k[0, 0] == pytest.approx(30 / math.tan(math.radians(30)))
    assert (k[0, 2], k[1, 2]) == (39.5, 29.5)
    m = cam.world_to_camera()
    r = m[:3, :3]
    np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(r) == pytest.approx(1.0)
    np.testing.assert_allclose(m[:3, :3] @ np.asarray(cam.position) + m[:3, 3], 0, atol=1e-12)
    uv, z = cam.project(np.array([[0.0, 0.5, 0.0], [0.0, 1.5, 0.0]]))
    np.testing.assert_allclose(uv[0], [39.5, 29.5], atol=1e-9)  # look-at point on the optical axis
    assert z[0] == pytest.approx(math.dist(cam.position, cam.look_at))
    assert uv[1, 1] < uv[0, 1]  # up in the world is up in the image (y down)
    # a point to the camera's right (world) lands right of centre
    right = r[0]
    uv_r, _ = cam.project(np.asarray(cam.look_at)[None] + 0.3 * right)
    assert uv_r[0, 0] > 39.5


def test_rays_go_through_their_pixels():
    cam = Camera((2.0, 1.5, -2.5), (0.1, 0.4, 0.2), fov_deg=45.0, width=17, height=11)
    o, d = cam.rays()
    assert o.shape == d.shape == (11, 17, 3)
    np.testing.assert_allclose(np.linalg.norm(d, axis=-1), 1.0, atol=1e-12)
    uv, z = cam.project(o + 2.0 * d)
    v, u = np.mgrid[0:11, 0:17]
    np.testing.assert_allclose(uv[..., 0], u, atol=1e-9)
    np.testing.assert_allclose(uv[..., 1], v, atol=1e-9)
    assert (z > 0).all()


def test_orbit_geometry():
    cams = orbit(6, 3.0, 25.0, 32, 24, center=(0.0, 0.5, 0.0))
    assert len(cams) == 6
    for c in cams:
        off = np.subtract(c.position, c.look_at)
        assert np.linalg.norm(off) == pytest.approx(3.0)
        assert math.degrees(math.asin(off[1] / 3.0)) == pytest.approx(25.0)
        assert (c.width, c.height) == (32, 24)
    arc = orbit(3, 2.0, 10.0, 8, 8, start_deg=0.0, span_deg=90.0)
    az = [math.degrees(math.atan2(c.position[0], c.position[2])) for c in arc]
    np.testing.assert_allclose(az, [0.0, 45.0, 90.0], atol=1e-9)


def test_render_outputs_and_labels():
    scene = random_scene(3)
    cam = orbit(1, 3.0, 30.0, 48, 40)[0]
    res = render(scene, cam)
    assert isinstance(res, RenderResult)
    assert res.rgb.shape == (40, 48, 3) and res.rgb.dtype == np.float32
    assert res.depth.shape == (40, 48) and res.depth.dtype == np.float32
    assert res.instance.shape == (40, 48) and res.instance.dtype == np.int32
    assert 0.0 <= res.rgb.min() and res.rgb.max() <= 1.0
    assert set(np.unique(res.instance)) <= {0, *scene.instances}
    assert np.isfinite(res.depth[res.instance > 0]).all()
    sky = ~np.isfinite(res.depth)
    assert sky.any()  # the horizon is in view at this elevation
    assert (res.instance[sky] == 0).all()
    np.testing.assert_allclose(res.rgb[sky], np.broadcast_to(scene.background_color, res.rgb[sky].shape), atol=1e-6)
    r2 = render(scene, cam)
    np.testing.assert_array_equal(res.rgb, r2.rgb)


@pytest.mark.parametrize("seed", range(4))
def test_depth_unprojects_onto_the_named_surface(seed):
    scene = random_scene(seed, n_objects=(3, 4))
    cam = orbit(1, 2.6, 35.0, 64, 64, start_deg=40.0 * seed)[0]
    res = render(scene, cam)
    pts = cam.unproject(res.depth)
    floor = (res.instance == 0) & np.isfinite(res.depth)
    np.testing.assert_allclose(pts[floor][:, 1], 0.0, atol=1e-4)
    for p in scene.primitives:
        mask = res.instance == p.instance
        if mask.any():
            sd = _signed_distance(p, pts[mask].astype(np.float64))
            assert np.abs(sd).max() < 1e-3 * max(1.0, float(res.depth[mask].max()))
            # nothing else is in front: no other primitive's interior contains these points
            for q in scene.primitives:
                if q is not p:
                    assert (_signed_distance(q, pts[mask]) > -1e-6).all()


def test_two_views_see_the_same_world_point():
    scene = random_scene(11)
    a, b = orbit(2, 2.8, 30.0, 64, 64, start_deg=0.0, span_deg=40.0)
    ra, rb = render(scene, a), render(scene, b)
    pts = a.unproject(ra.depth)
    obj = ra.instance > 0
    uv, z = b.project(pts[obj])
    ui, vi = np.round(uv[:, 0]).astype(int), np.round(uv[:, 1]).astype(int)
    inside = (ui >= 0) & (ui < 64) & (vi >= 0) & (vi < 64)
    ids_a = ra.instance[obj][inside]
    zb = rb.depth[vi[inside], ui[inside]]
    visible = np.abs(zb - z[inside]) < 0.02  # not occluded in view b
    assert visible.mean() > 0.5
    # where the point is visible in b, b's instance map names the same object
    assert (rb.instance[vi[inside], ui[inside]][visible] == ids_a[visible]).mean() > 0.95


def test_a_sphere_seen_head_on():
    p = Primitive("sphere", (0.0, 0.5, 0.0), (0.5, 0.5, 0.5), color=(0.2, 0.4, 0.9), instance=3)
    cam = Camera((0.0, 0.5, 4.0), (0.0, 0.5, 0.0), fov_deg=40.0, width=33, height=33)
    res = render(Scene3D((p,)), cam)
    assert res.instance[16, 16] == 3
    assert res.depth[16, 16] == pytest.approx(3.5, abs=1e-5)
    # the silhouette's radius in pixels matches the analytic projection f * r / sqrt(d^2 - r^2)
    f = cam.focal
    radius_px = f * 0.5 / math.sqrt(4.0 ** 2 - 0.5 ** 2)
    area = (res.instance == 3).sum()
    assert area == pytest.approx(math.pi * radius_px ** 2, rel=0.08)


def test_near_object_occludes_far_one():
    near = Primitive("box", (0.0, 0.3, 1.0), (0.3, 0.3, 0.3), instance=1)
    far = Primitive("cylinder", (0.0, 0.5, -1.0), (0.5, 0.5, 0.5), instance=2)
    cam = Camera((0.0, 0.5, 4.0), (0.0, 0.3, 0.0), width=32, height=32)
    res = render(Scene3D((far, near)), cam)
    c = res.instance[16, 16]
    assert c == 1
    assert (res.instance == 2).any()
