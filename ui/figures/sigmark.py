"""Plotly figures of the SIGMark page (pure functions: data -> go.Figure)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.watermark.sigmark.evaluation import METHODS
from ui.figures.images import png_image


def score_heatmap(scores: np.ndarray, thresholds: np.ndarray, title: str) -> go.Figure:
    """Detect margin (score - threshold) of each inverted latent frame (rows) against each key (columns)."""
    margin = np.asarray(scores) - np.asarray(thresholds)
    lim = float(max(1.0, np.abs(margin).max()))
    fig = go.Figure(go.Heatmap(
        z=margin, x=[f"key {k + 1}" for k in range(margin.shape[1])],
        y=[f"latent {f + 1}" for f in range(margin.shape[0])], colorscale="RdBu", zmid=0, zmin=-lim, zmax=lim,
        colorbar={"title": "S - thr"}))
    fig.update_layout(title=title, height=320, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      yaxis={"autorange": "reversed"})
    return fig


def per_frame_accuracy(per_method: dict[str, list[float]], interpolated_frames: dict[str, list[bool]] | None = None
                       ) -> go.Figure:
    """Bit accuracy of each absolute latent frame, one bar group per method (shared y axis 0..1)."""
    fig = go.Figure()
    for name, acc in per_method.items():
        fig.add_bar(x=[f"latent {f + 1}" for f in range(len(acc))], y=acc, name=METHODS.label(name),
                    marker_color=METHODS.color(name))
    fig.add_hline(y=0.5, line_dash="dot", annotation_text="chance")
    fig.update_layout(barmode="group", yaxis={"range": [0, 1.02], "title": "bit accuracy"}, height=320,
                      margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend={"orientation": "h"})
    return fig


def accuracy_per_attack(rows: list[dict]) -> go.Figure:
    """rows: {attack, method, message_acc, frame_acc_real}; grouped bars per attack."""
    fig = go.Figure()
    methods = list(dict.fromkeys(r["method"] for r in rows))
    attacks = list(dict.fromkeys(r["attack"] for r in rows))
    for m in methods:
        acc = {r["attack"]: r["message_acc"] for r in rows if r["method"] == m}
        fig.add_bar(x=attacks, y=[acc.get(a) for a in attacks], name=METHODS.label(m), marker_color=METHODS.color(m))
    fig.add_hline(y=0.5, line_dash="dot")
    fig.update_layout(barmode="group", yaxis={"range": [0, 1.02], "title": "message bit accuracy"}, height=360,
                      margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend={"orientation": "h"})
    return fig


def extraction_scaling(rows: list[dict]) -> go.Figure:
    """rows: {n_stored, method, seconds, comparisons}; log-log time and operation count vs stored messages."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("extraction time (s)", "operations per extraction"))
    for m in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r for r in rows if r["method"] == m), key=lambda r: r["n_stored"])
        x = [p["n_stored"] for p in pts]
        fig.add_scatter(x=x, y=[p["seconds"] for p in pts], name=METHODS.label(m), mode="lines+markers",
                        line={"color": METHODS.color(m)}, row=1, col=1)
        fig.add_scatter(x=x, y=[p["comparisons"] for p in pts], name=METHODS.label(m), mode="lines+markers",
                        line={"color": METHODS.color(m), "dash": "dot"}, showlegend=False, row=1, col=2)
    fig.update_xaxes(type="log", title="registered videos N")
    fig.update_yaxes(type="log")
    fig.update_layout(height=340, margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h"})
    return fig


def frame_strip(video: np.ndarray, interpolated: np.ndarray | None = None, title: str = "") -> go.Figure:
    """All frames side by side (uint8 image), 4-frame group boundaries marked, interpolated frames outlined."""
    v = (np.clip(np.asarray(video), 0, 1) * 255).astype(np.uint8)
    f, h, w, _ = v.shape
    strip = np.concatenate(list(v), axis=1)
    fig = go.Figure(png_image(strip))
    for j in range(1, f, 4):
        fig.add_vline(x=j * w - 0.5, line_color="white", line_width=2)
    if interpolated is not None:
        for i in np.flatnonzero(interpolated):
            fig.add_shape(type="rect", x0=i * w - 0.5, x1=(i + 1) * w - 0.5, y0=-0.5, y1=h - 0.5,
                          line={"color": "red", "width": 2})
    fig.update_layout(title=title, height=140, margin={"l": 0, "r": 0, "t": 30, "b": 0},
                      xaxis={"visible": False}, yaxis={"visible": False})
    return fig
