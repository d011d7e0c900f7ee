"""Figures of the GLOT page (pure plotly builders: data in, Figure out; no streamlit)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.tokens.glot.experiments import CONTROLS
from backend.tokens.glot.pooling import OURS, POOLINGS, readouts

NEEDLE = "#d62728"
TOKEN = "#4c78a8"


def label(method: str) -> str:
    """Display label of a pooling or a control (bag of words, LoRA), from their registries."""
    return POOLINGS.label(method) if method in POOLINGS else CONTROLS.label(method)


def color(method: str) -> str:
    if method in POOLINGS:
        return POOLINGS.color(method)
    return CONTROLS.color(method) if method in CONTROLS else TOKEN


def _short(tok: str, n: int = 10) -> str:
    return tok if len(tok) <= n else tok[: n - 1] + "…"


def accuracy_vs_ratio(rows: Sequence[dict], title: str = "Accuracy vs distractor ratio") -> go.Figure:
    """One line per method (``rows``: ``ratio, method, accuracy, accuracy_std``), error bars = std over seeds."""
    fig = go.Figure()
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for m in methods:
        rs = sorted((r for r in rows if r["method"] == m), key=lambda r: r["ratio"])
        dashed = m.startswith("bow")
        fig.add_trace(go.Scatter(
            x=[r["ratio"] for r in rs], y=[r["accuracy"] for r in rs], name=label(m), mode="lines+markers",
            error_y=dict(type="data", array=[r.get("accuracy_std", 0.0) or 0.0 for r in rs], visible=True),
            line=dict(color=color(m), dash="dot" if dashed else "solid", width=3 if m == OURS else 2),
        ))
    fig.add_hline(y=0.5, line=dict(color="#999", dash="dash"), annotation_text="chance",
                  annotation_position="bottom right")
    fig.update_layout(title=title, xaxis=dict(title="distractor ratio", tickvals=[0.2, 0.5, 0.8, 0.9]),
                      yaxis=dict(title="eval accuracy", range=[0.4, 1.02]), height=420,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.2))
    return fig


def method_bars(rows: Sequence[dict], title: str = "Accuracy per method") -> go.Figure:
    """Bars of accuracy per method (one ratio), error bars over seeds."""
    fig = go.Figure(go.Bar(
        x=[label(r["method"]) for r in rows], y=[r["accuracy"] for r in rows],
        error_y=dict(type="data", array=[r.get("accuracy_std", 0.0) or 0.0 for r in rows]),
        marker_color=[color(r["method"]) for r in rows],
        text=[f"{r['accuracy']:.3f}" for r in rows], textposition="outside",
    ))
    fig.add_hline(y=0.5, line=dict(color="#999", dash="dash"))
    fig.update_layout(title=title, yaxis=dict(title="eval accuracy", range=[0, 1.08]), height=360,
                      margin=dict(l=10, r=10, t=50, b=10))
    return fig


def graph_at_tau(similarity: np.ndarray, tau: float) -> tuple[np.ndarray, float]:
    """Adjacency (cos > tau, self-loops kept) and edge density (pairs i != j) from a token cosine matrix [n, n]."""
    adj = similarity > tau
    np.fill_diagonal(adj, True)
    n = len(similarity)
    density = float((adj.sum() - n) / max(n * (n - 1), 1))
    return adj, density


def token_graph(tokens: Sequence[str], needle: Sequence[bool], adjacency: np.ndarray, tau: float,
                density: float) -> go.Figure:
    """The token graph of one text on a circle (reading order clockwise), needle tokens in red, self-loops hidden."""
    n = len(tokens)
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / max(n, 1)
    x, y = np.cos(angle), np.sin(angle)
    ex: list[float | None] = []
    ey: list[float | None] = []
    nx_, ny_ = [], []
    iu = np.argwhere(np.triu(adjacency, 1))
    for i, j in iu:
        (nx_ if (needle[i] or needle[j]) else ex).extend([x[i], x[j], None])
        (ny_ if (needle[i] or needle[j]) else ey).extend([y[i], y[j], None])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="rgba(76,120,168,0.25)", width=1),
                             hoverinfo="skip", name="edge"))
    fig.add_trace(go.Scatter(x=nx_, y=ny_, mode="lines", line=dict(color="rgba(214,39,40,0.55)", width=1.5),
                             hoverinfo="skip", name="edge at a needle token"))
    deg = adjacency.sum(1) - 1
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="markers+text" if n <= 60 else "markers",
        text=[_short(t, 8) for t in tokens], textposition="top center", textfont=dict(size=9),
        marker=dict(size=[11 if nd else 7 for nd in needle], color=[NEEDLE if nd else TOKEN for nd in needle],
                    line=dict(width=0.5, color="white")),
        customdata=np.stack([np.arange(n), deg], 1),
        hovertemplate="%{text} (#%{customdata[0]})<br>neighbours: %{customdata[1]}<extra></extra>", name="token",
    ))
    fig.update_layout(title=f"Token graph at tau = {tau:.2f}: {int(iu.shape[0])} edges, density {density:.3f}",
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"), height=520,
                      margin=dict(l=10, r=10, t=50, b=10), showlegend=True, legend=dict(orientation="h", y=-0.02))
    return fig


def readout_weights(tokens: Sequence[str], needle: Sequence[bool], weights: dict[str, Sequence[float]]) -> go.Figure:
    """Readout weights pi over the tokens, one row per attention pooling (same axes), needle tokens in red."""
    names = readouts(weights) + [k for k in weights if k not in readouts(weights)]
    if not names:
        return go.Figure()
    fig = make_subplots(rows=len(names), cols=1, shared_xaxes=True, shared_yaxes=True, vertical_spacing=0.08,
                        subplot_titles=[f"{label(k)} readout weights" for k in names])
    idx = list(range(len(tokens)))
    top = max(max(weights[k]) for k in names)
    for row, k in enumerate(names, start=1):
        fig.add_trace(go.Bar(x=idx, y=list(weights[k]), marker_color=[NEEDLE if nd else TOKEN for nd in needle],
                             customdata=list(tokens), hovertemplate="%{customdata}: %{y:.3f}<extra></extra>",
                             name=label(k), showlegend=False), row, 1)
        fig.add_hline(y=1 / max(len(tokens), 1), line=dict(color="#999", dash="dot"), row=row, col=1)
    fig.update_yaxes(range=[0, top * 1.1], title_text="pi")
    tick_every = max(1, math.ceil(len(tokens) / 40))
    fig.update_xaxes(tickvals=idx[::tick_every], ticktext=[_short(tokens[i], 8) for i in idx[::tick_every]],
                     tickangle=-60, row=len(names), col=1)
    fig.update_layout(height=230 * len(names) + 80, margin=dict(l=10, r=10, t=40, b=10),
                      title="Where each readout looks (red = needle tokens; dotted = uniform 1/n)")
    return fig


def similarity_heatmap(similarity: np.ndarray, labels: Sequence[str], n_tokens: int, needle: Sequence[bool]
                       ) -> go.Figure:
    """Cosine similarity of the tokens and the pooled vectors appended after them (rows/columns past the dashed line)."""
    marks = [("▶ " if i < n_tokens and needle[i] else "") + _short(lab, 10) for i, lab in enumerate(labels)]
    disp = [f"{i}:{m}" for i, m in enumerate(marks)]  # unique axis labels
    fig = go.Figure(go.Heatmap(z=similarity, x=disp, y=disp, colorscale="Viridis", zmin=-0.2, zmax=1.0,
                               colorbar=dict(title="cos"),
                               hovertemplate="%{y} vs %{x}: %{z:.2f}<extra></extra>"))
    for f in (fig.add_vline, fig.add_hline):
        f(n_tokens - 0.5, line=dict(color="white", dash="dash", width=2))
    fig.update_layout(title="Token cosine similarity, pooled vectors appended (▶ = needle token)", height=640,
                      margin=dict(l=10, r=10, t=50, b=10), xaxis=dict(showticklabels=len(labels) <= 60),
                      yaxis=dict(autorange="reversed", showticklabels=len(labels) <= 60))
    return fig


def cost_bars(rows: Sequence[dict]) -> go.Figure:
    """Trainable parameters (log scale) and seconds per training epoch per method, side by side."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("trainable parameters", "seconds per epoch"))
    names = [label(r["method"]) for r in rows]
    colors = [color(r["method"]) for r in rows]
    fig.add_trace(go.Bar(x=names, y=[max(r["params"], 1) for r in rows], marker_color=colors, showlegend=False), 1, 1)
    fig.add_trace(go.Bar(x=names, y=[r["seconds_per_epoch"] for r in rows], marker_color=colors, showlegend=False),
                  1, 2)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(height=330, margin=dict(l=10, r=10, t=50, b=10))
    return fig
