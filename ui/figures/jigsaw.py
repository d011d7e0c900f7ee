"""Figures of the Visual Jigsaw page (pure builders: data in, Figure out; no streamlit).

``board_figure`` and ``clip_figure`` (clip ordering) read a :class:`~backend.scenes.jigsaw.jobs.SolveResult`;
``curves_figure`` and ``seed_bars`` read
``EvalResult.to_dict()``; ``vlm_history`` reads ``VLMResult.to_dict()``. Rewards are ordered, labelled and coloured
from the registry (``REWARDS``); every board uses the same pixel axes and every solve-rate axis runs 0 to 1.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.scenes.jigsaw.puzzle import assemble
from backend.scenes.jigsaw.reward import REWARDS

GAP = 4
GOOD, BAD = (44, 160, 44), (214, 39, 40)


def _framed(tiles: np.ndarray, correct: list[int] | None, width: int = 4) -> np.ndarray:
    out = tiles.copy()
    if correct is None:
        return out
    for t, ok in zip(out, correct, strict=True):
        c = np.asarray(GOOD if ok else BAD, np.uint8)
        t[:width], t[-width:], t[:, :width], t[:, -width:] = c, c, c, c
    return out


def board(shown: np.ndarray, grid: int, order: list[int] | None, correct: list[int] | None = None) -> np.ndarray:
    """A board: the shown tiles placed by ``order`` (1-based label per position; None: as shown), each framed green
    (right) or red (wrong) when ``correct`` is given."""
    tiles = shown if order is None else shown[[int(v) - 1 for v in order]]
    return assemble(_framed(tiles, correct), grid, GAP)


def _labels(fig: go.Figure, grid: int, t: int, labels: list[int], col: int) -> None:
    for k, lab in enumerate(labels):
        r, c = divmod(k, grid)
        fig.add_annotation(x=c * (t + GAP) + 12, y=r * (t + GAP) + 12, text=f"<b>{lab}</b>", showarrow=False,
                           font={"color": "white", "size": 13}, bgcolor="rgba(0,0,0,0.6)", row=1, col=col)


def board_figure(res, race: list[int] | None = None) -> go.Figure:  # noqa: ANN001 - SolveResult
    """Columns: the shuffled tiles (labelled 1..n), each policy's order with per-tile correctness, your order (when a
    valid one was typed), the original image."""
    t = res.shown.shape[1]
    n = res.grid * res.grid
    panels = [(f"shuffled (labels 1-{n})", board(res.shown, res.grid, None), list(range(1, n + 1)))]
    for a in res.answers:
        panels.append((f"{a['label']}: {sum(a['correct'])}/{n} right", board(res.shown, res.grid, a["answer"],
                                                                            a["correct"]), a["answer"]))
    if res.race and res.race.get("correct") is not None:
        panels.append((f"your order: {sum(res.race['correct'])}/{n} right",
                       board(res.shown, res.grid, res.race["answer"], res.race["correct"]), res.race["answer"]))
    panels.append(("original", board(res.shown, res.grid, res.truth), res.truth))
    fig = make_subplots(1, len(panels), subplot_titles=[p[0] for p in panels], horizontal_spacing=0.02)
    for i, (_, img, labels) in enumerate(panels, start=1):
        fig.add_trace(go.Image(z=img), 1, i)
        _labels(fig, res.grid, t, labels, i)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=300, margin={"l": 0, "r": 0, "t": 40, "b": 0})
    return fig


def strip(frames: np.ndarray, order: list[int] | None, correct: list[int] | None = None) -> np.ndarray:
    """Frames ``[T, s, s, 3]`` side by side in ``order`` (1-based label per moment; None: as shown), framed green
    (right) or red (wrong) when ``correct`` is given."""
    f = frames if order is None else frames[[int(v) - 1 for v in order]]
    f = _framed(f, correct)
    t, s = f.shape[0], f.shape[1]
    out = np.full((s, t * s + (t - 1) * GAP, 3), 255, np.uint8)
    for k, frame in enumerate(f):
        out[:, k * (s + GAP):k * (s + GAP) + s] = frame
    return out


def clip_figure(res) -> go.Figure:  # noqa: ANN001 - SolveResult of run_order
    """Rows: the shuffled frames (labelled 1..T), each policy's time order with per-frame correctness, your order
    (when a valid one was typed), the true order; time runs left to right."""
    n, s = res.shown.shape[0], res.shown.shape[1]
    panels = [(f"shuffled (labels 1-{n})", strip(res.shown, None), list(range(1, n + 1)))]
    for a in res.answers:
        panels.append((f"{a['label']}: {sum(a['correct'])}/{n} right", strip(res.shown, a["answer"], a["correct"]),
                       a["answer"]))
    if res.race and res.race.get("correct") is not None:
        panels.append((f"your order: {sum(res.race['correct'])}/{n} right",
                       strip(res.shown, res.race["answer"], res.race["correct"]), res.race["answer"]))
    panels.append(("true time order", strip(res.shown, res.truth), res.truth))
    fig = make_subplots(len(panels), 1, subplot_titles=[p[0] for p in panels], vertical_spacing=0.05)
    for i, (_, img, labels) in enumerate(panels, start=1):
        fig.add_trace(go.Image(z=img), i, 1)
        for k, lab in enumerate(labels):
            fig.add_annotation(x=k * (s + GAP) + 14, y=14, text=f"<b>{lab}</b>", showarrow=False,
                               font={"color": "white", "size": 13}, bgcolor="rgba(0,0,0,0.6)", row=i, col=1)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=190 * len(panels), margin={"l": 0, "r": 0, "t": 30, "b": 0})
    return fig


SOURCE_NAMES = {"scenes_val": "held-out scenes", "photos": "photos", "clips_val": "held-out clips",
                "photo_pans": "photo pans"}


def _grid_name(g: str) -> str:
    return f"{g} x {g}" if str(g).isdigit() else "clip ordering"


def curves_figure(r: Mapping, metric: str = "solve") -> go.Figure:
    """Learning curves (exact-solve rate, or per-piece accuracy) of the graded vs the binary reward, one panel per
    grid (or clip ordering), on the held-out sources recorded in training (the second source dotted): the mean over
    seeds with each seed faint."""
    grids = list(r["curves"])
    fig = make_subplots(1, len(grids), subplot_titles=[_grid_name(g) for g in grids], shared_yaxes=True)
    for gi, g in enumerate(grids, start=1):
        for rw in REWARDS:
            c = r["curves"][g].get(rw)
            if not c:
                continue
            sources = [k.removesuffix(f"_{metric}") for k in c if k.endswith(f"_{metric}")]
            for src, dash in zip(sources, ("solid", "dot", "dash"), strict=False):
                runs = np.asarray(c.get(f"{src}_{metric}", []), float)
                if not runs.size:
                    continue
                name = f"{REWARDS.label(rw)}, {SOURCE_NAMES.get(src, src)}"
                fig.add_trace(go.Scatter(x=c["step"], y=runs.mean(0), name=name, legendgroup=name,
                                         showlegend=gi == 1, line={"color": REWARDS.color(rw), "dash": dash}), 1, gi)
                for run in runs:
                    fig.add_trace(go.Scatter(x=c["step"], y=run, legendgroup=name, showlegend=False, opacity=0.25,
                                             hoverinfo="skip", line={"color": REWARDS.color(rw), "dash": dash,
                                                                     "width": 1}), 1, gi)
    fig.update_yaxes(range=[0, 1], title_text="exact-solve rate" if metric == "solve" else "tiles right", col=1)
    fig.update_xaxes(title_text="GRPO step")
    fig.update_layout(height=360, margin={"t": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def seed_bars(r: Mapping) -> go.Figure:
    """Final solve rate per seed, graded vs binary, per grid (same 0-1 axis)."""
    fig = go.Figure()
    for rw in REWARDS:
        rows = [x for x in r["rows"] if x["reward"] == rw]
        fig.add_trace(go.Bar(x=[f"{_grid_name(x['grid'])} s{x['seed']}" for x in rows], y=[x["solve"] for x in rows],
                             name=REWARDS.label(rw), marker_color=REWARDS.color(rw)))
    fig.update_layout(barmode="group", height=320, yaxis={"range": [0, 1], "title": "exact-solve rate"},
                      margin={"t": 30})
    return fig


def vlm_history(v: Mapping) -> go.Figure:
    """The tiny VLM's post-training, two panels on one step axis: left, the training batches (mean graded reward of
    the sampled answers and the policy's probability of the true order, each a moving mean over 10 steps); right,
    the held-out learning curve (exact-solve rate, p(true order), expected reward on fixed held-out scene puzzles).
    Both with chance 1/24 marked; every axis 0 to 1."""
    h = v["history"]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=("training puzzles (moving mean of 10 steps)", "held-out scene puzzles"))

    def smooth(y: list[float]) -> list[float]:
        c = np.cumsum(np.r_[0.0, np.asarray(y, float)])
        k = np.arange(1, len(y) + 1)
        lo = np.maximum(0, k - 10)
        return list((c[k] - c[lo]) / (k - lo))

    steps = list(range(1, len(h["reward"]) + 1))
    fig.add_trace(go.Scatter(x=steps, y=smooth(h["reward"]), name="mean reward of the sampled answers",
                             line={"color": "#1f77b4"}), 1, 1)
    fig.add_trace(go.Scatter(x=steps, y=smooth(h["p_truth"]), name="p(true order)", line={"color": "#ff7f0e"}), 1, 1)
    curve = h.get("curve") or []
    xs = [c["step"] for c in curve]
    fig.add_trace(go.Scatter(x=xs, y=[c["solve"] for c in curve], name="held-out exact-solve rate (argmax)",
                             mode="lines+markers", line={"color": "#2ca02c"}), 1, 2)
    fig.add_trace(go.Scatter(x=xs, y=[c["p_true"] for c in curve], name="held-out p(true order)",
                             mode="lines+markers", line={"color": "#ff7f0e", "dash": "dot"}), 1, 2)
    fig.add_trace(go.Scatter(x=xs, y=[c["reward"] for c in curve], name="held-out expected reward",
                             mode="lines+markers", line={"color": "#1f77b4", "dash": "dot"}), 1, 2)
    for col in (1, 2):
        fig.add_hline(y=1 / 24, line_dash="dot", line_color="grey", row=1, col=col)
        fig.update_xaxes(title_text="GRPO step", row=1, col=col)
    fig.add_annotation(x=0, y=1 / 24, xref="x", yref="y", text="chance 1/24", showarrow=False, yshift=8,
                       xanchor="left")
    fig.update_yaxes(range=[0, 1])
    fig.update_layout(height=340, margin={"t": 40}, legend={"orientation": "h", "y": -0.25})
    return fig
