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

import math
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


# ------------------------------------------------------------------------------------------------ preferences
MAX_LOG_ROWS = 20_000


def with_preference(cat: Catalogue, text: str) -> Catalogue:
    """The catalogue with the user's preference ``theta*``: ``text`` holds one number per feature column
    (comma, semicolon or space separated), rescaled to unit norm so utilities stay in ``[-1, 1]``."""
    import dataclasses
    import re

    parts = [p for p in re.split(r"[,;\s]+", text.strip()) if p]
    try:
        theta = np.array([float(p) for p in parts], dtype=np.float64)
    except ValueError:
        raise InputError(f"The preference must be numbers, one per feature ({cat.dim}); got {text[:60]!r}.") from None
    if len(theta) != cat.dim:
        raise InputError(f"The preference needs {cat.dim} numbers (one per feature column); got {len(theta)}.")
    if not np.isfinite(theta).all() or np.linalg.norm(theta) == 0:
        raise InputError("The preference must be finite and not all zero.")
    return dataclasses.replace(cat, theta=theta / np.linalg.norm(theta), source=cat.source + "; preference given")


@dataclass
class PreferenceFit:
    """``theta`` ``[d]`` and ``lam`` fitted to logged choices by regularised maximum likelihood of the DMNL model
    (plain MNL on the augmented features ``[x_i, g(S)]``); ``rounds`` used, ``purchases``, the mean log-likelihood
    per round and that of the uniform model over each assortment and the outside option (``baseline_loglik``)."""

    theta: np.ndarray
    lam: float
    rounds: int
    purchases: int
    loglik: float
    baseline_loglik: float


@dataclass
class ChoiceLog:
    """Logged rounds as written in the file: ``rows`` ``[(shown item tokens, chosen token or None)]``."""

    rows: list[tuple[list[str], str | None]]
    source: str

    def resolve(self, cat: Catalogue) -> list[tuple[list[int], int]]:
        """The rounds against a catalogue: ``[(shown indices, position of the choice in shown or -1)]``; a token is
        an item name of the catalogue or a 1-based row number."""
        index = {n: i for i, n in enumerate(cat.names)}

        def item(tok: str, line: int) -> int:
            i = index.get(tok)
            if i is None and tok.isdigit() and 1 <= int(tok) <= cat.n_items:
                i = int(tok) - 1
            if i is None:
                raise InputError(f"{self.source} line {line}: {tok[:30]!r} is not an item of the catalogue (use its "
                                 f"name or a row number 1-{cat.n_items}).")
            return i

        out = []
        for line, (shown_tok, chosen) in enumerate(self.rows, start=2):
            shown = [item(t, line) for t in shown_tok]
            if len(set(shown)) != len(shown):
                raise InputError(f"{self.source} line {line}: 'shown' lists an item twice.")
            pos = -1
            if chosen is not None:
                c = item(chosen, line)
                if c not in shown:
                    raise InputError(f"{self.source} line {line}: the chosen item {chosen[:30]!r} is not among the "
                                     "shown ones.")
                pos = shown.index(c)
            out.append((shown, pos))
        return out


def read_choice_log(data: bytes, name: str = "the choice log") -> ChoiceLog:
    """The ``choice_log`` input kind: a CSV with the columns ``shown`` (the offered items, by item name or 1-based
    row number, separated by ``;`` or ``|``) and ``chosen`` (the bought item, or empty / ``none`` for no purchase);
    at most :data:`MAX_LOG_ROWS` rounds."""
    import csv
    import io

    from ...io.text import decode_text

    text = decode_text(data, max_bytes=MAX_BYTES, name=name,
                       hint="Upload a UTF-8 CSV with the columns 'shown' and 'chosen'.")
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as err:
        raise InputError(f"{name} is not a readable CSV: {err}") from None
    if not rows or not {"shown", "chosen"} <= {(k or "").strip().lower() for k in rows[0]}:
        raise InputError(f"{name} needs a header with the columns 'shown' and 'chosen', and at least one round.")
    if len(rows) > MAX_LOG_ROWS:
        raise InputError(f"{name} has {len(rows):,} rounds; the limit is {MAX_LOG_ROWS:,}.")
    out: list[tuple[list[str], str | None]] = []
    for line, row in enumerate(rows, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() if isinstance(v, str) else "" for k, v in row.items()}
        shown = [t.strip() for t in row["shown"].replace("|", ";").split(";") if t.strip()]
        if not shown:
            raise InputError(f"{name} line {line}: 'shown' lists no item.")
        chosen = row["chosen"]
        out.append((shown, None if chosen.lower() in ("", "none", "-1", "0") else chosen))
    return ChoiceLog(out, name)


def fit_preference(cat: Catalogue, log: list[tuple[list[int], int]], div, reg: float = 1.0,
                   steps: int = 30) -> PreferenceFit:
    """Fit ``w = [theta, lambda]`` to ``log`` (:func:`read_choice_log`) with ``div`` the diversity function:
    Newton steps on the ridge-regularised MNL log-loss of the augmented features ``z_i(S) = [x_i, g(S)]``
    (the base features, no context noise)."""
    if len(log) < 10:
        raise InputError(f"Fitting a preference needs at least 10 logged rounds (got {len(log)}).")
    d = cat.dim + 1
    Z = [np.column_stack([cat.features[S], np.full(len(S), div.value(S))]) for S, _ in log]
    w = np.zeros(d)
    for _ in range(steps):
        grad, H = reg * w, reg * np.eye(d)
        for z, (_, c) in zip(Z, log, strict=True):
            logits = z @ w
            top = max(float(logits.max()), 0.0)
            e = np.exp(logits - top)
            p = e / (e.sum() + math.exp(-top))
            y = np.zeros(len(p))
            if c >= 0:
                y[c] = 1.0
            grad += (p - y) @ z
            mean = p @ z
            H += (z * p[:, None]).T @ z - np.outer(mean, mean)
        step = np.linalg.solve(H, grad)
        w = w - step
        if np.abs(step).max() < 1e-8:
            break
    ll, base = 0.0, 0.0
    for z, (S, c) in zip(Z, log, strict=True):
        logits = np.concatenate([[0.0], z @ w])
        lse = float(np.logaddexp.reduce(logits))
        ll += logits[c + 1] - lse
        base -= math.log(len(S) + 1)
    n = len(log)
    return PreferenceFit(w[:-1].copy(), float(w[-1]), n, sum(c >= 0 for _, c in log), ll / n, base / n)


def with_fitted_preference(cat: Catalogue, fit: PreferenceFit) -> Catalogue:
    """The catalogue with the fitted ``theta`` as its true preference (its scale kept: the fit's utilities may leave
    ``[-1, 1]``, and the source says so)."""
    import dataclasses

    u = cat.features @ fit.theta
    return dataclasses.replace(cat, theta=fit.theta.copy(),
                               source=cat.source + f"; preference fitted to {fit.rounds} logged rounds (utilities "
                                                   f"{u.min():.2f} to {u.max():.2f}, lambda {fit.lam:.2f}"
                                                   + (", used as 0: the model needs lambda >= 0)" if fit.lam < 0
                                                      else ")"))
