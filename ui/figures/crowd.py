"""Figures of the crowd page (pure functions: data -> plotly Figure). Panels share axes and colour scales."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.forecast.crowd.interface import METHODS

GROUND_TRUTH = "ground_truth"  # the panel of the recorded / generated trajectories, not a method


def label(name: str) -> str:
    return "Ground truth" if name == GROUND_TRUTH else METHODS.label(name)


def color(name: str) -> str:
    return "#222222" if name == GROUND_TRUTH else METHODS.color(name)


def _walls_xy(walls: np.ndarray) -> tuple[list, list]:
    xs, ys = [], []
    for x0, y0, x1, y1 in np.asarray(walls).reshape(-1, 4):
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def density_frames(pos: np.ndarray, bounds: tuple[float, float, float, float], cell: float = 1.0,
                   T: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Soft (DDM-style) density ``[F, ny, nx]`` of positions ``[F, N, 2]`` (NaN = absent) plus the cell centres."""
    x0, y0, x1, y1 = bounds
    cx = x0 + (np.arange(max(1, int(round((x1 - x0) / cell)))) + 0.5) * cell
    cy = y0 + (np.arange(max(1, int(round((y1 - y0) / cell)))) + 0.5) * cell
    out = np.zeros((pos.shape[0], len(cy), len(cx)), np.float32)
    for f in range(pos.shape[0]):
        p = pos[f][~np.isnan(pos[f, :, 0])]
        if len(p) == 0:
            continue
        lx = -T * (p[:, 0:1] - cx) ** 2
        ly = -T * (p[:, 1:2] - cy) ** 2
        px = np.exp(lx - lx.max(1, keepdims=True))
        py = np.exp(ly - ly.max(1, keepdims=True))
        px /= px.sum(1, keepdims=True)
        py /= py.sum(1, keepdims=True)
        out[f] = np.einsum("ny,nx->yx", py, px)
    return out, cx, cy


def rollout_animation(panels: dict[str, np.ndarray], times: np.ndarray, colors: np.ndarray, walls: np.ndarray,
                      bounds: tuple[float, float, float, float], cols: int = 3, density: bool = True,
                      title: str = "Rollouts") -> go.Figure:
    """Side-by-side animated rollouts: ``panels[name] = positions [F, N, 2]`` on the same frames ``times [F]``;
    agents coloured by ``colors [N]`` (e.g. the direction of their goal, radians), over each panel's soft density."""
    names = list(panels)
    rows = int(np.ceil(len(names) / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[label(n) for n in names],
                        horizontal_spacing=0.03, vertical_spacing=0.08)
    wx, wy = _walls_xy(walls)
    dens = {n: density_frames(panels[n], bounds) for n in names} if density else {}
    zmax = max((float(d[0].max()) for d in dens.values()), default=1.0) or 1.0
    dyn_idx: list[int] = []
    for k, n in enumerate(names):
        r, c = k // cols + 1, k % cols + 1
        if density:
            d, cx, cy = dens[n]
            fig.add_trace(go.Heatmap(z=d[0], x=cx, y=cy, zmin=0, zmax=zmax, colorscale="Blues", showscale=k == 0,
                                     colorbar=dict(title="agents/cell", len=0.5), hoverinfo="skip"), r, c)
            dyn_idx.append(len(fig.data) - 1)
        fig.add_trace(go.Scatter(x=wx, y=wy, mode="lines", line=dict(color="#555", width=2), hoverinfo="skip",
                                 showlegend=False), r, c)
        p = panels[n][0]
        ok = ~np.isnan(p[:, 0])
        fig.add_trace(go.Scatter(x=p[ok, 0], y=p[ok, 1], mode="markers", showlegend=False,
                                 marker=dict(size=6, color=colors[ok], colorscale="Phase", cmin=-np.pi, cmax=np.pi,
                                             line=dict(width=0.5, color="#333"))), r, c)
        dyn_idx.append(len(fig.data) - 1)
    frames = []
    for f in range(len(times)):
        data = []
        for n in names:
            if density:
                d, cx, cy = dens[n]
                data.append(go.Heatmap(z=d[f], x=cx, y=cy, zmin=0, zmax=zmax))
            p = panels[n][f]
            ok = ~np.isnan(p[:, 0])
            data.append(go.Scatter(x=p[ok, 0], y=p[ok, 1], marker=dict(color=colors[ok])))
        frames.append(go.Frame(data=data, traces=dyn_idx, name=f"{times[f]:.2f}"))
    fig.frames = frames
    x0, y0, x1, y1 = bounds
    for k in range(len(names)):
        ax = "" if k == 0 else str(k + 1)
        fig.layout[f"xaxis{ax}"].update(range=[x0, x1], showticklabels=False)
        fig.layout[f"yaxis{ax}"].update(range=[y0, y1], showticklabels=False, scaleanchor=f"x{ax}", scaleratio=1)
    play = dict(label="Play", method="animate",
                args=[None, {"frame": {"duration": 120, "redraw": True}, "fromcurrent": True,
                             "transition": {"duration": 0}}])
    pause = dict(label="Pause", method="animate",
                 args=[[None], {"frame": {"duration": 0, "redraw": False}, "mode": "immediate"}])
    steps = [dict(method="animate", label=fr.name,
                  args=[[fr.name], {"frame": {"duration": 0, "redraw": True}, "mode": "immediate"}]) for fr in frames]
    fig.update_layout(
        title=title, height=330 * rows + 120, margin=dict(l=10, r=10, t=70, b=10),
        updatemenus=[dict(type="buttons", direction="left", buttons=[play, pause], x=0.0, y=-0.02, xanchor="left",
                          yanchor="top")],
        sliders=[dict(steps=steps, active=0, x=0.12, y=-0.02, len=0.88, currentvalue={"prefix": "t = ", "suffix": " s"},
                      pad={"t": 0})],
    )
    return fig


def error_curves(curves: dict[str, dict[str, np.ndarray]]) -> go.Figure:
    """MAE, OT and MMD over time: ``curves[method] = {"t": seconds, "MAE": ..., "OT": ..., "MMD": ...}``."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=("MAE (m)", "OT (Sinkhorn, m²)", "MMD"), shared_xaxes=True,
                        horizontal_spacing=0.06)
    for m, c in curves.items():
        for k, key in enumerate(("MAE", "OT", "MMD")):
            fig.add_trace(go.Scatter(x=c["t"], y=c[key], mode="lines", name=label(m), legendgroup=m,
                                     showlegend=k == 0, line=dict(color=color(m))), 1, k + 1)
    fig.update_xaxes(title_text="simulated time (s)")
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def cost_quality(rows: list[dict]) -> go.Figure:
    """Quality (MAE) against inference cost (ms of wall time per simulated second, log axis)."""
    fig = go.Figure()
    for r in rows:
        m = r["method"]
        fig.add_trace(go.Scatter(x=[max(r["ms_per_sim_second"], 1e-3)], y=[r["MAE"]], mode="markers+text",
                                 text=[label(m)], textposition="top center", name=label(m),
                                 marker=dict(size=13, color=color(m)), showlegend=False))
    fig.update_layout(title="Quality vs cost", xaxis=dict(type="log", title="wall ms per simulated second"),
                      yaxis=dict(title="MAE (m), lower is better", rangemode="tozero"), height=340,
                      margin=dict(l=10, r=10, t=50, b=10))
    return fig


def density_triplet(rho: dict[str, np.ndarray], cx: np.ndarray, cy: np.ndarray, title: str) -> go.Figure:
    """Several density maps ``[ny, nx]`` side by side with one colour scale (e.g. ODE, DDM of prediction, truth)."""
    names = list(rho)
    zmax = max(float(np.nanmax(v)) for v in rho.values()) or 1.0
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.03)
    for k, n in enumerate(names):
        fig.add_trace(go.Heatmap(z=rho[n], x=cx, y=cy, zmin=0, zmax=zmax, colorscale="Blues", showscale=k == 0),
                      1, k + 1)
        ax = "" if k == 0 else str(k + 1)
        fig.layout[f"yaxis{ax}"].update(scaleanchor=f"x{ax}", scaleratio=1, showticklabels=k == 0)
    fig.update_layout(title=title, height=330, margin=dict(l=10, r=10, t=60, b=10))
    return fig
