"""Plotly figures of the Soft Best-of-N page (pure functions: data -> go.Figure; no streamlit)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go


def beta_label(b: float | str) -> str:
    return "∞ (BoN)" if b == "inf" or (isinstance(b, float) and math.isinf(b)) else f"{float(b):g}"


def heatmap(ns: Sequence[int], betas: Sequence, true_reward: np.ndarray, best_beta: Sequence, title: str) -> go.Figure:
    """Expected true reward over (N, beta) (beta = inf is hard BoN), with a marker at the best beta of each N."""
    xs = [beta_label(b) for b in betas]
    ys = [str(n) for n in ns]
    z = np.asarray(true_reward, float)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=xs,
            y=ys,
            colorscale="Viridis",
            zmin=0,
            zmax=1,
            colorbar={"title": "E[true reward]"},
            hovertemplate="N=%{y}, beta=%{x}: %{z:.3f}<extra></extra>",
            text=np.round(z, 3),
            texttemplate="%{text:.2f}",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[beta_label(b) for b in best_beta],
            y=ys,
            mode="markers",
            name="best beta per N",
            marker={"symbol": "star", "size": 14, "color": "white", "line": {"color": "black", "width": 1}},
        )
    )
    fig.update_layout(
        title=title,
        xaxis={"title": "inverse temperature beta", "type": "category"},
        yaxis={"title": "N (samples)", "type": "category"},
        height=420,
        margin={"t": 50, "b": 40},
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def kl_figure(
    ns: Sequence[int],
    betas: Sequence,
    kl: np.ndarray,
    bound: np.ndarray,
    bon_bound: Sequence[float],
    show_ns: Sequence[int],
) -> go.Figure:
    """KL(pi_SBoN || pi_ref) vs beta for a few N, with the Lemma 4.1 bound (dashed) and hard BoN's log N - 1 + 1/N."""
    fig = go.Figure()
    finite = [i for i, b in enumerate(betas) if beta_label(b) != "∞ (BoN)" and float(b) > 0]
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
    for c, n in enumerate(show_ns):
        if n not in ns:
            continue
        i = list(ns).index(n)
        col = colors[c % len(colors)]
        x = [float(betas[j]) for j in finite]
        fig.add_trace(
            go.Scatter(x=x, y=[kl[i][j] for j in finite], mode="lines+markers", name=f"KL, N={n}", line={"color": col})
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[bound[i][j] for j in finite],
                mode="lines",
                name=f"Lemma 4.1 bound, N={n}",
                line={"color": col, "dash": "dash"},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[x[0], x[-1]],
                y=[bon_bound[i]] * 2,
                mode="lines",
                showlegend=c == 0,
                name="hard-BoN bound log N - 1 + 1/N",
                line={"color": col, "dash": "dot", "width": 1},
            )
        )
    fig.update_layout(
        title="KL from the reference policy vs its bound",
        xaxis={"title": "beta", "type": "log"},
        yaxis_title="KL (nats)",
        height=400,
        margin={"t": 50, "b": 40},
    )
    return fig


def reward_vs_beta(betas: Sequence, rows: dict[str, Sequence[float]], sampling: float | None, n: int) -> go.Figure:
    """True (and selection) reward vs beta for one N; hard BoN and plain sampling as horizontal references."""
    finite = [i for i, b in enumerate(betas) if beta_label(b) != "∞ (BoN)"]
    x = [max(float(betas[i]), 1e-2) for i in finite]
    fig = go.Figure()
    for name, vals in rows.items():
        fig.add_trace(go.Scatter(x=x, y=[vals[i] for i in finite], mode="lines+markers", name=f"SBoN: {name}"))
        fig.add_trace(
            go.Scatter(x=[x[0], x[-1]], y=[vals[-1]] * 2, mode="lines", name=f"hard BoN: {name}", line={"dash": "dash"})
        )
    if sampling is not None:
        fig.add_trace(
            go.Scatter(
                x=[x[0], x[-1]],
                y=[sampling] * 2,
                mode="lines",
                name="plain sampling",
                line={"dash": "dot", "color": "gray"},
            )
        )
    fig.update_layout(
        title=f"Reward vs beta at N = {n} (beta 0 at 0.01)",
        legend={"orientation": "h", "y": -0.3},
        xaxis={"title": "beta", "type": "log"},
        yaxis_title="expected reward",
        height=480,
        margin={"t": 50, "b": 40},
    )
    return fig


def regret_terms(betas: Sequence[float], terms: Sequence[dict], n: int) -> go.Figure:
    """Theorem 5.2's bound and its three terms against the actual regret, per beta, at one N (log scale)."""
    x = [float(b) for b in betas]
    fig = go.Figure()
    for key, name, dash in (
        ("bound", "bound (sum of the three terms)", "solid"),
        ("proxy_error", "proxy error", "dot"),
        ("finite_sample", "finite sample", "dot"),
        ("softening_bias", "softening bias log(C*)/beta", "dot"),
    ):
        y = [max(t[key], 1e-6) for t in terms]
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=name, line={"dash": dash}))
    y = [max(t["regret"], 1e-6) for t in terms]
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name="actual regret", line={"color": "black", "width": 3}))
    fig.update_layout(
        title=f"Regret vs bound (Thm 5.2) at N = {n}",
        legend={"orientation": "h", "y": -0.3},
        xaxis={"title": "beta", "type": "log"},
        yaxis={"title": "regret (log scale)", "type": "log"},
        height=480,
        margin={"t": 50, "b": 40},
    )
    return fig


def selection_bars(
    labels: Sequence[str], proxy: Sequence[float], probs: dict[str, Sequence[float]], n: int
) -> go.Figure:
    """Text mode: probability that SBoN returns each candidate, for several beta (N draws from uniform pi_ref)."""
    short = [f"#{i + 1}: {t[:40]}{'…' if len(t) > 40 else ''}" for i, t in enumerate(labels)]
    fig = go.Figure()
    for name, p in probs.items():
        fig.add_trace(go.Bar(x=short, y=p, name=f"beta={name}"))
    fig.add_trace(
        go.Scatter(
            x=short,
            y=proxy,
            mode="markers",
            name="proxy: cosine to reference",
            yaxis="y2",
            marker={"symbol": "diamond", "size": 10, "color": "black"},
        )
    )
    fig.update_layout(
        barmode="group",
        title=f"Which answer SBoN returns (N = {n})",
        yaxis_title="probability",
        yaxis2={"title": "cosine", "overlaying": "y", "side": "right", "range": [-1, 1]},
        height=420,
        margin={"t": 50, "b": 120},
        legend={"orientation": "h", "y": 1.15},
    )
    return fig
