"""Figures of the DEPO page (pure plotly builders: data in, Figure out; no streamlit).

They read :class:`backend.reasoning.depo.jobs.SelectResult` and :class:`backend.reasoning.depo.jobs.ReportResult`
as dicts; labels and colours come from the strategy registries.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.reasoning.depo.loop import STRATEGIES
from backend.reasoning.depo.select import SUBSETS


def selection_map(res: Mapping, strategy: str, title: str = "") -> go.Figure:
    """The prompts on their first two principal components (of the MiniLM embeddings), the chosen subset of
    ``strategy`` highlighted; marker size grows with PageRank."""
    xy = res["pca"]
    chosen = set(res["strategies"][strategy]["indices"])
    pr = res["pagerank"]
    top = max(pr) or 1.0
    hover = [f"{res['ids'][i]}: {res['prompts'][i][:90]}" for i in range(len(xy))]
    fig = go.Figure()
    for sel, name, color in ((False, "not selected", "#c7c7c7"), (True, SUBSETS.label(strategy), SUBSETS.color(strategy))):
        idx = [i for i in range(len(xy)) if (i in chosen) == sel]
        fig.add_trace(go.Scattergl(
            x=[xy[i][0] for i in idx], y=[xy[i][1] for i in idx], mode="markers", name=name,
            text=[hover[i] for i in idx], hoverinfo="text",
            marker={"color": color, "size": [5 + 9 * pr[i] / top for i in idx],
                    "line": {"width": 0.5, "color": "#333"} if sel else {"width": 0}}))
    fig.update_layout(height=420, title=title, margin={"t": 40, "b": 10}, legend={"orientation": "h", "y": -0.12},
                      xaxis_title="PC 1", yaxis_title="PC 2")
    return fig


def difficulty_histograms(res: Mapping) -> go.Figure:
    """Pass-rate histograms: all prompts, and each strategy's subset, on one axis (counts)."""
    bins = res["bins"]
    centers = [f"{bins[i]:.1f}-{bins[i + 1]:.1f}" for i in range(len(bins) - 1)]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=centers, y=res["histograms"]["all"], name="all rated prompts", marker_color="#c7c7c7"))
    for name in res["strategies"]:
        if name in res["histograms"]:
            fig.add_trace(go.Bar(x=centers, y=res["histograms"][name], name=SUBSETS.label(name),
                                 marker_color=SUBSETS.color(name)))
    fig.update_layout(barmode="group", height=340, margin={"t": 30, "b": 10}, legend={"orientation": "h", "y": -0.25},
                      xaxis_title="pass rate of G rollouts of the starting policy", yaxis_title="prompts")
    return fig


def rated_histograms(rates_before: list[float], rates_after: list[float]) -> go.Figure:
    """DEPO's difficulty sampling: pass rates of the greedy-DPP candidates (before) and of the kept subset (after)."""
    fig = go.Figure()
    for ys, name, color in ((rates_before, "greedy-DPP candidates", "#9ecae1"),
                            (rates_after, "kept after difficulty sampling", STRATEGIES.color(STRATEGIES.names("ours")[0]))):
        fig.add_trace(go.Histogram(x=ys, name=name, marker_color=color, xbins={"start": -0.125, "end": 1.125,
                                                                                "size": 0.25}))
    fig.update_layout(barmode="group", height=320, margin={"t": 30, "b": 10}, legend={"orientation": "h", "y": -0.25},
                      xaxis_title="pass rate (4 rollouts of the starting policy)", yaxis_title="prompts")
    return fig


def curves(rep: Mapping, per_seed: bool = True) -> go.Figure:
    """Held-out accuracy against rollout tokens: the seed mean per strategy (thick), each seed (thin), the start
    accuracy and the 95 % target of full-data GRPO."""
    fig = go.Figure()
    for name, mean in rep["mean"].items():
        color = STRATEGIES.color(name)
        if per_seed and len(rep["runs"][name]) > 1:
            for curve in rep["runs"][name]:
                fig.add_trace(go.Scatter(x=[r["tokens"] for r in curve], y=[r["accuracy"] for r in curve],
                                         mode="lines", line={"color": color, "width": 0.8}, opacity=0.35,
                                         showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=[r["tokens"] for r in mean], y=[r["accuracy"] for r in mean], mode="lines+markers",
                                 name=f"{STRATEGIES.label(name)} ({len(rep['runs'][name])} seed"
                                      f"{'s' if len(rep['runs'][name]) > 1 else ''})",
                                 line={"color": color, "width": 3 if STRATEGIES.kind(name) == "ours" else 1.8,
                                       "dash": "dash" if STRATEGIES.kind(name) == "ablation" else None}))
    sp = next(iter(rep["speedups"].values()), None)
    if sp:
        fig.add_hline(y=sp["target"], line_dash="dot", line_color="#555",
                      annotation_text=f"{sp['share']:.0%} of full-data final", annotation_position="bottom right")
    fig.add_hline(y=rep["start_accuracy"], line_dash="dot", line_color="#aaa", annotation_text="starting policy",
                  annotation_position="top left")
    fig.update_layout(height=420, margin={"t": 30, "b": 10}, legend={"orientation": "h", "y": -0.2},
                      xaxis_title="rollout tokens (offline pass-rate rollouts included)",
                      yaxis_title="held-out accuracy")
    return fig


def explorability_heatmap(heat: list[list[float | None]], pruned: list[list[bool]], title: str = "") -> go.Figure:
    """Samples x epochs explorability; pruned cells grey, cells never reached blank."""
    n, e = len(heat), len(heat[0]) if heat else 0
    z = [[v if v is not None else None for v in row] for row in heat]
    grey = [[1.0 if pruned[i][j] else None for j in range(e)] for i in range(n)]
    fig = make_subplots(rows=1, cols=1)
    fig.add_trace(go.Heatmap(z=z, x=[f"epoch {j + 1}" for j in range(e)], y=list(range(n)), colorscale="Viridis",
                             colorbar={"title": "sum |A| H"}, hovertemplate="sample %{y}, %{x}: %{z:.3f}<extra></extra>"))
    fig.add_trace(go.Heatmap(z=grey, x=[f"epoch {j + 1}" for j in range(e)], y=list(range(n)),
                             colorscale=[[0, "#9e9e9e"], [1, "#9e9e9e"]], showscale=False,
                             hovertemplate="sample %{y}, %{x}: pruned<extra></extra>"))
    fig.update_layout(height=max(320, 8 * n + 80), title=title, margin={"t": 40, "b": 10},
                      yaxis_title="sample of the subset", yaxis_autorange="reversed")
    return fig
