"""Item catalogues for the DMNL bandit: a synthetic catalogue with categories, or the user's CSV item table.

A :class:`Catalogue` holds ``N`` items with base features ``[N, d]`` (rescaled so every row has norm at most 1), a
category label per item and the hidden preference ``theta*`` (unit norm, so utilities ``x . theta*`` lie in
``[-1, 1]``). Each round the user's context perturbs the base features (``x_ti = f_i + sigma xi_ti``, projected back
into the unit ball): the bandit is contextual, and ``sigma = 0`` gives a fixed catalogue.

Synthetic catalogues put the items of a category near a category centre, so items of one category are near
substitutes: relevance alone picks several items of the best category, diversity spreads them.

The CSV item table (input kind ``item_table``): a header row, numeric feature columns, one category column (the
column named ``category`` when there is one, else the last column) and optionally an id or name column (the item's
label: ``id_column``, else the first other column in which no cell is a number); 10-500 items, 1-20 features, 2-50 categories,
2 MB. Features are standardised, then rescaled into the unit ball.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError

MAX_ITEMS = 500
MAX_FEATURES = 20
MAX_BYTES = 2 * 2**20


@dataclass
class Catalogue:
    """``features`` ``[N, d]`` (row norms <= 1), ``categories`` ``[N]`` int, ``category_names``, ``theta`` ``[d]``."""

    features: np.ndarray
    categories: np.ndarray
    category_names: list[str]
    theta: np.ndarray
    names: list[str]
    source: str

    @property
    def n_items(self) -> int:
        return int(self.features.shape[0])

    @property
    def dim(self) -> int:
        return int(self.features.shape[1])

    def contexts(self, rounds: int, sigma: float, seed: int) -> np.ndarray:
        """Per-round item features ``[T, N, d]``: the base features plus Gaussian noise, projected into the unit ball."""
        rng = np.random.default_rng([seed, 7])
        x = self.features[None] + sigma * rng.standard_normal((rounds, *self.features.shape))
        return _unit_ball(x)

    def summary(self) -> dict[str, object]:
        return {"source": self.source, "n_items": self.n_items, "dim": self.dim,
                "n_categories": len(self.category_names), "categories": self.category_names}


def _unit_ball(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norm, 1.0)


def _theta(dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng([seed, 11]).standard_normal(dim)
    return v / np.linalg.norm(v)


def synthetic(n_items: int = 20, n_categories: int = 5, dim: int = 5, spread: float = 0.35, seed: int = 0) -> Catalogue:
    """``n_items`` items in ``n_categories`` clusters of features in ``R^dim`` (categories assigned round robin)."""
    if not 3 <= n_items <= MAX_ITEMS:
        raise InputError(f"The catalogue needs 3 to {MAX_ITEMS} items (got {n_items}).")
    if not 2 <= n_categories <= min(50, n_items):
        raise InputError(f"Use 2 to {min(50, n_items)} categories for {n_items} items (got {n_categories}).")
    if not 1 <= dim <= MAX_FEATURES:
        raise InputError(f"The feature dimension must be 1 to {MAX_FEATURES} (got {dim}).")
    rng = np.random.default_rng([seed, 3])
    centres = rng.standard_normal((n_categories, dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    cats = np.arange(n_items) % n_categories
    f = 0.8 * centres[cats] + spread * rng.standard_normal((n_items, dim)) / np.sqrt(dim)
    names = [f"item {i}" for i in range(n_items)]
    return Catalogue(_unit_ball(f), cats.astype(np.int64), [f"c{c}" for c in range(n_categories)],
                     _theta(dim, seed), names, f"synthetic N={n_items}, {n_categories} categories, d={dim}")


def read_item_table(data: bytes, name: str = "the item table", category_column: str | None = None,
                    seed: int = 0, id_column: str | None = None) -> Catalogue:
    """Decode and validate a CSV item table (see the module docstring); InputError says what to fix."""
    from ...optim.dada.problems import load_csv_table

    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {MAX_BYTES // 2**20} MB.")
    head = data[:4096].split(b"\n", 1)[0].decode("utf-8-sig", "replace").rstrip("\r")
    sep = max((",", ";", "\t"), key=head.count)
    cols = [c.strip() for c in head.split(sep)]
    if category_column is None:
        category_column = next((c for c in cols if c.lower() == "category"), cols[-1] if cols else None)
    try:
        table = load_csv_table(data, label_column=category_column, name=name, id_column=id_column)
    except InputError as err:
        if "single class" in str(err):
            raise InputError(f"The category column {category_column!r} of {name} holds a single category; the "
                             "diversity term needs items of at least two categories.") from None
        raise
    feats = table.X[:, :-1]  # drop the bias column: utilities are x . theta with no intercept
    if len(feats) > MAX_ITEMS:
        raise InputError(f"{name} has {len(feats)} items; the limit is {MAX_ITEMS}.")
    if feats.shape[1] > MAX_FEATURES:
        raise InputError(f"{name} has {feats.shape[1]} feature columns; the limit is {MAX_FEATURES}.")
    scaled = feats / max(float(np.linalg.norm(feats, axis=1).max()), 1e-12)
    names = table.ids if table.ids is not None else [f"row {i + 1}" for i in range(len(feats))]
    return Catalogue(scaled, table.y.astype(np.int64), list(table.classes), _theta(feats.shape[1], seed), names,
                     f"{name}: {len(feats)} items, {len(table.classes)} categories, d={feats.shape[1]}")


def decode_item_table(data: bytes, name: str = "the item table", **options: object) -> Catalogue:
    """The ``item_table`` input kind's decoder (``backend.io.registry``)."""
    return read_item_table(data, name=name, **options)  # type: ignore[arg-type]
