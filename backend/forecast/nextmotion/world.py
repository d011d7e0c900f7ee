"""The 2-D rigid-body world: scenes simulated by pymunk (Chipmunk2D), rendered at 112 x 112, with the ground-truth
trajectories of a quasi-dense point grid.

Coordinates are pixels with y pointing down; gravity is 600 px/s^2; the ground is a static segment at ``y = 104``
with invisible walls just outside the frame. A scene is one of four kinds (:data:`KINDS`):

| kind | what | outcomes |
|---|---|---|
| ``drop`` | 1-3 blocks or balls released in the air fall, bounce, collide and topple | 1 |
| ``ramp`` | a block or ball on a static wedge slides or rolls down | 1 |
| ``peak`` | a ball resting on the apex of a static triangle | 2: rolls left or right |
| ``corner`` | a square balanced on one corner on the ground | 2: tips left or right |

The two ambiguous kinds are decided by a hidden nudge (a horizontal velocity of +-12 px/s, or an angular velocity
of +-0.5 rad/s) that the image does not show: both outcomes are simulated and the scene's realised future is one of
them, drawn from the seed. Grid points (stride ``s``, centred in their cells: ``s/2, 3s/2, ...``) that lie inside a
moving body at t = 0 follow that body's rigid motion (``body.local_to_world``); every other point stays put. Each
trajectory is recorded every 0.1 s for ``T`` steps as a displacement from its start, so a rigid object's trajectory
matrix (its points x 2T) has rank at most 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

SIZE = 112
GROUND = 104.0
GRAVITY = 600.0
FRAME_DT = 0.1
SUBSTEPS = 24
NUDGE_V = 12.0
NUDGE_W = 0.5
STATIC_RGB = (118, 118, 124)
GROUND_RGB = (92, 86, 80)
COLORS = ("red", "green", "blue", "yellow", "orange", "purple", "cyan", "magenta", "brown")


@dataclass(frozen=True)
class Body:
    """One moving rigid body at t = 0: ``shape`` is ``box`` (half sides ``w``, ``h``) or ``ball`` (radius ``w``)."""

    shape: str
    x: float
    y: float
    w: float
    h: float
    angle: float
    color: str
    vx: float = 0.0
    spin: float = 0.0


@dataclass
class Scene:
    """A rendered scene and its futures.

    ``image`` uint8 ``[112, 112, 3]``; ``futures`` float32 ``[n_outcomes, G, G, T, 2]`` displacements in pixels
    (G = 112 / stride); ``realised`` the index of the realised outcome; ``segments`` int ``[G, G]`` (0 = static,
    k = body k); ``kind`` one of :data:`KINDS`; ``ambiguous`` True when the futures differ."""

    image: np.ndarray
    futures: np.ndarray
    realised: int
    segments: np.ndarray
    kind: str
    seed: int
    statics: list = field(default_factory=list)

    @property
    def ambiguous(self) -> bool:
        return self.futures.shape[0] > 1

    @property
    def future(self) -> np.ndarray:
        """The realised future ``[G, G, T, 2]``."""
        return self.futures[self.realised]


def grid_points(stride: int) -> np.ndarray:
    """Grid point positions ``[G, G, 2]`` (x, y) in pixels, row-major (row = y)."""
    c = np.arange(stride / 2, SIZE, stride, dtype=np.float64)
    yy, xx = np.meshgrid(c, c, indexing="ij")
    return np.stack([xx, yy], -1)


def _space(statics: list[list[tuple[float, float]]]):
    import pymunk

    space = pymunk.Space()
    space.gravity = (0.0, GRAVITY)
    sb = space.static_body
    segs = [pymunk.Segment(sb, (-40, GROUND), (SIZE + 40, GROUND), 0.0),
            pymunk.Segment(sb, (-1, -200), (-1, GROUND), 0.0),
            pymunk.Segment(sb, (SIZE + 1, -200), (SIZE + 1, GROUND), 0.0)]
    polys = [pymunk.Poly(sb, verts) for verts in statics]
    for s in segs + polys:
        s.friction, s.elasticity = 0.9, 0.2
    space.add(*segs, *polys)
    return space


def _add(space, b: Body):
    import pymunk

    if b.shape == "ball":
        mass = math.pi * b.w * b.w / 100.0
        body = pymunk.Body(mass, pymunk.moment_for_circle(mass, 0, b.w))
        shape = pymunk.Circle(body, b.w)
    else:
        mass = 4 * b.w * b.h / 100.0
        body = pymunk.Body(mass, pymunk.moment_for_box(mass, (2 * b.w, 2 * b.h)))
        shape = pymunk.Poly.create_box(body, (2 * b.w, 2 * b.h), 0.0)
    body.position = (b.x, b.y)
    body.angle = b.angle
    body.velocity = (b.vx, 0.0)
    body.angular_velocity = b.spin
    shape.friction, shape.elasticity = 0.8, 0.25
    space.add(body, shape)
    return body, shape


def simulate(bodies: list[Body], statics: list, stride: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Simulate and track the grid: displacements float32 ``[G, G, T, 2]`` and segments int ``[G, G]``."""
    space = _space(statics)
    added = [_add(space, b) for b in bodies]
    pts = grid_points(stride)
    g = pts.shape[0]
    seg = np.zeros((g, g), np.int64)
    local: dict[tuple[int, int], tuple[int, object]] = {}
    for i in range(g):
        for j in range(g):
            p = (float(pts[i, j, 0]), float(pts[i, j, 1]))
            for k, (body, shape) in enumerate(added):
                if shape.point_query(p).distance < 0:
                    seg[i, j] = k + 1
                    local[(i, j)] = (k, body.world_to_local(p))
                    break
    out = np.zeros((g, g, steps, 2), np.float32)
    dt = FRAME_DT / SUBSTEPS
    for t in range(steps):
        for _ in range(SUBSTEPS):
            space.step(dt)
        for (i, j), (k, loc) in local.items():
            w = added[k][0].local_to_world(loc)
            out[i, j, t] = (w[0] - pts[i, j, 0], w[1] - pts[i, j, 1])
    return out, seg


# ------------------------------------------------------------------------------------------------ scene kinds
def _obj(rng: np.random.Generator, x: float, y: float, color: str, shape: str | None = None) -> Body:
    shape = shape or ("ball" if rng.random() < 0.4 else "box")
    if shape == "ball":
        r = float(rng.uniform(7, 12))
        return Body("ball", x, y, r, r, 0.0, color)
    w, h = float(rng.uniform(6, 14)), float(rng.uniform(6, 14))
    return Body("box", x, y, w, h, float(rng.uniform(-0.8, 0.8)), color)


def _drop(rng: np.random.Generator, colors: list[str]):
    n = int(rng.integers(1, 4))
    xs = rng.permutation(np.linspace(20, 92, 4))[:n]
    bodies = [_obj(rng, float(x + rng.uniform(-5, 5)), float(rng.uniform(18, 70)), colors[k]) for k, x in enumerate(xs)]
    return [bodies], []


def _ramp(rng: np.random.Generator, colors: list[str]):
    left = rng.random() < 0.5
    h = float(rng.uniform(30, 55))
    w = float(rng.uniform(55, 80))
    x0 = 4.0 if left else SIZE - 4.0
    x1 = x0 + w if left else x0 - w
    tri = [(x0, GROUND), (x0, GROUND - h), (x1, GROUND)]
    b = _obj(rng, 0, 0, colors[0])
    u = float(rng.uniform(0.15, 0.3))
    sx, sy = x0 + (x1 - x0) * u, GROUND - h * (1 - u)
    ang = math.atan2(h, abs(x1 - x0)) * (1 if left else -1)
    ext = b.w if b.shape == "ball" else b.h
    nx, ny = -math.sin(ang), -math.cos(ang)
    body = Body(b.shape, sx + nx * (ext + 0.5), sy + ny * (ext + 0.5), b.w, b.h,
                0.0 if b.shape == "ball" else ang, b.color)
    return [[body]], [tri]


def _peak(rng: np.random.Generator, colors: list[str]):
    ax = float(rng.uniform(40, 72))
    h = float(rng.uniform(25, 45))
    half = float(rng.uniform(22, 34))
    tri = [(ax - half, GROUND), (ax, GROUND - h), (ax + half, GROUND)]
    r = float(rng.uniform(7, 11))
    base = Body("ball", ax, GROUND - h - r, r, r, 0.0, colors[0])
    return [[Body(**{**base.__dict__, "vx": s * NUDGE_V})] for s in (-1, 1)], [tri]


def _corner(rng: np.random.Generator, colors: list[str]):
    s = float(rng.uniform(8, 13))
    x = float(rng.uniform(30, 82))
    base = Body("box", x, GROUND - s * math.sqrt(2), s, s, math.pi / 4, colors[0])
    return [[Body(**{**base.__dict__, "spin": sgn * NUDGE_W})] for sgn in (-1, 1)], []


KINDS = {"drop": _drop, "ramp": _ramp, "peak": _peak, "corner": _corner}
AMBIGUOUS = ("peak", "corner")


def render(bodies: list[Body], statics: list, bg: tuple[int, int, int]) -> np.ndarray:
    """The t = 0 picture, drawn at 2x and downsampled: uint8 ``[112, 112, 3]``."""
    from PIL import Image, ImageDraw

    from ...scenes.objects import PALETTE

    k = 2
    img = Image.new("RGB", (SIZE * k, SIZE * k), bg)
    d = ImageDraw.Draw(img)
    d.rectangle([0, GROUND * k, SIZE * k, SIZE * k], fill=GROUND_RGB)
    for tri in statics:
        d.polygon([(x * k, y * k) for x, y in tri], fill=STATIC_RGB)
    for b in bodies:
        rgb = PALETTE[b.color]
        dark = tuple(int(c * 0.55) for c in rgb)
        if b.shape == "ball":
            d.ellipse([(b.x - b.w) * k, (b.y - b.w) * k, (b.x + b.w) * k, (b.y + b.w) * k], fill=rgb,
                      outline=dark, width=k)
        else:
            c, s = math.cos(b.angle), math.sin(b.angle)
            pts = [(b.x + c * u - s * v, b.y + s * u + c * v) for u, v in
                   ((-b.w, -b.h), (b.w, -b.h), (b.w, b.h), (-b.w, b.h))]
            d.polygon([(x * k, y * k) for x, y in pts], fill=rgb, outline=dark, width=k)
    return np.asarray(img.resize((SIZE, SIZE), Image.Resampling.LANCZOS), dtype=np.uint8)


def make_scene(seed: int, kind: str | None = None, stride: int = 8, steps: int = 8) -> Scene:
    """One scene from its seed (same seed, same scene). ``kind`` None draws one: 30 % drop, 20 % ramp, 25 % peak,
    25 % corner."""
    rng = np.random.default_rng([seed, 52])
    if kind is None:
        kind = str(rng.choice(list(KINDS), p=[0.3, 0.2, 0.25, 0.25]))
    colors = [str(c) for c in rng.permutation(COLORS)]
    variants, statics = KINDS[kind](rng, colors)
    bg = tuple(int(v) for v in rng.integers(185, 240, size=3))
    futures, seg = [], None
    for bodies in variants:
        f, seg = simulate(bodies, statics, stride, steps)
        futures.append(f)
    image = render(variants[0], statics, bg)
    realised = int(rng.integers(0, len(variants)))
    return Scene(image=image, futures=np.stack(futures), realised=realised, segments=seg, kind=kind, seed=seed,
                 statics=statics)


def make_scenes(seeds, kind: str | None = None, stride: int = 8, steps: int = 8) -> list[Scene]:
    return [make_scene(int(s), kind, stride, steps) for s in seeds]
