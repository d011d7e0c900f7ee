"""Figures of the watermark attribution page (pure builders: data -> plotly Figure; no streamlit)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.watermark.codes import STRATEGIES
from backend.watermark.registry import BACKENDS


def color(name: str) -> str:
    """A watermark backend's or a selection strategy's colour, from their registries."""
    return BACKENDS.color(name) if name in BACKENDS else STRATEGIES.color(name)


def image_row(images: dict[str, np.ndarray], height: int = 300) -> go.Figure:
    """Images side by side on shared pixel axes (e.g. original, watermarked, amplified residual, attacked)."""
    names = list(images)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.02)
    for i, name in enumerate(names, start=1):
        fig.add_trace(go.Image(z=images[name]), 1, i)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    fig.update_layout(height=height, margin=dict(l=5, r=5, t=40, b=5))
    return fig


def topk_bar(users: Sequence[int], scores: Sequence[float], tau: float, true_user: int | None = None) -> go.Figure:
    """Bitwise accuracy of the best-matching users, best on top, with the detection threshold tau."""
    labels = [f"user {u}" + (" (embedded)" if true_user is not None and u == true_user else "") for u in users]
    colors = [color("absta") if s >= tau else color("random") for s in scores]
    fig = go.Figure(go.Bar(x=list(scores)[::-1], y=labels[::-1], orientation="h", marker_color=colors[::-1],
                           text=[f"{s:.3f}" for s in list(scores)[::-1]], textposition="auto"))
    fig.add_vline(x=tau, line_dash="dash", line_color="black", annotation_text=f"tau = {tau:.3f}")
    fig.update_layout(title="Top users by bitwise accuracy", xaxis=dict(range=[0.4, 1.0], title="bitwise accuracy"),
                      height=300, margin=dict(l=10, r=10, t=50, b=10))
    return fig


def bit_grid(decoded: np.ndarray, reference: np.ndarray, title: str = "Decoded bits vs the user's watermark"
             ) -> go.Figure:
    """An 8-column grid of the n bits: the decoded value in each cell; mismatches in red."""
    n = decoded.size
    cols = 8
    rows = int(np.ceil(n / cols))
    match = np.full(rows * cols, np.nan)
    match[:n] = (decoded == reference).astype(float)
    text = np.full(rows * cols, "", dtype=object)
    text[:n] = [str(int(b)) for b in decoded]
    fig = go.Figure(go.Heatmap(z=match.reshape(rows, cols), text=text.reshape(rows, cols), texttemplate="%{text}",
                               colorscale=[[0, "#d62728"], [1, "#c7e9c0"]], zmin=0, zmax=1, showscale=False,
                               xgap=2, ygap=2, hovertemplate="bit %{x},%{y}: %{text}<extra></extra>"))
    wrong = int(n - np.nansum(match))
    fig.update_layout(title=f"{title} ({wrong} of {n} wrong)", height=300, margin=dict(l=10, r=10, t=50, b=10),
                      yaxis=dict(autorange="reversed", showticklabels=False), xaxis=dict(showticklabels=False))
    return fig


def pairwise_histogram(counts: dict[str, np.ndarray], n: int, max_ba: dict[str, float]) -> go.Figure:
    """Distribution of pairwise bitwise accuracy of each strategy's pool (same n, N), alpha_max marked."""
    fig = go.Figure()
    x = np.arange(n + 1) / n
    for name, c in counts.items():
        total = max(1, int(np.sum(c)))
        fig.add_trace(go.Bar(x=x, y=np.asarray(c) / total, name=f"{name} (max {max_ba[name]:.3f})", opacity=0.6,
                             marker_color=color(name)))
        fig.add_vline(x=max_ba[name], line_dash="dot", line_color=color(name))
    fig.update_layout(barmode="overlay", title="Pairwise bitwise accuracy of the user watermarks",
                      xaxis=dict(title="bitwise accuracy between two users", range=[0.2, 1.0]),
                      yaxis=dict(title="fraction of pairs", type="log"), height=360,
                      margin=dict(l=10, r=10, t=50, b=10))
    return fig


def binomial_thresholds(n: int, beta: float, pmf: np.ndarray, tau_bits: int, attr_bits: int) -> go.Figure:
    """P[X = k] for X ~ Binom(n, beta) with the detection threshold ceil(tau n) and Thm 4's attribution threshold."""
    k = np.arange(n + 1)
    colors = np.where(k >= max(tau_bits, attr_bits), color("absta"), np.where(k >= tau_bits, "#bcbd22", "#c7c7c7"))
    fig = go.Figure(go.Bar(x=k, y=pmf, marker_color=colors, name="P[X = k]"))
    fig.add_vline(x=tau_bits - 0.5, line_dash="dash", annotation_text=f"detect: >= {tau_bits} bits")
    fig.add_vline(x=attr_bits - 0.5, line_dash="dot", line_color=color("absta"),
                  annotation_text=f"attribute: >= {attr_bits}", annotation_position="bottom right")
    fig.update_layout(title=f"Correct bits of a beta = {beta:.3f} decode (Binomial({n}, beta))",
                      xaxis=dict(title="matching bits k", range=[max(0, n // 2 - 2), n + 1]),
                      yaxis=dict(title="probability"), height=320, margin=dict(l=10, r=10, t=50, b=10))
    return fig


def rates_vs_users(curves: dict[str, tuple[np.ndarray, np.ndarray]], points: dict[str, tuple[np.ndarray, np.ndarray]],
                   title: str = "Rates vs number of users") -> go.Figure:
    """Theory curves (lines) and empirical/simulated points (markers) against the number of users (log axis)."""
    fig = go.Figure()
    for name, (x, y) in curves.items():
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name))
    for name, (x, y) in points.items():
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=name, marker=dict(size=9, symbol="circle-open")))
    fig.update_layout(title=title, xaxis=dict(type="log", title="number of users"),
                      yaxis=dict(title="rate", range=[-0.02, 1.02]), height=380, margin=dict(l=10, r=10, t=50, b=10))
    return fig


def rates_vs_strength(rows: list[dict], attack: str, unit: str) -> go.Figure:
    """Empirical TAR / FDR / bit accuracy vs attack strength for each (backend, strategy), Thm 4 bounds dashed.

    ``rows``: dicts with keys backend, strategy, strength, bit_accuracy, tar, tdr, fdr, tar_lower_bound, psnr."""
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("bit accuracy (empirical beta)", "attribution: TAR (bound dashed)",
                                        "false detection on clean images"))
    series: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        series.setdefault((r["backend"], r["strategy"]), []).append(r)
    for (be, st), rs in series.items():
        rs = sorted(rs, key=lambda r: r["strength"])
        x = [r["strength"] for r in rs]
        be_color = color(be)
        dash = "solid" if st in STRATEGIES and STRATEGIES.kind(st) == "ours" else "dot"
        name = f"{be} / {st}" + (f" ({rs[0]['psnr']:.1f} dB)" if rs[0].get("psnr") else "")
        fig.add_trace(go.Scatter(x=x, y=[r["bit_accuracy"] for r in rs], name=name, legendgroup=name,
                                 line=dict(color=be_color, dash=dash), mode="lines+markers"), 1, 1)
        fig.add_trace(go.Scatter(x=x, y=[r["tar"] for r in rs], name=name, legendgroup=name, showlegend=False,
                                 line=dict(color=be_color, dash=dash), mode="lines+markers"), 1, 2)
        fig.add_trace(go.Scatter(x=x, y=[r["tar_lower_bound"] for r in rs], name=f"{name} Thm 4 bound",
                                 legendgroup=name, showlegend=False, line=dict(color=be_color, dash="dash", width=1),
                                 mode="lines", opacity=0.6), 1, 2)
        fig.add_trace(go.Scatter(x=x, y=[r.get("fdr") for r in rs], name=name, legendgroup=name, showlegend=False,
                                 line=dict(color=be_color, dash=dash), mode="lines+markers"), 1, 3)
    fig.update_yaxes(range=[-0.02, 1.02])
    fig.update_xaxes(title_text=f"{attack} ({unit})")
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def clean_bit_frequency(freq: Sequence[float]) -> go.Figure:
    """How often each bit decodes to 1 on clean images (a gamma-random decoder sits near 0.5)."""
    fig = go.Figure(go.Bar(x=np.arange(len(freq)), y=list(freq), marker_color=color("random")))
    fig.add_hline(y=0.5, line_dash="dash")
    fig.update_layout(title="Per-bit frequency of 1s in decodes of clean images", yaxis=dict(range=[0, 1]),
                      xaxis=dict(title="bit"), height=260, margin=dict(l=10, r=10, t=50, b=10))
    return fig
