"""Figures of the IGGT page (pure plotly builders: data in, Figure out; no streamlit).

``views_figure``, ``features_figure`` read a :class:`backend.scenes.iggt.jobs.SegmentResult`; ``benchmark_bars`` reads
``EvalResult.to_dict()``. Segmenters are ordered, labelled and coloured from the registry (``SEGMENTERS``). A track
keeps one colour in every view (same colour, same instance), every panel has the same 64 x 64 pixel axes, and the
depth panels share one colour scale.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.scenes.iggt.segment import SEGMENTERS

# distinct colours for track ids (uint8 RGB); id k takes TRACK_COLORS[k % len]
TRACK_COLORS = np.array([
    (230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240), (240, 50, 230),
    (210, 245, 60), (250, 190, 212), (0, 128, 128), (170, 110, 40), (128, 0, 0), (170, 255, 195), (128, 128, 0),
    (0, 0, 128), (128, 128, 128), (255, 225, 25), (0, 0, 0)], np.uint8)


def track_picture(labels: np.ndarray, image: np.ndarray | None = None, alpha: float = 0.65) -> np.ndarray:
    """Track labels ``[H, W]`` -> uint8 RGB ``[H, W, 3]`` (one colour per id), blended over ``image`` if given."""
    col = TRACK_COLORS[np.asarray(labels) % len(TRACK_COLORS)].astype(np.float32)
    if image is not None:
        col = alpha * col + (1 - alpha) * image.astype(np.float32)
    return col.clip(0, 255).astype(np.uint8)


def _small(image: np.ndarray, size: int) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.fromarray(image).resize((size, size), Image.Resampling.BOX))


def views_figure(res) -> go.Figure:  # noqa: ANN001 - SegmentResult
    """Rows: the views, the ground-truth instances (rendered scenes), then each segmenter's tracks; columns: views.
    The same colour in two views is the same track (the cross-view match)."""
    images = np.asarray(res.images)
    v = images.shape[0]
    size = np.asarray(next(iter(res.labels.values()))).shape[-1]
    small = [_small(im, size) for im in images]
    rows = [("views", [s for s in small])]
    if res.instance_true is not None:
        rows.append(("ground truth", [track_picture(g, s) for g, s in zip(res.instance_true, small, strict=True)]))
    for m in res.labels:
        met = res.metrics.get(m)
        tag = f" (T-mIoU {met['t_miou']:.2f}, T-SR {met['t_sr']:.2f})" if met and met["t_sr"] is not None else (
            f" (T-mIoU {met['t_miou']:.2f})" if met else "")
        rows.append((SEGMENTERS.label(m) + tag,
                     [track_picture(lab, s) for lab, s in zip(res.labels[m], small, strict=True)]))
    titles = [f"{name}" if j == 0 else "" for name, _ in rows for j in range(v)]
    fig = make_subplots(len(rows), v, subplot_titles=titles, horizontal_spacing=0.01, vertical_spacing=0.045)
    for i, (_, pics) in enumerate(rows, start=1):
        for j, pic in enumerate(pics, start=1):
            fig.add_trace(go.Image(z=pic), i, j)
    for a in fig.layout.annotations:
        a.update(x=0.0, xanchor="left", font={"size": 12})
    fig.update_xaxes(showticklabels=False, range=[-0.5, size - 0.5])
    fig.update_yaxes(showticklabels=False, autorange="reversed", scaleanchor="x")
    fig.update_layout(height=170 * len(rows) + 40, margin={"t": 30, "b": 10, "l": 10, "r": 10})
    return fig


def features_figure(res) -> go.Figure:  # noqa: ANN001 - SegmentResult
    """Row 1: the first three principal components of the network's features as RGB (one PCA over all views, so
    a colour means the same feature in every view); row 2: predicted depth, and row 3 true depth when known (one
    colour scale for both)."""
    pca = np.asarray(res.pca)
    v = pca.shape[0]
    pred = np.asarray(res.depth_pred)
    true = None if res.depth_true is None else np.asarray(res.depth_true)
    finite = [pred.ravel()] + ([true[np.isfinite(true)]] if true is not None else [])
    lo, hi = float(np.percentile(np.concatenate(finite), 1)), float(np.percentile(np.concatenate(finite), 99))
    nrows = 3 if true is not None else 2
    fig = make_subplots(nrows, v, horizontal_spacing=0.01, vertical_spacing=0.05,
                        subplot_titles=["feature PCA (RGB = PC 1-3)" if j == 0 else "" for j in range(v)]
                        + ["predicted depth" if j == 0 else "" for j in range(v)]
                        + (["true depth (sky blank)" if j == 0 else "" for j in range(v)] if true is not None else []))
    for j in range(v):
        fig.add_trace(go.Image(z=pca[j]), 1, j + 1)
        fig.add_trace(go.Heatmap(z=pred[j], zmin=lo, zmax=hi, colorscale="Viridis", showscale=j == 0,
                                 colorbar={"title": "depth", "len": 0.5, "y": 0.3}), 2, j + 1)
        if true is not None:
            fig.add_trace(go.Heatmap(z=np.where(np.isfinite(true[j]), true[j], np.nan), zmin=lo, zmax=hi,
                                     colorscale="Viridis", showscale=False), 3, j + 1)
    for a in fig.layout.annotations:
        a.update(x=0.0, xanchor="left", font={"size": 12})
    size = pca.shape[1]
    fig.update_xaxes(showticklabels=False, range=[-0.5, size - 0.5])
    fig.update_yaxes(showticklabels=False, autorange="reversed", scaleanchor="x")
    fig.update_layout(height=180 * nrows + 40, margin={"t": 30, "b": 10, "l": 10, "r": 10})
    return fig


def benchmark_bars(res: Mapping[str, object]) -> go.Figure:
    """T-mIoU and T-SR per segmenter and held-out split (means over scenes and seeds), one axis from 0 to 1."""
    summary = res["summary"]  # type: ignore[index]
    splits = list(summary)  # type: ignore[arg-type]
    fig = make_subplots(1, 2, subplot_titles=["T-mIoU", "T-SR"], shared_yaxes=True)
    for m in SEGMENTERS:
        if m not in summary[splits[0]]:  # type: ignore[index]
            continue
        for j, metric in enumerate(("t_miou", "t_sr"), start=1):
            ys = [summary[s][m][metric] for s in splits]  # type: ignore[index]
            fig.add_trace(go.Bar(x=splits, y=[np.nan if y is None else y for y in ys], name=SEGMENTERS.label(m),
                                 marker_color=SEGMENTERS.color(m), showlegend=j == 1), 1, j)
    fig.update_yaxes(range=[0, 1])
    fig.update_layout(barmode="group", height=360, margin={"t": 40, "b": 10, "l": 10, "r": 10},
                      legend={"orientation": "h", "y": -0.2})
    return fig
