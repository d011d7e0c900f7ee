"""Plotly figures of the self-re-watermarking page (pure functions: data -> go.Figure)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

STAGE_TITLES = {"x": "original", "x_w": "watermarked (A)", "cross": "cross-model re-mark", "pgd": "PGD overwrite"}


def _color(name: str) -> str:
    """A model's colour from the re-watermarking registry (names not registered are grey)."""
    from backend.watermark.rewatermark.core import MODELS

    return MODELS.color(name)


def rounds_curve(per_model: dict[str, dict], title: str = "Bit accuracy after each self-re-watermarking round"
                 ) -> go.Figure:
    """``per_model[name] = {"clean": acc, "acc_a": [round 1..K], "acc_b": [...]}``: recovery of A (solid) and the
    attacker's success on B (dashed) against the round (0 = before the attack); chance = 0.5."""
    fig = go.Figure()
    for name, d in per_model.items():
        k = list(range(len(d["acc_a"]) + 1))
        fig.add_trace(go.Scatter(x=k, y=[d["clean"], *d["acc_a"]], name=f"{name}: A (owner)", mode="lines+markers",
                                 line={"color": _color(name)}))
        fig.add_trace(go.Scatter(x=k[1:], y=d["acc_b"], name=f"{name}: B (attacker)", mode="lines+markers",
                                 line={"color": _color(name), "dash": "dash"}))
    fig.add_hline(y=0.5, line={"color": "grey", "dash": "dot"}, annotation_text="chance")
    fig.update_layout(title=title, xaxis_title="re-watermarking round", yaxis_title="bit accuracy",
                      yaxis={"range": [0, 1.02]}, height=360, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def bit_grid(stages: list[str], decoded: list[np.ndarray], reference: np.ndarray, title: str) -> go.Figure:
    """Rows = stages, columns = bits; green where the decoded bit equals the reference (message A)."""
    z = np.array([(np.asarray(d) == reference).astype(float) for d in decoded])
    fig = go.Figure(go.Heatmap(z=z, x=[str(j + 1) for j in range(z.shape[1])], y=stages, zmin=0, zmax=1,
                               colorscale=[[0, "#d62728"], [1, "#2ca02c"]], showscale=False, xgap=1, ygap=1))
    fig.update_layout(title=title, height=80 + 28 * len(stages), margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      xaxis_title="bit", yaxis={"autorange": "reversed"})
    return fig


def image_strip(images: dict[str, np.ndarray], magnify: float = 10.0, title: str = "") -> go.Figure:
    """Top row: the images of the story; bottom row: |image - original| x ``magnify`` (same scale everywhere)."""
    keys = list(images)
    titles = [STAGE_TITLES.get(k, k.replace("rw", "self round ")) for k in keys]
    fig = make_subplots(rows=2, cols=len(keys), subplot_titles=titles + [f"|diff| x{magnify:g}"] * len(keys),
                        vertical_spacing=0.08, horizontal_spacing=0.01)
    x = images["x"].astype(np.float32)
    for j, k in enumerate(keys):
        fig.add_trace(go.Image(z=images[k]), row=1, col=j + 1)
        diff = np.clip(np.abs(images[k].astype(np.float32) - x) * magnify, 0, 255).astype(np.uint8)
        fig.add_trace(go.Image(z=diff), row=2, col=j + 1)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(title=title, height=420, margin={"l": 5, "r": 5, "t": 60, "b": 5})
    return fig


def attack_bars(rows: list[dict], title: str = "Recovery of A and attacker success on B per attack") -> go.Figure:
    """``rows``: dicts with model, attack, acc_a, acc_b -> grouped bars (solid = A, hatched = B)."""
    fig = go.Figure()
    models = list(dict.fromkeys(r["model"] for r in rows))
    for m in models:
        rs = [r for r in rows if r["model"] == m]
        fig.add_trace(go.Bar(x=[r["attack"] for r in rs], y=[r["acc_a"] for r in rs], name=f"{m}: A",
                             marker_color=_color(m)))
        fig.add_trace(go.Bar(x=[r["attack"] for r in rs], y=[r["acc_b"] for r in rs], name=f"{m}: B (attacker)",
                             marker={"color": _color(m), "pattern": {"shape": "/"}, "opacity": 0.5}))
    fig.add_hline(y=0.5, line={"color": "grey", "dash": "dot"})
    fig.update_layout(title=title, barmode="group", yaxis={"range": [0, 1.02], "title": "bit accuracy"},
                      height=360, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def pgd_curve(evals: dict[str, dict], title: str = "PGD overwrite: accuracy on A (solid) and B (dashed) vs eps"
              ) -> go.Figure:
    fig = go.Figure()
    for name, d in evals.items():
        if "pgd" not in d:
            continue
        eps = [0.0, *d["pgd"]["eps"]]
        fig.add_trace(go.Scatter(x=eps, y=[d["clean_acc"], *d["pgd"]["acc_a"]], name=f"{name}: A",
                                 mode="lines+markers", line={"color": _color(name)}))
        fig.add_trace(go.Scatter(x=eps[1:], y=d["pgd"]["acc_b"], name=f"{name}: B", mode="lines+markers",
                                 line={"color": _color(name), "dash": "dash"}))
    fig.add_hline(y=0.5, line={"color": "grey", "dash": "dot"})
    fig.update_layout(title=title, xaxis_title="L-inf eps ([-1, 1] units; x127.5 = 8-bit levels)",
                      yaxis={"range": [0, 1.02], "title": "bit accuracy"}, height=360,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def sensitivity_box(sens: dict[str, dict], part: str = "decoder") -> go.Figure:
    """Box plots of the empirical ratios ||f(x)-f(x')|| / ||x-x'|| (random and adversarial pairs) per model."""
    fig = go.Figure()
    for name, d in sens.items():
        for kind, dash in (("random", None), ("adversarial", "/")):
            vals = d[part][kind]
            fig.add_trace(go.Box(y=vals, name=f"{name} {kind}", marker_color=_color(name), boxpoints="all",
                                 jitter=0.4, pointpos=0, line={"width": 1},
                                 fillcolor=None if dash is None else "rgba(0,0,0,0)"))
    unit = "logit units per [0,1] pixel unit" if part == "decoder" else "output per input (both [0,1])"
    fig.update_layout(title=f"{part.capitalize()} sensitivity ({unit}; log scale)", yaxis_type="log",
                      showlegend=False, height=360, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def margin_histogram(margins: dict[str, dict]) -> go.Figure:
    """Clean logit margins (A's sign times the logit) against the logit change caused by one re-embedding."""
    fig = make_subplots(rows=1, cols=len(margins), subplot_titles=list(margins), shared_yaxes=True)
    for j, d in enumerate(margins.values()):
        fig.add_trace(go.Histogram(x=d["clean_margin"], name="clean margin", marker_color="#1f77b4", opacity=0.6,
                                   nbinsx=40, showlegend=j == 0), row=1, col=j + 1)
        fig.add_trace(go.Histogram(x=d["reembed_change"], name="|logit change| by re-embedding",
                                   marker_color="#d62728", opacity=0.6, nbinsx=40, showlegend=j == 0), row=1, col=j + 1)
    fig.update_layout(barmode="overlay", title="A bit survives when its margin exceeds the change", height=330,
                      margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig


def distortion_bars(evals: dict[str, dict], matched: bool = False) -> go.Figure:
    fig = go.Figure()
    for name, d in evals.items():
        src = d.get("matched", {}).get("distortions") if matched else d.get("distortions")
        if not src:
            continue
        fig.add_trace(go.Bar(x=list(src), y=list(src.values()), name=name, marker_color=_color(name)))
    fig.add_hline(y=0.5, line={"color": "grey", "dash": "dot"})
    fig.update_layout(title="Bit accuracy on A under common distortions" + (" (matched PSNR)" if matched else ""),
                      barmode="group", yaxis={"range": [0, 1.02]}, height=330,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig
