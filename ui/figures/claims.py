"""The scoreboard's chart: one row per paper, its headline claim's verdict and the tally of all its claims."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from backend import claims as C

#: one colour per verdict (the badge colours of the method pages, as plotly colours)
COLORS = {C.HOLDS: "#2e9e44", C.CAVEAT: "#3b7dd8", C.NOT_RESOLVED: "#9b59b6", C.DOES_NOT_HOLD: "#e8862a",
          C.NOT_MEASURABLE: "#a0a0a0", C.FAILS: "#d62728", C.PENDING: "#c8c8c8", C.PLANNED: "#e6e6e6"}


def paper_board(rows: Sequence[dict]) -> go.Figure:
    """Left: a square per paper coloured by its headline claim's verdict; right: its claims stacked by verdict.
    ``rows``: :func:`backend.claims.paper_rows`."""
    from plotly.subplots import make_subplots

    names = [r["label"] for r in rows]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.22, 0.78], horizontal_spacing=0.02,
                        subplot_titles=("headline claim", "all claims by verdict"))
    for verdict in (*C.VERDICTS, C.PLANNED):
        idx = [i for i, r in enumerate(rows) if r["verdict"] == verdict]
        if idx:
            fig.add_trace(go.Bar(x=[1] * len(idx), y=[names[i] for i in idx], orientation="h", name=verdict,
                                 legendgroup=verdict, marker_color=COLORS[verdict],
                                 customdata=[[rows[i]["headline"] or rows[i]["title"]] for i in idx],
                                 hovertemplate="%{y}: " + verdict + "<br>%{customdata[0]}<extra></extra>"),
                          row=1, col=1)
    for verdict in C.VERDICTS:
        counts = [r["counts"].get(verdict, 0) for r in rows]
        if any(counts):
            fig.add_trace(go.Bar(x=counts, y=names, orientation="h", name=verdict, legendgroup=verdict,
                                 showlegend=not any(r["verdict"] == verdict for r in rows),
                                 marker_color=COLORS[verdict],
                                 hovertemplate="%{y}: %{x} " + verdict + "<extra></extra>"), row=1, col=2)
    fig.update_layout(barmode="stack", height=120 + 22 * len(rows), margin=dict(t=40, b=10, l=10, r=10),
                      legend=dict(orientation="h", y=-0.02, yanchor="top"))
    fig.update_yaxes(autorange="reversed", categoryorder="array", categoryarray=names)
    fig.update_xaxes(showticklabels=False, showgrid=False, row=1, col=1)
    fig.update_xaxes(title_text="claims", dtick=1, row=1, col=2)
    return fig
