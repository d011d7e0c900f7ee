"""Plotly figures of the STaMP page (pure functions: data -> go.Figure; no streamlit). Labels and colours come from
the method and transform registries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from backend.compression.stamp.hooks import DENSE, METHODS
from backend.compression.stamp.stamp import TRANSFORMS

LINEAR_NAMES = {"q": "q/k/v input", "o": "o_proj input", "gate": "gate/up input", "down": "down_proj input"}


def energy_concentration(energy: Mapping[str, Mapping[str, Sequence[float]]], linear: str = "q") -> go.Figure:
    """Share of the energy in the first 1/8 of the rows, per decoder layer, for each sequence transform (the raw
    token order for ``identity``); 0.125 = no concentration."""
    fig = go.Figure()
    for name, per in energy.items():
        ys = list(per.get(linear, []))
        fig.add_trace(go.Scatter(x=list(range(len(ys))), y=ys, mode="lines+markers", name=TRANSFORMS.label(name),
                                 line={"color": TRANSFORMS.color(name)}))
    n = max((len(v.get(linear, [])) for v in energy.values()), default=1)
    fig.add_trace(go.Scatter(x=[0, max(n - 1, 1)], y=[0.125, 0.125], mode="lines", name="no concentration (1/8)",
                             line={"dash": "dot", "color": "#7f7f7f"}))
    fig.update_layout(title=f"Energy in the first 1/8 of the transformed tokens ({LINEAR_NAMES.get(linear, linear)})",
                      xaxis={"title": "decoder layer"}, yaxis={"title": "share of energy", "range": [0, 1.02]},
                      height=380, margin={"t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def bound_vs_error(per_layer: Mapping[str, Mapping[str, Sequence[float]]], methods: Sequence[str]) -> go.Figure:
    """Measured ||X_hat - X||^2 (solid) and Theorem 1's bound (dashed) per layer, summed over the layer's linear
    inputs and the windows, log scale, for each method with an orthonormal transform."""
    fig = go.Figure()
    for m in methods:
        d = per_layer.get(m)
        if not d:
            continue
        xs = list(range(len(d["err"])))
        fig.add_trace(go.Scatter(x=xs, y=d["err"], mode="lines+markers", name=f"{METHODS.label(m)}: measured",
                                 line={"color": METHODS.color(m)}))
        if all(b == b for b in d["bound"]):  # no NaN: an orthonormal method
            fig.add_trace(go.Scatter(x=xs, y=d["bound"], mode="lines", name=f"{METHODS.label(m)}: Theorem 1 bound",
                                     line={"color": METHODS.color(m), "dash": "dash"}))
    fig.update_layout(title="Quantization error vs the Theorem 1 bound, per layer", xaxis={"title": "decoder layer"},
                      yaxis={"title": "squared error (sum over inputs)", "type": "log"}, height=400,
                      margin={"t": 50, "b": 40}, legend={"orientation": "h", "y": -0.3})
    return fig


def sqnr_per_layer(per_layer: Mapping[str, Mapping[str, Sequence[float]]]) -> go.Figure:
    """SQNR (dB) per layer for every quantized method."""
    fig = go.Figure()
    for m, d in per_layer.items():
        fig.add_trace(go.Scatter(x=list(range(len(d["sqnr_db"]))), y=d["sqnr_db"], mode="lines", name=METHODS.label(m),
                                 line={"color": METHODS.color(m)}))
    fig.update_layout(title="SQNR of the linear-layer inputs per layer", xaxis={"title": "decoder layer"},
                      yaxis={"title": "SQNR (dB)"}, height=380, margin={"t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.3})
    return fig


def perplexity_bars(rows: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Perplexity per method (log scale) with the average activation bits in the labels; dense as a line."""
    q = [r for r in rows if r["method"] != DENSE]
    dense = next((r["ppl"] for r in rows if r["method"] == DENSE), None)
    fig = go.Figure(go.Bar(x=[f"{r['label']}<br>{r['avg_bits']:.3g} bits" for r in q], y=[r["ppl"] for r in q],
                           marker_color=[METHODS.color(r["method"]) for r in q],
                           text=[f"{r['ppl']:.1f}" for r in q], textposition="outside",
                           hovertemplate="%{x}: ppl %{y:.2f}<extra></extra>"))
    if dense is not None:
        fig.add_hline(y=dense, line_dash="dot", annotation_text=f"dense {dense:.2f}")
    fig.update_layout(title="Perplexity per configuration (lower is better)", yaxis={"title": "perplexity",
                      "type": "log"}, height=430, margin={"t": 50, "b": 40})
    return fig


def bit_allocation(bits: Sequence[float], token_energy: Mapping[str, Sequence[float]] | None = None,
                   sink_tokens: int = 0, transform: str = "haar") -> go.Figure:
    """The bit allocation over the transformed-token axis (bars) and, when given, the mean energy of each row before
    (raw tokens) and after the transform (log scale, right axis)."""
    xs = list(range(len(bits)))
    fig = go.Figure(go.Bar(x=xs, y=list(bits), name="bits", marker_color=["#d62728" if b > min(bits) else "#1f77b4"
                                                                          for b in bits], opacity=0.5))
    if token_energy:
        fig.add_trace(go.Scatter(x=xs, y=list(token_energy["raw"]), name="energy, raw tokens", yaxis="y2",
                                 mode="lines", line={"color": "#7f7f7f"}))
        fig.add_trace(go.Scatter(x=xs, y=list(token_energy["transformed"]), name=f"energy, {TRANSFORMS.label(transform)}",
                                 yaxis="y2", mode="lines", line={"color": "#d62728"}))
    title = "Bit allocation over the token axis"
    if sink_tokens:
        title += f" (row 0..{sink_tokens - 1}: the sink token, outside the transform)"
    fig.update_layout(title=title, xaxis={"title": "row (transformed token)"}, yaxis={"title": "bits"},
                      yaxis2={"title": "energy ||row||^2", "type": "log", "overlaying": "y", "side": "right"},
                      height=380, margin={"t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25}, bargap=0)
    return fig
