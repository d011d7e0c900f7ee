"""Figures of the motion-forecasting page (pure plotly builders: data in, Figure out; no streamlit).

``futures`` draws K sampled futures of a trajectory grid over the image as coloured streaks (one colour per sample)
up to a time step, one panel per method on the same pixel axes; ``metric_bars`` compares the methods' best-of-K MSE,
coverage and LRTL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.forecast.nextmotion.methods import METHODS

SAMPLE_COLORS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#bfef45",
                 "#469990", "#9a6324", "#800000", "#000075")
MOVING_PX = 1.0


def _streaks(points: np.ndarray, traj: np.ndarray, t: int) -> tuple[list, list]:
    """Polylines (with None breaks) of the points of ``traj`` ``[g, g, T, 2]`` that move, from t = 0 to step t."""
    xs: list = []
    ys: list = []
    moving = np.abs(traj).sum((-1, -2)) > MOVING_PX
    for i, j in zip(*np.nonzero(moving), strict=True):
        p = points[i, j]
        path = np.concatenate([p[None], p[None] + traj[i, j, :t]])
        xs += [*path[:, 0].tolist(), None]
        ys += [*path[:, 1].tolist(), None]
    return xs, ys


def futures(image: np.ndarray, points: np.ndarray, samples: Mapping[str, np.ndarray], t: int,
            truth: np.ndarray | None = None, columns: int = 3) -> go.Figure:
    """One panel per method (plus the truth, if given): the image and each sample's streaks up to step ``t``."""
    panels = [(METHODS.label(n), s) for n, s in samples.items()]
    if truth is not None:
        panels.append(("Ground truth (realised)", truth[None]))
    rows = (len(panels) + columns - 1) // columns
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[p[0] for p in panels],
                        horizontal_spacing=0.02, vertical_spacing=0.08)
    h, w = image.shape[:2]
    for idx, (_, samp) in enumerate(panels):
        r, c = idx // columns + 1, idx % columns + 1
        fig.add_trace(go.Image(z=image, hoverinfo="skip"), row=r, col=c)
        for k, traj in enumerate(samp):
            xs, ys = _streaks(points, traj, t)
            if xs:
                fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", showlegend=False, hoverinfo="skip",
                                         line={"color": SAMPLE_COLORS[k % len(SAMPLE_COLORS)], "width": 1.6}),
                              row=r, col=c)
        fig.update_xaxes(range=[-0.5, w - 0.5], showticklabels=False, row=r, col=c)
        fig.update_yaxes(range=[h - 0.5, -0.5], showticklabels=False, scaleanchor=f"x{idx + 1 if idx else ''}",
                         row=r, col=c)
    fig.update_layout(height=300 * rows, margin={"t": 30, "b": 5, "l": 5, "r": 5})
    return fig


def metric_bars(rows: Sequence[Mapping[str, object]]) -> go.Figure:
    """Best-of-K MSE (px^2), coverage and LRTL per method, side by side."""
    keys = [("best_of_k_mse", "best-of-K MSE (px², lower is better)"), ("coverage", "outcome coverage (higher)"),
            ("lrtl", "LRTL, whole grid rank 5 (lower)")]
    keys = [(k, t) for k, t in keys if any(r.get(k) is not None for r in rows)]
    fig = make_subplots(rows=1, cols=len(keys), subplot_titles=[t for _, t in keys], horizontal_spacing=0.08)
    for c, (key, _) in enumerate(keys, start=1):
        sel = [r for r in rows if r.get(key) is not None]
        colors = [METHODS.color(str(r["method"])) if r["method"] in METHODS else "#888888" for r in sel]
        fig.add_trace(go.Bar(x=[str(r["label"]) for r in sel], y=[float(r[key]) for r in sel],  # type: ignore[arg-type]
                             marker_color=colors, showlegend=False), row=1, col=c)
    fig.update_layout(height=340, margin={"t": 40, "b": 10})
    return fig
