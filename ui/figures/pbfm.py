"""Figures of the PBFM page (pure plotly builders: data in, Figure out; no streamlit).

Inputs: sample arrays per method (``[n, C, ...]`` fields), solver fields, residual arrays, the rows of
:func:`backend.physics.pbfm.evaluation.summarise` and the dict of :func:`backend.physics.pbfm.evaluation.gradient_dial`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.physics.pbfm.pbfm import METHODS


def darcy_samples(samples: Mapping[str, np.ndarray], solver: np.ndarray, k: int = 4) -> go.Figure:
    """Darcy fields: log k (top) and u (bottom), ``k`` samples per method and the solver's fields, same axes."""
    names = ["solver", *samples]
    fig = make_subplots(rows=2, cols=len(names), shared_yaxes="rows", subplot_titles=[
        "Solver (held out)" if n == "solver" else METHODS.label(n) for n in names], vertical_spacing=0.08)
    x = np.linspace(0, 1, solver.shape[-1])
    for c, n in enumerate(names, start=1):
        arr = solver if n == "solver" else samples[n]
        color = "#000000" if n == "solver" else METHODS.color(n)
        for i in range(min(k, len(arr))):
            for row in (1, 2):
                fig.add_trace(go.Scatter(x=x, y=arr[i, row - 1], mode="lines", line=dict(color=color, width=1.2),
                                         opacity=0.8, showlegend=False), row, c)
    fig.update_yaxes(title_text="log k", row=1, col=1)
    fig.update_yaxes(title_text="u", row=2, col=1)
    fig.update_layout(height=440, margin=dict(t=40, b=10))
    return fig


def heat_samples(samples: Mapping[str, np.ndarray], solver: np.ndarray) -> go.Figure:
    """One heat field (time x space) per method and one solver field, one colour scale."""
    names = ["solver", *samples]
    arrs = [solver[0, 0] if n == "solver" else samples[n][0, 0] for n in names]
    lim = float(max(np.abs(a).max() for a in arrs))
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[
        "Solver (held out)" if n == "solver" else METHODS.label(n) for n in names])
    for c, a in enumerate(arrs, start=1):
        fig.add_trace(go.Heatmap(z=a, zmin=-lim, zmax=lim, colorscale="RdBu", showscale=c == len(arrs)), 1, c)
    fig.update_yaxes(title_text="time level", col=1)
    fig.update_layout(height=300, margin=dict(t=40, b=10))
    return fig


def residual_maps(residuals: Mapping[str, np.ndarray]) -> go.Figure:
    """|R| of one sample per method on one shared log colour scale (Darcy: a row of nodes; heat: time x space)."""
    names = list(residuals)
    mats = [np.atleast_2d(np.abs(residuals[n])) for n in names]
    logs = [np.log10(m + 1e-12) for m in mats]
    lo, hi = float(min(x.min() for x in logs)), float(max(x.max() for x in logs))
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[METHODS.label(n) if n in METHODS else n
                                                                 for n in names])
    for c, z in enumerate(logs, start=1):
        fig.add_trace(go.Heatmap(z=z, zmin=lo, zmax=hi, colorscale="Viridis", showscale=c == len(logs),
                                 colorbar=dict(title="log10 |R|")), 1, c)
    fig.update_layout(height=260, margin=dict(t=40, b=10))
    return fig


def pareto(rows: Sequence[Mapping[str, object]],
           references: Sequence[Mapping[str, object]] = ()) -> go.Figure:
    """Distribution error (energy distance on standardised channels) vs mean residual per method: the seed mean
    with the min-max range as error bars; the Pareto front of the means joined by a line; ``references`` (solver
    fields plus white noise on the physical channel, one point per std) as a grey dotted line."""
    fig = go.Figure()
    noisy = [r for r in references if str(r["label"]).startswith("solver + noise")]
    if noisy:
        fig.add_trace(go.Scatter(
            x=[r["energy_distance"] for r in noisy], y=[r["mean_residual"] for r in noisy], mode="lines+markers+text",
            text=[str(r["label"]).replace("solver + noise ", "") for r in noisy], textposition="middle right",
            line=dict(color="#b0b0b0", dash="dot"), marker=dict(color="#b0b0b0", size=7, symbol="diamond"),
            name="solver fields + white noise on u (its std x u's std; reference)"))
    for r in rows:
        m = str(r["method"])
        fig.add_trace(go.Scatter(
            x=[r["energy_distance"]], y=[r["mean_residual"]], mode="markers", name=str(r["label"]),
            marker=dict(color=METHODS.color(m), size=14 if METHODS.kind(m) == "ours" else 10,
                        symbol="star" if METHODS.kind(m) == "ours" else "circle", line=dict(width=1, color="black")),
            error_x=dict(type="data", symmetric=False, array=[r["ed_max"] - r["energy_distance"]],
                         arrayminus=[r["energy_distance"] - r["ed_min"]]),
            error_y=dict(type="data", symmetric=False, array=[r["res_max"] - r["mean_residual"]],
                         arrayminus=[r["mean_residual"] - r["res_min"]])))
    front = sorted((r for r in rows if r["pareto"]), key=lambda r: r["energy_distance"])
    if len(front) > 1:
        fig.add_trace(go.Scatter(x=[r["energy_distance"] for r in front], y=[r["mean_residual"] for r in front],
                                 mode="lines", line=dict(color="#7f7f7f", dash="dash"), name="Pareto front"))
    fig.update_layout(height=420, margin=dict(t=30, b=10),
                      xaxis_title="energy distance to held-out solver fields (standardised channels)",
                      yaxis_title="mean |residual| (log)", yaxis_type="log", title="Distribution error vs physics")
    return fig


def gradient_dial(dial: Mapping[str, object]) -> go.Figure:
    """Directions of g_FM, g_res, their sum and the ConFIG update in the plane of g_FM and g_res (each drawn at unit
    length; the norms are in the legend)."""
    coords: Mapping[str, Sequence[float]] = dial["coords"]  # type: ignore[assignment]
    norms: Mapping[str, float] = dial["norms"]  # type: ignore[assignment]
    styles = {"g_fm": ("FM gradient", "#1f77b4"), "g_res": ("residual gradient", "#2ca02c"),
              "sum": ("sum (weighted, lambda = 1)", "#7f7f7f"), "config": ("ConFIG update", "#d62728")}
    fig = go.Figure()
    for k, (label, color) in styles.items():
        v = np.asarray(coords[k], dtype=float)
        x, y = (v / (np.hypot(*v) or 1.0)).tolist()
        fig.add_trace(go.Scatter(x=[0, x], y=[0, y], mode="lines+markers", name=f"{label} (norm {norms[k]:.3g})",
                                 line=dict(color=color, width=4 if k == "config" else 2),
                                 marker=dict(symbol=["circle", "arrow"], angleref="previous", size=[4, 14])))
    fig.update_xaxes(range=[-1.1, 1.1], zeroline=True, title_text="along g_FM")
    fig.update_yaxes(range=[-1.1, 1.1], zeroline=True, scaleanchor="x", title_text="orthogonal part of g_res")
    cos = dial["cos"]  # type: ignore[index]
    fig.update_layout(height=380, margin=dict(t=40, b=10), title=(
        f"cos(g_FM, g_res) = {cos['fm_res']:.2f}; ConFIG: cos to FM {cos['config_fm']:.3f}, "
        f"to residual {cos['config_res']:.3f}"))
    return fig
