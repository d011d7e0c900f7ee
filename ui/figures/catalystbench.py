"""Figures of the CatalystBench page: per-task metrics per method (mean and seed spread) and the paired gains."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def task_metrics(r: dict) -> go.Figure:
    """Grouped bars: one group per task (metric in its name), one bar per method / baseline, error bars = the seed
    min-max spread; the average score last. Every task shares the y axis (R^2, accuracy and exact match are all
    on a 0-1 scale with 1 best); an R^2 below -1 is drawn at -1 (the table beside gives the raw means)."""
    tasks = [f"{t['name']}<br>({t['metric']})" for t in r["tasks"]] + ["average"]
    keys = [t["name"] for t in r["tasks"]] + ["average"]
    fig = go.Figure()
    for m, per in r["scores"].items():
        vals = [np.clip(np.asarray(per[k], dtype=float), -1.0, None) for k in keys]
        mean = [float(np.nanmean(v)) if np.isfinite(v).any() else None for v in vals]
        hi = [float(np.nanmax(v) - np.nanmean(v)) if np.isfinite(v).any() else 0 for v in vals]
        lo = [float(np.nanmean(v) - np.nanmin(v)) if np.isfinite(v).any() else 0 for v in vals]
        fig.add_bar(name=r["labels"][m], x=tasks, y=mean,
                    marker_color=r["colors"][m],
                    error_y={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo},
                    hovertemplate="%{x}: %{y:.3f}<extra>" + r["labels"][m] + "</extra>")
    fig.update_layout(barmode="group", height=420, yaxis_title="test score (R^2 / accuracy / exact match)",
                      yaxis_range=[-1.0, 1.05], legend_orientation="h", legend_y=-0.25, margin={"t": 30})
    return fig


def gains(r: dict) -> go.Figure:
    """The paired gains of the claims with their 95 % intervals (a zero line)."""
    cs = r["comparisons"]
    labels = [f"{r['labels'][c['ours']].split(' (')[0]} - {r['labels'][c['other']].split(' (')[0]}: {c['task']}"
              for c in cs]
    fig = go.Figure(go.Scatter(
        x=[c["gain"] for c in cs], y=labels, mode="markers",
        error_x={"type": "data", "symmetric": False, "array": [c["gain_ci"][1] - c["gain"] for c in cs],
                 "arrayminus": [c["gain"] - c["gain_ci"][0] for c in cs]},
        marker={"size": 10, "color": "#1f77b4"}))
    fig.add_vline(x=0, line_dash="dash", line_color="grey")
    fig.update_layout(height=120 + 40 * len(cs), xaxis_title="paired gain over seeds (95 % interval)",
                      margin={"t": 20, "l": 10})
    return fig
