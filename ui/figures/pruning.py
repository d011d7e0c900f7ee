"""Figures of the pruning page (pure: data -> plotly Figure). Compensations keep one colour everywhere."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.compression.pruning.criteria import COMPENSATIONS, SCORES
from backend.compression.pruning.lab import GEOMETRY_COMPENSATIONS

DENSE_COLOR = "#2ca02c"  # the dense model's reference lines
SCORE_DASHES = ("dot", "solid", "dash")  # one dash style per score, in registry order


def _score_dash(score: str) -> str:
    names = SCORES.names()
    return SCORE_DASHES[names.index(score) % len(SCORE_DASHES)] if score in names else "solid"


def _score_short(score: str) -> str:
    return SCORES[score].short if score in SCORES else score


def _layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    return fig


def ppl_vs_ratio(rows: list[dict[str, Any]], dense_ppl: float, n_calib: int,
                 user: dict[str, Any] | None = None) -> go.Figure:
    """Held-out perplexity vs prune ratio for every score x compensation at ``n_calib`` (log y); the user's run as a
    star. Hover shows effective parameters."""
    fig = go.Figure()
    pairs = sorted({(r["score"], r["compensation"]) for r in rows if r["n_calib"] == n_calib})
    for score, comp in pairs:
        rs = sorted((r for r in rows if r["n_calib"] == n_calib and r["score"] == score and r["compensation"] == comp),
                    key=lambda r: r["ratio"])
        fig.add_trace(go.Scatter(
            x=[r["ratio"] for r in rs], y=[r["perplexity"] for r in rs], mode="lines+markers",
            name=f"{_score_short(score)} + {COMPENSATIONS.label(comp)}",
            line=dict(color=COMPENSATIONS.color(comp), dash=_score_dash(score)),
            customdata=[[r["params_effective"] / 1e6, r["heads_dropped"]] for r in rs],
            hovertemplate="ratio %{x:.0%}<br>perplexity %{y:.2f}<br>%{customdata[0]:.1f} M effective params"
                          "<br>%{customdata[1]} heads dropped<extra>%{fullData.name}</extra>"))
    fig.add_hline(y=dense_ppl, line=dict(color=DENSE_COLOR, dash="dash"),
                  annotation_text=f"dense {dense_ppl:.2f}", annotation_position="bottom right")
    if user:
        fig.add_trace(go.Scatter(x=[user["ratio"]], y=[user["perplexity"]], mode="markers", name="your run",
                                 marker=dict(symbol="star", size=16, color=COMPENSATIONS.color(user["compensation"]),
                                             line=dict(color="black", width=1))))
    fig.update_xaxes(title="prune ratio (heads and MLP channels per layer)", tickformat=".0%")
    fig.update_yaxes(title="held-out perplexity (context 128, log)", type="log")
    return _layout(fig, f"Perplexity vs prune ratio, N_calib = {n_calib} segments", 430)


def ppl_vs_n(rows: list[dict[str, Any]], dense_ppl: float, score: str = "variance") -> go.Figure:
    """Perplexity vs calibration size for each compensation (one panel per ratio, shared y)."""
    ratios = sorted({r["ratio"] for r in rows if r["score"] == score and
                     len({x["n_calib"] for x in rows if x["ratio"] == r["ratio"] and x["score"] == score}) > 1})
    fig = make_subplots(rows=1, cols=max(1, len(ratios)), shared_yaxes=True,
                        subplot_titles=[f"ratio {r:.0%}" for r in ratios] or [""])
    for j, ratio in enumerate(ratios, start=1):
        for comp in COMPENSATIONS:
            rs = sorted((r for r in rows if r["ratio"] == ratio and r["score"] == score and r["compensation"] == comp),
                        key=lambda r: r["n_calib"])
            if rs:
                fig.add_trace(go.Scatter(x=[r["n_calib"] for r in rs], y=[r["perplexity"] for r in rs],
                                         mode="lines+markers", name=COMPENSATIONS.label(comp), legendgroup=comp,
                                         showlegend=j == 1,
                                         line=dict(color=COMPENSATIONS.color(comp))), 1, j)
        fig.add_hline(y=dense_ppl, line=dict(color=DENSE_COLOR, dash="dash"), row=1, col=j)
        cap = dense_ppl * 20  # a collapse (least squares at tiny N) would flatten every other line
        for r in rows:
            if r["ratio"] == ratio and r["score"] == score and r["perplexity"] > cap:
                fig.add_annotation(x=np.log10(r["n_calib"]), y=np.log10(cap),
                                   text=f"{COMPENSATIONS.label(r['compensation'])}: {r['perplexity']:.3g} (off scale)",
                                   showarrow=True, arrowhead=2, ay=30,
                                   font=dict(color=COMPENSATIONS.color(r["compensation"])), row=1, col=j)
    fig.update_xaxes(type="log", title="calibration segments N (x 128 tokens)")
    fig.update_yaxes(title="held-out perplexity", type="log", col=1, range=[np.log10(dense_ppl * 0.9),
                                                                           np.log10(dense_ppl * 20)])
    return _layout(fig, f"Whole model: perplexity vs calibration size ({_score_short(score)} score)")


def error_vs_n(rows: list[dict[str, Any]], sublayer: str) -> go.Figure:
    """One sublayer: calibration (dashed) and held-out (solid) relative output error vs N for every compensation."""
    fig = go.Figure()
    for comp in COMPENSATIONS:
        rs = sorted((r for r in rows if r["compensation"] == comp and r["sublayer"] == sublayer),
                    key=lambda r: r["n_calib"])
        if not rs:
            continue
        x = [r["n_calib"] for r in rs]
        fig.add_trace(go.Scatter(x=x, y=[r["heldout_err"] for r in rs], mode="lines+markers",
                                 name=f"{COMPENSATIONS.label(comp)} held-out",
                                 line=dict(color=COMPENSATIONS.color(comp))))
        fig.add_trace(go.Scatter(x=x, y=[r["calib_err"] for r in rs], mode="lines+markers",
                                 name=f"{COMPENSATIONS.label(comp)} calibration",
                                 line=dict(color=COMPENSATIONS.color(comp), dash="dash"),
                                 marker=dict(symbol="circle-open")))
    fig.update_xaxes(type="log", title="calibration segments N (x 128 tokens)")
    fig.update_yaxes(title="relative error ||Y - Y_hat|| / ||Y||", rangemode="tozero")
    name = "o_proj (attention heads)" if sublayer == "attn" else "down_proj (MLP channels)"
    return _layout(fig, f"{name}: calibration vs held-out error", 400)


def layer_errors(records: list[dict[str, Any]]) -> go.Figure:
    """Per layer: calibration vs held-out relative error of the pruned sublayers (attention | MLP, shared y)."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, subplot_titles=("attention o_proj", "MLP down_proj"))
    for j, kind in enumerate(("attn", "mlp"), start=1):
        rs = [r for r in records if r["sublayer"] == kind]
        x = [r["layer"] for r in rs]
        fig.add_trace(go.Scatter(x=x, y=[r["calib_err"] for r in rs], name="calibration", mode="lines+markers",
                                 line=dict(color="#9467bd", dash="dash"), legendgroup="c", showlegend=j == 1), 1, j)
        fig.add_trace(go.Scatter(x=x, y=[r["heldout_err"] for r in rs], name="held-out", mode="lines+markers",
                                 line=dict(color="#8c564b"), legendgroup="h", showlegend=j == 1), 1, j)
    fig.update_xaxes(title="layer")
    fig.update_yaxes(title="relative output error", rangemode="tozero", col=1)
    return _layout(fig, "Your run: per-layer output error on calibration vs held-out tokens")


def kept_units(head_keep: list[list[bool]], channel_keep: list[list[int]], group: int) -> go.Figure:
    """Kept (1) / dropped (0) heads per layer (left, KV groups separated) and MLP channels per layer (right)."""
    H = np.asarray(head_keep, dtype=float)
    C = np.asarray(channel_keep, dtype=float)
    fig = make_subplots(rows=1, cols=2, column_widths=[0.25, 0.75], shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=(f"query heads (KV groups of {group})", "MLP channels"))
    scale = [[0, "#d62728"], [1, "#e8f0fa"]]
    fig.add_trace(go.Heatmap(z=H, colorscale=scale, zmin=0, zmax=1, showscale=False,
                             hovertemplate="layer %{y}, head %{x}: %{z:.0f}<extra></extra>"), 1, 1)
    fig.add_trace(go.Heatmap(z=C, colorscale=scale, zmin=0, zmax=1, showscale=False,
                             hovertemplate="layer %{y}, channel %{x}: %{z:.0f}<extra></extra>"), 1, 2)
    for g in range(1, H.shape[1] // max(group, 1)):
        fig.add_vline(x=g * group - 0.5, line=dict(color="black", width=2), row=1, col=1)
    fig.update_yaxes(title="layer", autorange="reversed", col=1)
    fig.update_xaxes(title="head", col=1)
    fig.update_xaxes(title="channel", col=2)
    return _layout(fig, "Kept (light) and dropped (red) units", 460)


def gamma_plot(gamma: list[float], gamma_no_var: list[float], keep: list[bool], head_dim: int | None) -> go.Figure:
    """Column scores with and without the Var factor (each normalised to its maximum), dropped columns in red."""
    g = np.asarray(gamma) / max(float(np.max(gamma)), 1e-30)
    w = np.asarray(gamma_no_var) / max(float(np.max(gamma_no_var)), 1e-30)
    k = np.asarray(keep, dtype=bool)
    x = np.arange(len(g))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("variance-aware score (RCPU)", "Wanda-sp score (no Var factor)"))
    for row, vals in ((1, g), (2, w)):
        for mask, name, color in ((k, "kept", "#1f77b4"), (~k, "dropped", "#d62728")):
            fig.add_trace(go.Scatter(x=x[mask], y=vals[mask], mode="markers", name=name, legendgroup=name,
                                     showlegend=row == 1, marker=dict(size=3, color=color)), row, 1)
    fig.update_yaxes(type="log", title="score / max")
    fig.update_xaxes(title="input column" + (f" ({head_dim} per head)" if head_dim else ""), row=2, col=1)
    return _layout(fig, "Column importance; red = dropped by the variance-aware score", 460)


def spectrum(values: list[float]) -> go.Figure:
    s = np.asarray(values)
    fig = go.Figure(go.Scatter(x=np.arange(1, len(s) + 1), y=s / max(float(s[0]), 1e-30), mode="lines",
                               line=dict(color=COMPENSATIONS.color("rotation"))))
    fig.update_xaxes(title="index", type="log")
    fig.update_yaxes(title="singular value / largest", type="log")
    return _layout(fig, "Singular spectrum of M = Y Z^T (the Procrustes matrix)", 320)


def histograms(hist: dict[str, list[int]], norm_edges: list[float], angle_edges: list[float]) -> go.Figure:
    """Held-out output norms (dense vs rotated vs least squares) and angles to the dense output."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("output norm per token", "angle to the dense output"))
    nc = (np.asarray(norm_edges[:-1]) + np.asarray(norm_edges[1:])) / 2
    ac = (np.asarray(angle_edges[:-1]) + np.asarray(angle_edges[1:])) / 2
    comps = GEOMETRY_COMPENSATIONS  # the compensations the lab's histograms record
    for key, name, color in (("dense_norm", "dense", DENSE_COLOR),
                             *((f"{c}_norm", COMPENSATIONS.label(c), COMPENSATIONS.color(c)) for c in comps)):
        if key in hist:
            fig.add_trace(go.Scatter(x=nc, y=hist[key], mode="lines", line=dict(color=color, shape="hvh"),
                                     name=name, legendgroup=name), 1, 1)
    for c in comps:
        key, name, color = f"{c}_angle", COMPENSATIONS.label(c), COMPENSATIONS.color(c)
        if key in hist:
            fig.add_trace(go.Scatter(x=ac, y=hist[key], mode="lines", line=dict(color=color, shape="hvh"),
                                     name=name, legendgroup=name, showlegend=False), 1, 2)
    fig.update_xaxes(title="||y||", col=1)
    fig.update_xaxes(title="degrees", col=2)
    fig.update_yaxes(title="tokens", col=1)
    return _layout(fig, "Held-out outputs: the rotation changes no norm (it lies on 'none'), least squares does", 380)


def costs(dense: dict[str, Any], pruned: dict[str, Any]) -> go.Figure:
    """Parameters (stored / effective) and speed (prefill and decode tokens per second), dense vs pruned."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("parameters (millions)", "tokens per second"))
    fig.add_trace(go.Bar(x=["dense", "pruned stored", "pruned effective"],
                         y=[dense["params_stored"] / 1e6, pruned["params_stored"] / 1e6,
                            pruned["params_effective"] / 1e6],
                         marker_color=[DENSE_COLOR, "#aec7e8", COMPENSATIONS.color("rotation")], showlegend=False), 1, 1)
    for key, name, color in (("prefill_tokens_per_s", "prefill", "#9467bd"),
                             ("decode_tokens_per_s", "decode", "#8c564b")):
        fig.add_trace(go.Bar(x=["dense", "pruned"], y=[dense.get(key) or 0, pruned.get(key) or 0], name=name,
                             marker_color=color), 1, 2)
    fig.update_layout(barmode="group")
    return _layout(fig, "Costs", 340)
