"""Comparison of a page's runs (pure plotly: data in, Figure out). One panel per numeric metric, the chosen runs as
bars on that panel's shared axis, one colour per run across panels."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

MAX_PANELS = 8


def numeric_metrics(metrics: Sequence[Mapping[str, object]]) -> list[str]:
    """Metric names that are a finite number in at least one run, in first-seen order."""
    names: list[str] = []
    for m in metrics:
        for k, v in m.items():
            if k not in names and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                names.append(k)
    return names


def compare_runs(labels: Sequence[str], metrics: Sequence[Mapping[str, object]]) -> go.Figure | None:
    """Bars of every numeric metric for each run; None when no metric is numeric."""
    names = numeric_metrics(metrics)[:MAX_PANELS]
    if not names:
        return None
    cols = min(4, len(names))
    rows = math.ceil(len(names) / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, horizontal_spacing=0.08,
                        vertical_spacing=0.25 if rows > 1 else 0.1)
    palette = qualitative.Safe
    for i, name in enumerate(names):
        r, c = divmod(i, cols)
        for j, (label, m) in enumerate(zip(labels, metrics, strict=True)):
            v = m.get(name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            fig.add_trace(go.Bar(x=[label], y=[v if ok else None], name=label, legendgroup=label,
                                 showlegend=i == 0, marker_color=palette[j % len(palette)],
                                 hovertemplate=f"{label}<br>{name}: %{{y:.4g}}<extra></extra>"),
                          row=r + 1, col=c + 1)
        fig.update_xaxes(showticklabels=False, row=r + 1, col=c + 1)
    fig.update_layout(height=260 * rows + 60, margin=dict(l=40, r=20, t=50, b=20), barmode="group",
                      legend=dict(orientation="h", y=-0.08), title="Chosen runs, metric by metric")
    return fig
