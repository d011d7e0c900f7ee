"""Procedural 3-D scenes, pinhole cameras and an analytic ray-cast renderer with colour, depth and instance ids.

A scene is a few solid primitives (boxes, spheres, vertical cylinders) resting on a square ground plane at
``y = 0`` (half-size :data:`FLOOR_HALF`), under a sky of one colour. Each primitive has a colour, a texture
(``plain``, ``stripes`` or ``checker``, painted in the primitive's own frame so it sticks to the object from every
view) and an instance id >= 1. The world is right-handed with ``y`` up.

A :class:`Camera` is a pinhole with square pixels: ``fov_deg`` is the vertical field of view, the principal point is
the image centre, pixel ``(u, v)`` has its centre at integer coordinates (OpenCV: ``x`` right, ``y`` down, ``z``
forward). :func:`render` casts one ray per pixel centre and intersects it analytically with every primitive and the
floor (numpy, vectorised over pixels: a 64 x 64 view of four objects takes a few milliseconds), then shades the
nearest hit with Lambert's law (one directional light plus ambient; no shadows, no reflections).

Shapes of the public API:

| name | what | shapes |
|---|---|---|
| ``Primitive`` | ``kind``, ``center``, ``size`` (box half-extents; sphere ``(r, r, r)``; cylinder ``(r, h, r)`` with half-height ``h``), ``yaw``, ``color``, ``texture``, ``instance`` | |
| ``Scene3D`` | ``primitives``, ``floor_color``, ``background_color`` | |
| ``random_scene(seed, ...)`` | objects on the floor, not intersecting; same seed, same scene | ``Scene3D`` |
| ``Camera`` | ``intrinsics()`` ``K [3, 3]``, ``world_to_camera()`` ``[4, 4]``, ``rays()`` origins, dirs ``[H, W, 3]``, ``project(points)`` ``[..., 2]`` and z ``[...]``, ``unproject(depth)`` ``[H, W, 3]`` | |
| ``orbit(n, radius, elevation_deg, width, height, ...)`` | cameras on a circle, looking at ``center`` | ``list[Camera]`` |
| ``render(scene, camera)`` | ``RenderResult``: ``rgb`` float32 ``[H, W, 3]`` in [0, 1], ``depth`` float32 ``[H, W]`` (camera z; ``inf`` where nothing is hit), ``instance`` int32 ``[H, W]`` (0 floor and sky) | |

Invariants (``tests/backend/test_scene3d.py``): determinism; objects rest on the floor and do not overlap; the
camera's rotation is orthonormal with the look-at point on the optical axis; rays go through their pixels; depth
unprojects onto the surface of the primitive named by the instance map, and to the same world point from two views.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

KINDS = ("box", "sphere", "cylinder")
TEXTURES3D = ("plain", "stripes", "checker")
FLOOR_HALF = 3.0  # the ground plane is the square |x|, |z| <= FLOOR_HALF at y = 0
LIGHT = (0.35, 0.85, 0.4)  # direction towards the light (normalised at use)
AMBIENT = 0.35
# RGB in [0, 1]: distinct, saturated colours
PALETTE3D: tuple[tuple[float, float, float], ...] = (
    (0.84, 0.15, 0.16), (0.17, 0.63, 0.17), (0.12, 0.35, 0.86), (0.92, 0.78, 0.08), (0.96, 0.51, 0.08),
    (0.55, 0.24, 0.71), (0.08, 0.67, 0.78), (0.82, 0.16, 0.63), (0.55, 0.33, 0.14), (0.3, 0.3, 0.3),
)
Vec3 = tuple[float, float, float]


def _vec3(v, name: str) -> Vec3:
    t = tuple(float(x) for x in v)
    if len(t) != 3 or not all(math.isfinite(x) for x in t):
        raise ValueError(f"{name} must be three finite numbers, got {v!r}")
    return t  # type: ignore[return-value]


@dataclass(frozen=True)
class Primitive:
    """One solid. ``size``: half-extents ``(sx, sy, sz)`` for a box, ``(r, r, r)`` for a sphere, ``(r, h, r)``
    (radius, half-height, radius) for a vertical cylinder. ``yaw`` turns the object (and its texture) about the up
    axis; ``color`` is RGB in [0, 1]; ``instance`` >= 1 is its id in the instance map."""

    kind: str
    center: Vec3
    size: Vec3
    yaw: float = 0.0
    color: Vec3 = (0.8, 0.2, 0.2)
    texture: str = "plain"
    instance: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.texture not in TEXTURES3D:
            raise ValueError(f"texture must be one of {TEXTURES3D}, got {self.texture!r}")
        object.__setattr__(self, "center", _vec3(self.center, "center"))
        object.__setattr__(self, "size", _vec3(self.size, "size"))
        object.__setattr__(self, "color", _vec3(self.color, "color"))
        if min(self.size) <= 0:
            raise ValueError(f"size must be positive, got {self.size}")
        if self.kind == "sphere" and not (self.size[0] == self.size[1] == self.size[2]):
            raise ValueError("a sphere's size is (r, r, r)")
        if self.kind == "cylinder" and self.size[0] != self.size[2]:
            raise ValueError("a cylinder's size is (r, h, r)")
        if not all(0.0 <= c <= 1.0 for c in self.color):
            raise ValueError(f"color must lie in [0, 1], got {self.color}")
        if int(self.instance) < 1:
            raise ValueError("instance must be >= 1 (0 is the floor and the sky)")
        object.__setattr__(self, "instance", int(self.instance))
        object.__setattr__(self, "yaw", float(self.yaw))

    @property
    def footprint(self) -> float:
        """The radius of a vertical cylinder about the centre that contains the object (for placement)."""
        if self.kind == "box":
            return math.hypot(self.size[0], self.size[2])
        return self.size[0]

    @property
    def bottom(self) -> float:
        return self.center[1] - self.size[1]


@dataclass(frozen=True)
class Scene3D:
    """Primitives on the ground plane ``y = 0`` (colour ``floor_color``) under a sky of ``background_color``."""

    primitives: tuple[Primitive, ...]
    floor_color: Vec3 = (0.78, 0.76, 0.72)
    background_color: Vec3 = (0.86, 0.9, 0.96)

    def __post_init__(self):
        object.__setattr__(self, "primitives", tuple(self.primitives))
        object.__setattr__(self, "floor_color", _vec3(self.floor_color, "floor_color"))
        object.__setattr__(self, "background_color", _vec3(self.background_color, "background_color"))
        ids = [p.instance for p in self.primitives]
        if len(set(ids)) != len(ids):
            raise ValueError(f"instance ids must be unique, got {ids}")

    @property
    def instances(self) -> tuple[int, ...]:
        return tuple(p.instance for p in self.primitives)


def random_scene(seed: int, n_objects: tuple[int, int] = (2, 4), kinds: Sequence[str] = KINDS,
                 textures: Sequence[str] = TEXTURES3D,
                 palette: Sequence[Sequence[float]] | None = None, distinct_colors: bool = True) -> Scene3D:
    """A random scene: ``n_objects[0]..n_objects[1]`` (inclusive) primitives of the given kinds and textures, with
    distinct palette colours (``palette``: RGB triples in [0, 1], default :data:`PALETTE3D`; ``distinct_colors``
    False draws them with replacement, so objects may share a colour), resting on the floor
    within 1.3 of the origin, footprints at least 0.08 apart (so they never intersect), random yaw, instance ids
    1..n in placement order. Same seed and arguments, same scene (numpy ``default_rng(seed)``)."""
    kinds, textures = tuple(kinds), tuple(textures)
    if not kinds or any(k not in KINDS for k in kinds):
        raise ValueError(f"kinds must be a non-empty subset of {KINDS}")
    if not textures or any(t not in TEXTURES3D for t in textures):
        raise ValueError(f"textures must be a non-empty subset of {TEXTURES3D}")
    lo, hi = int(n_objects[0]), int(n_objects[1])
    if not 1 <= lo <= hi <= 8:
        raise ValueError("n_objects must satisfy 1 <= low <= high <= 8")
    pal = [tuple(float(c) for c in col) for col in (palette if palette is not None else PALETTE3D)]
    rng = np.random.default_rng(int(seed))
    n = int(rng.integers(lo, hi + 1))
    if distinct_colors:
        if len(pal) < n:
            raise ValueError(f"the palette needs at least {n} colours")
        colors = rng.permutation(len(pal))[:n]
    else:
        colors = rng.integers(0, len(pal), size=n)
    floor = tuple(float(x) for x in rng.uniform(0.62, 0.8) + rng.uniform(-0.04, 0.04, 3))
    sky = tuple(float(x) for x in np.clip(np.array([0.82, 0.87, 0.95]) + rng.uniform(-0.04, 0.04, 3), 0, 1))
    prims: list[Primitive] = []
    for i in range(n):
        kind = kinds[int(rng.integers(len(kinds)))]
        tex = textures[int(rng.integers(len(textures)))]
        yaw = float(rng.uniform(0, math.pi))
        if kind == "box":
            size = (float(rng.uniform(0.15, 0.32)), float(rng.uniform(0.15, 0.35)), float(rng.uniform(0.15, 0.32)))
        elif kind == "sphere":
            r = float(rng.uniform(0.2, 0.34))
            size = (r, r, r)
        else:
            r = float(rng.uniform(0.14, 0.26))
            size = (r, float(rng.uniform(0.2, 0.4)), r)
        foot = math.hypot(size[0], size[2]) if kind == "box" else size[0]
        for _ in range(200):
            ang, rad = rng.uniform(0, 2 * math.pi), 1.3 * math.sqrt(rng.uniform(0, 1))
            x, z = rad * math.cos(ang), rad * math.sin(ang)
            if all(math.hypot(x - p.center[0], z - p.center[2]) >= foot + p.footprint + 0.08 for p in prims):
                break
        else:  # no room: stop with the objects placed so far (at least one)
            if prims:
                break
        prims.append(Primitive(kind, (x, size[1], z), size, yaw, pal[int(colors[i])], tex, i + 1))
    return Scene3D(tuple(prims), floor, sky)


# ---------------------------------------------------------------------------------------------------- cameras
@dataclass(frozen=True)
class Camera:
    """A pinhole at ``position`` looking at ``look_at`` with ``up`` roughly up; ``fov_deg`` is the vertical field of
    view of a ``width`` x ``height`` image."""

    position: Vec3
    look_at: Vec3
    up: Vec3 = (0.0, 1.0, 0.0)
    fov_deg: float = 50.0
    width: int = 64
    height: int = 64

    def __post_init__(self):
        for name in ("position", "look_at", "up"):
            object.__setattr__(self, name, _vec3(getattr(self, name), name))
        if not 1.0 <= float(self.fov_deg) <= 170.0:
            raise ValueError("fov_deg must lie in [1, 170]")
        if int(self.width) < 1 or int(self.height) < 1:
            raise ValueError("width and height must be >= 1")
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))
        f = np.subtract(self.look_at, self.position)
        if np.linalg.norm(f) < 1e-9:
            raise ValueError("position and look_at must differ")
        if np.linalg.norm(np.cross(f, self.up)) < 1e-9 * np.linalg.norm(f) * max(np.linalg.norm(self.up), 1e-12):
            raise ValueError("up must not be parallel to the viewing direction")

    @property
    def focal(self) -> float:
        return 0.5 * self.height / math.tan(math.radians(self.fov_deg) / 2)

    def intrinsics(self) -> np.ndarray:
        """``K`` float64 ``[3, 3]``: focal length in pixels on the diagonal, principal point at the image centre
        (pixel centres at integer coordinates)."""
        f = self.focal
        return np.array([[f, 0, (self.width - 1) / 2], [0, f, (self.height - 1) / 2], [0, 0, 1]], np.float64)

    def rotation(self) -> np.ndarray:
        """World-to-camera rotation ``[3, 3]``: rows are the camera's right, down and forward axes in world."""
        fwd = np.subtract(self.look_at, self.position).astype(np.float64)
        fwd /= np.linalg.norm(fwd)
        right = np.cross(fwd, self.up)
        right /= np.linalg.norm(right)
        down = np.cross(fwd, right)
        return np.stack([right, down, fwd])

    def world_to_camera(self) -> np.ndarray:
        """``[R | t]`` as float64 ``[4, 4]`` with ``x_cam = R x_world + t`` (OpenCV axes)."""
        r = self.rotation()
        m = np.eye(4)
        m[:3, :3] = r
        m[:3, 3] = -r @ np.asarray(self.position)
        return m

    def camera_to_world(self) -> np.ndarray:
        return np.linalg.inv(self.world_to_camera())

    def rays(self) -> tuple[np.ndarray, np.ndarray]:
        """Ray origins and unit directions through every pixel centre, float64 ``[H, W, 3]`` each (world frame)."""
        k = self.intrinsics()
        v, u = np.mgrid[0:self.height, 0:self.width].astype(np.float64)
        cam = np.stack([(u - k[0, 2]) / k[0, 0], (v - k[1, 2]) / k[1, 1], np.ones_like(u)], -1)
        dirs = cam @ self.rotation()  # R^T applied to each row vector
        dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
        origins = np.broadcast_to(np.asarray(self.position, np.float64), dirs.shape).copy()
        return origins, dirs

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World points ``[..., 3]`` -> pixel coordinates ``[..., 2]`` (u, v) and camera z ``[...]``."""
        p = np.asarray(points, np.float64)
        m = self.world_to_camera()
        cam = p @ m[:3, :3].T + m[:3, 3]
        z = cam[..., 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = (cam[..., :2] / z[..., None]) * self.focal + np.array(self.intrinsics()[:2, 2])
        return uv, z

    def unproject(self, depth: np.ndarray) -> np.ndarray:
        """A z-depth map ``[H, W]`` -> world points ``[H, W, 3]`` (``inf`` depth gives non-finite points)."""
        k = self.intrinsics()
        v, u = np.mgrid[0:self.height, 0:self.width].astype(np.float64)
        z = np.asarray(depth, np.float64)
        with np.errstate(invalid="ignore"):
            cam = np.stack([(u - k[0, 2]) / k[0, 0] * z, (v - k[1, 2]) / k[1, 1] * z, z], -1)
        m = self.world_to_camera()
        with np.errstate(invalid="ignore"):
            return (cam - m[:3, 3]) @ m[:3, :3]


def orbit(n: int, radius: float, elevation_deg: float, width: int, height: int, center: Vec3 = (0.0, 0.5, 0.0),
          start_deg: float = 0.0, span_deg: float = 360.0, fov_deg: float = 50.0) -> list[Camera]:
    """``n`` cameras on a horizontal circle of ``radius`` about ``center`` at ``elevation_deg`` above it, looking at
    ``center``; azimuths ``start_deg + span_deg * i / n`` (``i / (n - 1)`` when the span is below 360, so both ends
    are included). Azimuth 0 is on the +z axis, increasing towards +x."""
    if n < 1:
        raise ValueError("n must be >= 1")
    if radius <= 0:
        raise ValueError("radius must be positive")
    if not -89.0 <= elevation_deg <= 89.0:
        raise ValueError("elevation_deg must lie in [-89, 89]")
    c = np.asarray(_vec3(center, "center"))
    denom = n if (abs(span_deg) >= 360.0 or n == 1) else n - 1
    el = math.radians(elevation_deg)
    cams = []
    for i in range(n):
        az = math.radians(start_deg + span_deg * i / denom)
        pos = c + radius * np.array([math.cos(el) * math.sin(az), math.sin(el), math.cos(el) * math.cos(az)])
        cams.append(Camera(tuple(pos), tuple(c), (0.0, 1.0, 0.0), fov_deg, width, height))
    return cams


# ---------------------------------------------------------------------------------------------------- renderer
@dataclass(frozen=True)
class RenderResult:
    """``rgb`` float32 ``[H, W, 3]`` in [0, 1]; ``depth`` float32 ``[H, W]`` camera z (``inf`` on the sky);
    ``instance`` int32 ``[H, W]`` (0 floor and sky, ``k`` the primitive with ``instance == k``)."""

    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray


def _yaw_matrix(yaw: float) -> np.ndarray:
    """World-to-local rotation about y by ``-yaw`` (local = R (world - centre))."""
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]])


def _hit(p: Primitive, o: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nearest positive hit of rays ``o + t d`` (``[N, 3]``) with ``p``: ``t [N]`` (inf on a miss), the local
    surface point ``[N, 3]`` and the local normal ``[N, 3]``."""
    rot = _yaw_matrix(p.yaw)
    lo = (o - np.asarray(p.center)) @ rot.T
    ld = d @ rot.T
    sx, sy, sz = p.size
    n = o.shape[0]
    normal = np.zeros((n, 3))
    eps = 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        if p.kind == "box":
            half = np.array([sx, sy, sz])
            inv = 1.0 / np.where(np.abs(ld) < eps, eps, ld)
            t1, t2 = (-half - lo) * inv, (half - lo) * inv
            tmin, tmax = np.minimum(t1, t2), np.maximum(t1, t2)
            t_near, t_far = tmin.max(1), tmax.min(1)
            axis = tmin.argmax(1)
            t = np.where((t_near <= t_far) & (t_near > eps), t_near, np.inf)
            normal[np.arange(n), axis] = -np.sign(ld[np.arange(n), axis])
        elif p.kind == "sphere":
            r = sx
            b = (lo * ld).sum(1)
            c = (lo * lo).sum(1) - r * r
            disc = b * b - c
            sq = np.sqrt(np.maximum(disc, 0))
            t = np.where(disc >= 0, -b - sq, np.inf)
            t = np.where(t > eps, t, np.inf)
            normal = (lo + t[:, None] * ld) / r
        else:  # vertical cylinder with caps
            r, h = sx, sy
            a = ld[:, 0] ** 2 + ld[:, 2] ** 2
            b = lo[:, 0] * ld[:, 0] + lo[:, 2] * ld[:, 2]
            c = lo[:, 0] ** 2 + lo[:, 2] ** 2 - r * r
            disc = b * b - a * c
            ts = np.where((disc >= 0) & (a > eps), (-b - np.sqrt(np.maximum(disc, 0))) / a, np.inf)
            ys = lo[:, 1] + ts * ld[:, 1]
            ts = np.where((ts > eps) & (np.abs(ys) <= h), ts, np.inf)
            cap_y = np.where(lo[:, 1] > 0, h, -h)  # the cap facing the ray origin
            tc = (cap_y - lo[:, 1]) / np.where(np.abs(ld[:, 1]) < eps, eps, ld[:, 1])
            xc, zc = lo[:, 0] + tc * ld[:, 0], lo[:, 2] + tc * ld[:, 2]
            tc = np.where((tc > eps) & (xc * xc + zc * zc <= r * r), tc, np.inf)
            t = np.minimum(ts, tc)
            side = ts <= tc
            q = lo + t[:, None] * ld
            normal[:, 0] = np.where(side, q[:, 0] / r, 0)
            normal[:, 2] = np.where(side, q[:, 2] / r, 0)
            normal[:, 1] = np.where(side, 0, np.sign(cap_y))
    local = lo + np.where(np.isfinite(t), t, 0)[:, None] * ld
    normal = np.where(np.isfinite(t)[:, None], normal, 0.0)
    world_normal = normal @ rot  # rot is orthonormal: local -> world is rot^T
    return t, local, world_normal


def _texture(p: Primitive, local: np.ndarray) -> np.ndarray:
    """Per-point brightness factor ``[N]`` of the primitive's texture in its own frame (1 = its colour)."""
    if p.texture == "plain":
        return np.ones(local.shape[0])
    scale = 2 * max(p.size)
    if p.texture == "stripes":  # horizontal bands along the object's height
        k = np.floor((local[:, 1] + p.size[1]) / scale * 6.0)
    else:  # 3-D checkerboard
        k = np.floor(local / scale * 4.0 + 1e-6).sum(1)
    return np.where(k.astype(np.int64) % 2 == 0, 1.0, 0.45)


def render(scene: Scene3D, camera: Camera) -> RenderResult:
    """Ray-cast ``scene`` from ``camera``: the nearest hit per pixel among the floor square and the primitives,
    shaded ``colour * texture * (AMBIENT + (1 - AMBIENT) * max(0, n . light))``; the sky is ``background_color``."""
    origins, dirs = camera.rays()
    h, w = camera.height, camera.width
    o, d = origins.reshape(-1, 3), dirs.reshape(-1, 3)
    n = o.shape[0]
    light = np.asarray(LIGHT) / np.linalg.norm(LIGHT)
    best_t = np.full(n, np.inf)
    inst = np.zeros(n, np.int32)
    rgb = np.broadcast_to(np.asarray(scene.background_color), (n, 3)).copy()
    # the floor
    with np.errstate(divide="ignore", invalid="ignore"):
        tf = np.where(d[:, 1] < -1e-9, -o[:, 1] / d[:, 1], np.inf)
    pf = o + np.where(np.isfinite(tf), tf, 0)[:, None] * d
    tf = np.where((np.abs(pf[:, 0]) <= FLOOR_HALF) & (np.abs(pf[:, 2]) <= FLOOR_HALF), tf, np.inf)
    floor_hit = np.isfinite(tf)
    best_t = np.where(floor_hit, tf, best_t)
    floor_shade = AMBIENT + (1 - AMBIENT) * max(0.0, float(light[1]))
    rgb[floor_hit] = np.asarray(scene.floor_color) * floor_shade
    for p in scene.primitives:
        t, local, normal = _hit(p, o, d)
        closer = t < best_t
        if not closer.any():
            continue
        best_t = np.where(closer, t, best_t)
        inst[closer] = p.instance
        lam = np.clip(normal[closer] @ light, 0, None)
        shade = (AMBIENT + (1 - AMBIENT) * lam) * _texture(p, local[closer])
        rgb[closer] = np.asarray(p.color)[None, :] * shade[:, None]
    fwd = camera.rotation()[2]
    depth = np.where(np.isfinite(best_t), best_t * (d @ fwd), np.inf)
    return RenderResult(np.clip(rgb, 0, 1).reshape(h, w, 3).astype(np.float32),
                        depth.reshape(h, w).astype(np.float32), inst.reshape(h, w))


def to_uint8(rgb: np.ndarray) -> np.ndarray:
    """A float image in [0, 1] -> uint8 ``[H, W, 3]``."""
    return (np.clip(np.asarray(rgb), 0, 1) * 255 + 0.5).astype(np.uint8)
