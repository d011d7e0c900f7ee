"""The pure tensor functions of RCPU pruning: column statistics, importance scores, the keep selection and the
error compensations, each family in a :class:`~backend.registry.Registry` (:data:`SCORES`, :data:`COMPENSATIONS`).

No model here: :mod:`backend.compression.pruning.pruning` applies these per sublayer to a Llama-family model (the
formulas are written out in its docstring). A compensation that changes only the kept weights also has its form on
Gram statistics (:class:`GramSystem`), which the one-layer lab (:mod:`.lab`) evaluates for many settings without the
activations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ...registry import Registry

if TYPE_CHECKING:
    import torch


# ------------------------------------------------------------------------------------------------------- statistics
@dataclass
class ColumnStats:
    """Per-input-column statistics over n calibration tokens (all [d_in], float32)."""

    n: int
    mean: torch.Tensor
    var: torch.Tensor  # population variance E[x^2] - E[x]^2 (clamped at 0), as in the RCPU code
    sample_var: torch.Tensor  # unbiased variance (FLAP's fluctuation)
    mean_abs: torch.Tensor
    l2: torch.Tensor  # ||X_j||_2 over the tokens

    def magnitude(self, input_stat: str) -> torch.Tensor:
        return self.l2 if input_stat == "l2" else self.mean_abs


def column_stats(X: torch.Tensor) -> ColumnStats:
    """Statistics of the columns of ``X`` [n, d_in] (computed in float64, returned as float32)."""
    x = X.double()
    n = x.shape[0]
    mean = x.mean(0)
    ex2 = (x * x).mean(0)
    var = (ex2 - mean * mean).clamp_min(0.0)
    sample_var = var * n / max(n - 1, 1)
    return ColumnStats(
        n=n, mean=mean.float(), var=var.float(), sample_var=sample_var.float(),
        mean_abs=x.abs().mean(0).float(), l2=ex2.mul(n).sqrt().float(),
    )


# ----------------------------------------------------------------------------------------------------------- scores
ScoreFn = Callable[["torch.Tensor", ColumnStats, str], "torch.Tensor"]


@dataclass(frozen=True)
class Score:
    """An importance score of input columns: ``fn(W, stats, input_stat) -> [d_in]``; ``head_reduce``: how column
    scores add up to a head score ("sum" or "sum_sq"); ``short``: the name in figure legends."""

    name: str
    fn: ScoreFn
    head_reduce: str
    short: str

    def __call__(self, W: torch.Tensor, stats: ColumnStats, input_stat: str = "l2") -> torch.Tensor:
        return self.fn(W, stats, input_stat)


def _wanda_sp(W: torch.Tensor, st: ColumnStats, input_stat: str) -> torch.Tensor:
    return W.float().norm(dim=0) * st.magnitude(input_stat)


def _variance(W: torch.Tensor, st: ColumnStats, input_stat: str) -> torch.Tensor:
    return _wanda_sp(W, st, input_stat) * st.var


def _fluctuation(W: torch.Tensor, st: ColumnStats, input_stat: str) -> torch.Tensor:  # noqa: ARG001
    return W.float().pow(2).sum(0) * st.sample_var


SCORES: Registry[Score] = Registry("score")
SCORES.add("wanda_sp", Score("wanda_sp", _wanda_sp, "sum", "Wanda-sp"),
           label="Wanda-sp: ||W_j|| x ||X_j||", kind="baseline", about="FLAP code, RCPU baseline")
SCORES.add("variance", Score("variance", _variance, "sum", "variance"),
           label="RCPU variance-aware: ||W_j|| x ||X_j|| x Var(X_j)", kind="ours", about="RCPU eq.")
SCORES.add("fluctuation", Score("fluctuation", _fluctuation, "sum_sq", "FLAP fluct."),
           label="FLAP fluctuation: ||W_j||^2 x Var(X_j)", kind="baseline", about="FLAP WIFV")


def get_score(name: str) -> Score:
    """The score ``name`` (case-insensitive, '-' and '_' alike); InputError lists the valid names."""
    return SCORES.get(str(name).replace("-", "_"))


def score_columns(score: str, W: torch.Tensor, stats: ColumnStats, input_stat: str = "l2") -> torch.Tensor:
    """Column scores gamma [d_in] of ``W`` [d_out, d_in] under ``score``."""
    return get_score(score)(W, stats, input_stat)


def n_to_drop(ratio: float, n: int) -> int:
    """How many of ``n`` units a ratio removes: ``int(ratio * n)`` as in the code (guarded against float round-off)."""
    return max(0, min(n, math.floor(float(ratio) * n + 1e-9)))


def select_keep(scores: torch.Tensor, ratio: float) -> torch.Tensor:
    """Bool mask [d] keeping all but the ``int(ratio * d)`` lowest scores (ties: the lower index is dropped first)."""
    import torch

    d = scores.numel()
    k = n_to_drop(ratio, d)
    keep = torch.ones(d, dtype=torch.bool)
    if k:
        order = torch.argsort(scores.double(), stable=True)
        keep[order[:k]] = False
    return keep


def head_scores(col_scores: torch.Tensor, head_dim: int, reduce: str = "sum") -> torch.Tensor:
    """Sum of each head's ``head_dim`` column scores [d_in] -> [d_in / head_dim] (``sum_sq``: of their squares)."""
    s = col_scores.double().reshape(-1, head_dim)
    return (s.pow(2) if reduce == "sum_sq" else s).sum(1)


# ----------------------------------------------------------------------------------------------------- compensation
@dataclass
class Compensated:
    """The compensated kept weights ``weight`` [d_out, k] plus an optional output ``bias`` [d_out] (FLAP); ``Q``
    [d_out, d_out] and ``scale`` for the rotations, ``singular_values`` [d_out] of M = Y^T Z."""

    weight: torch.Tensor
    bias: torch.Tensor | None = None
    Q: torch.Tensor | None = None
    scale: float | None = None
    singular_values: torch.Tensor | None = None


def procrustes(Y: torch.Tensor, Z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Orthogonal Q [d, d] minimising ||Y - Z Q^T||_F for Y, Z [n, d] (tokens as rows), and the singular values of
    M = Y^T Z. Q = U V^T from the SVD of M in float32; det(Q) = -1 (a reflection) is allowed, as in the paper."""
    import torch

    M = Y.float().T @ Z.float()
    U, S, Vh = torch.linalg.svd(M, full_matrices=False)
    return U @ Vh, S


def _none(W_K, X_K, Y, **_: Any) -> Compensated:  # noqa: ANN001
    return Compensated(W_K.clone())


def _rotation(W_K, X_K, Y, **_: Any) -> Compensated:  # noqa: ANN001
    Q, S = procrustes(Y, X_K.float() @ W_K.float().T)
    return Compensated((Q @ W_K.float()).to(W_K.dtype), Q=Q, scale=1.0, singular_values=S)


def _rotation_scale(W_K, X_K, Y, **_: Any) -> Compensated:  # noqa: ANN001
    Z = X_K.float() @ W_K.float().T
    Q, S = procrustes(Y, Z)
    s = float(S.double().sum() / Z.double().pow(2).sum().clamp_min(1e-12))
    return Compensated((s * (Q @ W_K.float())).to(W_K.dtype), Q=Q, scale=s, singular_values=S)


def _ridge_ls(W_K, X_K, Y, lam: float = 1e-4, **_: Any) -> Compensated:  # noqa: ANN001
    import torch

    x = X_K if X_K.dtype == torch.float64 else X_K.float()  # the big products in >= fp32, the solve in fp64
    A = (x.T @ x).double() + lam * torch.eye(x.shape[1], dtype=torch.float64)  # [k, k], symmetric
    B = (Y.to(x.dtype).T @ x).double() + lam * W_K.double()  # [d_out, k]
    W_new = torch.linalg.solve(A, B.T).T  # B A^-1 (A symmetric)
    return Compensated(W_new.to(W_K.dtype))


def _bias(W_K, X_K, Y, W_drop=None, X_drop=None, **_: Any) -> Compensated:  # noqa: ANN001
    if W_drop is None or W_drop.shape[1] == 0:
        return Compensated(W_K.clone())
    b = W_drop.double() @ X_drop.double().mean(0)
    return Compensated(W_K.clone(), bias=b.to(W_K.dtype))


# ------------------------------------------------------------------------------------- the same on Gram statistics
@dataclass
class GramSystem:
    """One sublayer's compensation problem from Gram statistics (float64): ``W_K`` [d_out, k] the kept weights,
    ``WGK`` = W G[:, K] = Y^T X_K [d_out, k], ``G_KK`` = X_K^T X_K [k, k], ridge ``lam``."""

    W_K: torch.Tensor
    WGK: torch.Tensor
    G_KK: torch.Tensor
    lam: float = 1e-4

    @cached_property
    def zz(self) -> float:
        """||X_K W_K^T||_F^2 = tr(W_K G_KK W_K^T)."""
        return float(((self.W_K @ self.G_KK) * self.W_K).sum())

    @cached_property
    def rotation(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(Q [d_out, d_out] float64, singular values S of M = Y^T Z): the SVD of M in fp32 as in the paper."""
        import torch

        M = (self.WGK @ self.W_K.T).float()
        U, S, Vh = torch.linalg.svd(M, full_matrices=False)
        return (U @ Vh).double(), S

    @cached_property
    def scale(self) -> float:
        """The rotation's scale s = tr(S) / ||Z||_F^2."""
        return float(self.rotation[1].double().sum()) / max(self.zz, 1e-30)


@dataclass
class GramSolution:
    """Compensated kept weights ``W`` [d_out, k]. ``zz_factor``: on any inputs ||X_K W^T||_F^2 is ``zz_factor``
    times ||X_K W_K^T||_F^2 (1 for a rotation, s^2 for a scaled one); None: it is computed from ``W``."""

    W: torch.Tensor
    zz_factor: float | None = None


def _none_gram(g: GramSystem) -> GramSolution:
    return GramSolution(g.W_K, 1.0)


def _ridge_ls_gram(g: GramSystem) -> GramSolution:
    import torch

    A = g.G_KK + g.lam * torch.eye(g.G_KK.shape[0], dtype=torch.float64)
    return GramSolution(torch.linalg.solve(A, (g.WGK + g.lam * g.W_K).T).T)


def _rotation_gram(g: GramSystem) -> GramSolution:
    return GramSolution(g.rotation[0] @ g.W_K, 1.0)


def _rotation_scale_gram(g: GramSystem) -> GramSolution:
    s = g.scale
    return GramSolution(s * (g.rotation[0] @ g.W_K), s * s)


@dataclass(frozen=True)
class Compensation:
    """A compensation: ``comp(W_K, X_K, Y, lam=, W_drop=, X_drop=) -> Compensated`` on activations; ``gram``: the
    same on Gram statistics (``gram(GramSystem) -> GramSolution``), None for one that adds an output bias (FLAP)."""

    fn: Callable[..., Compensated]
    gram: Callable[[GramSystem], GramSolution] | None = None

    def __call__(self, W_K: torch.Tensor, X_K: torch.Tensor, Y: torch.Tensor, **kwargs: Any) -> Compensated:
        return self.fn(W_K, X_K, Y, **kwargs)


CompFn = Callable[..., Compensated]
COMPENSATIONS: Registry[Compensation] = Registry("compensation")
COMPENSATIONS.add("none", Compensation(_none, _none_gram), label="none", kind="reference", color="#7f7f7f")
COMPENSATIONS.add("ls", Compensation(_ridge_ls, _ridge_ls_gram), label="ridge least squares", kind="baseline",
                  color="#d62728")
COMPENSATIONS.add("rotation", Compensation(_rotation, _rotation_gram), label="rotation (RCPU)", kind="ours",
                  color="#1f77b4")
COMPENSATIONS.add("rotation_scale", Compensation(_rotation_scale, _rotation_scale_gram), label="rotation + scale",
                  kind="ours", color="#17becf")
COMPENSATIONS.add("bias", Compensation(_bias), label="mean bias (FLAP)", kind="baseline", color="#ff7f0e")


def get_compensation(name: str) -> Compensation:
    """The compensation ``name`` (case-insensitive; '-', '+' and '_' alike); InputError lists the valid names."""
    return COMPENSATIONS.get(str(name).replace("-", "_").replace("+", "_"))


def compensate(
    name: str, W: torch.Tensor, X: torch.Tensor, keep: torch.Tensor, Y: torch.Tensor | None = None, lam: float = 1e-4
) -> Compensated:
    """Compensate the kept columns of ``W`` [d_out, d_in] on inputs ``X`` [n, d_in] for target ``Y`` [n, d_out]
    (default: the dense bias-free output X W^T). ``keep``: bool [d_in]."""
    if Y is None:
        Y = X.float() @ W.float().T
    W_K, X_K = W[:, keep], X[:, keep]
    return get_compensation(name)(W_K, X_K, Y, lam=lam, W_drop=W[:, ~keep], X_drop=X[:, ~keep])


def output_error(W: torch.Tensor, X: torch.Tensor, keep: torch.Tensor, comp: Compensated,
                 Y: torch.Tensor | None = None) -> tuple[float, float]:
    """(||Y - Y_hat||_F^2, ||Y||_F^2) for the compensated sublayer on inputs ``X`` [n, d_in] (Y default: X W^T)."""
    if Y is None:
        Y = X.float() @ W.float().T
    Y_hat = X[:, keep].float() @ comp.weight.float().T
    if comp.bias is not None:
        Y_hat = Y_hat + comp.bias.float()
    diff = (Y.double() - Y_hat.double()).pow(2).sum()
    return float(diff), float(Y.double().pow(2).sum())


__all__ = [
    "COMPENSATIONS", "SCORES", "ColumnStats", "Compensated", "Compensation", "GramSolution", "GramSystem", "Score",
    "column_stats",
    "compensate", "get_compensation", "get_score", "head_scores", "n_to_drop", "output_error", "procrustes",
    "score_columns", "select_keep",
]
