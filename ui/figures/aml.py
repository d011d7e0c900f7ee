"""Figures of the AML page (pure builders: data in, Figure out; no streamlit).

``panels_figure`` reads a :class:`~backend.scenes.aml.jobs.SegmentResult`; the others read ``EvalResult.to_dict()``.
Maskings are ordered, labelled and coloured from the registry (``MASKINGS``); every PatchMax map shares one colour
scale (0 to 1) and every picture the same 112 x 112 pixel axes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.scenes.aml.masking import MASKINGS

PATCH = 14


def _overlay(image: np.ndarray, mask: np.ndarray, color: tuple[int, int, int], alpha: float = 0.55) -> np.ndarray:
    out = image.astype(np.float32).copy()
    out[mask] = (1 - alpha) * out[mask] + alpha * np.asarray(color, np.float32)
    return out.clip(0, 255).astype(np.uint8)


def blocks_picture(image: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """The image with its zeroed blocks painted grey (what pass 2 of training sees)."""
    full = np.kron(np.asarray(blocks, np.uint8), np.ones((PATCH, PATCH), np.uint8)).astype(bool)
    out = image.copy()
    out[full] = (124, 116, 104)  # the ImageNet mean colour: a zeroed normalised pixel
    return out


def _hex(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return tuple(int(c[i:i + 2], 16) for i in (0, 2, 4))  # type: ignore[return-value]


def panels_figure(res) -> go.Figure:  # noqa: ANN001 - SegmentResult
    """Rows: the maskings; columns: PatchMax (0-1), the blocks its training masking zeroes, the predicted mask
    (with the ground truth's outline in white when there is one)."""
    rows = len(res.panels)
    titles = []
    for p in res.panels:
        iou = f", IoU {p['iou']:.1f}" if p["iou"] is not None else ""
        titles += [f"{p['label']}: PatchMax", f"zeroed blocks ({int(np.sum(p['blocks']))} of 64)",
                   f"prediction ({p['area']} px{iou})"]
    fig = make_subplots(rows, 3, subplot_titles=titles, horizontal_spacing=0.03, vertical_spacing=0.06)
    gt_edge = None
    if res.gt is not None:
        g = res.gt.astype(bool)
        inner = g.copy()
        inner[1:-1, 1:-1] = g[1:-1, 1:-1] & g[:-2, 1:-1] & g[2:, 1:-1] & g[1:-1, :-2] & g[1:-1, 2:]
        gt_edge = g & ~inner
    for i, p in enumerate(res.panels, start=1):
        fig.add_trace(go.Heatmap(z=np.kron(np.asarray(p["patchmax"]), np.ones((PATCH, PATCH))), zmin=0, zmax=1,
                                 colorscale="Viridis", showscale=i == 1, colorbar={"title": "PatchMax", "len": 0.3,
                                                                                    "y": 0.85}), i, 1)
        fig.add_trace(go.Image(z=blocks_picture(res.image, p["blocks"])), i, 2)
        pred = _overlay(res.image, np.asarray(p["mask"], bool), _hex(MASKINGS.color(p["masking"])))
        if gt_edge is not None:
            pred[gt_edge] = (255, 255, 255)
        fig.add_trace(go.Image(z=pred), i, 3)
    fig.update_xaxes(showticklabels=False, range=[-0.5, 111.5])
    fig.update_yaxes(showticklabels=False, autorange="reversed", scaleanchor="x", range=[111.5, -0.5])
    fig.update_layout(height=260 * rows, margin={"t": 40, "b": 10, "l": 10, "r": 10})
    return fig


def curves_figure(res: Mapping[str, object]) -> go.Figure:
    """mIoU during training on the val split and the held-out source: mean over seeds (line), each seed (thin)."""
    curves = res["curves"]  # type: ignore[index]
    fig = make_subplots(1, 2, subplot_titles=["val (training source)", "held-out source"], shared_yaxes=True)
    for m, c in curves.items():  # type: ignore[union-attr]
        for j, split in enumerate(("val", "heldout"), start=1):
            runs = [r for r in c[split] if len(r) == len(c["step"])]
            if not runs:
                continue
            for r in runs:
                fig.add_trace(go.Scatter(x=c["step"], y=r, mode="lines", line={"color": MASKINGS.color(m),
                                                                               "width": 0.6},
                                         opacity=0.4, showlegend=False, hoverinfo="skip"), 1, j)
            fig.add_trace(go.Scatter(x=c["step"], y=np.mean(runs, 0), mode="lines+markers", name=MASKINGS.label(m),
                                     line={"color": MASKINGS.color(m), "width": 2.5}, showlegend=j == 1), 1, j)
    fig.update_xaxes(title_text="training step")
    fig.update_yaxes(title_text="mIoU (%)", row=1, col=1)
    fig.update_layout(height=340, margin={"t": 40, "b": 10})
    return fig


def seed_lines(res: Mapping[str, object], metric: str = "miou") -> go.Figure:
    """Per-seed score of each masking (seeds joined across maskings: the pairing of the intervals)."""
    rows = res["rows"]  # type: ignore[index]
    names = list(res["means"])  # type: ignore[arg-type]
    fig = go.Figure()
    for seed in sorted({r["seed"] for r in rows}):  # type: ignore[union-attr]
        ys = [next(r[metric] for r in rows if r["masking"] == m and r["seed"] == seed) for m in names]  # type: ignore[union-attr]
        fig.add_trace(go.Scatter(x=[MASKINGS.label(m) for m in names], y=ys, mode="lines+markers",
                                 name=f"seed {seed}", line={"color": "#bbbbbb", "width": 1},
                                 marker={"size": 10, "color": [MASKINGS.color(m) for m in names]}))
    fig.update_yaxes(title_text=f"{metric} (%)")
    fig.update_layout(height=320, margin={"t": 20, "b": 10}, showlegend=False)
    return fig
