"""Figures of the Vintix II / DPT page (pure plotly builders: data in, Figure out; no streamlit).

They read the dictionaries of :func:`backend.icrl.vintix.run.run`: for continuous tasks ``grid`` (histogram edges),
``heads[name]["density"]``, ``reward_curve``, ``centers``, ``entropy_curve`` (``lengths``, ``entropy``,
``densities``); for K-armed tasks ``entropy_curve`` (``entropy``, ``p_best`` per context length), ``policy``,
``means`` and ``regret["agents"][name]["cum_regret"]`` (continuous tasks too, with the agents of
``online.CONT_AGENTS``); for the dark room ``agents[name]["returns"]`` per episode. Online figures mark the model's
training context (``training_context``, 64 tuples): past it the DPT acts on its last 64 steps only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.icrl.vintix.evaluate import AGENTS
from backend.icrl.vintix.heads import HEADS
from backend.icrl.vintix.online import CONT_AGENTS, DARK_AGENTS
from backend.icrl.vintix.tasks import DARK_HORIZON

RADIUS = 0.1


def _centres(grid) -> np.ndarray:
    g = np.asarray(grid)
    return 0.5 * (g[1:] + g[:-1])


def head_densities(res: Mapping) -> go.Figure:
    """One panel per head (same x and y axes): the density of its sampled actions, the task's mean-reward curve
    (dotted, scaled to the panel) and the +-0.1 bands around the peaks."""
    heads = list(res["heads"])
    fig = make_subplots(
        rows=1,
        cols=len(heads),
        shared_yaxes=True,
        shared_xaxes=True,
        subplot_titles=[f"{HEADS.label(h)}: {res['heads'][h]['mass']:.0%} near a peak" for h in heads],
    )
    x = _centres(res["grid"])
    ymax = max(max(v["density"]) for v in res["heads"].values()) or 1.0
    rc = res["reward_curve"]
    r = np.asarray(rc["r"])
    scale = ymax / max(1e-9, r.max() - min(0.0, r.min()))
    for i, h in enumerate(heads, start=1):
        fig.add_trace(
            go.Bar(
                x=x,
                y=res["heads"][h]["density"],
                name=HEADS.label(h),
                marker_color=HEADS.color(h),
                width=float(np.diff(res["grid"])[0]),
                showlegend=False,
            ),
            row=1,
            col=i,
        )
        fig.add_trace(
            go.Scatter(
                x=rc["a"],
                y=(r - min(0.0, r.min())) * scale,
                mode="lines",
                name="mean reward",
                line=dict(color="#555", dash="dot"),
                showlegend=i == 1,
            ),
            row=1,
            col=i,
        )
        for c in res["centers"]:
            fig.add_vrect(x0=c - RADIUS, x1=c + RADIUS, fillcolor="#2ca02c", opacity=0.12, line_width=0, row=1, col=i)
    fig.update_xaxes(title="action a", range=[-1, 1])
    fig.update_yaxes(title="density of sampled actions", row=1, col=1)
    fig.update_layout(
        height=360,
        bargap=0,
        title=f"Action densities given {res['context']} context tuples (green: within +-0.1 of a peak)",
        margin=dict(t=80),
    )
    return fig


def density_by_context(res: Mapping) -> go.Figure:
    """The flow head's action density at growing context lengths (rows), as a heatmap."""
    ec = res["entropy_curve"]
    lengths = ec["lengths"]
    z = [ec["densities"][str(lv)] for lv in lengths]
    fig = go.Figure(
        go.Heatmap(
            x=_centres(res["grid"]),
            y=[str(lv) for lv in lengths],
            z=z,
            colorscale="Viridis",
            colorbar=dict(title="density"),
        )
    )
    for c in res["centers"]:
        fig.add_vline(x=c, line=dict(color="white", dash="dot"))
    fig.update_layout(
        title="Flow head: the action density narrows as the context grows",
        height=360,
        xaxis=dict(title="action a", range=[-1, 1]),
        yaxis=dict(title="context length", type="category"),
    )
    return fig


def entropy_curve(res: Mapping) -> go.Figure:
    """Entropy of the policy vs context length: discrete entropy (nats) for K-armed tasks with the probability of
    the best arm, the histogram entropy of the flow head's samples for continuous ones."""
    ec = res["entropy_curve"]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    x = ec.get("lengths", list(range(len(ec["entropy"]))))
    color = HEADS.color("flow")
    fig.add_trace(go.Scatter(x=x, y=ec["entropy"], name="entropy", mode="lines+markers", line=dict(color=color)))
    if "p_best" in ec:
        fig.add_trace(
            go.Scatter(x=x, y=ec["p_best"], name="P(best arm)", line=dict(color="#1f77b4", dash="dash")),
            secondary_y=True,
        )
        fig.add_hline(y=ec["uniform_entropy"], line=dict(color="#999", dash="dot"), annotation_text="uniform")
        fig.update_yaxes(title="P(best arm)", range=[0, 1], secondary_y=True)
        ytitle = "policy entropy (nats)"
    else:
        fig.add_trace(
            go.Scatter(x=x, y=ec["mass"], name="mass within 0.1 of a peak", line=dict(color="#2ca02c", dash="dash")),
            secondary_y=True,
        )
        fig.update_yaxes(title="mass near a peak", range=[0, 1], secondary_y=True)
        ytitle = "sample entropy (nats, histogram)"
    fig.update_yaxes(title=ytitle, secondary_y=False)
    fig.update_layout(
        title="Entropy of the action distribution vs context length",
        height=340,
        xaxis=dict(title="context length (tuples)"),
    )
    return fig


def _agents(res: Mapping):
    return CONT_AGENTS if res.get("family") == "cont" else AGENTS


def _context_line(fig: go.Figure, res: Mapping, length: int) -> None:
    cap = res.get("training_context", 64)
    if length > cap:
        fig.add_vline(x=cap, line=dict(color="#d62728", dash="dot"), annotation_text="training context (FIFO past it)")


def regret(res: Mapping) -> go.Figure:
    """Mean cumulative regret per round of every online agent (same tasks, same reward noise), i.e. the regret at
    every horizon up to the run's; a dotted line at the model's training context."""
    reg = _agents(res)
    fig = go.Figure()
    n = 0
    for name, v in res["regret"]["agents"].items():
        y = v["cum_regret"]
        n = len(y)
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(y) + 1)),
                y=y,
                name=reg.label(name),
                line=dict(color=reg.color(name), width=3 if reg.kind(name) == "ours" else 2),
            )
        )
    _context_line(fig, res, n)
    fig.update_layout(
        title=f"Online cumulative regret vs horizon (mean of {res['regret']['n_tasks']} runs)",
        height=360,
        xaxis=dict(title="round (horizon)"),
        yaxis=dict(title="cumulative regret", rangemode="tozero"),
    )
    return fig


def regret_ratio(res: Mapping) -> go.Figure:
    """The DPT's cumulative regret divided by each baseline's at every horizon (1 = equal; the claims' bound 1.5
    dashed)."""
    reg = _agents(res)
    agents = res["regret"]["agents"]
    ours = next(a for a in agents if reg.kind(a) == "ours")
    mine = np.asarray(agents[ours]["cum_regret"])
    fig = go.Figure()
    for name, v in agents.items():
        if reg.kind(name) != "baseline":
            continue
        other = np.asarray(v["cum_regret"])
        ratio = np.where(other > 1e-9, mine / np.maximum(other, 1e-9), np.nan)
        fig.add_trace(go.Scatter(x=list(range(1, len(mine) + 1)), y=ratio.tolist(), name=f"vs {reg.label(name)}",
                                 line=dict(color=reg.color(name))))
    fig.add_hline(y=1.0, line=dict(color="#999", dash="dot"))
    fig.add_hline(y=1.5, line=dict(color="#333", dash="dash"), annotation_text="1.5x")
    _context_line(fig, res, len(mine))
    fig.update_layout(
        title=f"{reg.label(ours)}: regret ratio to each baseline vs horizon",
        height=320,
        xaxis=dict(title="round (horizon)"),
        yaxis=dict(title="regret ratio", type="log"),
    )
    return fig


def policy(res: Mapping) -> go.Figure:
    """The DPT's action probabilities given the context, beside the arm means."""
    k = len(res["means"])
    arms = [f"arm {i}" for i in range(k)]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Bar(x=arms, y=res["policy"], name="P(arm | context)", marker_color=HEADS.color("flow")))
    fig.add_trace(
        go.Scatter(
            x=arms,
            y=res["means"],
            name="arm mean",
            mode="markers",
            marker=dict(color="#333", size=11, symbol="diamond"),
        ),
        secondary_y=True,
    )
    fig.update_yaxes(title="probability", range=[0, 1], secondary_y=False)
    fig.update_yaxes(title="arm mean", secondary_y=True)
    fig.update_layout(title=f"Policy given {res['context']} random pulls", height=320)
    return fig


def dark_returns(res: Mapping) -> go.Figure:
    """Return per episode in the dark room (held-out goals) of every agent, each acting with its own history."""
    fig = go.Figure()
    for name, v in res["agents"].items():
        y = v["returns"]
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(y) + 1)),
                y=y,
                mode="lines+markers",
                name=DARK_AGENTS.label(name),
                line=dict(color=DARK_AGENTS.color(name), width=3 if DARK_AGENTS.kind(name) == "ours" else 2),
            )
        )
    fig.add_hline(y=res["optimal"], line=dict(color="#333", dash="dot"), annotation_text="optimal")
    cap = res.get("training_context", 64)
    episodes = len(next(iter(res["agents"].values()))["returns"])
    if episodes * DARK_HORIZON > cap:
        fig.add_vline(x=cap / DARK_HORIZON + 0.5, line=dict(color="#d62728", dash="dot"), annotation_text="training context")
    fig.update_layout(
        title="Dark room, held-out goals: steps on the goal per episode",
        height=320,
        xaxis=dict(title="episode"),
        yaxis=dict(title="return", rangemode="tozero"),
    )
    return fig
