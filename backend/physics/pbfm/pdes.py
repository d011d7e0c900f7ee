"""The PDE data of the PBFM page: solvers, the finite-difference residuals used in training, and field uploads.

Two cases (:data:`CASES`), each a solver that draws fields and a residual ``R(field)`` that is exactly the solver's
own discretisation (so solver fields have ``|R|`` at round-off, a test checks it):

- ``darcy``: 1-D Darcy flow ``-(k u')' = f`` on [0, 1], ``u(0) = u(1) = 0``, ``f = 1``, log-normal permeability
  ``log k`` a Gaussian process (squared-exponential kernel, length 0.15, standard deviation 0.8) on 64 nodes.
  Conservative finite differences with arithmetic face permeabilities; the field is two channels ``[log k, u]``,
  ``[2, 64]``. Residual ``[64]``: the interior equations in units of ``h^2 f`` (the scale of the discrete system
  ``A u = h^2 f``, so a second difference does not blow small errors up by ``1/h^2``) and the two boundary values.
- ``heat``: the heat equation ``u_t = nu u_xx`` on [0, 1] with ``u = 0`` at both ends, ``nu = 0.02``, an initial
  condition drawn from a Gaussian process (length 0.1) tapered to the boundary, forward Euler in time
  (``dt = 0.4 h^2 / nu``, stable) on 32 nodes x 8 time levels; the field is ``[1, 8, 32]``. Residual ``[7, 32]``:
  the time-stepping equations on the interior and the boundary values, scaled by the initial condition's typical
  size.

Uploads (input kind ``pde_field``): an NPZ with one array ``field`` of the case's shape (or a CSV of its rows); NaN,
inf, object arrays and wrong shapes are refused.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...registry import choose

DARCY_N = 64
HEAT_NX, HEAT_NT, HEAT_NU = 32, 8, 0.02


def _gp(rng: np.random.Generator, n_samples: int, x: np.ndarray, length: float, std: float) -> np.ndarray:
    d = x[:, None] - x[None, :]
    K = std**2 * np.exp(-0.5 * (d / length) ** 2) + 1e-8 * np.eye(len(x))
    L = np.linalg.cholesky(K)
    return rng.standard_normal((n_samples, len(x))) @ L.T


# ------------------------------------------------------------------------------------------------ Darcy
def darcy_solve(log_k: np.ndarray) -> np.ndarray:
    """``u`` ``[n, N]`` for permeabilities ``exp(log_k)`` ``[n, N]`` (Dirichlet zero ends, f = 1)."""
    from scipy.linalg import solve_banded

    log_k = np.atleast_2d(log_k)
    n, N = log_k.shape
    h = 1.0 / (N - 1)
    k = np.exp(log_k)
    out = np.zeros((n, N))
    for s in range(n):
        kf = 0.5 * (k[s, 1:] + k[s, :-1])  # faces i+1/2, [N-1]
        main = (kf[:-1] + kf[1:]) / h**2  # interior nodes 1..N-2
        off = -kf[1:-1] / h**2
        ab = np.zeros((3, N - 2))
        ab[0, 1:] = off
        ab[1] = main
        ab[2, :-1] = off
        out[s, 1:-1] = solve_banded((1, 1), ab, np.ones(N - 2))
    return out


def darcy_residual(field):  # noqa: ANN001, ANN201 - numpy or torch, [..., 2, N] -> [..., N]
    """``-(k u')' - f`` at the interior nodes and ``u`` at both ends, for ``field = [log k, u]`` (torch or numpy)."""
    xp = _xp(field)
    log_k, u = field[..., 0, :], field[..., 1, :]
    N = u.shape[-1]
    h = 1.0 / (N - 1)
    k = xp.exp(log_k)
    kf = 0.5 * (k[..., 1:] + k[..., :-1])
    flux = kf * (u[..., 1:] - u[..., :-1]) / h
    interior = (-(flux[..., 1:] - flux[..., :-1]) / h - 1.0) * h * h  # in units of h^2 f: the discrete system's
    return xp.concatenate([u[..., :1], interior, u[..., -1:]], -1) if xp is np else xp.cat(
        [u[..., :1], interior, u[..., -1:]], -1)


def darcy_fields(n: int, seed: int) -> np.ndarray:
    """``[n, 2, 64]`` solver fields ``[log k, u]``."""
    rng = np.random.default_rng([seed, 17])
    x = np.linspace(0, 1, DARCY_N)
    log_k = _gp(rng, n, x, 0.15, 0.8)
    return np.stack([log_k, darcy_solve(log_k)], axis=1)


# ------------------------------------------------------------------------------------------------ heat
def heat_dt() -> float:
    h = 1.0 / (HEAT_NX - 1)
    return 0.4 * h * h / HEAT_NU


def heat_fields(n: int, seed: int) -> np.ndarray:
    """``[n, 1, 8, 32]`` solver fields (time levels x nodes)."""
    rng = np.random.default_rng([seed, 19])
    x = np.linspace(0, 1, HEAT_NX)
    u0 = _gp(rng, n, x, 0.1, 1.0) * np.sin(np.pi * x) ** 0.5
    u0[:, 0] = u0[:, -1] = 0.0
    h, dt = 1.0 / (HEAT_NX - 1), heat_dt()
    out = np.zeros((n, HEAT_NT, HEAT_NX))
    out[:, 0] = u0
    for t in range(1, HEAT_NT):
        u = out[:, t - 1]
        lap = np.zeros_like(u)
        lap[:, 1:-1] = (u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2]) / h**2
        out[:, t] = u + dt * HEAT_NU * lap
        out[:, t, 0] = out[:, t, -1] = 0.0
    return out[:, None]


def heat_residual(field):  # noqa: ANN001, ANN201 - numpy or torch, [..., 1, T, X] -> [..., T-1, X]
    """Forward-Euler residual ``(u^{n+1} - u^n)/dt - nu (u^n)_xx`` on the interior, ``u`` at the ends (all but the
    first level), in units of the initial condition's size per unit time."""
    xp = _xp(field)
    u = field[..., 0, :, :]
    h, dt = 1.0 / (HEAT_NX - 1), heat_dt()
    lap = (u[..., :-1, 2:] - 2 * u[..., :-1, 1:-1] + u[..., :-1, :-2]) / h**2
    interior = ((u[..., 1:, 1:-1] - u[..., :-1, 1:-1]) / dt - HEAT_NU * lap) * dt  # scaled: a change per step
    left, right = u[..., 1:, :1], u[..., 1:, -1:]
    return xp.concatenate([left, interior, right], -1) if xp is np else xp.cat([left, interior, right], -1)


def _xp(a):  # noqa: ANN001, ANN202 - numpy or torch
    return np if isinstance(a, np.ndarray) else __import__("torch")


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    shape: tuple[int, ...]
    fields: object  # (n, seed) -> array
    residual: object  # field -> residual


CASES: dict[str, Case] = {
    "darcy": Case("darcy", "1-D Darcy flow -(k u')' = 1", (2, DARCY_N), darcy_fields, darcy_residual),
    "heat": Case("heat", "Heat equation u_t = 0.02 u_xx", (1, HEAT_NT, HEAT_NX), heat_fields, heat_residual),
}


def get_case(name: str) -> Case:
    return CASES[choose(name, CASES, "PDE case")]


def mean_abs_residual(case: Case, fields: np.ndarray) -> np.ndarray:
    """Per-field mean |R| ``[n]``."""
    R = case.residual(np.asarray(fields, dtype=np.float64))
    return np.abs(R).reshape(len(R), -1).mean(1)


# ------------------------------------------------------------------------------------------------ uploads
MAX_BYTES = 2 * 2**20


def read_field(data: bytes, name: str = "the field", case: str | None = None) -> np.ndarray:
    """An uploaded field: NPZ with array ``field`` (or its only array), or CSV rows. Returns ``[C, ...]`` float64 of
    one case's shape (``case`` names it, else it is inferred from the shape)."""
    if not data:
        raise InputError(f"{name} is empty.")
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is 2 MB.")
    if data[:2] == b"PK":
        from ...io.archives import load_npz

        arrays = load_npz(data, name, max_array_bytes=1 << 20)
        if not arrays:
            raise InputError(f"{name} holds no arrays.")
        arr = arrays["field"] if "field" in arrays else next(iter(arrays.values()))
        if arr.dtype.kind not in "fiu":
            raise InputError(f"{name} has dtype {arr.dtype}; a float array is needed.")
        arr = arr.astype(np.float64)
    else:
        try:
            text = data.decode("utf-8-sig")
            arr = np.loadtxt(io.StringIO(text), delimiter="," if "," in text else None, ndmin=2)
        except UnicodeDecodeError:
            raise InputError(f"{name} is neither an NPZ nor UTF-8 text.") from None
        except ValueError as err:
            raise InputError(f"Could not read {name} as numbers ({err}).") from None
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} contains NaN or inf values.")
    shapes = {c.name: c.shape for c in CASES.values()}
    want = [get_case(case).name] if case else list(CASES)
    for c in want:
        shp = shapes[c]
        rows = shp if len(shp) == 2 else shp[1:]  # a CSV holds the rows of one channel: heat (1, T, X) as (T, X)
        if arr.shape == shp or (arr.ndim == 2 and arr.shape == rows):
            return arr.reshape(shp)
    expect = "; ".join(f"{c}: {shapes[c]} ({int(np.prod(shapes[c]))} values)" for c in want)
    raise InputError(f"{name} has shape {arr.shape}; expected {expect}.")
