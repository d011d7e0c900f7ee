"""Figures of the T1 page (pure plotly builders: data in, Figure out; no streamlit).

They read :class:`backend.reasoning.t1.jobs.BonResult` as a dict: ``ns``, ``curves[selector]`` (accuracy at each n)
and ``labels``.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from backend.reasoning.t1.select import SELECTORS


def bon_curves(res: Mapping[str, object], title: str = "") -> go.Figure:
    """Best-of-N accuracy against n (log axis) for every selector, on one axis from 0 to 1."""
    fig = go.Figure()
    ns = res["ns"]
    for name, ys in res["curves"].items():  # type: ignore[union-attr]
        kind = SELECTORS.kind(name)
        fig.add_trace(go.Scatter(
            x=ns, y=ys, name=SELECTORS.label(name), mode="lines+markers",
            line={"color": SELECTORS.color(name), "width": 3 if kind == "ours" else 1.8,
                  "dash": "dot" if kind == "reference" else ("dash" if kind == "ablation" else None)},
            marker={"size": 5}))
    fig.update_xaxes(type="log", title_text="n (candidates the selector sees)", tickvals=ns)
    fig.update_yaxes(range=[0, 1.02], title_text="accuracy of the selected answer")
    fig.update_layout(height=380, title=title, margin={"t": 40, "b": 10}, legend={"orientation": "h", "y": -0.25})
    return fig


def veto_bars(res: Mapping[str, object]) -> go.Figure:
    """The tool's veto rate on right and on wrong candidates, and the kinds of the wrong ones."""
    fig = go.Figure(go.Bar(
        x=["vetoed among right", "vetoed among wrong", "wrong: arithmetic slip", "wrong: logic slip"],
        y=[res["false_veto_rate"], res["true_veto_rate"], res["wrong_kinds"]["arithmetic"],  # type: ignore[index]
           res["wrong_kinds"]["logic"]],  # type: ignore[index]
        marker_color=["#d62728", "#2ca02c", "#9467bd", "#8c564b"]))
    fig.update_yaxes(range=[0, 1], title_text="share")
    fig.update_layout(height=300, margin={"t": 20, "b": 10})
    return fig
