"""Figures of the RGM page (pure plotly builders: data in, Figure out; no streamlit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.reasoning.rgm.sprm import AGGREGATIONS

EXTRA = {"majority": ("#7f7f7f", "dash"), "oracle": ("#222222", "dot")}


def strips(rows: Sequence[Mapping[str, object]], title: str = "") -> go.Figure:
    """Per-step score strips: one row per trace (right traces first; ``correct`` None when unknown), cells coloured
    by the step's score on one 0-1 scale, the first wrong step of a wrong trace outlined."""
    rows = sorted(rows, key=lambda r: (r["correct"] is not True, r["problem"], r["sample"]))
    S = max((len(r["scores"]) for r in rows), default=1)
    z = [list(r["scores"]) + [None] * (S - len(r["scores"])) for r in rows]
    word = {True: "right", False: "wrong", None: "trace"}
    ylab = [f"{word[r['correct']]} p{r['problem']}s{r['sample']}" for r in rows]
    fig = go.Figure(go.Heatmap(z=z, y=ylab, x=list(range(1, S + 1)), zmin=0, zmax=1, colorscale="RdYlGn",
                               colorbar={"title": "step score"}))
    for i, r in enumerate(rows):
        fw = r["first_wrong"]
        if fw is not None and r["correct"] is False and fw < len(r["scores"]):
            fig.add_shape(type="rect", x0=fw + 0.5, x1=fw + 1.5, y0=i - 0.5, y1=i + 0.5, line={"color": "black",
                                                                                                 "width": 2})
    fig.update_xaxes(title_text="step")
    fig.update_layout(height=max(300, 16 * len(rows)), title=title, margin={"t": 40, "b": 10})
    return fig


def bon(ks: Sequence[int], curves: Mapping[str, Sequence[float]], labels: Mapping[str, str]) -> go.Figure:
    """Best-of-k accuracy against k per aggregation, majority vote and the oracle, on one 0-1 axis."""
    fig = go.Figure()
    for name, ys in curves.items():
        if name in AGGREGATIONS:
            color, dash = AGGREGATIONS.color(name), None if AGGREGATIONS.kind(name) == "ours" else "dash"
        else:
            color, dash = EXTRA.get(name, ("#999999", "dot"))
        fig.add_trace(go.Scatter(x=list(ks), y=list(ys), name=labels.get(name, name), mode="lines+markers",
                                 line={"color": color, "dash": dash}))
    fig.update_xaxes(type="log", tickvals=list(ks), title_text="k (traces scored)")
    fig.update_yaxes(range=[0, 1.02], title_text="accuracy of the selected trace")
    fig.update_layout(height=360, margin={"t": 20, "b": 10}, legend={"orientation": "h", "y": -0.25})
    return fig


def auroc_bars(auc: Mapping[str, float]) -> go.Figure:
    """First-wrong-step AUROC per head (loss x seed), 0.5 = chance."""
    fig = make_subplots(rows=1, cols=1)
    names = list(auc)
    fig.add_trace(go.Bar(x=names, y=[auc[n] for n in names],
                         marker_color=["#1f77b4" if n.startswith("spr") else "#ff7f0e" for n in names]))
    fig.add_hline(y=0.5, line_dash="dot", annotation_text="chance")
    fig.update_yaxes(range=[0, 1], title_text="AUROC (steps before vs from the first wrong one)")
    fig.update_layout(height=300, margin={"t": 20, "b": 10})
    return fig
