"""Figures of the Spectral Bellman page (pure plotly builders: data in, Figure out; no streamlit).

Inputs are the JSON summaries of ``backend.rl.spectralbellman``: spectra as lists of sigma_i / sigma_1, the SBM curve
``{"iter", "max_angle", "closure"}``, per-agent visitation lists with the environment's grid ``coords`` /
``grid_shape``, per-agent return lists, and the sweep summary of :func:`backend.rl.spectralbellman.agents.solve_sweep`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.rl.spectralbellman.agents import AGENTS
from backend.rl.spectralbellman.explore_log import FAMILIES


def spectra(curves: Mapping[str, Sequence[float]], d: int | None = None, top: int = 40) -> go.Figure:
    """sigma_i / sigma_1 of each environment's stacked backups on one log axis; the cut at d marked."""
    fig = go.Figure()
    for name, rel in curves.items():
        y = [max(float(v), 1e-17) for v in rel[:top]]
        fig.add_trace(go.Scatter(x=list(range(1, len(y) + 1)), y=y, mode="lines+markers", name=name))
    if d:
        fig.add_vline(
            x=d + 0.5,
            line=dict(color="#7f7f7f", dash="dash"),
            annotation_text=f"d = {d}",
            annotation_position="top right",
        )
    fig.add_hline(y=1e-8, line=dict(color="#d62728", dash="dot", width=1))
    fig.update_layout(
        title="Spectrum of stacked Bellman backups",
        xaxis_title="index i",
        yaxis_title="sigma_i / sigma_1",
        yaxis_type="log",
        height=380,
        margin=dict(t=50, b=40),
    )
    return fig


def angles(curve: Mapping[str, Sequence[float]], title: str = "SBM: learned span vs true span") -> go.Figure:
    """Largest principal angle (rad) and Bellman-closure residual per SBM iteration (log y)."""
    fig = go.Figure()
    it = list(curve["iter"])
    for key, name, color in (
        ("max_angle", "largest principal angle (rad)", "#d62728"),
        ("closure", "closure residual ||Y - P_phi Y|| / ||Y||", "#1f77b4"),
    ):
        fig.add_trace(
            go.Scatter(x=it, y=[max(float(v), 1e-17) for v in curve[key]], name=name, line=dict(color=color, width=2))
        )
    fig.add_hline(
        y=1e-3, line=dict(color="#7f7f7f", dash="dash"), annotation_text="1e-3 rad", annotation_position="bottom left"
    )
    fig.update_layout(
        title=title,
        xaxis_title="SBM iteration",
        yaxis_type="log",
        height=380,
        margin=dict(t=50, b=40),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def _grid(visits: Sequence[float], coords: Sequence[Sequence[int]], shape: Sequence[int]) -> np.ndarray:
    g = np.full(tuple(shape), np.nan)
    for v, (r, c) in zip(visits, coords):
        if r >= 0:
            g[r, c] = v
    return g


def visitation(
    visits: Mapping[str, Sequence[float]], coords: Sequence[Sequence[int]], shape: Sequence[int]
) -> go.Figure:
    """One heatmap per agent of log10(1 + state visits), one shared colour scale."""
    names = list(visits)
    cols = min(3, len(names)) or 1
    rows = math.ceil(len(names) / cols) or 1
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[AGENTS.label(n) for n in names],
        horizontal_spacing=0.04,
        vertical_spacing=0.12,
    )
    zmax = max((math.log10(1 + max(v)) for v in visits.values() if len(v)), default=1.0)
    for i, n in enumerate(names):
        z = np.log10(1 + _grid(visits[n], coords, shape))
        fig.add_trace(
            go.Heatmap(
                z=z, zmin=0, zmax=zmax, colorscale="Viridis", showscale=i == 0, colorbar=dict(title="log10(1+visits)")
            ),
            row=i // cols + 1,
            col=i % cols + 1,
        )
    fig.update_yaxes(autorange="reversed", showticklabels=False)
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(title="State visitation per agent", height=260 * rows + 60, margin=dict(t=70, b=20))
    return fig


def returns(curves: Mapping[str, Sequence[float]], optimal: float | None = None, window: int = 10) -> go.Figure:
    """Episode return per agent (a moving average over ``window`` episodes)."""
    fig = go.Figure()
    for n, r in curves.items():
        x = np.asarray(r, dtype=float)
        k = max(1, min(window, len(x)))
        y = np.convolve(x, np.ones(k) / k, mode="valid") if len(x) else x
        fig.add_trace(
            go.Scatter(
                x=list(range(k, len(x) + 1)),
                y=y.tolist(),
                name=AGENTS.label(n),
                line=dict(color=AGENTS.color(n), width=2),
            )
        )
    if optimal is not None:
        fig.add_hline(y=optimal, line=dict(color="#7f7f7f", dash="dash"), annotation_text="optimal")
    fig.update_layout(
        title=f"Return per episode (moving average of {window})",
        xaxis_title="episode",
        yaxis_title="return",
        height=380,
        margin=dict(t=50, b=40),
    )
    return fig


def solve_vs_size(sweep: Mapping[str, object]) -> go.Figure:
    """Median episodes to solve vs N with quartile bars; runs that never solved count as budget + 1 (drawn as such)."""
    fig = go.Figure()
    agents: Mapping[str, Mapping] = sweep["agents"]  # type: ignore[assignment]
    for n, a in agents.items():
        Ns = [int(k) for k in a["sizes"]]
        med = [a["sizes"][str(N)]["median"] for N in Ns]
        lo = [m - a["sizes"][str(N)]["q25"] for N, m in zip(Ns, med)]
        hi = [a["sizes"][str(N)]["q75"] - m for N, m in zip(Ns, med)]
        fig.add_trace(
            go.Scatter(
                x=Ns,
                y=med,
                name=AGENTS.label(n),
                mode="lines+markers",
                line=dict(color=AGENTS.color(n), width=2),
                error_y=dict(type="data", symmetric=False, array=hi, arrayminus=lo),
            )
        )
    cap = sweep["censored_value"]
    fig.add_hline(y=cap, line=dict(color="#7f7f7f", dash="dot"), annotation_text=f"not solved ({cap})")
    fig.update_layout(
        title=f"Episodes to solve {sweep['env']}(N): median and quartiles over {sweep['seeds']} seeds",
        xaxis_title="N",
        yaxis_title="episodes to solve",
        yaxis_type="log",
        height=400,
        margin=dict(t=50, b=40),
    )
    return fig


def shipped_log(ev: Mapping[str, object]) -> go.Figure:
    """Episodes to solve per seed on the shipped DeepSea(N) log: one panel per N, one column of points per agent
    (ours, its ablations and each reference at its tuned setting), the median as a bar; log axis, the same for every
    panel. Input: :func:`backend.rl.spectralbellman.jobs.shipped_log`."""
    sizes: Mapping[str, Mapping] = ev["sizes"]  # type: ignore[assignment]
    order = list(FAMILIES)  # ours, its ablations, the references, the weak baselines
    fig = make_subplots(rows=1, cols=len(sizes), subplot_titles=[f"DeepSea({N})" for N in sizes], shared_yaxes=True)
    for j, per in enumerate(sizes.values(), start=1):
        fams = [f for f in order if f in per["tuned"]]
        for f in fams:
            var = per["tuned"][f]
            v = per["variants"][var]
            label = AGENTS.label(f)
            fig.add_trace(go.Box(y=v["values"], name=label, marker_color=AGENTS.color(f), boxpoints="all",
                                 jitter=0.4, pointpos=0, hovertext=[f"{var}, seed {i}" for i in range(len(v["values"]))],
                                 showlegend=False), row=1, col=j)
    fig.update_yaxes(type="log", title_text="episodes to solve (budget + 1 = not solved)", row=1, col=1)
    fig.update_layout(title=f"Episodes to solve per seed ({ev['seeds']} seeds, budget {ev['budget']}); references "
                            "at their tuned setting", height=430, margin=dict(t=60, b=40))
    return fig
