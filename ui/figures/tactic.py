"""Plotly figures of the Tactic page (pure functions: data -> go.Figure; labels and colours from the selector
registry ``backend.tokens.tactic.sparse_attention.SELECTORS``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from backend.tokens.tactic.sparse_attention import SELECTORS


def score_curve(c: Mapping[str, Any]) -> go.Figure:
    """Sorted unnormalised scores against rank (log-log), Tactic's sampled scores at their full ranks, the fitted
    a/x + b and the two fit segments shaded."""
    fig = go.Figure()
    for lo, hi in c["segments"]:
        fig.add_vrect(x0=lo, x1=hi, fillcolor="#ffbb78", opacity=0.25, line_width=0)
    fig.add_trace(go.Scatter(x=c["ranks"], y=c["scores"], mode="lines", name="exact sorted scores",
                             line={"color": SELECTORS.color("oracle_top_p")}))
    fig.add_trace(go.Scatter(x=c["sample_ranks"], y=c["sample_scores"], mode="markers",
                             name=f"sampled ({len(c['sample_ranks'])} keys)",
                             marker={"color": SELECTORS.color("tactic"), "size": 6}))
    fig.add_trace(go.Scatter(x=c["ranks"], y=[v if v > 0 else None for v in c["fit"]], mode="lines",
                             name=f"fit a/x + b (a={c['a']:.3g}, b={c['b']:.3g}; ends where it reaches 0)",
                             line={"color": SELECTORS.color("tactic"), "dash": "dash"}))
    fig.update_layout(title=f"Layer {c['layer']}, head {c['head']}: sorted scores exp(q.k/sqrt(d)) (first token = 1)",
                      xaxis={"title": "rank among clustered tokens", "type": "log"},
                      yaxis={"title": "score relative to the first token", "type": "log"}, height=380,
                      legend={"orientation": "h", "y": -0.25})
    return fig


def need_heatmap(need: Sequence[Sequence[float]], layers: Sequence[int], p: float) -> go.Figure:
    """Median tokens needed (exact top-P) per layer x head."""
    z = np.asarray(need, float)
    fig = go.Figure(go.Heatmap(z=z, x=[f"h{h}" for h in range(z.shape[1])], y=[str(x) for x in layers],
                               colorscale="Viridis", colorbar={"title": "tokens"}, text=np.round(z).astype(int),
                               texttemplate="%{text}", hovertemplate="layer %{y}, %{x}: %{z:.0f} tokens<extra></extra>"))
    fig.update_layout(title=f"Tokens needed for {p:.0%} of the attention mass (median over queries)",
                      xaxis_title="query head", yaxis_title="layer", height=120 + 36 * len(layers))
    return fig


def positions(pos: Mapping[str, Sequence[int]], n_tokens: int, n_prefill: int, needle: Sequence[int] = ()
              ) -> go.Figure:
    """Selected positions per selector on the sequence axis (one row each), the needle and the prefill end marked."""
    fig = go.Figure()
    names = list(pos)
    for i, m in enumerate(names):
        xs = list(pos[m])
        fig.add_trace(go.Scattergl(x=xs, y=[i] * len(xs), mode="markers", name=SELECTORS.label(m),
                                   marker={"color": SELECTORS.color(m), "size": 5, "symbol": "line-ns-open"}))
    for j in needle:
        fig.add_vline(x=j, line={"color": "#d62728", "width": 1, "dash": "dot"})
    fig.add_vline(x=n_prefill - 0.5, line={"color": "#444", "width": 1},
                  annotation_text="decode queries", annotation_position="top right")
    fig.update_layout(title="Tokens each selector loads for the last query" + (" (needle dotted)" if needle else ""),
                      xaxis={"title": "token position", "range": [-5, n_tokens + 5]},
                      yaxis={"tickvals": list(range(len(names))), "ticktext": [SELECTORS.label(m) for m in names],
                             "range": [-0.5, len(names) - 0.5]},
                      height=120 + 40 * len(names), showlegend=False)
    return fig


def error_vs_tokens(points: Mapping[str, Mapping[str, Sequence[float]]]) -> go.Figure:
    """Relative output error ||o_I - o|| / ||o|| against tokens loaded, one point per (layer, head, query)."""
    fig = go.Figure()
    for m, d in points.items():
        fig.add_trace(go.Scattergl(x=d["tokens"], y=d["rel_err"], mode="markers", name=SELECTORS.label(m),
                                   marker={"color": SELECTORS.color(m), "size": 4, "opacity": 0.55}))
    fig.update_layout(title="Output error vs tokens loaded (per layer, head and query)",
                      xaxis={"title": "tokens of the head's set", "type": "log"},
                      yaxis={"title": "relative error of the attention output", "type": "log"}, height=420)
    return fig


def mass_box(points: Mapping[str, Mapping[str, Sequence[float]]], p: float, threshold: float = 0.85) -> go.Figure:
    """Realised attention mass p(I) per selector, with the target P and the 0.85 success line."""
    fig = go.Figure()
    for m, d in points.items():
        fig.add_trace(go.Box(y=d["mass"], name=SELECTORS.label(m), marker_color=SELECTORS.color(m),
                             boxpoints=False))
    fig.add_hline(y=p, line={"dash": "dash", "color": "#444"}, annotation_text=f"P = {p:g}")
    fig.add_hline(y=threshold, line={"dash": "dot", "color": "#d62728"}, annotation_text=f"{threshold}")
    fig.update_layout(title="Realised attention mass per selector", yaxis={"title": "p(I)", "range": [0, 1.02]},
                      height=380, showlegend=False)
    return fig


def ppl_vs_bytes(res: Mapping[str, Any]) -> go.Figure:
    """Perplexity of the decode positions against the KV bytes loaded (share of dense), one point per selector."""
    fig = go.Figure()
    d = res["dense"]["perplexity"]
    fig.add_trace(go.Scatter(x=[1.0], y=[d], mode="markers+text", name="dense", text=["dense"],
                             textposition="top center", marker={"color": "#000", "size": 11, "symbol": "x"}))
    for m, r in res["methods"].items():
        fig.add_trace(go.Scatter(x=[r["bytes_ratio"]], y=[r["perplexity"]], mode="markers", name=r["label"],
                                 marker={"color": SELECTORS.color(m), "size": 12}))
    fig.add_hrect(y0=d, y1=d * 1.02, fillcolor="#2ca02c", opacity=0.12, line_width=0,
                  annotation_text="within 2 % of dense")
    fig.update_layout(title=f"Perplexity of the last {res['settings']['n_last']} tokens vs KV bytes loaded",
                      xaxis={"title": "KV bytes loaded / dense (overheads included)", "tickformat": ".0%"},
                      yaxis_title="perplexity", height=400)
    return fig
