"""Scene geometries for the crowd miniature: walls, entrances (Poisson sources) and routes of waypoint regions.

Every scene lives in a 20 m x 20 m window ``[0, 20] x [0, 20]`` (the size of the GC window in STDDN/SPDiff). Four kinds,
each with parametrised variants so that evaluation can hold out geometries the models never saw in training:

* ``corridor``   bidirectional corridor of width ``w`` (counter-flow, lane formation);
* ``bottleneck`` a room emptying through a gap of width ``g`` into a short corridor;
* ``crossing``   two perpendicular streets of width ``w`` with crossing flows (plus weaker reverse flows);
* ``concourse``  an open hall with doors on its sides and pillars (GC-like): everyone walks from a door to another.

``TRAIN_SCENES`` and ``EVAL_SCENES`` are disjoint: the held-out variants (corridor w = 5 m, bottleneck g = 1.6 m,
crossing w = 6 m, concourse layout C) are only used for evaluation. Units: metres, seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from backend.registry import choose

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1
Segment = tuple[float, float, float, float]  # x0, y0, x1, y1

SIZE = 20.0


@dataclass(frozen=True)
class Route:
    """A sequence of waypoint regions; each agent draws one point uniformly in each region. The last region lies just
    outside the window (the exit)."""

    regions: tuple[Rect, ...]
    weight: float = 1.0


@dataclass(frozen=True)
class Source:
    """An entrance: agents appear uniformly in ``region`` as a Poisson process of ``rate`` agents per second."""

    region: Rect
    rate: float
    routes: tuple[Route, ...]


@dataclass(frozen=True)
class Scene:
    """A scene: walls (line segments), sources, and the window ``bounds`` (x0, y0, x1, y1)."""

    name: str
    kind: str
    walls: tuple[Segment, ...]
    sources: tuple[Source, ...]
    bounds: Rect = (0.0, 0.0, SIZE, SIZE)
    params: dict[str, float] = field(default_factory=dict, compare=False, hash=False)

    def wall_array(self) -> np.ndarray:
        """Walls as a float32 array ``[S, 4]`` (possibly empty)."""
        return np.asarray(self.walls, dtype=np.float32).reshape(-1, 4)

    def obstacle_points(self, spacing: float = 0.3) -> np.ndarray:
        """Points sampled along the walls every ``spacing`` metres, ``[M, 2]`` (the network sees walls as points, as the
        released code does with GC's obstacle points)."""
        pts = []
        for x0, y0, x1, y1 in self.walls:
            length = float(np.hypot(x1 - x0, y1 - y0))
            n = max(2, int(np.ceil(length / spacing)) + 1)
            s = np.linspace(0.0, 1.0, n)
            pts.append(np.stack([x0 + s * (x1 - x0), y0 + s * (y1 - y0)], axis=1))
        if not pts:
            return np.zeros((0, 2), dtype=np.float32)
        return np.concatenate(pts).astype(np.float32)


def _box(cx: float, cy: float, half: float) -> tuple[Segment, ...]:
    x0, y0, x1, y1 = cx - half, cy - half, cx + half, cy + half
    return ((x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0))


def corridor(width: float, rate: float = 1.6) -> Scene:
    lo, hi = SIZE / 2 - width / 2, SIZE / 2 + width / 2
    walls = ((0.0, lo, SIZE, lo), (0.0, hi, SIZE, hi))
    lane = (lo + 0.4, hi - 0.4)
    left = Source((0.3, lane[0], 1.5, lane[1]), rate, (Route(((SIZE + 0.3, lane[0], SIZE + 0.6, lane[1]),)),))
    right = Source((SIZE - 1.5, lane[0], SIZE - 0.3, lane[1]), rate, (Route(((-0.6, lane[0], -0.3, lane[1]),)),))
    return Scene(f"corridor-w{width:g}", "corridor", walls, (left, right), params={"width": width})


def bottleneck(gap: float, rate: float = 2.5) -> Scene:
    c = SIZE / 2
    walls = (
        (0.0, 4.0, 12.0, 4.0), (0.0, 16.0, 12.0, 16.0), (0.0, 4.0, 0.0, 16.0),  # the room
        (12.0, 4.0, 12.0, c - gap / 2), (12.0, c + gap / 2, 12.0, 16.0),  # the wall with the gap
        (12.0, 7.0, SIZE, 7.0), (12.0, 13.0, SIZE, 13.0),  # the corridor behind it
    )
    through = (12.7, c - gap / 4, 13.1, c + gap / 4)
    exit_ = (SIZE + 0.3, 8.0, SIZE + 0.6, 12.0)
    src = Source((0.5, 5.0, 4.0, 15.0), rate, (Route((through, exit_)),))
    return Scene(f"bottleneck-g{gap:g}", "bottleneck", walls, (src,), params={"gap": gap})


def crossing(width: float, rate: float = 1.2, reverse_rate: float = 0.4) -> Scene:
    lo, hi = SIZE / 2 - width / 2, SIZE / 2 + width / 2
    walls = (
        (0.0, lo, lo, lo), (lo, lo, lo, 0.0),  # bottom-left block
        (hi, 0.0, hi, lo), (hi, lo, SIZE, lo),  # bottom-right
        (SIZE, hi, hi, hi), (hi, hi, hi, SIZE),  # top-right
        (lo, SIZE, lo, hi), (lo, hi, 0.0, hi),  # top-left
    )
    a, b = lo + 0.4, hi - 0.4
    east = Route(((SIZE + 0.3, a, SIZE + 0.6, b),))
    west = Route(((-0.6, a, -0.3, b),))
    north = Route(((a, SIZE + 0.3, b, SIZE + 0.6),))
    south = Route(((a, -0.6, b, -0.3),))
    sources = (
        Source((0.3, a, 1.5, b), rate, (east,)),
        Source((a, 0.3, b, 1.5), rate, (north,)),
        Source((SIZE - 1.5, a, SIZE - 0.3, b), reverse_rate, (west,)),
        Source((a, SIZE - 1.5, b, SIZE - 0.3), reverse_rate, (south,)),
    )
    return Scene(f"crossing-w{width:g}", "crossing", walls, sources, params={"width": width})


# Concourse layouts: doors as (side, centre along the side, width); pillars as (cx, cy, half size).
_LAYOUTS: dict[str, tuple[tuple[tuple[str, float, float], ...], tuple[tuple[float, float, float], ...]]] = {
    "A": ((("W", 5.0, 3.0), ("E", 15.0, 3.0), ("S", 10.0, 3.0), ("N", 4.0, 3.0), ("N", 15.0, 2.5)),
          ((7.0, 12.0, 0.75), (13.0, 8.0, 0.75))),
    "B": ((("W", 14.0, 3.0), ("E", 6.0, 3.0), ("N", 15.0, 3.0), ("S", 5.0, 3.0), ("S", 14.0, 2.5)),
          ((10.0, 10.0, 1.0),)),
    "C": ((("W", 10.0, 3.0), ("E", 12.0, 3.0), ("N", 8.0, 3.0), ("S", 13.0, 3.0), ("N", 16.0, 2.5)),
          ((6.5, 13.5, 0.75), (13.5, 6.5, 0.75))),
}


def _door_geometry(side: str, c: float, w: float) -> tuple[Rect, Rect, Rect]:
    """(spawn region inside the door, waypoint 1 m inside the door, exit region outside)."""
    a, b = c - w / 2 + 0.4, c + w / 2 - 0.4
    if side == "W":
        return (0.3, a, 1.3, b), (1.0, a, 1.2, b), (-0.6, a, -0.3, b)
    if side == "E":
        return (SIZE - 1.3, a, SIZE - 0.3, b), (SIZE - 1.2, a, SIZE - 1.0, b), (SIZE + 0.3, a, SIZE + 0.6, b)
    if side == "S":
        return (a, 0.3, b, 1.3), (a, 1.0, b, 1.2), (a, -0.6, b, -0.3)
    return (a, SIZE - 1.3, b, SIZE - 0.3), (a, SIZE - 1.2, b, SIZE - 1.0), (a, SIZE + 0.3, b, SIZE + 0.6)


def concourse(layout: str = "A", rate: float = 0.55) -> Scene:
    doors, pillars = _LAYOUTS[layout]
    walls: list[Segment] = []
    for side in "WESN":
        gaps = sorted((c - w / 2, c + w / 2) for s, c, w in doors if s == side)
        cuts = [0.0] + [v for g in gaps for v in g] + [SIZE]
        for lo, hi in zip(cuts[0::2], cuts[1::2], strict=True):
            if hi - lo < 1e-6:
                continue
            if side == "W":
                walls.append((0.0, lo, 0.0, hi))
            elif side == "E":
                walls.append((SIZE, lo, SIZE, hi))
            elif side == "S":
                walls.append((lo, 0.0, hi, 0.0))
            else:
                walls.append((lo, SIZE, hi, SIZE))
    for cx, cy, h in pillars:
        walls.extend(_box(cx, cy, h))
    geo = [_door_geometry(s, c, w) for s, c, w in doors]
    sources = []
    for i, (spawn, _, _) in enumerate(geo):
        routes = tuple(Route((inside, outside)) for j, (_, inside, outside) in enumerate(geo) if j != i)
        sources.append(Source(spawn, rate, routes))
    return Scene(f"concourse-{layout}", "concourse", tuple(walls), tuple(sources), params={"layout": ord(layout)})


def open_room() -> Scene:
    """An empty walled room without sources (for unit tests and the benchmark's synthetic crowds)."""
    walls = ((0.0, 0.0, SIZE, 0.0), (SIZE, 0.0, SIZE, SIZE), (SIZE, SIZE, 0.0, SIZE), (0.0, SIZE, 0.0, 0.0))
    return Scene("open-room", "room", walls, ())


TRAIN_SCENES: tuple[Scene, ...] = (
    corridor(4.0), corridor(6.0), bottleneck(1.2), bottleneck(2.0),
    crossing(5.0), crossing(7.0), concourse("A"), concourse("B"),
)
EVAL_SCENES: tuple[Scene, ...] = (corridor(5.0), bottleneck(1.6), crossing(6.0), concourse("C"))

#: The presets users pick from (the held-out evaluation geometries), by kind.
PRESETS: dict[str, Scene] = {s.kind: s for s in EVAL_SCENES}


def get_scene(name: str) -> Scene:
    """A scene by kind (``bottleneck`` = its held-out preset) or full name (``corridor-w4``); an unknown name raises
    InputError (a ValueError) listing the valid ones."""
    scenes = {**{s.name: s for s in (*TRAIN_SCENES, *EVAL_SCENES)}, **PRESETS}
    return scenes[choose(name, sorted(scenes), "scene")]
