"""Figures of the Bridge page (pure plotly builders: data in, Figure out; no streamlit).

- :func:`tensor_diagram`: the hidden states of N samples of one prompt as an N x S x D block of cells, with the three
  mixing axes (self-attention along S, feed-forward along D, Bridge along N at one position).
- :func:`width_curves`: mean accuracy, pass@N, majority vote and distinct right solutions against N per generation
  mode (reads :class:`backend.reasoning.bridge.jobs.ScalingResult` as a dict).
- :func:`training_curves`: held-out accuracy against rollout tokens of every training run.
- :func:`answer_counts`: how many of the N samples gave each answer, per generation mode, the right answer marked
  (reads :class:`backend.reasoning.bridge.jobs.SampleResult` as a dict).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.reasoning.bridge.jobs import AGGREGATES, MODES

AXIS_COLORS = {"S": "#1f77b4", "D": "#2ca02c", "N": "#d62728"}


def tensor_diagram(n: int = 4, s: int = 8, d: int = 5, position: int = 5, bridge: bool = True) -> go.Figure:
    """Cells (sample, position, feature) of one prompt's hidden states; the cells one Bridge block mixes (every
    sample at ``position``) in red, the arrows of the three mixing axes. Without Bridge only S and D mix."""
    xs, ys, zs, colors, texts = [], [], [], [], []
    for b in range(n):
        for t in range(s):
            for f in range(d):
                xs.append(t)
                ys.append(b)
                zs.append(f)
                hot = bridge and t == position
                colors.append(AXIS_COLORS["N"] if hot else ("#c7c7c7" if t > position else "#9ecae1"))
                texts.append(f"sample {b + 1}, position {t + 1}, feature {f + 1}")
    fig = go.Figure(go.Scatter3d(x=xs, y=ys, z=zs, mode="markers", marker={"size": 5, "color": colors,
                                                                            "symbol": "square", "opacity": 0.85},
                                 text=texts, hoverinfo="text", showlegend=False))

    def arrow(p0: tuple, p1: tuple, color: str, name: str) -> None:
        fig.add_trace(go.Scatter3d(x=[p0[0], p1[0]], y=[p0[1], p1[1]], z=[p0[2], p1[2]], mode="lines+text",
                                   line={"color": color, "width": 8}, text=["", name], textposition="top center",
                                   name=name, hoverinfo="name"))

    arrow((-1, -0.8, -0.8), (s, -0.8, -0.8), AXIS_COLORS["S"], "S: self-attention (causal, within a sample)")
    arrow((-1, -0.8, -0.8), (-1, -0.8, d), AXIS_COLORS["D"], "D: feed-forward (within a token)")
    if bridge:
        arrow((position, -0.8, d + 0.5), (position, n, d + 0.5), AXIS_COLORS["N"],
              f"N: Bridge (the {n} samples at one position)")
    fig.update_layout(height=420, margin={"t": 10, "b": 0, "l": 0, "r": 0}, legend={"orientation": "h", "y": 0},
                      scene={"xaxis": {"title": "S (positions)"}, "yaxis": {"title": "N (samples)"},
                             "zaxis": {"title": "D (features)"}, "aspectmode": "data",
                             "camera": {"eye": {"x": 1.4, "y": -1.6, "z": 0.9}}})
    return fig


def width_curves(res: Mapping[str, Any], title: str = "") -> go.Figure:
    """One panel per aggregation (shared 0-1 axis) and one of distinct right solutions, against N (log 2 axis)."""
    names = list(AGGREGATES)
    fig = make_subplots(rows=1, cols=len(names) + 1, subplot_titles=[AGGREGATES.label(a) for a in names]
                        + ["distinct right solutions (of N)"], horizontal_spacing=0.06)
    ws = res["widths"]
    for m, per in res["metrics"].items():
        kind = MODES.kind(m)
        style = {"color": MODES.color(m), "width": 3 if kind == "ours" else 1.8,
                 "dash": "dot" if kind == "reference" else None}
        for j, a in enumerate(names):
            fig.add_trace(go.Scatter(x=ws, y=per[a], name=MODES.label(m), mode="lines+markers", line=style,
                                     legendgroup=m, showlegend=j == 0), row=1, col=j + 1)
            fig.update_yaxes(range=[0, 1.02], row=1, col=j + 1)
        fig.add_trace(go.Scatter(x=ws, y=res["distinct"][m], name=MODES.label(m), mode="lines+markers", line=style,
                                 legendgroup=m, showlegend=False), row=1, col=len(names) + 1)
    fig.update_xaxes(type="log", tickvals=ws, title_text="N (width)")
    tw = res.get("train_width")
    if tw in ws:
        for j in range(len(names) + 1):
            fig.add_vline(x=tw, line={"color": "#bbbbbb", "dash": "dash"}, row=1, col=j + 1)
    fig.update_layout(height=360, title=title, margin={"t": 60, "b": 10}, legend={"orientation": "h", "y": -0.25},
                      font={"size": 11})
    return fig


def training_curves(res: Mapping[str, Any]) -> go.Figure:
    """Held-out accuracy (16 problems, width 4) against GRPO rollout tokens, one line per training run."""
    fig = go.Figure()
    for m, runs in res["curves"].items():
        for k, run in enumerate(runs):
            pts = run["points"]
            fig.add_trace(go.Scatter(x=[p["rollout_tokens"] for p in pts], y=[p["accuracy"] for p in pts],
                                     name=MODES.label(m), legendgroup=m, showlegend=k == 0, mode="lines+markers",
                                     line={"color": MODES.color(m), "width": 2.5 if MODES.kind(m) == "ours" else 1.5},
                                     hovertext=f"seed {run['seed']}"))
    fig.update_xaxes(title_text="GRPO rollout tokens (after the SFT warm-up)")
    fig.update_yaxes(range=[0, 1.02], title_text="held-out accuracy at N = 4")
    fig.update_layout(height=320, margin={"t": 20, "b": 10}, legend={"orientation": "h", "y": -0.3})
    return fig


def answer_counts(res: Mapping[str, Any]) -> go.Figure:
    """Grouped bars: for every answer any sample gave (no answer as "none"), how many of the N samples of each mode
    gave it; the right answer, when known, is labelled on the axis."""
    modes = list(res["modes"])
    answers = sorted({str(x["answer"]) for m in modes for x in res["modes"][m]["samples"]},
                     key=lambda a: (a == "None", int(a) if a.lstrip("-").isdigit() else 0))
    right = None if res.get("answer") is None else str(res["answer"])
    ticks = [("none" if a == "None" else a) + (" (right)" if a == right else "") for a in answers]
    fig = go.Figure()
    for m in modes:
        got = [str(x["answer"]) for x in res["modes"][m]["samples"]]
        fig.add_trace(go.Bar(x=ticks, y=[got.count(a) for a in answers], name=res["labels"][m]))
    fig.update_layout(barmode="group", height=300, margin=dict(t=40, b=10, l=10, r=10),
                      title=f"Answers of the {res['n']} samples per mode", xaxis_title="answer",
                      yaxis_title="samples", legend=dict(orientation="h", y=-0.3))
    fig.update_xaxes(type="category")
    return fig
