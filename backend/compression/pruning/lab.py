"""The fast interactive lab of the pruning page: one decoder layer's two pruned sublayers (o_proj, down_proj) studied
on captured activations of the dense model.

Capture once (a forward pass through the layers before ``layer``), then every (ratio, N_calib, lambda, score)
setting is recomputed from sufficient statistics in well under a second, without touching the model:

- the cumulative Gram matrices ``G_N = X_N^T X_N`` [d_in, d_in] (float64) of the first N calibration segments, the
  column sums and absolute sums (for the scores), and the same for the held-out segments;
- every error is a quadratic form: ||Y - X_K W'^T||_F^2 = tr(W G W^T) - 2 tr(W' G[K, :] W^T) + tr(W' G[K, K] W'^T),
  and the compensations only need G as well (Procrustes: M = Y^T Z = W G[:, K] W_K^T; ridge LS:
  W' = (W G[:, K] + lambda W_K)(G[K, K] + lambda I)^-1), so the numbers equal those of
  :func:`backend.compression.pruning.compensate` on the raw activations (checked in the tests);
- a held-out sample of raw inputs (up to 1,024 tokens) for the histograms of output norms and angles.

This isolates one sublayer of the dense model (no upstream pruning), which is exactly where the overfitting of least
squares at small N shows: its calibration error falls below the rotation's while its held-out error rises above it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ...runtime import Progress, report
from .criteria import GramSolution, GramSystem
from .pruning import (
    COMPENSATIONS,
    SCORES,
    ColumnStats,
    _capture,
    _layer_inputs,
    _run_layer,
    check_llama_family,
    geometry,
    get_score,
    head_scores,
    select_keep,
)

if TYPE_CHECKING:
    import torch

# the compensations with a Gram form (they change only the kept weights)
LAB_COMPENSATIONS = tuple(c for c in COMPENSATIONS if COMPENSATIONS[c].gram is not None)
# the scores the recorded lab covers (python -m backend.train pruning): Wanda-sp and RCPU's variance-aware score
LAB_SCORES = tuple(SCORES.names("baseline")[:1] + SCORES.names("ours"))
# the compensations whose output geometry the lab records: the first of each kind (RCPU's rotation, least squares,
# no compensation)
GEOMETRY_COMPENSATIONS = tuple(next(c for c in LAB_COMPENSATIONS if COMPENSATIONS.kind(c) == kind)
                               for kind in ("ours", "baseline", "reference"))
SUBLAYERS = {"attn": "self_attn.o_proj", "mlp": "mlp.down_proj"}
HIST_TOKENS = 1024


@dataclass
class _Moments:
    gram: torch.Tensor  # [d_in, d_in] float64, sum over tokens of x x^T
    sums: torch.Tensor  # [d_in]
    abs_sums: torch.Tensor  # [d_in]
    tokens: int

    def stats(self) -> ColumnStats:
        n = self.tokens
        mean = self.sums / n
        ex2 = self.gram.diagonal() / n
        var = (ex2 - mean * mean).clamp_min(0.0)
        return ColumnStats(n=n, mean=mean.float(), var=var.float(), sample_var=(var * n / max(n - 1, 1)).float(),
                           mean_abs=(self.abs_sums / n).float(), l2=self.gram.diagonal().sqrt().float())


@dataclass
class Captured:
    """Sufficient statistics of one sublayer's inputs. ``calib[i]`` covers the first ``n_list[i]`` segments."""

    layer: int
    sublayer: str  # "attn" or "mlp"
    W: torch.Tensor  # [d_out, d_in] float64
    head_dim: int | None
    n_list: list[int]
    calib: list[_Moments]
    held: _Moments
    held_sample: torch.Tensor  # [m, d_in] float32 raw held-out inputs for histograms
    meta: dict[str, Any] = field(default_factory=dict)


def _moments(X: torch.Tensor) -> _Moments:
    """Moments of X [n, d_in]; the Gram product runs in float32 per 1,024-token block, summed in float64."""
    import torch

    x = X.float()
    gram = torch.zeros(x.shape[1], x.shape[1], dtype=torch.float64)
    for i in range(0, x.shape[0], 1024):
        b = x[i : i + 1024]
        gram += (b.T @ b).double()
    xd = X.double()
    return _Moments(gram, xd.sum(0), xd.abs().sum(0), x.shape[0])


def _add(a: _Moments, b: _Moments) -> _Moments:
    return _Moments(a.gram + b.gram, a.sums + b.sums, a.abs_sums + b.abs_sums, a.tokens + b.tokens)


def capture_layer(
    model: Any,
    layer: int,
    calib_ids: torch.Tensor,
    heldout_ids: torch.Tensor,
    n_list: list[int],
    progress: Progress | None = None,
    batch_size: int = 8,
) -> dict[str, Captured]:
    """Capture the inputs of ``layer``'s o_proj and down_proj on the dense model: calibration windows ``calib_ids``
    [max(n_list), T] and held-out windows ``heldout_ids`` [M, T]. Returns ``{"attn": ..., "mlp": ...}``."""
    import torch

    check_llama_family(model)
    geo = geometry(model)
    if not 0 <= layer < geo.layers:
        raise InputError(f"Layer {layer} does not exist; the model has layers 0..{geo.layers - 1}.")
    n_list = sorted({int(n) for n in n_list})
    if n_list[-1] > calib_ids.shape[0]:
        raise InputError(f"Need {n_list[-1]} calibration segments, got {calib_ids.shape[0]}.")
    model.eval()
    report(progress, 0.05, "embedding the calibration and held-out windows")
    calib = _layer_inputs(model, calib_ids[: n_list[-1]], 1)  # one segment per batch: cumulative N is exact
    held = _layer_inputs(model, heldout_ids, batch_size)
    for li in range(layer):
        calib = _run_layer(model.model.layers[li], calib)
        held = _run_layer(model.model.layers[li], held)
        report(progress, 0.05 + 0.75 * (li + 1) / max(layer, 1), f"dense layer {li + 1}/{layer}")
    lay = model.model.layers[layer]
    names = tuple(SUBLAYERS.values())
    report(progress, 0.85, "capturing the sublayer inputs")
    out: dict[str, Captured] = {}
    Xh, _ = _capture(lay, held, names)
    per_segment: dict[str, list[torch.Tensor]] = {n: [] for n in names}
    for b in calib:
        X, _ = _capture(lay, [b], names)
        for n in names:
            per_segment[n].append(X[n])
    for key, name in SUBLAYERS.items():
        segs = per_segment[name]
        mom, cum, i = None, [], 0
        for n in n_list:
            part = _moments(torch.cat(segs[i:n]))
            mom = part if mom is None else _add(mom, part)
            cum.append(mom)
            i = n
        g = torch.Generator().manual_seed(0)
        xh = Xh[name]
        idx = torch.randperm(xh.shape[0], generator=g)[:HIST_TOKENS].sort().values
        out[key] = Captured(
            layer=layer, sublayer=key, W=lay.get_submodule(name).weight.detach().double().clone(),
            head_dim=geo.head_dim if key == "attn" else None, n_list=n_list, calib=cum, held=_moments(xh),
            held_sample=xh[idx].clone(),
            meta={"seqlen": int(calib_ids.shape[1]), "held_segments": int(heldout_ids.shape[0])},
        )
    report(progress, 1.0, "captured")
    return out


# ------------------------------------------------------------------------------------------------- Gram-based math
def _wg(W: torch.Tensor, m: _Moments) -> torch.Tensor:
    """W G [d_out, d_in] (cached on the moments: it serves every ratio and score)."""
    if getattr(m, "_wg", None) is None or m._wg.shape[0] != W.shape[0]:  # type: ignore[attr-defined]
        m._wg = W @ m.gram  # type: ignore[attr-defined]
    return m._wg  # type: ignore[attr-defined]


def _errors(W: torch.Tensor, sols: dict[str, GramSolution], keep: torch.Tensor,
            m: _Moments) -> dict[str, tuple[float, float]]:
    """{name: (||Y - X_K W'^T||^2, ||Y||^2)} from the moments, for the compensated weights of ``sols`` (no bias).

    ||Y - X_K W'^T||^2 = tr(W G W^T) - 2 tr(W' G[K, :] W^T) + tr(W' G[K, K] W'^T); a rotation leaves the last term
    that of the kept weights and its scale multiplies it by s^2 (``zz_factor``), so only the others need the k x k
    product.
    """
    WG = _wg(W, m)
    WGK = WG[:, keep]
    G_KK = m.gram[keep][:, keep]
    yy = float((W * WG).sum())
    W_K = W[:, keep]
    zz_kept = float(((W_K @ G_KK) * W_K).sum())
    out = {}
    for k, s in sols.items():
        zz = float(((s.W @ G_KK) * s.W).sum()) if s.zz_factor is None else s.zz_factor * zz_kept
        out[k] = (max(yy - 2 * float((s.W * WGK).sum()) + zz, 0.0), yy)
    return out


def _system(W: torch.Tensor, keep: torch.Tensor, m: _Moments, lam: float) -> GramSystem:
    return GramSystem(W[:, keep], _wg(W, m)[:, keep], m.gram[keep][:, keep], lam)  # W G[:, K] = Y^T X_K


def _keep(cap: Captured, stats: ColumnStats, ratio: float, score: str, input_stat: str) -> tuple[Any, Any, Any]:
    sc = get_score(score)
    col = sc(cap.W.float(), stats, input_stat)
    if cap.head_dim:
        unit = select_keep(head_scores(col, cap.head_dim, sc.head_reduce), ratio)
        return unit.repeat_interleave(cap.head_dim), unit, col
    unit = select_keep(col, ratio)
    return unit, unit, col


def study_point(cap: Captured, ratio: float, n: int, lam: float = 1e-4, score: str = "variance",
                input_stat: str = "l2") -> dict[str, Any]:
    """Errors of every compensation for one setting. ``n`` must be one of ``cap.n_list``.

    Returns ``errors`` {compensation: {"calib", "heldout", "calib_sq", "change"}} (relative Frobenius errors; squared
    absolute calibration error; ||W' - W_K||_F^2), ``keep`` (bool per column), ``unit_keep`` (per head / channel),
    ``gamma`` and ``gamma_no_var`` (column scores with and without the Var factor), ``spectrum`` (singular values of
    M), ``det_q``, ``scale``.
    """
    import torch

    if n not in cap.n_list:
        raise InputError(f"N = {n} was not captured; choose one of {cap.n_list}.")
    m = cap.calib[cap.n_list.index(n)]
    stats = m.stats()
    keep, unit, col = _keep(cap, stats, ratio, score, input_stat)
    system = _system(cap.W, keep, m, lam)
    sols = {name: COMPENSATIONS[name].gram(system) for name in LAB_COMPENSATIONS}
    cal, held = _errors(cap.W, sols, keep, m), _errors(cap.W, sols, keep, cap.held)
    errors = {}
    for name in LAB_COMPENSATIONS:
        (e, y), (eh, yh) = cal[name], held[name]
        errors[name] = {"calib": math.sqrt(e / y), "heldout": math.sqrt(eh / yh), "calib_sq": e,
                        "change": float((sols[name].W - cap.W[:, keep]).pow(2).sum())}
    no_var = SCORES["wanda_sp"](cap.W.float(), stats, input_stat)
    Q, S = system.rotation
    return {
        "ratio": ratio, "n": n, "lam": lam, "score": score, "tokens": m.tokens,
        "errors": errors, "keep": keep.tolist(), "unit_keep": unit.tolist(),
        "gamma": col.tolist(), "gamma_no_var": no_var.tolist(),
        "spectrum": S.tolist(),
        "det_q": float(torch.linalg.det(Q)), "scale": system.scale,
        "_weights": {k: sols[k].W for k in LAB_COMPENSATIONS},
    }


def n_sweep(cap: Captured, ratio: float, lam: float = 1e-4, score: str = "variance",
            input_stat: str = "l2") -> list[dict[str, Any]]:
    """Calibration and held-out errors of every compensation for each captured N (the overfitting story)."""
    rows = []
    for n in cap.n_list:
        p = study_point(cap, ratio, n, lam, score, input_stat)
        for comp, e in p["errors"].items():
            rows.append({"layer": cap.layer, "sublayer": cap.sublayer, "n_calib": n, "tokens": p["tokens"],
                         "compensation": comp, "calib_err": e["calib"], "heldout_err": e["heldout"]})
    return rows


def output_geometry(cap: Captured, point: dict[str, Any]) -> dict[str, list[float]]:
    """Per held-out token: output norms of the dense sublayer, the rotated and the least-squares versions, and their
    angles (degrees) to the dense output. ``point`` comes from :func:`study_point`."""
    import torch

    X = cap.held_sample.double()
    keep = torch.tensor(point["keep"])
    Y = X @ cap.W.T
    out = {"dense_norm": Y.norm(dim=1).tolist()}
    for name in GEOMETRY_COMPENSATIONS:
        Yh = X[:, keep] @ point["_weights"][name].T
        cos = torch.nn.functional.cosine_similarity(Yh, Y, dim=1).clamp(-1, 1)
        out[f"{name}_norm"] = Yh.norm(dim=1).tolist()
        out[f"{name}_angle"] = torch.rad2deg(torch.arccos(cos)).tolist()
    return out


def public(point: dict[str, Any]) -> dict[str, Any]:
    """``point`` without the weight tensors (JSON-able, small)."""
    return {k: v for k, v in point.items() if not k.startswith("_")}


def binned_geometry(cap: Captured, point: dict[str, Any], bins: int = 40) -> dict[str, Any]:
    """:func:`output_geometry` as histograms (counts) on shared edges: norms on [0, 1.3 x the 99.5th percentile of
    the dense norms], angles on [0, 90] degrees (values beyond either range count in its last bin). JSON-able."""
    import numpy as np

    g = output_geometry(cap, point)
    top = float(np.percentile(g["dense_norm"], 99.5)) * 1.3
    norm_edges = np.linspace(0.0, max(top, 1e-12), bins + 1)
    angle_edges = np.linspace(0.0, 90.0, bins + 1)
    hist = {}
    for k, v in g.items():  # values beyond the range count in the last bin
        edges = angle_edges if k.endswith("angle") else norm_edges
        hist[k] = np.histogram(np.clip(np.asarray(v), edges[0], edges[-1]), bins=edges)[0].tolist()
    means = {k: float(np.mean(v)) for k, v in g.items()}
    return {"hist": hist, "norm_edges": norm_edges.tolist(), "angle_edges": angle_edges.tolist(), "means": means}
