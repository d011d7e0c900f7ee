"""Figures of the iLLaVA page (pure plotly builders: data in, Figure out; no streamlit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.tokens.illava.diagnosis import COUNTING_CONTROLS
from backend.tokens.illava.merging import METHODS
from ui.figures.images import png_image

_PALETTE = np.array([[230, 25, 75], [60, 180, 75], [255, 225, 25], [0, 130, 200], [245, 130, 48], [145, 30, 180],
                     [70, 240, 240], [240, 50, 230], [210, 245, 60], [250, 190, 212], [0, 128, 128],
                     [220, 190, 255], [170, 110, 40], [255, 250, 200], [128, 0, 0], [170, 255, 195]], dtype=float)


def _step_title(rec: Any) -> str:
    where = f"encoder block {rec.layer}" if rec.stage == "vit" else f"LLM before layer {rec.layer}"
    return f"{where}: {rec.n_before} → {rec.n_after}"


def merge_overlay(image: np.ndarray, group: np.ndarray, grid: int) -> np.ndarray:
    """The image with each patch coloured by its merge group: patches alone in their token are left as they are,
    patches that share a token get that group's colour (50 % blend), dropped patches are darkened."""
    img = image.astype(float).copy()
    ph, pw = img.shape[0] // grid, img.shape[1] // grid
    counts = np.bincount(group[group >= 0], minlength=int(group.max()) + 1 if (group >= 0).any() else 1)
    for idx, g in enumerate(group):
        r, c = divmod(idx, grid)
        tile = img[r * ph : (r + 1) * ph, c * pw : (c + 1) * pw]
        if g < 0:
            tile *= 0.2
        elif counts[g] > 1:
            tile[:] = 0.5 * tile + 0.5 * _PALETTE[g % len(_PALETTE)]
    return np.clip(img, 0, 255).astype(np.uint8)


def steps_figure(image: np.ndarray, records: Sequence[Any], grid: int, cols: int = 4) -> go.Figure:
    """One panel per reduction step: surviving patches over the image, merge groups coloured, dropped patches dark."""
    if not records:
        fig = go.Figure(png_image(image))
        fig.update_layout(title="No reduction step (unreduced plan)", height=320, margin=dict(l=10, r=10, t=40, b=10))
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return fig
    n = len(records)
    cols = min(cols, n)
    rows = -(-n // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[_step_title(r) for r in records],
                        horizontal_spacing=0.02, vertical_spacing=0.08)
    for i, rec in enumerate(records):
        fig.add_trace(png_image(merge_overlay(image, rec.group, grid)), row=i // cols + 1, col=i % cols + 1)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=250 * rows + 40, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_annotations(font_size=11)
    return fig


def attention_figure(records: Sequence[Any], grid: int, cols: int = 4) -> go.Figure:
    """The ranking signal of each step on the patch grid (attention received in the encoder, last-token attention in
    the LLM; ToMe: best-match similarity), each step min-max normalised to [0, 1] on one shared colour scale."""
    recs = [r for r in records if np.isfinite(r.scores).any()]
    if not recs:
        fig = go.Figure()
        fig.update_layout(title="This method uses no attention or similarity ranking", height=200)
        return fig
    cols = min(cols, len(recs))
    rows = -(-len(recs) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[_step_title(r) for r in recs],
                        horizontal_spacing=0.03, vertical_spacing=0.1)
    for i, rec in enumerate(recs):
        s = rec.scores.astype(float)
        lo, hi = np.nanmin(s), np.nanmax(s)
        z = ((s - lo) / (hi - lo if hi > lo else 1.0)).reshape(grid, grid)
        fig.add_trace(go.Heatmap(z=z, zmin=0, zmax=1, colorscale="Viridis", showscale=i == 0,
                                 colorbar=dict(title="rank signal<br>(normalised)", len=0.8)),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_yaxes(autorange="reversed", visible=False, scaleanchor="x")
    fig.update_xaxes(visible=False)
    fig.update_layout(height=240 * rows + 40, margin=dict(l=10, r=10, t=40, b=10))
    fig.update_annotations(font_size=11)
    return fig


def tokens_figure(vit_tokens: Sequence[int], llm_tokens: Sequence[int], llm_full: Sequence[int],
                  prefix: int = 1) -> go.Figure:
    """Image tokens entering every encoder block and LLM layer, reduced vs unreduced."""
    xs = [f"E{i}" for i in range(len(vit_tokens) - 1)] + [f"L{i}" for i in range(len(llm_tokens))]
    red = [n - prefix for n in vit_tokens[:-1]] + list(llm_tokens)
    full = [vit_tokens[0] - prefix] * (len(vit_tokens) - 1) + list(llm_full)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=xs, y=full, name="unreduced", mode="lines", line=dict(color=METHODS.color("none"), dash="dot")))
    fig.add_trace(go.Scatter(x=xs, y=red, name="reduced", mode="lines+markers", line=dict(color=METHODS.color("illava_code")),
                             line_shape="hv"))
    fig.add_vrect(x0=-0.5, x1=len(vit_tokens) - 1.5, fillcolor="#cccccc", opacity=0.2, line_width=0,
                  annotation_text="vision encoder", annotation_position="top left")
    fig.update_layout(title="Image tokens per layer", xaxis_title="encoder block (E) / LLM layer (L)",
                      yaxis_title="image tokens", yaxis_rangemode="tozero", height=330,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def costs_figure(full: dict[str, Any], reduced: dict[str, Any]) -> go.Figure:
    """Multiply-adds per layer (GMACs) with and without reduction; encoder blocks then LLM layers."""
    xs = [f"E{i}" for i in range(len(full["vit"]))] + [f"L{i}" for i in range(len(full["llm"]))]
    fig = go.Figure()
    for name, c, color in (("unreduced", full, "#bbbbbb"), ("reduced", reduced, METHODS.color("illava_code"))):
        fig.add_trace(go.Bar(x=xs, y=[v / 1e9 for v in list(c["vit"]) + list(c["llm"])], name=name,
                             marker_color=color))
    fig.update_layout(barmode="group", title=f"Multiply-adds per layer: {full['total'] / 1e9:.1f} G → "
                      f"{reduced['total'] / 1e9:.1f} G per request", yaxis_title="GMACs", height=330,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def answer_figure(full: dict[str, Any], reduced: dict[str, Any]) -> go.Figure:
    """Candidate probabilities with and without reduction (softmax over the closed answer set)."""
    fig = go.Figure()
    for name, a, color in (("unreduced", full, "#888888"), ("reduced", reduced, METHODS.color("illava_code"))):
        fig.add_trace(go.Bar(x=a["candidates"], y=a["probs"], name=name, marker_color=color))
    fig.update_layout(barmode="group", yaxis=dict(range=[0, 1], title="probability"), height=300,
                      title="Answer probabilities over the closed answer set", margin=dict(l=10, r=10, t=50, b=10))
    return fig


def sweep_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Accuracy vs image tokens per LLM layer (left) and vs prefill speed-up over the unreduced model (right; each
    configuration timed interleaved with the unreduced reference, so load changes cancel), one colour per method;
    the unreduced model (our loop) is the black star; dotted line = chance."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=("accuracy vs image tokens entering the LLM (mean over layers)",
                                        "accuracy vs prefill speed-up of one request"))
    for m in dict.fromkeys(r["method"] for r in rows):
        rs = sorted((r for r in rows if r["method"] == m), key=lambda r: r["image_tokens_mean_llm"])
        star = m in METHODS.names(kind="reference")  # the unreduced model
        kw = dict(name=METHODS.label(m), legendgroup=m, marker=dict(color=METHODS.color(m),
                  size=14 if star else 9, symbol="star" if star else "circle"),
                  mode="markers" if star else "lines+markers",
                  text=[f"keep {r['keep']:.2f}, {r['macs'] / 1e9:.1f} GMACs" for r in rs])
        fig.add_trace(go.Scatter(x=[r["image_tokens_mean_llm"] for r in rs], y=[r["accuracy"] for r in rs], **kw),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=[r["speedup"] for r in rs], y=[r["accuracy"] for r in rs], showlegend=False,
                                 **kw), row=1, col=2)
    if rows:
        fig.add_hline(y=rows[0]["chance"], line=dict(color="#999", dash="dot"), annotation_text="chance")
    fig.update_xaxes(title_text="image tokens per LLM layer", row=1, col=1)
    fig.update_xaxes(title_text="× faster than the unreduced model", row=1, col=2)
    fig.update_yaxes(title_text="accuracy", row=1, col=1)
    fig.update_layout(height=400, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.2))
    return fig


def diagnosis_figure(diag: dict[str, Any]) -> go.Figure:
    """Left: share of object (all, interior, edge) / background patches whose own token survives each encoder merge
    (iLLaVA vs random).
    Right: counting answers of each control (correct, over-counted, under-counted)."""
    fig = make_subplots(1, 2, subplot_titles=("Patches whose token survives, per encoder merge",
                                              "Counting questions"), column_widths=[0.45, 0.55])
    for name, dash in (("illava_code", "solid"), ("random", "dot")):
        kept = diag["kept_per_merge_layer"][name]
        layers = [str(k) for k in kept]
        for what, color in (("object_kept", METHODS.color("illava_code")), ("object_interior_kept", "#9467bd"),
                            ("object_edge_kept", "#ff7f0e"), ("background_kept", "#7f7f7f")):
            if not any(what in d for d in kept.values()):  # a part that no scene has is left out
                continue
            fig.add_trace(go.Scatter(x=layers, y=[kept[k].get(what) for k in kept], mode="lines+markers",
                                     line={"dash": dash, "color": color},
                                     name=f"{METHODS.label(name)}: {what[:-5].replace('_', ' ')} patches"), 1, 1)
    names = list(diag["counting"])
    rows = [diag["counting"][n] for n in names]
    labels = [COUNTING_CONTROLS.label(n) for n in names]
    for key, color, title in (("correct", "#2ca02c", "correct"), ("overcounts", "#d62728", "too many"),
                              ("undercounts", "#1f77b4", "too few")):
        vals = [round(r["accuracy"] * r["questions"]) if key == "correct" else r[key] for r in rows]
        fig.add_trace(go.Bar(x=labels, y=vals, name=title, marker_color=color), 1, 2)
    fig.update_layout(barmode="stack", height=420, legend={"orientation": "h", "y": -0.35})
    fig.update_xaxes(title_text="encoder block", row=1, col=1)
    fig.update_yaxes(title_text="share kept", range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(title_text="questions", row=1, col=2)
    return fig
