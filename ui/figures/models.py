"""Figures of the models page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots


def image_and_pca(image: np.ndarray, pca: np.ndarray, title: str = "DINOv2 patch features (PCA)") -> go.Figure:
    """The input image beside its patch-feature PCA map, on the same pixel axes (the map is upsampled to the image)."""
    h, w = image.shape[:2]
    rows, cols = pca.shape[:2]
    ry = np.minimum((np.arange(h) * rows) // h, rows - 1)
    rx = np.minimum((np.arange(w) * cols) // w, cols - 1)
    up = (pca[ry][:, rx] * 255).astype(np.uint8)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("input", f"PCA of {rows}x{cols} patch tokens"),
                        shared_yaxes=True, horizontal_spacing=0.03)
    fig.add_trace(go.Image(z=image), 1, 1)
    fig.add_trace(go.Image(z=up), 1, 2)
    fig.update_layout(title=title, height=420, margin=dict(l=10, r=10, t=60, b=10))
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    return fig


def topk_bar(labels: list[str], probs: list[float]) -> go.Figure:
    fig = go.Figure(go.Bar(x=probs[::-1], y=labels[::-1], orientation="h", text=[f"{p:.2f}" for p in probs[::-1]]))
    fig.update_layout(title="Top-5 classes", xaxis=dict(range=[0, 1], title="probability"), height=320,
                      margin=dict(l=10, r=10, t=50, b=10))
    return fig
