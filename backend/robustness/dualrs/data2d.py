"""2-D classification data for the randomized-smoothing demos: synthetic presets and validated CSV uploads.

Presets (our design, from the project spec): two interleaved moons whose classes meet closely (small noise levels
certify them best) plus two well-separated blobs far away (large noise levels give them large radii), so no single
global sigma suits every input. ``circles`` is the same idea with two concentric rings.

CSV uploads: UTF-8 text, a header row optional, columns ``x, y, label`` (any further columns are ignored); 20..20,000
rows; 2..10 classes with at least 5 rows each; labels may be integers or names. Features are centred and divided by
one common scale (so L2 geometry, hence radii, is preserved up to that factor: ``scale``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...io.text import decode_text
from ...registry import Registry


@dataclass
class Dataset2D:
    """Train/test points ``x_* [n, 2]`` (float32) with integer labels ``y_* [n]``; ``class_names`` index the labels.

    ``scale`` and ``offset`` map model units back to the user's units: ``x_user = x * scale + offset``.
    """

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    class_names: list[str]
    scale: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)
    notes: dict = field(default_factory=dict)

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    def bounds(self, margin: float = 1.0) -> tuple[float, float, float, float]:
        """``(xmin, xmax, ymin, ymax)`` of all points, widened by ``margin``."""
        pts = np.concatenate([self.x_train, self.x_test])
        lo, hi = pts.min(0) - margin, pts.max(0) + margin
        return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


def _moons(n: int, rng: np.random.Generator, noise: float = 0.05, size: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    n0 = n // 2
    t0, t1 = rng.uniform(0, np.pi, n0), rng.uniform(0, np.pi, n - n0)
    a = np.stack([np.cos(t0), np.sin(t0)], 1)
    b = np.stack([1 - np.cos(t1), 0.5 - np.sin(t1)], 1)
    x = size * np.concatenate([a, b]) + noise * rng.standard_normal((n, 2))
    return x, np.concatenate([np.zeros(n0, int), np.ones(n - n0, int)])


def _circles(n: int, rng: np.random.Generator, noise: float = 0.04) -> tuple[np.ndarray, np.ndarray]:
    n0 = n // 2
    t = rng.uniform(0, 2 * np.pi, n)
    radius = np.where(np.arange(n) < n0, 0.8, 0.4)
    x = np.stack([radius * np.cos(t), radius * np.sin(t)], 1) + noise * rng.standard_normal((n, 2))
    return x, (np.arange(n) >= n0).astype(int)


def _blobs(n: int, rng: np.random.Generator, centers: np.ndarray, std: float) -> tuple[np.ndarray, np.ndarray]:
    y = np.arange(n) % len(centers)
    return centers[y] + std * rng.standard_normal((n, 2)), y


# The presets: each entry draws the near part ``(n, rng) -> (x [n, 2], y [n])``; the far blobs are added by
# make_dataset.
DATASETS: Registry[Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]]] = Registry("dataset")
DATASETS.add("moons", _moons, label="moons", kind="reference",
             about="two half-size moons (noise 0.05) whose classes meet closely, plus two blobs about 9 units away "
                   "(70% / 30% of points)")
DATASETS.add("circles", _circles, label="circles", kind="reference",
             about="two concentric rings (radii 0.4 and 0.8, noise 0.04) plus two blobs about 9 units away "
                   "(70% / 30%)")


def make_dataset(name: str = "moons", n_train: int = 1500, n_test: int = 500, seed: int = 0) -> Dataset2D:
    """A synthetic preset (see :data:`DATASETS`); train and test come from independent draws of the same
    generator."""
    near = DATASETS.get(name)
    name = DATASETS.key(name)
    if not (20 <= n_train <= 50_000 and 1 <= n_test <= 20_000):
        raise InputError("Need 20..50,000 training points and 1..20,000 test points.")
    centers = np.array([[-8.5, 0.1], [9.0, 0.1]])  # class 0 far left, class 1 far right

    def draw(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        n_near = round(0.7 * n)
        xa, ya = near(n_near, rng)
        xb, yb = _blobs(n - n_near, rng, centers, 0.4)
        x, y = np.concatenate([xa, xb]), np.concatenate([ya, yb])
        perm = rng.permutation(n)
        return x[perm].astype(np.float32), y[perm]

    rng = np.random.default_rng(seed)
    x_tr, y_tr = draw(n_train, rng)
    x_te, y_te = draw(n_test, np.random.default_rng(seed + 10_007))
    return Dataset2D(name, x_tr, y_tr, x_te, y_te, ["class 0", "class 1"],
                     notes={"preset": DATASETS.entry(name).about})


def load_csv(
    data: bytes, test_frac: float = 0.3, seed: int = 0, max_rows: int = 20_000, name: str = "upload"
) -> Dataset2D:
    """Parse and validate an uploaded 2-D CSV (see the module docstring); split it into train/test at random."""
    text = decode_text(data, max_bytes=5 * 1024 * 1024, name="The CSV file")
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t ")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline=""), dialect) if any(c.strip() for c in r)]
    except csv.Error as err:  # e.g. a carriage return inside an unquoted field
        raise InputError(f"The CSV file cannot be parsed ({err}). Save it as plain comma-separated text.") from None
    if not rows:
        raise InputError("The CSV file has no rows.")

    def is_number(s: str) -> bool:
        try:
            float(s)
            return True
        except ValueError:
            return False

    if len(rows[0]) >= 2 and not (is_number(rows[0][0]) and is_number(rows[0][1])):
        rows = rows[1:]  # header
    if len(rows) < 20:
        raise InputError(f"The CSV has {len(rows)} data rows; at least 20 are needed (columns: x, y, label).")
    if len(rows) > max_rows:
        raise InputError(f"The CSV has {len(rows)} rows; the limit is {max_rows}. Subsample it and upload again.")
    xs, labels = [], []
    for i, r in enumerate(rows, start=1):
        if len(r) < 3:
            raise InputError(f"Row {i} has {len(r)} column(s); each row needs x, y and a label.")
        try:
            a, b = float(r[0]), float(r[1])
        except ValueError:
            raise InputError(f"Row {i}: x and y must be numbers, got {r[0]!r} and {r[1]!r}.") from None
        if not (np.isfinite(a) and np.isfinite(b)):
            raise InputError(f"Row {i}: x and y must be finite numbers.")
        if max(abs(a), abs(b)) > 1e12:  # beyond this the spread (a sum of squares) overflows float64
            raise InputError(f"Row {i}: |x| or |y| is above 1e12; rescale the features.")
        xs.append((a, b))
        labels.append(r[2].strip())
    names, y = np.unique(np.array(labels), return_inverse=True)
    if not 2 <= len(names) <= 10:
        raise InputError(f"The label column has {len(names)} distinct value(s); 2..10 classes are supported.")
    counts = np.bincount(y)
    if counts.min() < 5:
        raise InputError(f"Class {names[counts.argmin()]!r} has only {counts.min()} rows; each class needs at least 5.")
    x = np.asarray(xs, dtype=np.float64)
    offset = x.mean(0)
    scale = float(np.sqrt(((x - offset) ** 2).sum(1).mean() / 2))
    if scale <= 0:
        raise InputError("All points are identical; the features need some spread.")
    x = ((x - offset) / scale).astype(np.float32)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(x))
    n_test = max(1, round(test_frac * len(x)))
    te, tr = perm[:n_test], perm[n_test:]
    return Dataset2D(
        name,
        x[tr],
        y[tr],
        x[te],
        y[te],
        [str(s) for s in names],
        scale=scale,
        offset=(float(offset[0]), float(offset[1])),
    )
