"""Plotly builders of the delta-Adapter page: data in, ``go.Figure`` out. Labels and colours come from the
registries of :mod:`backend.forecast.deltaadapter.interface`."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.forecast.deltaadapter.interface import CALIBRATORS, METHODS

_LAYOUT = {"template": "plotly_white", "margin": {"l": 50, "r": 20, "t": 50, "b": 40}, "height": 360}


def forecast(example: dict, methods: list[str], k: int = 0) -> go.Figure:
    """History, truth and the forecasts of ``methods`` for test window ``k`` (standardised units)."""
    hist, truth = example["history"][k], example["truth"][k]
    xh = np.arange(-len(hist), 0)
    xf = np.arange(len(truth))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=xh, y=hist, name="history", line={"color": "#bbbbbb"}))
    fig.add_trace(go.Scatter(x=xf, y=truth, name="truth", line={"color": "black", "width": 3}))
    for m in methods:
        if m in example["pred"]:
            dash = "dot" if METHODS.kind(m) == "reference" else None
            fig.add_trace(go.Scatter(x=xf, y=example["pred"][m][k], name=METHODS.label(m),
                                     line={"color": METHODS.color(m), "dash": dash}))
    fig.update_layout(title=f"Test window starting at step {example['t0'][k]}", xaxis_title="steps from forecast "
                      "origin", yaxis_title="target (standardised)", **_LAYOUT)
    return fig


def mse_vs_delta(sweep: dict) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=sweep["deltas"], y=sweep["mse"], mode="lines+markers", name=METHODS.label("ada_xy"),
                             line={"color": METHODS.color("ada_xy")}))
    fig.add_hline(y=sweep["frozen"], line_dash="dot", line_color=METHODS.color("frozen"),
                  annotation_text="frozen")
    fig.update_layout(title=f"Test MSE vs delta ({'additive' if sweep['kind'] == 'add' else 'multiplicative'})",
                      xaxis_title="delta", xaxis_type="log", yaxis_title="test MSE", **_LAYOUT)
    return fig


def per_horizon(rows: dict, methods: list[str]) -> go.Figure:
    """Mean squared error per horizon step with +- 1 standard error bars."""
    fig = go.Figure()
    for m in methods:
        if m not in rows:
            continue
        r = rows[m]
        h = np.arange(1, len(r["mse_per_horizon"]) + 1)
        fig.add_trace(go.Scatter(x=h, y=r["mse_per_horizon"], name=METHODS.label(m), mode="lines+markers",
                                 error_y={"type": "data", "array": r["se_sem_per_horizon"], "visible": True},
                                 line={"color": METHODS.color(m)}))
    fig.update_layout(title="Test MSE per horizon step (+- 1 s.e.)", xaxis_title="horizon step",
                      yaxis_title="MSE", **_LAYOUT)
    return fig


def costs(rows: dict) -> go.Figure:
    """Trainable parameters and training seconds per method, beside test MSE."""
    names = [m for m in METHODS if m in rows]
    labels = [METHODS.label(m) for m in names]
    colors = [METHODS.color(m) for m in names]
    fig = make_subplots(rows=1, cols=3, subplot_titles=("test MSE", "trainable parameters", "training seconds"))
    for i, key in enumerate(("mse", "params", "train_s")):
        fig.add_trace(go.Bar(x=labels, y=[rows[m][key] for m in names], marker_color=colors, showlegend=False),
                      1, i + 1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(title="Quality and cost per method (same post-shift data)", **{**_LAYOUT, "height": 420})
    return fig


def mask_heatmap(sel: dict) -> go.Figure:
    """Mean hard mask (lag x channel); planted inputs outlined."""
    m = np.asarray(sel["mask"])  # (L, d), row L-1 = lag 0
    lags = np.arange(m.shape[0])[::-1]
    fig = go.Figure(go.Heatmap(z=m, x=sel["channels"], y=lags, colorscale="Viridis", zmin=0, zmax=1,
                               colorbar={"title": "kept"}))
    if sel.get("planted") is not None:
        p = np.asarray(sel["planted"])
        for j in range(p.shape[1]):
            rows = np.where(p[:, j])[0]
            if len(rows):
                fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=lags[rows.max()] - 0.5,
                              y1=lags[rows.min()] + 0.5, line={"color": "red", "width": 2})
    share = sel.get("planted_share")
    extra = f", {100 * share:.0f} % of it on planted inputs (red)" if share is not None else ""
    fig.update_layout(title=f"Feature mask at budget {sel['kappa']}: {100 * sel['kept']:.0f} % kept{extra}",
                      xaxis_title="channel", yaxis_title="lag (0 = newest input)", **{**_LAYOUT, "height": 460})
    return fig


def fan_and_band(ex: dict, alpha: float, k: int = 0) -> go.Figure:
    """QC quantile fan (left) beside the CC band (right) for test window ``k``."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, subplot_titles=(CALIBRATORS.label("qc"),
                                                                          CALIBRATORS.label("cc")))
    h = np.arange(1, len(ex["truth"][k]) + 1)
    q = np.asarray(ex["qc"][k])  # (H, J)
    taus = ex["taus"]
    for j in range(len(taus) // 2):
        jj = len(taus) - 1 - j
        fig.add_trace(go.Scatter(x=np.r_[h, h[::-1]], y=np.r_[q[:, j], q[::-1, jj]], fill="toself",
                                 fillcolor=f"rgba(255,127,14,{0.08 + 0.5 * j / len(taus)})",
                                 line={"width": 0}, name=f"{taus[j]:.3g}-{taus[jj]:.3g}", showlegend=False), 1, 1)
    fig.add_trace(go.Scatter(x=np.r_[h, h[::-1]], y=np.r_[ex["cc_lo"][k], ex["cc_hi"][k][::-1]], fill="toself",
                             fillcolor="rgba(214,39,40,0.25)", line={"width": 0},
                             name=f"CC {100 * (1 - alpha):.0f} %"), 1, 2)
    for col in (1, 2):
        fig.add_trace(go.Scatter(x=h, y=ex["truth"][k], line={"color": "black"}, name="truth",
                                 showlegend=col == 1), 1, col)
        fig.add_trace(go.Scatter(x=h, y=ex["pred"][k], line={"color": "#7f7f7f", "dash": "dot"},
                                 name="frozen forecast", showlegend=col == 1), 1, col)
    fig.update_layout(title="Quantile fan vs conformal band (one test window)", **{**_LAYOUT, "height": 380})
    return fig


def calibration_curve(nominal: list[float], curves: dict) -> go.Figure:
    """Coverage vs nominal: calibrated before the shift and scored there, the same calibration scored after the
    shift, and recalibrated after it."""
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, subplot_titles=(
        "before the shift", "after the shift, stale calibration", "after the shift, recalibrated"))
    for i, key in enumerate(("before_shift", "after_shift_stale", "after_shift")):
        fig.add_trace(go.Scatter(x=nominal, y=nominal, line={"color": "#999", "dash": "dash"}, name="ideal",
                                 showlegend=i == 0), 1, i + 1)
        for m, c in curves.items():
            fig.add_trace(go.Scatter(x=nominal, y=c[key], mode="lines+markers", name=CALIBRATORS.label(m),
                                     line={"color": CALIBRATORS.color(m)}, showlegend=i == 0), 1, i + 1)
    fig.update_xaxes(title_text="nominal coverage")
    fig.update_yaxes(title_text="empirical coverage", row=1, col=1)
    fig.update_layout(title="Calibration: coverage vs nominal", **{**_LAYOUT, "height": 400})
    return fig


def own_forecasts(ex: dict) -> go.Figure:
    """The test steps of a table of the user's forecasts: truth, the forecast as given, Ada-Y and CC's band (reads
    ``OwnResult.example``)."""
    x = list(range(len(ex["truth"])))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x + x[::-1], y=ex["cc_hi"] + ex["cc_lo"][::-1], fill="toself", line=dict(width=0),
                             fillcolor="rgba(31,119,180,0.18)", name="CC interval", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=x, y=ex["truth"], name="actual", line=dict(color="black")))
    fig.add_trace(go.Scatter(x=x, y=ex["forecast"], name="forecast (given)", line=dict(color="#7f7f7f", dash="dot")))
    fig.add_trace(go.Scatter(x=x, y=ex["ada_y"], name="Ada-Y", line=dict(color="#d62728")))
    fig.update_layout(height=320, margin=dict(t=40, b=10, l=10, r=10), xaxis_title="test step",
                      title="Your forecasts on the test steps (the last 200 at most)", legend=dict(orientation="h"))
    return fig
