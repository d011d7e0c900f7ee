"""Figures of the DADA page (pure plotly builders: data in, Figure out; no streamlit).

They read the dict of :meth:`backend.optim.dada.baselines.RaceCurves.to_json`: ``iterations`` (thinned iteration indices),
``curves[method]`` with ``values`` (learning rates or initial rbar), ``best_index``, ``gaps`` (rows per value) and
``rbar`` (rows, or None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from backend.optim.dada.baselines import METHODS, RBAR_METHODS, TUNED


def _ours(m: str) -> bool:
    return m in METHODS and METHODS.kind(m) == "ours"


def _hline_log(fig: go.Figure, y: float, text: str, color: str, dash: str = "dash", width: float = 1.5,
               xanchor: str = "left") -> None:
    """A horizontal line on a log-y axis with its label at the line (plotly's hline annotations misplace on log
    axes: annotation y is in log10 units there)."""
    import math

    fig.add_hline(y=y, line=dict(color=color, dash=dash, width=width))
    fig.add_annotation(x=0.01 if xanchor == "left" else 0.99, xref="paper", y=math.log10(max(y, 1e-300)), yref="y",
                       text=text, showarrow=False, yshift=9, xanchor=xanchor, font=dict(color=color, size=11))


def _nearest(values: Sequence[float], v: float) -> int:
    return min(range(len(values)), key=lambda i: abs(float(values[i]) - v) / max(abs(v), 1e-300))


def race(data: Mapping[str, object], lr: float | None = None, tol: float = 1e-2) -> go.Figure:
    """Best relative gap vs iteration (log y). DADA and DoG: one curve each (no tuning). GD and AdaGrad-norm: solid at
    the learning rate ``lr`` (the slider), dotted at the best rate of the grid (chosen after the fact, with 15x the
    gradient evaluations)."""
    its = data["iterations"]
    curves: Mapping[str, Mapping] = data["curves"]  # type: ignore[assignment]
    fig = go.Figure()
    for m, c in curves.items():
        color = METHODS.color(m)
        if m in TUNED:
            vals = c["values"]
            i = c["best_index"] if lr is None else _nearest(vals, lr)
            fig.add_trace(go.Scatter(x=its, y=c["gaps"][i], name=f"{METHODS.label(m)} lr={vals[i]:.2g}",
                                     line=dict(color=color, width=2)))
            b = c["best_index"]
            fig.add_trace(go.Scatter(x=its, y=c["gaps"][b], name=f"{METHODS.label(m)} best of grid "
                                     f"(lr={vals[b]:.2g})", line=dict(color=color, width=1.5, dash="dot")))
        else:
            i = c["best_index"] if len(c["values"]) > 1 else 0
            fig.add_trace(go.Scatter(x=its, y=c["gaps"][i], name=f"{METHODS.label(m)} (no tuning)",
                                     line=dict(color=color, width=3.5 if _ours(m) else 2.5)))
    _hline_log(fig, tol, f"{tol:g} (f(x0) - f*)", "#555", xanchor="right")
    fig.update_layout(title="Optimizer race: best f - f*, relative to f(x0) - f*", height=460,
                      xaxis=dict(title="iteration"), yaxis=dict(title="best gap (relative)", type="log",
                                                                exponentformat="power"),
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.2))
    return fig


def distance(data: Mapping[str, object], true_distance: float | None = None) -> go.Figure:
    """The distance estimate rbar_k of DADA (and DoG) vs iteration, log y: the warm-up from a tiny guess."""
    its = data["iterations"]
    curves: Mapping[str, Mapping] = data["curves"]  # type: ignore[assignment]
    fig = go.Figure()
    for m in RBAR_METHODS:
        c = curves.get(m)
        if not c or not c.get("rbar"):
            continue
        for i, row in enumerate(c["rbar"]):
            label = METHODS.label(m) + (f" rbar0={c['values'][i]:.0e}" if len(c["rbar"]) > 1 else "")
            fig.add_trace(go.Scatter(x=its, y=row, name=label, line=dict(color=METHODS.color(m), width=2.5 if _ours(m)
                                                                         else 1.5, dash="solid" if i == 0 else "dot")))
    if true_distance:
        _hline_log(fig, true_distance, "||x* - x0||", "#555", xanchor="right")
    fig.update_layout(title="Distance estimate rbar_k (warm-up)", height=380,
                      xaxis=dict(title="iteration"), yaxis=dict(title="rbar_k", type="log", exponentformat="power"),
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def lr_sensitivity(data: Mapping[str, object], lr: float | None = None) -> go.Figure:
    """Final gap vs learning rate for the tuned baselines; DADA and DoG as horizontal lines (they take none)."""
    curves: Mapping[str, Mapping] = data["curves"]  # type: ignore[assignment]
    fig = go.Figure()
    for m in TUNED:
        c = curves.get(m)
        if c:
            fig.add_trace(go.Scatter(x=c["values"], y=[row[-1] for row in c["gaps"]], name=METHODS.label(m),
                                     mode="lines+markers", line=dict(color=METHODS.color(m), width=2)))
    for m in RBAR_METHODS:
        c = curves.get(m)
        if c:
            _hline_log(fig, c["gaps"][0][-1], f"{METHODS.label(m)} (no learning rate)", METHODS.color(m), dash="solid", width=2)
    if lr is not None:
        fig.add_vline(x=lr, line=dict(color="#555", dash="dot"))
    fig.update_layout(title="Final gap vs learning rate", height=380, margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title="learning rate", type="log", exponentformat="power"),
                      yaxis=dict(title="final best gap (relative)", type="log", exponentformat="power"),
                      legend=dict(orientation="h", y=-0.25))
    return fig


def rbar_sensitivity(grid: Sequence[float], finals: Mapping[str, Sequence[float]]) -> go.Figure:
    """Final gap vs the initial distance guess rbar (log-log), per method."""
    fig = go.Figure()
    for m, ys in finals.items():
        fig.add_trace(go.Scatter(x=list(grid), y=list(ys), name=METHODS.label(m), mode="lines+markers",
                                 line=dict(color=METHODS.color(m), width=2.5 if _ours(m) else 1.5)))
    fig.update_layout(title="Sensitivity to the initial distance guess", height=360,
                      margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(title="initial rbar", type="log", exponentformat="power"),
                      yaxis=dict(title="final best gap (relative)", type="log", exponentformat="power"),
                      legend=dict(orientation="h", y=-0.25))
    return fig
