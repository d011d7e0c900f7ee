"""Figures of the Lyra page (pure builders: data in, Figure out; no streamlit).

``angle_views``, ``view_strip`` and ``metric_lines`` read a :class:`~backend.scenes.lyra.jobs.RenderResult`; ``eval_figure`` reads
``EvalResult.to_dict()``. Methods are ordered, labelled and coloured from the registry (``METHODS``); every picture
shares the same pixel axes and the PSNR / SSIM panels share their x axis (the orbit offset).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.scenes.lyra.jobs import METHODS


def _rows(res) -> list[tuple[str, np.ndarray]]:  # noqa: ANN001 - RenderResult
    rows = []
    if res.truth is not None:
        rows.append(("True views", res.truth))
    elif res.reference_images is not None:
        rows.append(("Teacher's views (the reference)", res.reference_images))
    rows += [(METHODS.label(k), res.images[k]) for k in METHODS if k in res.images]
    return rows


def angle_views(res, index: int) -> go.Figure:  # noqa: ANN001 - RenderResult
    """View ``index`` of the path side by side: the true view (or the teacher's, for an upload) and every method's,
    each titled with its PSNR / SSIM there; same pixel axes."""
    rows = _rows(res)
    keys = [None] + [k for k in METHODS if k in res.images]
    titles = []
    for (name, _), k in zip(rows, keys, strict=True):
        score = f"<br>{res.psnr[k][index]:.1f} dB, SSIM {res.ssim[k][index]:.2f}" if k in res.psnr else "<br> "
        titles.append(f"{name.split(' (')[0]}{score}")
    fig = make_subplots(1, len(rows), horizontal_spacing=0.01, subplot_titles=titles)
    for j, (_, imgs) in enumerate(rows):
        fig.add_trace(go.Image(z=imgs[index], hovertemplate="x %{x} y %{y}<extra></extra>"), 1, j + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    fig.update_annotations(font_size=11)
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=90, b=10),
                      title=dict(text=f"{res.deltas[index]:+.1f} degrees from the first view", font_size=13))
    return fig


def view_strip(res) -> go.Figure:  # noqa: ANN001 - RenderResult
    """One column per view of the path, one row per method (the true views first), same pixel axes."""
    rows = _rows(res)
    n = len(res.deltas)
    fig = make_subplots(len(rows), n, horizontal_spacing=0.005, vertical_spacing=0.03,
                        subplot_titles=[f"{d:+.0f} deg" for d in res.deltas] + [""] * (n * (len(rows) - 1)),
                        row_titles=[name.split(" (")[0][:18] for name, _ in rows])
    for r, (_, imgs) in enumerate(rows):
        for c in range(n):
            fig.add_trace(go.Image(z=imgs[c], hovertemplate="x %{x} y %{y}<extra></extra>"), r + 1, c + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    fig.update_annotations(font_size=10)
    fig.update_layout(height=max(260, 90 * len(rows) + 40), margin=dict(l=10, r=140, t=30, b=10))
    return fig


def metric_lines(res) -> go.Figure:  # noqa: ANN001 - RenderResult
    """PSNR and SSIM per view against the orbit offset, one line per method."""
    fig = make_subplots(1, 2, subplot_titles=[f"PSNR (dB) vs {res.reference}", f"SSIM vs {res.reference}"])
    for k in METHODS:
        if k not in res.psnr:
            continue
        for col, vals in ((1, res.psnr[k]), (2, res.ssim[k])):
            fig.add_trace(go.Scatter(x=res.deltas, y=vals, mode="lines+markers", name=METHODS.label(k),
                                     line=dict(color=METHODS.color(k)), legendgroup=k, showlegend=col == 1), 1, col)
    fig.update_xaxes(title_text="orbit offset from the first view (degrees)")
    fig.update_layout(height=330, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def _arm(name: str) -> str:
    base, _, seed = name.rpartition("_s")
    return base if base in METHODS else name


def eval_figure(r: Mapping) -> go.Figure:
    """Mean held-out PSNR and SSIM per arm (student seeds and the upper bound as separate bars), with the
    per-scene spread (standard deviation)."""
    fig = make_subplots(1, 2, subplot_titles=["held-out PSNR (dB)", "held-out SSIM"])
    for col, key in ((1, "psnr"), (2, "ssim")):
        for name, vals in r[key].items():
            arm = _arm(name)
            fig.add_trace(go.Bar(x=[name], y=[float(np.mean(vals))], error_y=dict(type="data",
                                 array=[float(np.std(vals))]), marker_color=METHODS.color(arm),
                                 name=METHODS.label(arm), legendgroup=arm, showlegend=False), 1, col)
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=40, b=10))
    return fig
