"""Figures of the nowcasting page (pure plotly: data in, Figure out). Rain maps share one log colour scale (mm/h), all
skill curves share the lead-time axis, and every method keeps its colour across figures."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.forecast.nowcast.baselines import METHODS

TRUTH = "truth"  # the observed panel, not a method


def _label(name: str, labels: dict[str, str] | None = None) -> str:
    """``labels[name]`` if given, else "Observed" for the truth and the registry's label for a method."""
    if labels and name in labels:
        return labels[name]
    return "Observed" if name == TRUTH else METHODS.label(name)


def _color(name: str) -> str:
    return "#000000" if name == TRUTH else METHODS.color(name)

RAIN_TICKS = (0.1, 0.3, 1, 3, 10, 30, 100)
RAIN_SCALE = [[0.0, "#ffffff"], [0.08, "#c6dbef"], [0.25, "#6baed6"], [0.45, "#2171b5"], [0.6, "#31a354"],
              [0.75, "#fed976"], [0.88, "#fd8d3c"], [1.0, "#bd0026"]]
PROB_SCALE = "Viridis"


def _z(r: np.ndarray) -> np.ndarray:
    """mm/h -> log10 scale for colouring; no rain (< 0.1 mm/h) maps to the bottom of the scale."""
    return np.round(np.log10(np.clip(np.nan_to_num(r), 0.05, 150)), 2)


def _rain_colorbar() -> dict:
    return dict(title="mm/h", tickvals=[np.log10(t) for t in RAIN_TICKS], ticktext=[f"{t:g}" for t in RAIN_TICKS])


def animated_maps(panels: dict[str, np.ndarray], leads_min: list[float], title: str = "Forecast vs observation",
                  labels: dict[str, str] | None = None) -> go.Figure:
    """Side-by-side rain maps (same colour scale and axes) animated over leads. panels: label -> (T, H, W) mm/h."""
    names = list(panels)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[_label(n, labels) for n in names],
                        horizontal_spacing=0.02, shared_yaxes=True)
    zmin, zmax = np.log10(0.05), np.log10(150)

    def traces(t: int) -> list[go.Heatmap]:
        return [go.Heatmap(z=_z(panels[n][t]), zmin=zmin, zmax=zmax, colorscale=RAIN_SCALE, showscale=i == 0,
                           colorbar=_rain_colorbar(), hovertemplate="x %{x}, y %{y}<extra></extra>")
                for i, n in enumerate(names)]

    for i, tr in enumerate(traces(0)):
        fig.add_trace(tr, 1, i + 1)
    frames = [go.Frame(data=traces(t), name=f"{leads_min[t]:g}", traces=list(range(len(names))))
              for t in range(len(leads_min))]
    fig.frames = frames
    steps = [dict(method="animate", label=f"{m:g}", args=[[f"{m:g}"], dict(mode="immediate", frame=dict(duration=0,
                  redraw=True), transition=dict(duration=0))]) for m in leads_min]
    fig.update_layout(
        title=title, height=360, margin=dict(l=10, r=10, t=60, b=10),
        sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix="lead (min): "), pad=dict(t=30))],
        updatemenus=[dict(type="buttons", showactive=False, x=0, y=-0.05, xanchor="left", yanchor="top",
                          buttons=[dict(label="Play", method="animate",
                                        args=[None, dict(frame=dict(duration=300, redraw=True), fromcurrent=True)]),
                                   dict(label="Pause", method="animate",
                                        args=[[None], dict(mode="immediate", frame=dict(duration=0))])])])
    fig.update_xaxes(showticklabels=False, constrain="domain")
    fig.update_yaxes(showticklabels=False, autorange="reversed", scaleanchor="x", constrain="domain")
    return fig


def probability_maps(probs: np.ndarray, truth: np.ndarray | None, threshold: float, k: int, leads_min: list[float],
                     show: list[int]) -> go.Figure:
    """P(R >= threshold) at selected lead indices, observed exceedance outlined. probs: (T, K, H, W)."""
    fig = make_subplots(rows=1, cols=len(show), subplot_titles=[f"+{leads_min[t] / 60:g} h" for t in show],
                        horizontal_spacing=0.02)
    for i, t in enumerate(show):
        fig.add_trace(go.Heatmap(z=np.round(probs[t, k], 3), zmin=0, zmax=1, colorscale=PROB_SCALE, showscale=i == 0,
                                 colorbar=dict(title="P"), hovertemplate="P=%{z}<extra></extra>"), 1, i + 1)
        if truth is not None:
            fig.add_trace(go.Contour(z=(truth[t] >= threshold).astype(float), showscale=False,
                                     contours=dict(start=0.5, end=0.5, coloring="none"), line=dict(color="white", width=1.5),
                                     hoverinfo="skip"), 1, i + 1)
    fig.update_layout(title=f"Probability of rain >= {threshold:g} mm/h (white: observed)", height=300,
                      margin=dict(l=10, r=10, t=60, b=10))
    fig.update_xaxes(showticklabels=False, constrain="domain")
    fig.update_yaxes(showticklabels=False, autorange="reversed", constrain="domain")
    for i in range(len(show)):
        fig.update_yaxes(scaleanchor=f"x{'' if i == 0 else i + 1}", row=1, col=i + 1)
    return fig


def skill_curves(summaries: dict[str, dict], leads_min: list[float], metric: str = "crps", threshold: str = "1.0",
                 scale: str = "5", labels: dict[str, str] | None = None) -> go.Figure:
    """One line per method vs lead: ``crps`` (lower is better), ``csi`` at ``threshold``, ``fss`` at threshold/scale."""
    fig = go.Figure()
    for name, s in summaries.items():
        if metric == "crps":
            y = s["crps"]
        elif metric == "csi":
            y = s["csi"][threshold]
        else:
            y = s["fss"][threshold][scale]
        fig.add_trace(go.Scatter(x=np.asarray(leads_min[: len(y)]) / 60, y=y, mode="lines+markers",
                                 name=_label(name, labels), line=dict(color=_color(name)), marker=dict(size=4)))
    ytitle = {"crps": "CRPS (mm/h, lower is better)", "csi": f"CSI at {threshold} mm/h",
              "fss": f"FSS at {threshold} mm/h, {scale} px"}[metric]
    fig.update_layout(xaxis_title="lead (h)", yaxis_title=ytitle, height=360, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.2))
    if metric != "crps":
        fig.update_yaxes(range=[0, 1])
    fig.add_vrect(x0=0, x1=1, fillcolor="grey", opacity=0.08, line_width=0, annotation_text="first hour",
                  annotation_position="top left")
    return fig


def reliability(summaries: dict[str, dict], labels: dict[str, str] | None = None) -> go.Figure:
    """Reliability diagram at the summaries' threshold (pooled over leads), with the diagonal."""
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dot", color="grey"), name="perfect"))
    thr = None
    for name, s in summaries.items():
        r = s.get("reliability")
        if not r:
            continue
        thr = r["threshold"]
        x, y = np.asarray(r["forecast"]), np.asarray(r["observed"])
        ok = (x >= 0) & (y >= 0)
        fig.add_trace(go.Scatter(x=x[ok], y=y[ok], mode="lines+markers", name=_label(name, labels),
                                 line=dict(color=_color(name))))
    fig.update_layout(title=f"Reliability at {thr:g} mm/h" if thr else "Reliability", xaxis_title="forecast probability",
                      yaxis_title="observed frequency", height=360, margin=dict(l=10, r=10, t=50, b=10))
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1])
    return fig


def rank_histograms(summaries: dict[str, dict], labels: dict[str, str] | None = None) -> go.Figure:
    """Rank histograms of the ensemble methods (flat = well-dispersed)."""
    fig = go.Figure()
    for name, s in summaries.items():
        h = s.get("rank_histogram")
        if h:
            fig.add_trace(go.Bar(x=list(range(1, len(h) + 1)), y=h, name=_label(name, labels),
                                 marker_color=_color(name), opacity=0.75))
            fig.add_hline(y=1 / len(h), line_dash="dot", line_color="grey")
    fig.update_layout(title="Rank histogram (ensembles)", barmode="group", xaxis_title="rank of the observation",
                      yaxis_title="frequency", height=320, margin=dict(l=10, r=10, t=50, b=10))
    return fig


def costs_bar(rows: list[dict]) -> go.Figure:
    """Wall time per method (log axis), annotated with passes/members/parameters where known."""
    rows = sorted(rows, key=lambda r: r.get("seconds", 0))
    text = []
    for r in rows:
        bits = [f"{r['seconds']:.2f} s"]
        if r.get("parameters"):
            bits.append(f"{r['parameters'] / 1e6:.2f}M params")
        if r.get("macs"):
            bits.append(f"{r['macs'] / 1e9:.2f} GMAC")
        if r.get("members"):
            bits.append(f"{r['members']} members")
        text.append(", ".join(bits))
    fig = go.Figure(go.Bar(x=[max(r["seconds"], 1e-3) for r in rows], y=[r["method"] for r in rows], orientation="h",
                           text=text, textposition="auto"))
    fig.update_layout(title="Wall time of one 8-hour forecast (this server)", xaxis_type="log", xaxis_title="seconds",
                      height=60 + 40 * len(rows), margin=dict(l=10, r=10, t=50, b=10))
    return fig


def input_panels(radar_last: np.ndarray, satellite: np.ndarray | None, nwp_first: np.ndarray | None,
                 motion: np.ndarray | None) -> go.Figure:
    """The sources at issue time: radar (with the motion field), satellite brightness temperature, NWP analysis."""
    titles = ["radar at t0" + (" + motion" if motion is not None else "")]
    if satellite is not None:
        titles.append("satellite (K) at t0")
    if nwp_first is not None:
        titles.append("NWP at t0 (16 km)")
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.03)
    fig.add_trace(go.Heatmap(z=_z(radar_last), zmin=np.log10(0.05), zmax=np.log10(150), colorscale=RAIN_SCALE,
                             colorbar=_rain_colorbar(), showscale=False), 1, 1)
    if motion is not None:
        h, w = radar_last.shape
        step = max(4, h // 12)
        yy, xx = np.mgrid[step // 2:h:step, step // 2:w:step]
        u, v = motion[0][yy, xx], motion[1][yy, xx]
        scale = 3.0
        xs, ys = [], []
        for x0, y0, du, dv in zip(xx.ravel(), yy.ravel(), u.ravel(), v.ravel()):
            xs += [x0, x0 + scale * du, None]
            ys += [y0, y0 + scale * dv, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="black", width=1), showlegend=False,
                                 hoverinfo="skip"), 1, 1)
    col = 2
    if satellite is not None:
        fig.add_trace(go.Heatmap(z=np.round(satellite, 1), colorscale="Greys", reversescale=False, showscale=False), 1, col)
        col += 1
    if nwp_first is not None:
        fig.add_trace(go.Heatmap(z=_z(nwp_first), zmin=np.log10(0.05), zmax=np.log10(150), colorscale=RAIN_SCALE,
                                 showscale=False), 1, col)
    fig.update_layout(height=300, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_xaxes(showticklabels=False, constrain="domain")
    fig.update_yaxes(showticklabels=False, autorange="reversed", constrain="domain")
    return fig


def member_gallery(members: np.ndarray, lead_idx: int, leads_min: list[float], title: str) -> go.Figure:
    """A few ensemble members at one lead (same colour scale as the maps). members: (M, T, H, W)."""
    m = members.shape[0]
    fig = make_subplots(rows=1, cols=m, subplot_titles=[f"member {i + 1}" for i in range(m)], horizontal_spacing=0.02)
    for i in range(m):
        fig.add_trace(go.Heatmap(z=_z(members[i, lead_idx]), zmin=np.log10(0.05), zmax=np.log10(150),
                                 colorscale=RAIN_SCALE, showscale=False), 1, i + 1)
    fig.update_layout(title=f"{title} at +{leads_min[lead_idx] / 60:g} h", height=240, margin=dict(l=10, r=10, t=60, b=10))
    fig.update_xaxes(showticklabels=False, constrain="domain")
    fig.update_yaxes(showticklabels=False, autorange="reversed", constrain="domain")
    return fig
