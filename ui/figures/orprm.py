"""Figures of the OR-PRM page (pure plotly builders: data in, Figure out; no streamlit).

They read the results of :mod:`backend.reasoning.orprm.jobs` as dicts: ``CleanResult`` (``flows``, ``table``,
``labels``, ``gate_labels``), ``BonResult`` (``ns``, ``curves``) and one candidate of its ``examples``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from backend.reasoning.orprm.gates import GATES
from backend.reasoning.orprm.modeller import FLAWS
from backend.reasoning.orprm.select import SELECTORS

CLEAN_COLOR = "#9edae5"


def _kind_color(kind: str, alpha: float = 0.55) -> str:
    hexc = CLEAN_COLOR if kind == "clean" else FLAWS.color(kind)
    r, g, b = (int(hexc[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def sankey(res: Mapping[str, Any]) -> go.Figure:
    """Samples through the gates in order: each link is one flaw kind (clean in light blue), so the widths show
    which gate stops which flaw and what reaches the kept set."""
    names = ["all"] + [f"{p}_{g}" for g in GATES for p in ("passed", "rejected")]
    gl = res["gate_labels"]
    last = list(GATES)[-1]
    text = {"all": f"All samples ({res['samples']})", f"passed_{last}": f"Kept ({res['kept']})"}
    for g in GATES:
        text.setdefault(f"passed_{g}", f"Passes {gl[g].split(':')[0].lower()}")
        text[f"rejected_{g}"] = f"Rejected by {gl[g].split(':')[0].lower()}"
    idx = {n: i for i, n in enumerate(names)}
    links = [f for f in res["flows"] if f["count"] > 0]
    fig = go.Figure(go.Sankey(
        arrangement="snap",
        node={"label": [text[n] for n in names], "pad": 18, "thickness": 16,
              "color": ["#7f7f7f"] + [("#2ca02c" if n.startswith("passed") else "#d62728") for n in names[1:]]},
        link={"source": [idx[f["source"]] for f in links], "target": [idx[f["target"]] for f in links],
              "value": [f["count"] for f in links], "color": [_kind_color(f["kind"]) for f in links],
              "label": [res["labels"].get(f["kind"], f["kind"]) for f in links]}))
    fig.update_layout(height=420, margin={"t": 20, "b": 10, "l": 10, "r": 10})
    return fig


def gate_matrix(res: Mapping[str, Any]) -> go.Figure:
    """Share of each kind's samples that each gate rejects on its own, what gates 1-2 miss among the corrupted
    labels, and what no gate catches (one colour scale 0..1 for every cell)."""
    rows = res["table"]
    cols = [GATES.label(g).split(":")[0] for g in GATES] + ["corrupted, missed by gates 1-2", "kept by all gates"]
    z, txt = [], []
    for r in rows:
        n = max(1, r["samples"])
        vals = [r[f"rejected_{g}"] / n for g in GATES]
        vals += [r["corrupted_missed_12"] / max(1, r["corrupted"]) if r["corrupted"] else 0.0, r["kept"] / n]
        z.append(vals)
        counts = [r[f"rejected_{g}"] for g in GATES] + [r["corrupted_missed_12"], r["kept"]]
        txt.append([f"{c}/{r['corrupted'] if i == len(GATES) else r['samples']}" for i, c in enumerate(counts)])
    fig = go.Figure(go.Heatmap(z=z, x=cols, y=[r["label"] for r in rows], zmin=0, zmax=1, colorscale="Reds",
                               text=txt, texttemplate="%{text}", colorbar={"title": "share"}))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=90 + 36 * len(rows), margin={"t": 20, "b": 10})
    return fig


def bon_curves(res: Mapping[str, Any], title: str = "") -> go.Figure:
    """Best-of-N accuracy against n for every selector, on one axis from 0 to 1."""
    fig = go.Figure()
    ns = res["ns"]
    for name, ys in res["curves"].items():
        kind = SELECTORS.kind(name)
        fig.add_trace(go.Scatter(
            x=ns, y=ys, name=SELECTORS.label(name), mode="lines+markers",
            line={"color": SELECTORS.color(name), "width": 3 if kind == "ours" else 1.8,
                  "dash": "dot" if kind == "reference" else ("dash" if kind == "ablation" else None)},
            marker={"size": 5}))
    fig.update_xaxes(title_text="n (candidate formulations the selector sees)", tickvals=ns)
    fig.update_yaxes(range=[0, 1.02], title_text="accuracy of the selected optimum")
    fig.update_layout(height=380, title=title, margin={"t": 40, "b": 10}, legend={"orientation": "h", "y": -0.25})
    return fig


def step_scores(cand: Mapping[str, Any]) -> go.Figure:
    """The PRM's score of each modelling step of one candidate (0..1), green before its first flaw and red from it
    on (the step labels), the step's text on hover."""
    st = cand["steps"]
    names = [s["name"] if s["kind"] == "constraint" else s["kind"] for s in st]
    fig = go.Figure(go.Bar(x=list(range(len(st))), y=[s["score"] for s in st],
                           marker_color=["#2ca02c" if s["label"] else "#d62728" for s in st],
                           hovertext=[s["text"][:300] for s in st], hoverinfo="text+y"))
    fig.update_xaxes(tickvals=list(range(len(st))), ticktext=names, title_text="modelling step")
    fig.update_yaxes(range=[0, 1.02], title_text="PRM score: P(no flaw so far)")
    fig.update_layout(height=300, margin={"t": 20, "b": 10})
    return fig
