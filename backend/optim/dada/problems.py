"""Convex test problems for the DADA optimizer race, each with its optimal value ``f*``.

Every problem works on a batch of points: ``f(X)`` takes ``[..., d]`` and returns ``[...]``; ``grad(X)`` returns a
(sub)gradient ``[..., d]``; ``project(X)`` is the Euclidean projection onto the feasible set Q (identity when
unconstrained). Batching lets a learning-rate grid of a baseline run as one array program.

Problems (``make_problem(name, ...)``; the registry :data:`PROBLEMS` holds their builders):

- ``l1``: ``f(x) = ||A (x - x_true)||_1 / n`` with Gaussian ``A`` (``n = min(d, 500)`` rows), nonsmooth. ``x_true`` is
  drawn inside Q, so ``f* = 0`` exactly with or without constraints.
- ``quadratic``: ``f(x) = 1/2 sum_i lambda_i (x_i - c_i)^2`` with ``lambda`` log-spaced from 1 down to ``1/kappa``
  (ill-conditioned). A diagonal Hessian loses nothing here: GD, AdaGrad-norm, DoG and DADA only use Euclidean norms
  and are rotation-equivariant when unconstrained, so a rotated quadratic gives the same curves; under box or simplex
  constraints the diagonal form has an exact solution (box: clip; simplex: ``x_i = max(0, c_i - nu / lambda_i)`` with
  ``nu`` found by bisection).
- ``powerchain``: the ``|x|^p`` worst-case chain ``f(x) = (1/p) sum_{i<d} |x_i - x_{i+1}|^p + (1/p) |x_d|^p``
  (zero-chain property: a first-order method changes one more coordinate per gradient; smooth of order p - 1, the
  paper's "high-order smooth" test class). Variant ``dada`` is the DADA paper's experiment (per a public summary of
  the paper: ``x0 = (1, ..., 1)``, ``x* = 0``, ``f* = 0``, p = 2, 4, 6); variant ``nesterov`` adds ``- x_1`` and starts at 0
  (Nesterov's lower-bound construction): with ``u = A x``, ``x_1 = sum u_i``, so ``u_i = 1``, ``x*_i = d - i + 1``,
  ``f* = d (1/p - 1)``. Both optima are exact. Unconstrained only.
- ``logistic`` / ``softmax``: multinomial logistic regression on a table (an uploaded CSV, or a scikit-learn bundled
  data set of :data:`DATASETS`) with features standardised, a bias column and an L2 term ``(lam/2) ||W||^2``;
  logistic when there are two classes (one weight vector), softmax otherwise (``d = features x classes``). ``f*`` is numerical: L-BFGS-B to
  gradient norm ~1e-10 (unconstrained or box) or accelerated projected gradient with restarts (simplex), and the race
  lowers it to any smaller value a method finds.

Constraints: ``none``, ``box`` (``[-radius, radius]^d``) or ``simplex`` (``{x >= 0, sum x = radius}``).
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from ...registry import Registry, choose

CONSTRAINTS: tuple[str, ...] = ("none", "box", "simplex")
MAX_DIM = 10_000


# ---------------------------------------------------------------------------------------------------- projections
def project_box(x: np.ndarray, radius: float) -> np.ndarray:
    return np.clip(x, -radius, radius)


def project_simplex(x: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection of each row of ``x`` (``[..., d]``) onto ``{z >= 0, sum z = radius}`` (sort-based)."""
    x = np.asarray(x, dtype=np.float64)
    shape = x.shape
    v = x.reshape(-1, shape[-1])
    d = v.shape[1]
    mu = -np.sort(-v, axis=1)
    css = np.cumsum(mu, axis=1) - radius
    ks = np.arange(1, d + 1)
    cond = mu - css / ks > 0
    rho = d - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(v.shape[0]), rho] / (rho + 1)
    return np.maximum(v - theta[:, None], 0.0).reshape(shape)


def make_projection(constraint: str, radius: float) -> Callable[[np.ndarray], np.ndarray]:
    """The Euclidean projection onto the feasible set of ``constraint`` (one of :data:`CONSTRAINTS`)."""
    constraint = choose(constraint, CONSTRAINTS, "constraint")
    if constraint == "none":
        return lambda x: x
    if radius <= 0 or not np.isfinite(radius):
        raise InputError(f"The constraint radius must be a positive number (got {radius}).")
    if constraint == "box":
        return lambda x: project_box(x, radius)
    return lambda x: project_simplex(x, radius)


# ------------------------------------------------------------------------------------------------------- problem
@dataclass
class Problem:
    """A convex problem ``min_{x in Q} f(x)``. ``f``/``grad``/``project`` act on ``[..., d]`` batches. ``f_star``
    is exact when ``f_star_exact`` (else numerical, see ``meta['f_star_method']``)."""

    name: str
    dim: int
    f: Callable[[np.ndarray], np.ndarray]
    grad: Callable[[np.ndarray], np.ndarray]
    project: Callable[[np.ndarray], np.ndarray]
    x0: np.ndarray
    f_star: float
    f_star_exact: bool
    constraint: str = "none"
    radius: float = 1.0
    meta: dict[str, object] = field(default_factory=dict)
    torch_loss: Callable | None = None  # torch version of f on a flat parameter (for the torch optimizer)
    fg: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None  # fused value and gradient
    x_star: np.ndarray | None = None  # a minimiser, when known exactly

    def value_and_grad(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(f(x), grad(x))`` for a batch ``[..., d]`` (one pass when the problem has a fused version)."""
        if self.fg is not None:
            return self.fg(x)
        return self.f(x), self.grad(x)

    @property
    def gradient_cost(self) -> float:
        """About how many multiply-adds one gradient takes: rows x d for the data-matrix problems (they record
        ``rows``), 10 d for the separable and chain ones."""
        return float(self.meta["rows"]) * self.dim if "rows" in self.meta else 10.0 * self.dim

    @property
    def f0_gap(self) -> float:
        """``f(x0) - f*`` (the normaliser of relative gaps)."""
        return float(self.f(self.x0)) - self.f_star

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "dim": self.dim, "constraint": self.constraint, "radius": self.radius,
                "f_star": self.f_star, "f_star_exact": self.f_star_exact, "f0_minus_fstar": self.f0_gap,
                **self.meta}


def _check_dim(dim: int, lo: int = 2) -> int:
    dim = int(dim)
    if not lo <= dim <= MAX_DIM:
        raise InputError(f"The dimension must be between {lo} and {MAX_DIM} (got {dim}).")
    return dim


def _x0_for(constraint: str, radius: float, dim: int) -> np.ndarray:
    if constraint == "simplex":
        return np.full(dim, radius / dim)
    return np.zeros(dim)


def _feasible_point(rng: np.random.Generator, constraint: str, radius: float, dim: int) -> np.ndarray:
    if constraint == "none":
        return rng.standard_normal(dim)
    if constraint == "box":
        return rng.uniform(-radius, radius, dim)
    w = rng.exponential(1.0, dim)
    return radius * w / w.sum()


# ------------------------------------------------------------------------------------------------------------ L1
def l1_problem(dim: int = 100, constraint: str = "none", radius: float = 1.0, seed: int = 0) -> Problem:
    dim = _check_dim(dim)
    rng = np.random.default_rng(seed)
    n = min(dim, 500)
    A = rng.standard_normal((n, dim))
    x_true = _feasible_point(rng, constraint, radius, dim)
    b = A @ x_true
    proj = make_projection(constraint, radius)

    def f(x: np.ndarray) -> np.ndarray:
        return np.abs(x @ A.T - b).sum(axis=-1) / n

    def grad(x: np.ndarray) -> np.ndarray:
        return np.sign(x @ A.T - b) @ A / n

    def fg(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = x @ A.T - b
        return np.abs(r).sum(axis=-1) / n, np.sign(r) @ A / n

    def torch_loss(x):  # noqa: ANN001, ANN202 - torch tensor in, scalar out
        import torch

        return (torch.as_tensor(A, dtype=x.dtype) @ x - torch.as_tensor(b, dtype=x.dtype)).abs().sum() / n

    return Problem("l1", dim, f, grad, proj, _x0_for(constraint, radius, dim), 0.0, True, constraint, radius,
                   {"rows": n, "f_star_method": "exact (x_true is feasible and f >= 0)"}, torch_loss, fg)


# ----------------------------------------------------------------------------------------------------- quadratic
def _simplex_quadratic_solution(lam: np.ndarray, c: np.ndarray, radius: float) -> np.ndarray:
    """argmin 1/2 sum lam (x - c)^2 over {x >= 0, sum x = radius}: x = max(0, c - nu / lam), nu by bisection."""
    def total(nu: float) -> float:
        return float(np.maximum(0.0, c - nu / lam).sum())

    lo = float(np.min(lam * (c - radius))) - 1.0  # total(lo) >= radius
    hi = float(np.max(lam * c)) + 1.0  # total(hi) = 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if total(mid) > radius:
            lo = mid
        else:
            hi = mid
    x = np.maximum(0.0, c - 0.5 * (lo + hi) / lam)
    # remove the last rounding residue on the active coordinates
    act = x > 0
    x[act] += (radius - x.sum()) / max(int(act.sum()), 1)
    return x


def quadratic_problem(
    dim: int = 100, kappa: float = 1e4, constraint: str = "none", radius: float = 1.0, seed: int = 0
) -> Problem:
    dim = _check_dim(dim)
    if not 1.0 <= kappa <= 1e12:
        raise InputError(f"The condition number must be between 1 and 1e12 (got {kappa:g}).")
    rng = np.random.default_rng(seed)
    lam = np.logspace(0.0, -np.log10(kappa), dim)
    c = rng.standard_normal(dim)
    if constraint == "simplex":
        c = np.abs(c) * 2.0 * radius / np.sqrt(dim)  # a centre partly outside the simplex: some constraints active
    proj = make_projection(constraint, radius)
    if constraint == "none":
        x_star = c.copy()
    elif constraint == "box":
        x_star = np.clip(c, -radius, radius)
    else:
        x_star = _simplex_quadratic_solution(lam, c, radius)

    def f(x: np.ndarray) -> np.ndarray:
        return 0.5 * ((x - c) ** 2 * lam).sum(axis=-1)

    def grad(x: np.ndarray) -> np.ndarray:
        return lam * (x - c)

    def torch_loss(x):  # noqa: ANN001, ANN202
        import torch

        return 0.5 * (torch.as_tensor(lam, dtype=x.dtype) * (x - torch.as_tensor(c, dtype=x.dtype)) ** 2).sum()

    f_star = float(f(x_star))
    method = {"none": "exact (x* = c)", "box": "exact (x* = clip(c))", "simplex": "exact (KKT, bisection on nu)"}
    return Problem("quadratic", dim, f, grad, proj, _x0_for(constraint, radius, dim), f_star, True, constraint,
                   radius, {"kappa": kappa, "L": 1.0, "mu": 1.0 / kappa, "f_star_method": method[constraint],
                            "dist_x0_xstar": float(np.linalg.norm(x_star - _x0_for(constraint, radius, dim)))},
                   torch_loss, x_star=x_star)


# --------------------------------------------------------------------------------------------------- power chain
CHAIN_VARIANTS: tuple[str, ...] = ("dada", "nesterov")


def powerchain_problem(dim: int = 100, p: float = 4.0, constraint: str = "none", variant: str = "dada") -> Problem:
    """The ``|x|^p`` chain ``(1/p) sum_{i<d} |x_i - x_{i+1}|^p + (1/p) |x_d|^p``; ``variant='dada'`` (the DADA paper's
    experiment): start ``x0 = (1, ..., 1)``, ``x* = 0``, ``f* = 0``; ``variant='nesterov'``: minus ``x_1``, start 0,
    ``x*_i = d - i + 1``, ``f* = d (1/p - 1)``."""
    dim = _check_dim(dim)
    if not 2.0 <= p <= 12.0:
        raise InputError(f"The power p must be between 2 and 12 (got {p:g}).")
    if constraint != "none":
        raise InputError("The |x|^p worst-case chain is an unconstrained construction; choose constraint 'none'.")
    variant = choose(variant, CHAIN_VARIANTS, "chain variant")
    lin = 1.0 if variant == "nesterov" else 0.0

    def diff(x: np.ndarray) -> np.ndarray:  # u = A x: (x_1 - x_2, ..., x_{d-1} - x_d, x_d)
        u = np.empty_like(x)
        u[..., :-1] = x[..., :-1] - x[..., 1:]
        u[..., -1] = x[..., -1]
        return u

    def f(x: np.ndarray) -> np.ndarray:
        return (np.abs(diff(x)) ** p).sum(axis=-1) / p - lin * x[..., 0]

    def grad(x: np.ndarray) -> np.ndarray:
        u = diff(x)
        v = np.sign(u) * np.abs(u) ** (p - 1)  # dphi/du
        g = v.copy()  # A^T v: g_i = v_i - v_{i-1}
        g[..., 1:] -= v[..., :-1]
        g[..., 0] -= lin
        return g

    def torch_loss(x):  # noqa: ANN001, ANN202
        import torch

        u = torch.cat([x[:-1] - x[1:], x[-1:]])
        return (u.abs() ** p).sum() / p - lin * x[0]

    if variant == "nesterov":
        x0, x_star = np.zeros(dim), np.arange(dim, 0, -1.0)
        f_star, how = dim * (1.0 / p - 1.0), "exact (u_i = 1, x*_i = d - i + 1)"
    else:
        x0, x_star = np.ones(dim), np.zeros(dim)
        f_star, how = 0.0, "exact (x* = 0)"
    return Problem("powerchain", dim, f, grad, lambda x: x, x0, f_star, True, "none", 1.0,
                   {"p": p, "variant": variant, "f_star_method": how,
                    "dist_x0_xstar": float(np.linalg.norm(x_star - x0))}, torch_loss, x_star=x_star)


# ------------------------------------------------------------------------------------------- logistic / softmax
@dataclass
class Table:
    """A classification table: ``X`` ``[n, p]`` standardised features (plus a bias column), ``y`` ``[n]`` labels
    0..C-1, ``classes`` the original label names, ``features`` the column names; ``ids`` the row names from the id
    column (``id_column``), None when the table has none."""

    X: np.ndarray
    y: np.ndarray
    classes: list[str]
    features: list[str]
    source: str
    ids: list[str] | None = None
    id_column: str | None = None


MAX_CSV_BYTES = 20 * 2**20
MAX_ROWS = 100_000
MAX_CLASSES = 50


def load_csv_table(data: bytes, label_column: str | None = None, name: str = "the CSV",
                   id_column: str | None = None) -> Table:
    """Parse and validate an uploaded CSV for logistic/softmax regression. The label is ``label_column`` or the last
    column; the id column (row names, not a feature) is ``id_column`` or else the first column other than the label
    in which no cell is a number; every other column must be numeric. Raises InputError with what to fix."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes).")
    if len(data) > MAX_CSV_BYTES:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {MAX_CSV_BYTES // 2**20} MB.")
    if b"\x00" in data[:4096]:
        raise InputError(f"{name} looks binary. Upload a UTF-8 CSV with a header row.")
    import pandas as pd

    head = data[:4096].split(b"\n", 1)[0]
    sep = max((",", ";", "\t"), key=lambda c: head.count(c.encode()))
    try:
        with warnings.catch_warnings():
            # rows longer than the header: refused rather than truncated (index_col=False) or made into an index
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.BytesIO(data), sep=sep, encoding="utf-8-sig", index_col=False)
    except pd.errors.ParserWarning:
        raise InputError(f"{name} has rows with more fields than its header row.") from None
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text. Save it as a UTF-8 CSV.") from None
    except Exception as err:  # pandas parser errors
        raise InputError(f"Could not parse {name} as CSV ({err}). Use a header row and comma separators.") from None
    names = [h.strip() for h in head.decode("utf-8-sig", "replace").rstrip("\r").split(sep)]
    repeated = sorted({h for h in names if names.count(h) > 1})
    if repeated:
        raise InputError(f"{name} names the column(s) {', '.join(repeated[:5])} more than once; column names must "
                         "be unique.")
    if frame.shape[1] < 2:
        raise InputError(f"{name} has {frame.shape[1]} column; it needs at least one feature column and a label "
                         "column (the last column, or the one you name).")
    if frame.shape[0] < 10:
        raise InputError(f"{name} has {frame.shape[0]} data rows; at least 10 are needed.")
    if frame.shape[0] > MAX_ROWS:
        raise InputError(f"{name} has {frame.shape[0]} rows; the limit is {MAX_ROWS}.")
    label = label_column if label_column is not None else str(frame.columns[-1])
    if label not in frame.columns:
        raise InputError(f"No column named {label!r}; columns are: {', '.join(map(str, frame.columns))}.")
    y_raw = frame[label]
    feats = frame.drop(columns=[label])
    numeric = feats.apply(pd.to_numeric, errors="coerce")
    text_cols = [str(c) for c in feats.columns if numeric[c].isna().sum() > feats[c].isna().sum()]
    if id_column is not None and (id_column not in feats.columns or id_column == label):
        raise InputError(f"No id column {id_column!r} other than the label {label!r}; columns are: "
                         f"{', '.join(map(str, frame.columns))}.")
    all_text = [c for c in text_cols if numeric[c].notna().sum() == 0]  # no cell reads as a number
    id_col = id_column if id_column is not None else (all_text[0] if all_text else None)
    ids = None
    if id_col is not None:
        ids = [str(v) for v in feats[id_col].fillna("").to_numpy()]
        feats, numeric = feats.drop(columns=[id_col]), numeric.drop(columns=[id_col])
        text_cols = [c for c in text_cols if c != id_col]
    if text_cols:
        raise InputError(f"Feature column(s) {', '.join(text_cols[:5])} contain non-numeric values; every column "
                         f"except the label {label!r}" + (f" and the id column {id_col!r}" if id_col else "")
                         + " must be numeric.")
    if feats.shape[1] == 0:
        raise InputError(f"{name} has no numeric feature column besides the label {label!r} and the id column "
                         f"{id_col!r}.")
    if numeric.isna().any().any() or y_raw.isna().any():
        rows = np.flatnonzero(numeric.isna().any(axis=1).to_numpy() | y_raw.isna().to_numpy())
        raise InputError(f"{len(rows)} row(s) have missing values (first at data row {rows[0] + 1}). Fill or drop "
                         "them.")
    X = numeric.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise InputError(f"{name} contains inf values; remove them.")
    if X.size and np.abs(X).max() > 1e150:  # the standard deviation (a sum of squares) would overflow float64
        raise InputError(f"{name} has feature values of magnitude {np.abs(X).max():.3g}; rescale them below 1e150.")
    classes, y = np.unique(y_raw.astype(str).to_numpy(), return_inverse=True)
    if len(classes) < 2:
        raise InputError(f"The label column {label!r} has a single class ({classes[0]!r}); two or more are needed.")
    if len(classes) > MAX_CLASSES:
        raise InputError(f"The label column {label!r} has {len(classes)} distinct values; the limit is "
                         f"{MAX_CLASSES} classes. Is the last column really the label?")
    table = _standardise(X, y, [str(c) for c in classes], [str(c) for c in feats.columns], source=name)
    table.ids, table.id_column = ids, id_col
    return table


def _standardise(X: np.ndarray, y: np.ndarray, classes: list[str], features: list[str], source: str) -> Table:
    std = X.std(axis=0)
    keep = std > 0
    if not keep.any():
        raise InputError("Every feature column is constant; nothing to learn from.")
    Xs = (X[:, keep] - X[:, keep].mean(axis=0)) / std[keep]
    Xs = np.column_stack([Xs, np.ones(len(Xs))])
    names = [f for f, k in zip(features, keep) if k] + ["bias"]
    return Table(Xs, y.astype(np.int64), classes, names, source)


def _sklearn_table(name: str) -> Table:
    """The scikit-learn bundled data set ``name`` (shipped inside the wheel; no download), standardised."""
    from sklearn import datasets

    ds = getattr(datasets, f"load_{name}")()
    return _standardise(np.asarray(ds.data, dtype=np.float64), np.asarray(ds.target), [str(c) for c in
                        ds.target_names], [str(f) for f in ds.feature_names], source=f"sklearn:{name}")


def breast_cancer_table() -> Table:
    return _sklearn_table("breast_cancer")


def wine_table() -> Table:
    return _sklearn_table("wine")


def iris_table() -> Table:
    return _sklearn_table("iris")


DATASETS: Registry[Callable[[], Table]] = Registry("bundled data set")
DATASETS.add("breast_cancer", breast_cancer_table, label="Breast cancer (569 rows, 30 features, 2 classes)",
             kind="reference", about="scikit-learn's Wisconsin diagnostic breast cancer table")
DATASETS.add("wine", wine_table, label="Wine (178 rows, 13 features, 3 classes)", kind="reference",
             about="scikit-learn's wine recognition table")
DATASETS.add("iris", iris_table, label="Iris (150 rows, 4 features, 3 classes)", kind="reference",
             about="scikit-learn's iris table")


def bundled_table(name: str) -> Table:
    """A scikit-learn bundled data set of :data:`DATASETS` (no download): breast_cancer, wine, iris."""
    return DATASETS.get(name)()


def logistic_problem(table: Table, lam: float = 1e-3, constraint: str = "none", radius: float = 1.0) -> Problem:
    """Logistic (2 classes) or softmax (C > 2) regression with L2 term ``lam/2 ||W||^2`` on a :class:`Table`."""
    X, y = table.X, table.y
    n, p = X.shape
    C = len(table.classes)
    k = 1 if C == 2 else C
    dim = p * k
    if dim > MAX_DIM:
        raise InputError(f"The model has {dim} parameters (features x classes); the limit is {MAX_DIM}.")
    if lam < 0:
        raise InputError("The L2 coefficient must be >= 0.")
    proj = make_projection(constraint, radius)
    onehot = np.eye(C)[y]

    if k == 1:
        s = 2.0 * y - 1.0  # labels +-1

        def f(w: np.ndarray) -> np.ndarray:
            z = (w @ X.T) * s
            return np.logaddexp(0.0, -z).mean(axis=-1) + 0.5 * lam * (w**2).sum(axis=-1)

        def grad(w: np.ndarray) -> np.ndarray:
            z = (w @ X.T) * s
            sig = 0.5 * (1.0 - np.tanh(0.5 * z))  # = 1 / (1 + e^z), stable
            return -(sig * s) @ X / n + lam * w

        curvature = 0.25
    else:
        def logits(w: np.ndarray) -> np.ndarray:
            return np.einsum("np,...pc->...nc", X, w.reshape(*w.shape[:-1], p, C))

        def f(w: np.ndarray) -> np.ndarray:
            z = logits(w)
            zmax = z.max(axis=-1, keepdims=True)
            lse = np.log(np.exp(z - zmax).sum(axis=-1)) + zmax[..., 0]
            return (lse - (z * onehot).sum(axis=-1)).mean(axis=-1) + 0.5 * lam * (w**2).sum(axis=-1)

        def grad(w: np.ndarray) -> np.ndarray:
            z = logits(w)
            z = z - z.max(axis=-1, keepdims=True)
            prob = np.exp(z)
            prob /= prob.sum(axis=-1, keepdims=True)
            g = np.einsum("np,...nc->...pc", X, prob - onehot) / n
            return g.reshape(*w.shape) + lam * w

        curvature = 0.5

    def torch_loss(w):  # noqa: ANN001, ANN202
        import torch

        Xt = torch.as_tensor(X, dtype=w.dtype)
        if k == 1:
            st = torch.as_tensor(2.0 * y - 1.0, dtype=w.dtype)
            return torch.nn.functional.softplus(-(Xt @ w) * st).mean() + 0.5 * lam * (w**2).sum()
        z = Xt @ w.reshape(p, C)
        return torch.nn.functional.cross_entropy(z, torch.as_tensor(y)) + 0.5 * lam * (w**2).sum()

    x0 = _x0_for(constraint, radius, dim)
    L = curvature * float(np.linalg.norm(X, 2) ** 2) / n + lam
    f_star, how = _numerical_fstar(f, grad, proj, x0, constraint, radius, L, lam)
    name = "logistic" if k == 1 else "softmax"
    return Problem(name, dim, f, grad, proj, x0, f_star, False, constraint, radius,
                   {"rows": n, "features": p, "classes": C, "lam": lam, "L_bound": L, "source": table.source,
                    "f_star_method": how}, torch_loss)


def _numerical_fstar(
    f: Callable, grad: Callable, proj: Callable, x0: np.ndarray, constraint: str, radius: float, L: float, mu: float
) -> tuple[float, str]:
    """A reference optimum: L-BFGS-B (none/box) or FISTA with gradient restarts (simplex)."""
    if constraint in ("none", "box"):
        from scipy.optimize import minimize

        bounds = None if constraint == "none" else [(-radius, radius)] * x0.size
        res = minimize(lambda w: float(f(w)), x0, jac=grad, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": 20_000, "ftol": 1e-16, "gtol": 1e-11, "maxcor": 30})
        return float(min(res.fun, f(proj(res.x)))), f"L-BFGS-B ({res.nit} iterations)"
    x = y_ = x0.copy()
    t = 1.0
    best = float(f(x))
    for _ in range(20_000):
        x_new = proj(y_ - grad(y_) / L)
        if np.dot(y_ - x_new, x_new - x) > 0:  # gradient-based adaptive restart
            t = 1.0
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y_ = x_new + (t - 1) / t_new * (x_new - x)
        x, t = x_new, t_new
        fx = float(f(x))
        if best - fx < 1e-15 * max(1.0, abs(fx)) and _ > 2000:
            best = min(best, fx)
            break
        best = min(best, fx)
    return best, "FISTA with adaptive restart (projected)"


# ----------------------------------------------------------------------------------------------------- registry
# Every builder takes the same keywords (each reads the ones its problem has) and returns a Problem.
def build_l1(dim: int = 100, *, constraint: str = "none", radius: float = 1.0, seed: int = 0, **_: object) -> Problem:
    return l1_problem(dim, constraint, radius, seed)


def build_quadratic(dim: int = 100, *, constraint: str = "none", radius: float = 1.0, kappa: float = 1e4,
                    seed: int = 0, **_: object) -> Problem:
    return quadratic_problem(dim, kappa, constraint, radius, seed)


def build_powerchain(dim: int = 100, *, constraint: str = "none", p: float = 4.0, chain: str = "dada",
                     **_: object) -> Problem:
    return powerchain_problem(dim, p, constraint, chain)


def build_logistic(dim: int = 100, *, constraint: str = "none", radius: float = 1.0, lam: float = 1e-3,
                   table: Table | None = None, dataset: str = "breast_cancer", **_: object) -> Problem:
    return logistic_problem(table if table is not None else bundled_table(dataset), lam, constraint, radius)


build_logistic.reads_table = True  # type: ignore[attr-defined]  # its size comes from the table, not from dim


PROBLEMS: Registry[Callable[..., Problem]] = Registry("convex test problem")
PROBLEMS.add("quadratic", build_quadratic, label="Ill-conditioned quadratic", kind="reference",
             about="1/2 sum lambda_i (x_i - c_i)^2, lambda log-spaced from 1 to 1/kappa; exact f*")
PROBLEMS.add("l1", build_l1, label="L1 (nonsmooth)", kind="reference",
             about="||A (x - x_true)||_1 / n with Gaussian A; f* = 0")
PROBLEMS.add("powerchain", build_powerchain, label="|x|^p worst-case chain", kind="reference",
             about="(1/p) sum |x_i - x_{i+1}|^p + (1/p) |x_d|^p (unconstrained); exact f*")
PROBLEMS.add("logistic", build_logistic, label="Logistic / softmax regression", kind="reference",
             about="L2-regularised logistic (2 classes) or softmax regression on a table; numerical f*")
ALIASES: dict[str, str] = {"softmax": "logistic", "chain": "powerchain", "worstcase": "powerchain"}


def reads_table(name: str) -> bool:
    """Whether the problem is built from a table (a bundled data set or an upload) rather than a dimension."""
    return bool(getattr(PROBLEMS.get(problem_key(name)), "reads_table", False))


def problem_key(name: str) -> str:
    """The registered name of a problem (case, '-' and '_' ignored; ``softmax`` = ``logistic``); InputError lists
    the valid names."""
    key = str(name).lower().replace("-", "").replace("_", "")
    return PROBLEMS.key(ALIASES.get(key, key))


def make_problem(
    name: str,
    dim: int = 100,
    *,
    constraint: str = "none",
    radius: float = 1.0,
    kappa: float = 1e4,
    p: float = 4.0,
    chain: str = "dada",
    lam: float = 1e-3,
    table: Table | None = None,
    dataset: str = "breast_cancer",
    seed: int = 0,
) -> Problem:
    """Build a problem by name (see :data:`PROBLEMS`); ``softmax`` is an alias of ``logistic``."""
    key = problem_key(name)
    constraint = choose(constraint, CONSTRAINTS, "constraint")
    return PROBLEMS.get(key)(dim, constraint=constraint, radius=radius, kappa=kappa, p=p, chain=chain, lam=lam,
                             table=table, dataset=dataset, seed=seed)
