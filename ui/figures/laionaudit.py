"""Figures of the LAION audit page (pure plotly builders: data in, Figure out; no streamlit).

They read the dicts of :mod:`backend.data.laionaudit.jobs`: an audit (``heatmap``, ``concepts``, ``sentiment``,
``crime``), a transfer setting (``seeds`` with ``data_bias`` / ``model_bias`` / ``slope`` / ``intercept`` / ``r2``),
the transfer ladders and an association result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.data.laionaudit.transfer import FACTOR_LABELS, MEASURES

SEED_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
GROUP_COLORS = {"female": "#c2185b", "male": "#1565c0", "child": "#f9a825", "elderly": "#6d4c41",
                "no_identity_term": "#9e9e9e", "all": "#424242"}


def transfer_scatter(setting: Mapping[str, object], y_range: Sequence[float] | None = None, title: str = "") -> go.Figure:
    """Data bias (x, female share 0-1) against model bias d(c) (y) per concept, one colour per seed, with each seed's
    least-squares line and R^2 in the legend. ``y_range`` shares the y axis across settings."""
    fig = go.Figure()
    xs = np.linspace(0, 1, 2)
    for i, s in enumerate(setting["seeds"]):  # type: ignore[union-attr]
        c = SEED_COLORS[i % len(SEED_COLORS)]
        fig.add_trace(go.Scatter(x=s["data_bias"], y=s["model_bias"], mode="markers", marker={"color": c, "size": 7},
                                 name=f"seed {s['seed']}: R² {s['r2']:.2f}", legendgroup=str(i),
                                 text=setting.get("concepts"), hovertemplate="%{text}: data %{x:.2f}, model %{y:.2f}"))
        fig.add_trace(go.Scatter(x=xs, y=s["slope"] * xs + s["intercept"], mode="lines", line={"color": c},
                                 showlegend=False, legendgroup=str(i), hoverinfo="skip"))
    fig.update_xaxes(range=[0, 1], title_text="data bias: female share of single-gender captions")
    fig.update_yaxes(title_text="model bias d(c)", range=list(y_range) if y_range else None, zeroline=True)
    fig.update_layout(height=380, title=title, margin={"t": 40, "b": 10}, legend={"orientation": "h", "y": -0.25})
    return fig


def r2_ladders(ladders: Mapping[str, Sequence[Mapping[str, float]]], shuffled: float | None = None) -> go.Figure:
    """R^2 (mean over seeds, with the seeds' range) against the strength of each limiting factor, one panel per
    factor on a shared 0-1 axis; the shuffled control as a dashed line."""
    names = list(ladders)
    fig = make_subplots(1, len(names), shared_yaxes=True, subplot_titles=[FACTOR_LABELS[n] for n in names])
    for j, name in enumerate(names, start=1):
        rows = ladders[name]
        x = [r["strength"] for r in rows]
        y = [r["r2_mean"] for r in rows]
        fig.add_trace(go.Scatter(
            x=x, y=y, mode="lines+markers", name=FACTOR_LABELS[name], showlegend=False,
            error_y={"type": "data", "symmetric": False, "array": [r["r2_max"] - r["r2_mean"] for r in rows],
                     "arrayminus": [r["r2_mean"] - r["r2_min"] for r in rows]}), 1, j)
        if shuffled is not None:
            fig.add_hline(y=shuffled, line_dash="dash", line_color="#888", row=1, col=j)
        fig.update_xaxes(title_text="strength", tickvals=x, row=1, col=j)
    fig.update_yaxes(range=[-0.05, 1.05], title_text="R² of model bias on data bias", row=1, col=1)
    fig.update_layout(height=330, margin={"t": 40, "b": 10})
    return fig


def measure_bars(settings: Mapping[str, Mapping[str, object]]) -> go.Figure:
    """Mean R^2 per setting for each data-bias measure (the paper's female share and the baselines), side by side."""
    fig = go.Figure()
    names = list(settings)
    for m in MEASURES:
        fig.add_trace(go.Bar(x=names, y=[settings[n]["r2_mean_by_measure"][m] for n in names],  # type: ignore[index]
                             name=MEASURES.label(m), marker_color=MEASURES.color(m)))
    fig.update_yaxes(range=[0, 1], title_text="mean R² over seeds")
    fig.update_layout(barmode="group", height=320, margin={"t": 20, "b": 10}, legend={"orientation": "h", "y": -0.3})
    return fig


def pmi_heatmap(heat: Mapping[str, object]) -> go.Figure:
    """PMI(identity group, concept) with a diverging scale symmetric around 0 (blank: never co-occur)."""
    z = np.array([[np.nan if v is None else v for v in row] for row in heat["pmi"]], float)  # type: ignore[union-attr]
    lim = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 1.0
    fig = go.Figure(go.Heatmap(z=z, x=heat["concepts"], y=heat["groups"], colorscale="RdBu_r", zmid=0, zmin=-lim,
                               zmax=lim, colorbar={"title": "PMI"}, customdata=np.array(heat["counts"]),
                               hovertemplate="%{y} x %{x}: PMI %{z:.2f} (%{customdata} captions)<extra></extra>"))
    fig.update_layout(height=300, margin={"t": 20, "b": 10})
    return fig


def skew_bars(concepts: Sequence[Mapping[str, object]], top_female: Sequence[str], top_male: Sequence[str],
              base: float) -> go.Figure:
    """Female share (Wilson 95 % interval) of the most female- and male-skewed concepts, against the corpus's share."""
    by = {r["concept"]: r for r in concepts}
    names = list(top_female) + list(reversed(top_male))
    rows = [by[n] for n in names]
    share = [r["female_share"] for r in rows]
    fig = go.Figure(go.Bar(
        y=names, x=share, orientation="h",
        marker_color=[GROUP_COLORS["female"] if s > base else GROUP_COLORS["male"] for s in share],
        error_x={"type": "data", "symmetric": False, "array": [r["share_high"] - r["female_share"] for r in rows],
                 "arrayminus": [r["female_share"] - r["share_low"] for r in rows]},
        customdata=[r["single_gender"] for r in rows], hovertemplate="%{y}: %{x:.2f} of %{customdata} captions"))
    fig.add_vline(x=base, line_dash="dash", line_color="#555", annotation_text="corpus")
    fig.update_xaxes(range=[0, 1], title_text="female share of single-gender captions")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=max(260, 22 * len(names) + 80), margin={"t": 20, "b": 10})
    return fig


def rate_bars(sentiment: Mapping[str, Mapping[str, object]], crime: Mapping[str, Mapping[str, object]]) -> go.Figure:
    """Share of negative-sentiment and crime-term captions per identity group (Wilson 95 % intervals), side by side
    on one 0-1 axis."""
    groups = [g for g in GROUP_COLORS if g in sentiment]
    fig = make_subplots(1, 2, shared_yaxes=True, subplot_titles=["negative sentiment (VADER lexicon)",
                                                                  "crime-lexicon terms"])
    for j, data in enumerate((sentiment, crime), start=1):
        rate = [data[g]["rate"] or 0.0 for g in groups]
        fig.add_trace(go.Bar(
            x=groups, y=rate, marker_color=[GROUP_COLORS[g] for g in groups], showlegend=False,
            error_y={"type": "data", "symmetric": False,
                     "array": [(data[g]["high"] or 0) - (data[g]["rate"] or 0) for g in groups],
                     "arrayminus": [(data[g]["rate"] or 0) - (data[g]["low"] or 0) for g in groups]}), 1, j)
    hi = max([(sentiment[g]["high"] or 0) for g in groups] + [(crime[g]["high"] or 0) for g in groups] + [0.05])
    fig.update_yaxes(range=[0, min(1.0, hi * 1.15)], title_text="share of the group's captions", row=1, col=1)
    fig.update_layout(height=320, margin={"t": 40, "b": 10})
    return fig


def association_scatter(res: Mapping[str, object]) -> go.Figure:
    """MiniLM's gender association against the data bias of each concept, with the least-squares line."""
    rows = res["rows"]  # type: ignore[index]
    x = [r["data_bias"] for r in rows]
    y = [r["minilm_association"] for r in rows]
    fit = res["fit"]  # type: ignore[index]
    xs = np.linspace(0, 1, 2)
    fig = go.Figure([go.Scatter(x=x, y=y, mode="markers+text", text=[r["concept"] for r in rows],
                                textposition="top center", textfont={"size": 9}, marker={"size": 7},
                                name="concepts"),
                     go.Scatter(x=xs, y=fit["slope"] * xs + fit["intercept"], mode="lines",
                                name=f"fit: R² {fit['r2']:.2f}")])
    fig.update_xaxes(range=[0, 1], title_text="data bias: female share of single-gender captions")
    fig.update_yaxes(title_text="MiniLM: cos to female terms − cos to male terms")
    fig.update_layout(height=420, margin={"t": 20, "b": 10}, legend={"orientation": "h", "y": -0.2})
    return fig


def figure_strip(images: np.ndarray, scale: int = 4) -> np.ndarray:
    """Planted figures side by side, each enlarged ``scale`` times (nearest), 2 px apart: uint8 ``[H, W, 3]``."""
    big = images.repeat(scale, 1).repeat(scale, 2)
    gap = np.full((big.shape[1], 2, 3), 255, np.uint8)
    parts = []
    for im in big:
        parts += [im, gap]
    return np.concatenate(parts[:-1], axis=1)
