"""Figures of the DMNL page (pure plotly builders: data in, Figure out; no streamlit).

They read the page's result dict: ``t`` (thinned rounds), ``curves[agent]`` with cumulative ``regret`` and
``approx`` at those rounds, ``assortments[agent]`` (``[T][K]`` item indices), ``item_categories`` (``[N]``),
``category_names``, ``lambda_hat[agent]`` and ``lambda_t``; and the rows of ``runtime_vs_n``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from backend.bandits.dmnl.agents import AGENTS


def _cat_colour(c: int) -> str:
    pal = qualitative.Plotly + qualitative.Set3
    return pal[c % len(pal)]


def regret(data: Mapping[str, object]) -> go.Figure:
    """Cumulative exact regret (against the optimum) and approximate regret (against 0.731 x the optimum), side by
    side on the same rounds axis."""
    fig = make_subplots(rows=1, cols=2, shared_xaxes=True, subplot_titles=(
        f"Cumulative regret vs the {data['optimum']} optimum", "Cumulative approximate regret (0.731 x optimum)"))
    t = data["t"]
    for a, c in data["curves"].items():  # type: ignore[union-attr]
        style = dict(color=AGENTS.color(a), width=3 if AGENTS.kind(a) == "ours" else 1.8,
                     dash="dot" if AGENTS.kind(a) == "ablation" else None)
        fig.add_trace(go.Scatter(x=t, y=c["regret"], name=AGENTS.label(a), line=style, legendgroup=a), 1, 1)
        fig.add_trace(go.Scatter(x=t, y=c["approx"], name=AGENTS.label(a), line=style, legendgroup=a,
                                 showlegend=False), 1, 2)
    fig.update_xaxes(title_text="round t")
    fig.update_yaxes(title_text="sum of R(S*) - R(S_t)", row=1, col=1)
    fig.update_yaxes(title_text="sum of 0.731 R(S*) - R(S_t)", row=1, col=2)
    fig.update_layout(height=380, margin=dict(t=40, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def chips(data: Mapping[str, object], round_index: int) -> go.Figure:
    """The assortment every agent offered in one round: one row per agent, one chip per slot, coloured by category
    (the same colours for every agent), labelled with the item and its category."""
    cats: Sequence[int] = data["item_categories"]  # type: ignore[assignment]
    names: Sequence[str] = data["category_names"]  # type: ignore[assignment]
    items: Sequence[str] = data.get("item_names") or []  # type: ignore[assignment]
    agents = list(data["assortments"])  # type: ignore[arg-type]
    fig = go.Figure()
    for row, a in enumerate(agents):
        S = data["assortments"][a][round_index]  # type: ignore[index]
        for slot, item in enumerate(S):
            c = int(cats[item])
            fig.add_shape(type="rect", x0=slot + 0.05, x1=slot + 0.95, y0=row - 0.38, y1=row + 0.38,
                          fillcolor=_cat_colour(c), line=dict(width=0), layer="below")
            label = items[item][:14] if items else f"#{item}"
            fig.add_annotation(x=slot + 0.5, y=row, text=f"{label}<br>{names[c]}", showarrow=False,
                               font=dict(size=11, color="black"))
    k = max(len(data["assortments"][a][round_index]) for a in agents)  # type: ignore[index]
    fig.update_xaxes(range=[0, k], showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(range=[len(agents) - 0.5, -0.5], tickvals=list(range(len(agents))),
                     ticktext=[AGENTS.label(a) for a in agents], showgrid=False, zeroline=False)
    fig.update_layout(height=60 + 48 * len(agents), margin=dict(t=30, b=10, l=10, r=10),
                      title=f"Assortments in round {round_index + 1} (colour = category)")
    return fig


def category_mix(data: Mapping[str, object]) -> go.Figure:
    """Distinct categories per assortment over time (rolling mean of 50 rounds), per agent."""
    cats: Sequence[int] = data["item_categories"]  # type: ignore[assignment]
    fig = go.Figure()
    for a, rows in data["assortments"].items():  # type: ignore[union-attr]
        distinct = [len({cats[i] for i in S}) for S in rows]
        w = 50
        sm = [sum(distinct[max(0, i - w + 1): i + 1]) / len(distinct[max(0, i - w + 1): i + 1])
              for i in range(0, len(distinct), 10)]
        fig.add_trace(go.Scatter(x=list(range(1, len(distinct) + 1, 10)), y=sm, name=AGENTS.label(a),
                                 line=dict(color=AGENTS.color(a))))
    fig.update_layout(height=300, margin=dict(t=30, b=10), xaxis_title="round t",
                      yaxis_title="distinct categories in S (50-round mean)", title="Diversity of the assortments")
    return fig


def lambda_hat(data: Mapping[str, object], lam_true: float) -> go.Figure:
    """The learners' estimate of lambda against the true lambda*."""
    fig = go.Figure()
    for a, vals in data["lambda_hat"].items():  # type: ignore[union-attr]
        fig.add_trace(go.Scatter(x=data["lambda_t"][: len(vals)], y=vals, name=AGENTS.label(a),  # type: ignore[index]
                                 line=dict(color=AGENTS.color(a))))
    fig.add_hline(y=lam_true, line=dict(color="black", dash="dash"), annotation_text="lambda*")
    fig.update_layout(height=300, margin=dict(t=30, b=10), xaxis_title="round t", yaxis_title="lambda_hat",
                      title="Estimated diversity weight")
    return fig


def runtime(rows: Sequence[Mapping[str, object]], k: int, n_max: int = 100) -> go.Figure:
    """Milliseconds per round vs N (log y). Measured points solid; the exhaustive variant's extrapolation past its
    last measured N (its cost per enumerated assortment times C(N, K)) dashed and labelled as such."""
    fig = go.Figure()
    for a in dict.fromkeys(str(r["agent"]) for r in rows):
        pts = sorted((r for r in rows if r["agent"] == a), key=lambda r: r["n_items"])
        xs = [int(p["n_items"]) for p in pts]
        fig.add_trace(go.Scatter(x=xs, y=[p["ms_per_round"] for p in pts], mode="lines+markers",
                                 name=f"{AGENTS.label(a)} (measured)", line=dict(color=AGENTS.color(a))))
        if AGENTS.get(a).enumerates and pts:
            last = pts[-1]
            per = float(last["ms_per_round"]) / max(1, int(last["assortments"]))
            ext = [n for n in range(xs[-1], n_max + 1, 5)] or [xs[-1]]
            fig.add_trace(go.Scatter(x=ext, y=[per * math.comb(n, k) for n in ext], mode="lines",
                                     name=f"{AGENTS.label(a)} (extrapolated: C(N, K) x measured cost)",
                                     line=dict(color=AGENTS.color(a), dash="dash")))
    fig.update_layout(height=340, margin=dict(t=30, b=10), xaxis_title="catalogue size N",
                      yaxis_title="ms per round (log)", yaxis_type="log", title=f"Runtime per round, K = {k}")
    return fig
