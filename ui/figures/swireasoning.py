"""Plotly figures of the SwiReasoning page (pure functions: data -> go.Figure; labels and colours from the decoder
registry ``backend.reasoning.swireasoning.decoder.DECODERS``).

Inputs are the small records of ``backend.reasoning.swireasoning.decoder.summarize`` (one decode) and ``rows_table`` (the
evaluation rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.reasoning.swireasoning.decoder import DECODERS

LATENT_FILL = "#9467bd"
EXPLICIT_FILL = "#2ca02c"


def _blocks(modes: str) -> list[tuple[int, int, str]]:
    """Runs of equal feed mode: (first step, last step, "L" | "E")."""
    out: list[tuple[int, int, str]] = []
    for i, m in enumerate(modes):
        if out and out[-1][2] == m and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i, m)
        else:
            out.append((i, i, m))
    return out


def _add_trace(fig: go.Figure, run: Mapping[str, Any], row: int | None = None, legend: bool = True) -> None:
    t = run["trace"]
    steps = list(range(len(t["entropy"])))
    kw = {"row": row, "col": 1} if row is not None else {}
    for lo, hi, m in _blocks(t["modes"]):
        fig.add_vrect(x0=lo - 0.5, x1=hi + 0.5, fillcolor=LATENT_FILL if m == "L" else EXPLICIT_FILL,
                      opacity=0.13, line_width=0, layer="below", **kw)
    pieces = t.get("pieces") or [""] * len(steps)
    fig.add_trace(go.Scatter(x=steps, y=t["entropy"], mode="lines+markers", name="entropy H_t",
                             line={"color": DECODERS.color(run["decoder"]), "width": 1.5}, marker={"size": 4},
                             text=[f"{p!r} ({m})" for p, m in zip(pieces, t["modes"], strict=False)],
                             hovertemplate="step %{x}: H = %{y:.3f}, token %{text}<extra></extra>",
                             showlegend=legend), **kw)
    fig.add_trace(go.Scatter(x=steps, y=t["reference"], mode="lines", name="reference entropy",
                             line={"color": "#444", "dash": "dash", "shape": "hv", "width": 1}, showlegend=legend),
                  **kw)
    sw = t["switch_steps"]
    for kind, color, symbol, label in (("to_explicit", EXPLICIT_FILL, "triangle-down", "switch to explicit"),
                                       ("to_latent", LATENT_FILL, "triangle-up", "switch to latent")):
        xs = [s for s, k in sw if k == kind]
        fig.add_trace(go.Scatter(x=xs, y=[t["entropy"][s] for s in xs], mode="markers", name=label,
                                 marker={"color": color, "size": 11, "symbol": symbol, "line": {"width": 1}},
                                 showlegend=legend), **kw)
    inj = t["injected"]
    if inj:
        fig.add_trace(go.Scatter(x=[s for s, _ in inj], y=[t["entropy"][s] for s, _ in inj], mode="markers+text",
                                 name="injected token", text=[p.strip() or repr(p) for _, p in inj],
                                 textposition="top center", marker={"color": "#d62728", "size": 9, "symbol": "x"},
                                 showlegend=legend), **kw)


def entropy_trace(run: Mapping[str, Any]) -> go.Figure:
    """One decode's per-step entropy with shaded latent (purple) and explicit (green) blocks, the reference entropy
    (dashed steps), switch markers and injected tokens."""
    fig = go.Figure()
    _add_trace(fig, run)
    fig.update_layout(title=f"{run['label']}: entropy per step (purple = latent, green = explicit)",
                      xaxis_title="decoding step", yaxis_title="entropy (nats)", height=380,
                      legend={"orientation": "h", "y": -0.25})
    return fig


def entropy_traces(runs: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Several decodes stacked with shared step and entropy axes (one row each)."""
    n = max(1, len(runs))
    fig = make_subplots(rows=n, cols=1, shared_xaxes=True, shared_yaxes=True, vertical_spacing=0.04,
                        subplot_titles=[r["label"] for r in runs])
    for i, r in enumerate(runs):
        _add_trace(fig, r, row=i + 1, legend=i == 0)
    top = max((max(r["trace"]["entropy"] or [0]) for r in runs), default=1.0)
    fig.update_yaxes(range=[0, top * 1.1 + 0.05], title_text="H")
    fig.update_xaxes(title_text="decoding step", row=n, col=1)
    fig.update_layout(title="Entropy per step (purple = latent, green = explicit; dashed = reference)",
                      height=120 + 170 * n, legend={"orientation": "h", "y": -0.08})
    return fig


def pareto(rows: Sequence[Mapping[str, Any]], title: str = "") -> go.Figure:
    """Accuracy against mean generated tokens, one line per decoder through its budgets; Pareto rows ringed."""
    fig = go.Figure()
    for name in DECODERS:
        rs = sorted((r for r in rows if r["decoder"] == name), key=lambda r: r["budget"])
        if not rs:
            continue
        fig.add_trace(go.Scatter(
            x=[r["mean_tokens"] for r in rs], y=[r["accuracy"] for r in rs], mode="lines+markers+text",
            name=DECODERS.label(name), text=[str(r["budget"]) for r in rs], textposition="top center",
            line={"color": DECODERS.color(name), "dash": "solid" if DECODERS.kind(name) == "ours" else "dot"},
            marker={"size": 9}, customdata=[[r["answered"], r["seconds"]] for r in rs],
            hovertemplate=("budget %{text}: accuracy %{y:.1%}, %{x:.1f} tokens, answered %{customdata[0]:.0%}, "
                           "%{customdata[1]:.1f} s<extra>" + DECODERS.label(name) + "</extra>")))
    front = [r for r in rows if r.get("pareto")]
    if front:
        fig.add_trace(go.Scatter(x=[r["mean_tokens"] for r in front], y=[r["accuracy"] for r in front],
                                 mode="markers", name="Pareto front",
                                 marker={"size": 17, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#000"}}))
    fig.update_layout(title=title or "Accuracy vs mean generated tokens (labels: token budget)",
                      xaxis_title="mean generated tokens per problem", height=420,
                      yaxis={"title": "accuracy (exact answer)", "tickformat": ".0%", "rangemode": "tozero"})
    return fig


def accuracy_vs_budget(rows: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Accuracy per decoder against the token budget (log axis), the same colours as :func:`pareto`."""
    fig = go.Figure()
    for name in DECODERS:
        rs = sorted((r for r in rows if r["decoder"] == name), key=lambda r: r["budget"])
        if rs:
            fig.add_trace(go.Scatter(x=[r["budget"] for r in rs], y=[r["accuracy"] for r in rs],
                                     mode="lines+markers", name=DECODERS.label(name),
                                     line={"color": DECODERS.color(name)}))
    fig.update_layout(title="Accuracy vs token budget", xaxis={"title": "token budget", "type": "log"},
                      yaxis={"title": "accuracy", "tickformat": ".0%", "rangemode": "tozero"}, height=380)
    return fig
