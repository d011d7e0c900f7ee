"""Plotly figures of the dual randomized smoothing page (pure functions: data -> go.Figure; no streamlit)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

SIGMA_COLORS = ["#c6dbef", "#9ecae1", "#fdd0a2", "#fdae6b", "#c7e9c0", "#a1d99b", "#dadaeb", "#bcbddc"]
CLASS_COLORS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


def _circle(cx: float, cy: float, r: float, n: int = 120) -> tuple[np.ndarray, np.ndarray]:
    t = np.linspace(0, 2 * np.pi, n)
    return cx + r * np.cos(t), cy + r * np.sin(t)


def plane(r: dict, selected: int | None = None) -> go.Figure:
    """The plane coloured by the sigma the smoothed estimator picks, training points, test points (selectable; their
    ``customdata`` is the test index), and the selected point's R_sigma (dashed) and R_c (solid) discs."""
    sigmas = r["sigmas"]
    k = len(sigmas)
    scale = [[(i + j) / k, SIGMA_COLORS[i % 8]] for i in range(k) for j in (0, 1)]
    fig = go.Figure(
        go.Heatmap(
            x=r["map_x"],
            y=r["map_y"],
            z=r["map_sigma_idx"],
            zmin=-0.5,
            zmax=k - 0.5,
            colorscale=scale,
            opacity=0.9,
            colorbar={"title": "chosen sigma", "tickvals": list(range(k)), "ticktext": [f"{s:g}" for s in sigmas]},
            customdata=r["map_vote"],
            hovertemplate="sigma index %{z}, vote %{customdata:.2f}<extra></extra>",
        )
    )
    xtr, ytr = np.asarray(r["x_train"]), np.asarray(r["y_train"])
    names = r["class_names"]
    for c in range(len(names)):
        m = ytr == c
        fig.add_trace(
            go.Scattergl(
                x=xtr[m, 0],
                y=xtr[m, 1],
                mode="markers",
                name=f"train: {names[c]}",
                marker={"size": 3, "color": CLASS_COLORS[c % 10], "opacity": 0.35},
                hoverinfo="skip",
            )
        )
    xte, yte = np.asarray(r["x_test"]), np.asarray(r["y_test"])
    pred = np.asarray(r["dual"]["pred"])
    symbols = np.where(pred == yte, "circle", np.where(pred < 0, "x", "diamond"))
    fig.add_trace(
        go.Scatter(
            x=xte[:, 0],
            y=xte[:, 1],
            mode="markers",
            name="test points (click one)",
            customdata=np.arange(len(yte)),
            marker={
                "size": 7,
                "color": [CLASS_COLORS[c % 10] for c in yte],
                "symbol": symbols,
                "line": {"width": 1, "color": "black"},
            },
            hovertemplate="test #%{customdata}: dual radius %{text}<extra></extra>",
            text=[f"{v:.3f}" for v in r["dual"]["radius"]],
        )
    )
    if selected is not None and 0 <= selected < len(yte):
        cx, cy = xte[selected]
        for rad, name, dash in (
            (r["dual"]["r_sigma"][selected], "R_sigma (estimator)", "dash"),
            (r["dual"]["r_c"][selected], "R_c (classifier)", "solid"),
        ):
            if rad > 0:
                xs, ys = _circle(cx, cy, rad)
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=ys,
                        mode="lines",
                        name=f"{name} = {rad:.3f}",
                        line={"color": "black", "dash": dash, "width": 2},
                    )
                )
        fig.add_trace(
            go.Scatter(
                x=[cx],
                y=[cy],
                mode="markers",
                name=f"selected #{selected}",
                marker={"size": 14, "symbol": "star", "color": "gold", "line": {"color": "black", "width": 1}},
            )
        )
    fig.update_layout(
        title="Noise level chosen by the smoothed variance estimator",
        height=520,
        xaxis_title="x",
        yaxis={"title": "y", "scaleanchor": "x", "scaleratio": 1},
        margin={"t": 50, "b": 40},
        legend={"orientation": "h", "y": -0.15},
    )
    return fig


def curves(radii: Sequence[float], curves_: dict[str, Sequence[float]]) -> go.Figure:
    """Certified accuracy vs radius: one line per global sigma, dual RS in bold."""
    from backend.robustness.dualrs.dualrs import METHODS  # torch: loaded by the job that made the curves

    fig = go.Figure()
    for i, (name, c) in enumerate(curves_.items()):
        dual = name in METHODS and METHODS.kind(name) == "ours"  # the global baselines are keyed sigma=<s>
        fig.add_trace(
            go.Scatter(
                x=list(radii),
                y=list(c),
                mode="lines",
                name=METHODS.label("dual") if dual else f"{METHODS.label('global')} {name}",
                line={
                    "width": 4 if dual else 2,
                    "color": METHODS.color("dual") if dual else CLASS_COLORS[i % 10],
                    "dash": "solid" if dual else "dot",
                },
            )
        )
    fig.update_layout(
        title="Certified accuracy vs radius",
        xaxis_title="L2 radius r",
        yaxis={"title": "certified accuracy", "range": [0, 1.02]},
        height=420,
        margin={"t": 50, "b": 40},
    )
    return fig


def attack_margins(
    radius: Sequence[float],
    class_vote: Sequence[float],
    sigma_vote: Sequence[float],
    flipped: Sequence[bool],
    factor: float,
) -> go.Figure:
    """For every attacked point: the lowest Monte Carlo votes the attack reached inside its ball. The certificate
    says both stay above 1/2."""
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=radius,
            y=class_vote,
            mode="markers",
            name="classifier vote for its class",
            marker={"size": 6, "color": "#1f77b4"},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=radius,
            y=sigma_vote,
            mode="markers",
            name="estimator vote for its sigma",
            marker={"size": 6, "color": "#ff7f0e", "symbol": "triangle-up"},
        )
    )
    f = np.asarray(flipped, bool)
    if f.any():
        fig.add_trace(
            go.Scatter(
                x=np.asarray(radius)[f],
                y=np.asarray(class_vote)[f],
                mode="markers",
                name="flipped",
                marker={"size": 12, "color": "red", "symbol": "x"},
            )
        )
    fig.add_hline(y=0.5, line={"color": "red", "dash": "dash"}, annotation_text="1/2")
    fig.update_layout(
        title=f"Worst votes found by PGD + random search within {factor:g} x the certified radius",
        xaxis_title="attack radius",
        yaxis={"title": "lowest vote share found", "range": [0, 1.02]},
        height=400,
        margin={"t": 50, "b": 40},
    )
    return fig
