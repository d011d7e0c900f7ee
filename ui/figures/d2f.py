"""Plotly figures of the D2F page (pure functions: data -> go.Figure; decoder labels and colours from
``backend.reasoning.d2f.evaluate.DECODERS``, cell states from ``GRID_STATES``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from backend.reasoning.d2f.evaluate import DECODERS, GRID_STATES, VANILLA

#: One colour per grid state (not added, semi-active, fully active, decoded this pass, decoded, cached).
STATE_COLORS = ("#f0f0f0", "#fdd0a2", "#fd8d3c", "#d62728", "#9ecae1", "#3182bd")


def _scale() -> list[list[Any]]:
    n = len(STATE_COLORS)
    out = []
    for i, c in enumerate(STATE_COLORS):
        out += [[i / n, c], [(i + 1) / n, c]]
    return out


#: The most animation frames a grid gets.
MAX_FRAMES = 32


def token_grid(grid: Sequence[Sequence[int]], tokens: Sequence[str], title: str, n_positions: int,
               n_passes: int, animate: bool = True) -> go.Figure:
    """Decode passes (rows, top to bottom) x generated positions (columns), each cell coloured by its state; the
    token text is written where it is decoded. ``animate`` adds a play button revealing one pass per frame.
    ``n_positions`` / ``n_passes`` fix the axes so that two grids side by side share them."""
    rows = [list(r) + [0] * (n_positions - len(r)) for r in grid]
    text = [[(tokens[i] if i < len(tokens) else "") if v == 3 else "" for i, v in enumerate(r)] for r in rows]
    hover = [[f"pass {s + 1}, position {i}: {GRID_STATES[v]}" + (f" '{tokens[i]}'" if i < len(tokens) and v >= 3
                                                                else "") for i, v in enumerate(r)]
             for s, r in enumerate(rows)]
    heat = dict(colorscale=_scale(), zmin=-0.5, zmax=len(STATE_COLORS) - 0.5, xgap=1, ygap=1,
                colorbar={"tickvals": list(range(len(GRID_STATES))), "ticktext": list(GRID_STATES), "len": 0.9},
                texttemplate="%{text}", textfont={"size": 9}, hovertemplate="%{customdata}<extra></extra>")
    y = list(range(1, len(rows) + 1))
    fig = go.Figure(go.Heatmap(z=rows, text=text, customdata=hover, x=list(range(n_positions)), y=y, **heat))
    if animate and len(rows) > 1:
        # frames carry only what changes (z, text); the trace keeps its colours and hover texts. At most MAX_FRAMES
        # frames (several passes per frame beyond that), so a 96-pass grid stays a small figure.
        step = -(-len(rows) // MAX_FRAMES)
        ends = list(range(step, len(rows), step)) + [len(rows)]
        fig.frames = [go.Frame(data=[go.Heatmap(z=rows[:s] + [[None] * n_positions] * (len(rows) - s),
                                                text=text[:s] + [[""] * n_positions] * (len(rows) - s))],
                               traces=[0], name=str(s)) for s in ends]
        fig.update_layout(updatemenus=[{"type": "buttons", "showactive": False, "x": 0, "y": 1.12, "xanchor": "left",
                                        "buttons": [{"label": "play", "method": "animate",
                                                     "args": [None, {"frame": {"duration": 120, "redraw": True},
                                                                     "fromcurrent": False}]}]}])
    fig.update_layout(title=title, height=min(900, 160 + 14 * max(n_passes, 1)),
                      xaxis={"title": "generated position", "range": [-0.5, n_positions - 0.5]},
                      yaxis={"title": "forward pass", "autorange": False, "range": [n_passes + 0.5, 0.5]},
                      margin={"t": 70})
    return fig


def _key(row: Mapping[str, Any]) -> str:
    return row["decoder"]


def pareto(rows: Sequence[Mapping[str, Any]], x: str = "passes_per_token") -> go.Figure:
    """Accuracy against forward passes per token (log axis) or tokens/s per decoder; the vanilla step sweep is one
    line with its step counts written at the points."""
    title = {"passes_per_token": "forward passes per token (log)", "tokens_per_s": "tokens per second (log)"}[x]
    fig = go.Figure()
    for name in DECODERS:
        pts = [r for r in rows if _key(r) == name]
        if not pts:
            continue
        pts = sorted(pts, key=lambda r: r[x])
        ours = DECODERS.kind(name) == "ours"
        fig.add_trace(go.Scatter(
            x=[r[x] for r in pts], y=[r["accuracy"] for r in pts], name=DECODERS.label(name),
            mode="lines+markers+text" if len(pts) > 1 else "markers",
            text=[f"{r['steps']}" if r.get("steps") else "" for r in pts], textposition="top center",
            marker={"color": DECODERS.color(name), "size": 10 if ours else 8, "symbol": "star" if ours else "circle"},
            line={"color": DECODERS.color(name)},
            hovertemplate="%{x:.3g}: accuracy %{y:.2f}<extra>" + DECODERS.label(name) + "</extra>"))
    fig.update_layout(title=f"Accuracy vs {title.split(' (')[0]}" + (" (vanilla: step counts)" if any(
        _key(r) in VANILLA for r in rows) else ""), xaxis={"title": title, "type": "log"},
        yaxis={"title": "exact-answer accuracy", "range": [-0.02, 1.02]}, height=420,
        legend={"orientation": "h", "y": -0.25})
    return fig
