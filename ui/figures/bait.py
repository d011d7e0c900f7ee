"""Plotly figures of the BAIT page (pure functions: data -> go.Figure; no streamlit)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.images import png_image


def mosaic(rows: Sequence[np.ndarray], gap: int = 2, scale: int = 1) -> np.ndarray:
    """Rows of uint8 images ``[n, H, W, 3]`` (same shapes) -> one uint8 picture with white gaps, each pixel
    repeated ``scale`` times."""
    n, h, w = rows[0].shape[:3]
    out = np.full((len(rows) * (h * scale + gap) - gap, n * (w * scale + gap) - gap, 3), 255, dtype=np.uint8)
    for r, imgs in enumerate(rows):
        for c in range(n):
            y, x = r * (h * scale + gap), c * (w * scale + gap)
            out[y:y + h * scale, x:x + w * scale] = np.repeat(np.repeat(imgs[c], scale, 0), scale, 1)
    return out


def thumbnails(clean: np.ndarray, protected: dict[str, np.ndarray], amplified: dict[str, np.ndarray],
               label: Callable[[str], str], captions: Sequence[str] = (), eps: int = 8) -> go.Figure:
    """The clean images on top, then per method its protected images and its perturbation amplified to the full
    grey range (mid-grey = 0, white / black = +/- eps)."""
    scale = max(1, 96 // max(clean.shape[1:3]))
    rows, names = [clean], ["clean"]
    for m in protected:
        rows += [protected[m], amplified[m]]
        names += [label(m), f"{label(m)}: delta x {127 / eps:.0f}"]
    pic = mosaic(rows, scale=scale)
    h = clean.shape[1] * scale + 2
    fig = go.Figure(png_image(pic, hoverinfo="skip"))
    fig.update_yaxes(tickvals=[i * h + h / 2 for i in range(len(names))], ticktext=names, showgrid=False)
    w = clean.shape[2] * scale + 2
    fig.update_xaxes(tickvals=[i * w + w / 2 for i in range(len(captions))] if captions else [],
                     ticktext=list(captions), showgrid=False)
    fig.update_layout(height=min(1400, 60 + len(names) * h), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=f"Protected images and their perturbations (eps = {eps}/255)")
    return fig


def accuracy_grid(cells: Sequence[dict[str, Any]], methods: Sequence[str], label: Callable[[str], str],
                  color: Callable[[str], str], inits: Sequence[str]) -> go.Figure:
    """Clean test accuracy of the victims: one panel per source, the inits on the x axis, a bar per method with
    its 95% interval over seeds; the same y axis (0-1) in every panel."""
    sources = list(dict.fromkeys(c["source"] for c in cells))
    fig = make_subplots(rows=1, cols=len(sources), shared_yaxes=True, subplot_titles=sources)
    for j, src in enumerate(sources):
        for m in methods:
            cs = {c["init"]: c for c in cells if c["source"] == src and c["method"] == m}
            if not cs:
                continue
            ys = [cs[i]["mean"] if i in cs else None for i in inits]
            lo = [cs[i]["mean"] - cs[i]["ci"][0] if i in cs else 0 for i in inits]
            hi = [cs[i]["ci"][1] - cs[i]["mean"] if i in cs else 0 for i in inits]
            fig.add_trace(go.Bar(x=list(inits), y=ys, name=label(m), marker_color=color(m), legendgroup=m,
                                 showlegend=j == 0,
                                 error_y={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo},
                                 hovertemplate=f"{label(m)} %{{x}}: %{{y:.3f}}<extra></extra>"),
                          row=1, col=j + 1)
    fig.update_yaxes(range=[0, 1], title_text="clean test accuracy (lower = better protected)", row=1, col=1)
    fig.add_hline(y=0.1, line_dash="dot", line_color="grey", annotation_text="chance")
    fig.update_layout(barmode="group", height=420, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def outer_curves(curves: dict[str, Sequence[float]], label: Callable[[str], str], color: Callable[[str], str],
                 chance: float, every: int = 1) -> go.Figure:
    """BAIT's outer loss (cross-entropy of the inner-trained surrogate towards the wrong label) per generator step,
    with the chance level ``ln 10`` (a surrogate that knows nothing); below it the wrong label is bound."""
    fig = go.Figure()
    for m, ys in curves.items():
        fig.add_trace(go.Scatter(x=[i * every for i in range(len(ys))], y=list(ys), name=label(m),
                                 line={"color": color(m)}))
    fig.add_hline(y=chance, line_dash="dot", line_color="grey", annotation_text="chance (ln 10)")
    fig.update_layout(xaxis_title="generator step", yaxis_title="outer loss (to the wrong label)", height=320,
                      margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig
