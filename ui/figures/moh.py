"""Figures of the MoH page (pure plotly builders: data in, Figure out; no streamlit).

Names are variants of :data:`backend.heuristics.moh.moh.VARIANTS` or references of
:data:`backend.heuristics.moh.references.TSP_REFERENCES` / ``BIN_REFERENCES``; labels and colours come from there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.heuristics.moh.moh import VARIANTS
from backend.heuristics.moh.references import BIN_REFERENCES, TSP_REFERENCES


def label(name: str) -> str:
    for reg in (VARIANTS, TSP_REFERENCES, BIN_REFERENCES):
        if name in reg:
            return reg.label(name)
    return name


def color(name: str) -> str:
    for reg in (VARIANTS, TSP_REFERENCES, BIN_REFERENCES):
        if name in reg:
            return reg.color(name)
    return "#7f7f7f"


def gap_vs_size(sizes: Sequence[int], gaps: Mapping[str, Sequence[float | None]], reference: str,
                spread: Mapping[str, Sequence[Sequence[float]]] | None = None, title: str = "") -> go.Figure:
    """Mean optimality gap (%) against problem size, one line per heuristic; ``spread`` (per-seed values) draws the
    seeds as faint points."""
    fig = go.Figure()
    for name, ys in gaps.items():
        ours = name in VARIANTS
        fig.add_trace(go.Scatter(x=list(sizes), y=[None if y is None else float(y) for y in ys], name=label(name),
                                 mode="lines+markers", line=dict(color=color(name), width=3 if ours else 1.5,
                                                                 dash=None if ours else "dot")))
        for per_size in (spread or {}).get(name, []):
            fig.add_trace(go.Scatter(x=list(sizes), y=list(per_size), mode="markers", showlegend=False,
                                     marker=dict(color=color(name), size=5, opacity=0.35), hoverinfo="skip"))
    fig.update_layout(title=title or f"Optimality gap vs size (to {reference})", xaxis_title="problem size",
                      yaxis_title="gap (%)", legend=dict(orientation="h", y=-0.25), height=420,
                      margin=dict(l=50, r=20, t=50, b=10))
    fig.update_xaxes(type="log", tickvals=list(sizes))
    return fig


def progress(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> go.Figure:
    """The evolution's progress: best size-weighted training gap (%) against task evaluations spent, per variant
    (meta variants: after each meta iteration; no meta level: along its single run)."""
    fig = go.Figure()
    for name, (x, y) in curves.items():
        fig.add_trace(go.Scatter(x=list(x), y=list(y), name=label(name), mode="lines+markers" if len(x) < 30 else
                                 "lines", line=dict(color=color(name), shape="hv")))
    fig.update_layout(title="Evolution progress (training sizes)", xaxis_title="task evaluations spent",
                      yaxis_title="best training gap (%)", height=380, legend=dict(orientation="h", y=-0.25),
                      margin=dict(l=50, r=20, t=50, b=10))
    return fig


def tours(coords: Sequence[Sequence[float]], tours_: Mapping[str, Sequence[int]],
          lengths: Mapping[str, float]) -> go.Figure:
    """Tours side by side on shared axes."""
    names = list(tours_)
    fig = make_subplots(rows=1, cols=len(names), shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=[f"{label(n)}: {lengths[n]:.4g}" for n in names])
    xs = [c[0] for c in coords]
    ys = [c[1] for c in coords]
    for k, n in enumerate(names, start=1):
        t = list(tours_[n]) + [tours_[n][0]]
        fig.add_trace(go.Scatter(x=[xs[i] for i in t], y=[ys[i] for i in t], mode="lines", showlegend=False,
                                 line=dict(color=color(n), width=1.5)), row=1, col=k)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", marker=dict(size=4, color="#444"), showlegend=False,
                                 hoverinfo="skip"), row=1, col=k)
    fig.update_layout(height=380, margin=dict(l=20, r=20, t=40, b=10))
    fig.update_yaxes(scaleanchor="x", scaleratio=1, row=1, col=1)
    return fig


def bins_used(values: Mapping[str, int], l1: int) -> go.Figure:
    """Bins used per heuristic against the L1 lower bound."""
    names = list(values)
    fig = go.Figure(go.Bar(x=[label(n) for n in names], y=[values[n] for n in names],
                           marker_color=[color(n) for n in names],
                           text=[f"{values[n]} (+{100 * (values[n] / l1 - 1):.2f}%)" for n in names]))
    fig.add_hline(y=l1, line=dict(dash="dash", color="#444"), annotation_text=f"L1 bound {l1}")
    fig.update_layout(title="Bins used", yaxis_title="bins", height=360, margin=dict(l=50, r=20, t=50, b=10),
                      yaxis_range=[0.95 * l1, 1.02 * max(values.values())])
    return fig
