"""Figures of the MCD page: imputed vs true channel maps, per-channel Pearson r bars per method."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.imputation.mcd.evaluate import METHODS


def maps(true: dict[str, list], imputed: dict[str, dict[str, list]], channels: list[str]) -> go.Figure:
    """Rows: the true map then each method's imputation; columns: the imputed channels. One colour scale per
    column (the channel's true 1st-99th percentile), shared by every row, so rows compare directly."""
    rows = ["true", *imputed]
    fig = make_subplots(rows=len(rows), cols=len(channels), horizontal_spacing=0.01, vertical_spacing=0.02,
                        column_titles=channels,
                        row_titles=["true"] + [METHODS.label(m).split(" (")[0].split(",")[0] for m in imputed])
    for j, ch in enumerate(channels):
        t = np.asarray(true[ch], float)
        lo, hi = np.percentile(t, 1), np.percentile(t, 99)
        for i, row in enumerate(rows):
            z = t if row == "true" else np.asarray(imputed[row][ch], float)
            fig.add_trace(go.Heatmap(z=z, zmin=lo, zmax=hi, colorscale="Viridis", showscale=False,
                                     hovertemplate=f"{ch} {row}: %{{z:.2f}}<extra></extra>"), i + 1, j + 1)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed", scaleanchor="x")
    fig.update_layout(height=110 * len(rows) + 60, margin=dict(l=60, r=10, t=40, b=10))
    return fig


def r_bars(per_channel: dict[str, dict[str, float]], title: str) -> go.Figure:
    """Grouped bars: Pearson r per imputed channel (x) and method (colour); same y range [-0.2, 1] everywhere."""
    fig = go.Figure()
    for m, vals in per_channel.items():
        fig.add_bar(name=METHODS.label(m), x=list(vals), y=list(vals.values()), marker_color=METHODS.color(m))
    fig.update_layout(barmode="group", title=title, yaxis=dict(title="Pearson r", range=[-0.2, 1.0]),
                      height=360, legend=dict(orientation="h", y=-0.25), margin=dict(t=50, b=10))
    return fig


def mean_bars(mean_r: dict[str, float], title: str) -> go.Figure:
    """One bar per method: the mean Pearson r over the imputed channels."""
    names = list(mean_r)
    fig = go.Figure(go.Bar(x=[METHODS.label(m) for m in names], y=[mean_r[m] for m in names],
                           marker_color=[METHODS.color(m) for m in names],
                           text=[f"{mean_r[m]:.3f}" for m in names], textposition="outside"))
    fig.update_layout(title=title, yaxis=dict(title="mean Pearson r", range=[0, 1.05]), height=340,
                      margin=dict(t=50, b=10))
    return fig
