"""Figures of the MATHMO page (pure plotly builders: data in, Figure out; no streamlit).

They read :func:`backend.search.mathmo.bilevel.to_json`: ``strategies[s]`` with ``hv`` (per round), ``rows`` (the models
run, with ``framework``, ``cost``, ``effort``, ``robust``, ``round``), and the grid's ``ideal`` / ``nadir``.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from backend.search.mathmo.bilevel import STRATEGIES
from backend.search.mathmo.facility import FRAMEWORKS

_FW_COLOURS = dict(zip(FRAMEWORKS, qualitative.Set1))


def hv_curves(data: Mapping[str, object]) -> go.Figure:
    """Hypervolume of the models run (fraction of the grid front's) vs round, one line per strategy."""
    fig = go.Figure()
    for s, r in data["strategies"].items():  # type: ignore[union-attr]
        fig.add_trace(go.Scatter(x=list(range(1, len(r["hv"]) + 1)), y=r["hv"], name=STRATEGIES.label(s),
                                 line=dict(color=STRATEGIES.color(s), width=3 if STRATEGIES.kind(s) == "ours" else 2)))
    fig.update_layout(height=340, margin=dict(t=30, b=10), xaxis_title="round (models run)",
                      yaxis_title="hypervolume / grid front's", yaxis_range=[0, 1.02], title="Hypervolume per round")
    return fig


def fronts(data: Mapping[str, object], x: str = "cost", y: str = "robust") -> go.Figure:
    """The models each strategy ran, projected on two objectives, coloured by framework (same axes for every
    strategy); the strategy's non-dominated models are drawn larger."""
    strategies = list(data["strategies"])  # type: ignore[arg-type]
    cols = min(3, len(strategies))
    nrows = -(-len(strategies) // cols)
    fig = make_subplots(rows=nrows, cols=cols, shared_xaxes="all", shared_yaxes="all",
                        subplot_titles=[STRATEGIES.label(s) for s in strategies], vertical_spacing=0.12)
    shown: set[str] = set()
    for c0, s in enumerate(strategies):
        row, c = 1 + c0 // cols, 1 + c0 % cols
        rows = data["strategies"][s]["rows"]  # type: ignore[index]
        front = set(data["strategies"][s].get("front", []))  # type: ignore[index]
        for f in FRAMEWORKS:
            pts = [(k, r) for k, r in enumerate(rows) if r["framework"] == f]
            if not pts:
                continue
            fig.add_trace(go.Scatter(
                x=[r[x] for _, r in pts], y=[r[y] for _, r in pts], mode="markers", name=f,
                legendgroup=f, showlegend=f not in shown,
                marker=dict(color=_FW_COLOURS[f], size=[13 if k in front else 7 for k, _ in pts],
                            line=dict(width=1, color="black")),
                text=[f"round {r['round']}: {f} {r['knobs']}" for _, r in pts], hoverinfo="text+x+y"), row, c)
            shown.add(f)
    fig.update_xaxes(title_text=x, row=nrows)
    fig.update_yaxes(title_text=y, col=1)
    fig.update_layout(height=330 * nrows, margin=dict(t=40, b=10), legend_title_text="framework")
    return fig


def final_hv_bars(summary: Mapping[str, Mapping[str, float]]) -> go.Figure:
    """Mean final hypervolume per strategy over paired seeds, with the standard error (the paired intervals are in
    the page's table)."""
    names = list(summary)
    fig = go.Figure(go.Bar(x=[STRATEGIES.label(s) for s in names], y=[summary[s]["mean"] for s in names],
                           error_y=dict(type="data", array=[summary[s]["sem"] for s in names]),
                           marker_color=[STRATEGIES.color(s) for s in names]))
    fig.update_layout(height=320, margin=dict(t=30, b=10), yaxis_title="final hypervolume / grid front's",
                      title="Paired seeds: final hypervolume")
    return fig
