"""Figures of the temporal-slowness page (pure builders: data in, Figure or picture out; no streamlit).

They read the results of :mod:`backend.scenes.slowness.jobs` as dicts (``ProbeResult.to_dict()``,
``SweepResult.to_dict()``) or, for the pictures, the :class:`~backend.scenes.slowness.jobs.StreamResult` arrays.
Arms are placed and coloured from the registry (``ARMS``): view x positive for the grid, ``color`` for the traces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.scenes.slowness.learn import ARMS

TASK_TITLES = {"instance": "object instance", "category": "object category", "background": "background class"}
VIEWS = ("full", "central")
POSITIVES = ("augment", "temporal")


def ablation_grid(res: Mapping[str, object], tasks: Sequence[str] = tuple(TASK_TITLES)) -> go.Figure:
    """One 2 x 2 heatmap per probe task (rows: view, columns: positive), mean accuracy over seeds, one colour
    scale (0 to 1) for all."""
    means = res["means"]  # type: ignore[index]
    fig = make_subplots(1, len(tasks), subplot_titles=[TASK_TITLES[t] for t in tasks], horizontal_spacing=0.08)
    for j, task in enumerate(tasks):
        z = np.full((2, 2), np.nan)
        text = [["", ""], ["", ""]]
        for arm in means:  # type: ignore[union-attr]
            a = ARMS[arm]
            r, c = VIEWS.index(a.view_name), POSITIVES.index(a.positive_name)
            z[r, c] = means[arm][task]  # type: ignore[index]
            text[r][c] = f"{z[r, c]:.3f}"
        fig.add_trace(go.Heatmap(z=z, x=["augmentation", "temporal"], y=["full frame", "central crop"], text=text,
                                 texttemplate="%{text}", zmin=0, zmax=1, colorscale="Viridis",
                                 showscale=j == len(tasks) - 1, colorbar={"title": "accuracy"}), 1, j + 1)
    for j in range(2, len(tasks) + 1):
        fig.update_yaxes(showticklabels=False, row=1, col=j)
    fig.update_layout(height=300, margin={"t": 40, "b": 10})
    return fig


def seed_lines(res: Mapping[str, object], metric: str = "instance") -> go.Figure:
    """Per-seed accuracy of each arm (one marker per seed, seeds joined across arms: the pairing of the CI)."""
    rows = res["rows"]  # type: ignore[index]
    arms = list(res["means"])  # type: ignore[arg-type]
    fig = go.Figure()
    for seed in sorted({r["seed"] for r in rows}):  # type: ignore[union-attr]
        ys = [next(r[metric] for r in rows if r["arm"] == a and r["seed"] == seed) for a in arms]  # type: ignore[union-attr]
        fig.add_trace(go.Scatter(x=[ARMS.label(a) for a in arms], y=ys, mode="lines+markers", name=f"seed {seed}",
                                 line={"color": "#bbbbbb", "width": 1},
                                 marker={"size": 10, "color": [ARMS.color(a) for a in arms]}))
    fig.update_yaxes(range=[0, 1], title_text=f"{TASK_TITLES.get(metric, metric)} probe accuracy")
    fig.update_layout(height=320, margin={"t": 20, "b": 10}, showlegend=False)
    return fig


def swap_bars(res: Mapping[str, object]) -> go.Figure:
    """Category-probe accuracy on the original test photos, under a foreground swap and under a background swap,
    per arm (mean over seeds, bars = min and max over seeds)."""
    rows = res["rows"]  # type: ignore[index]
    fig = go.Figure()
    for arm in res["means"]:  # type: ignore[union-attr]
        vals = {k: [r[k] for r in rows if r["arm"] == arm] for k in ("category", "fg_swap", "bg_swap")}  # type: ignore[union-attr]
        means = [float(np.mean(v)) for v in vals.values()]
        fig.add_trace(go.Bar(
            x=["original", "foreground swapped", "background swapped"], y=means, name=ARMS.label(arm),
            marker_color=ARMS.color(arm),
            error_y={"type": "data", "symmetric": False, "array": [max(v) - m for v, m in zip(vals.values(), means)],
                     "arrayminus": [m - min(v) for v, m in zip(vals.values(), means)]}))
    fig.update_yaxes(range=[0, 1], title_text="category probe accuracy (original labels)")
    fig.update_layout(barmode="group", height=340, margin={"t": 20, "b": 10}, legend={"orientation": "h", "y": -0.2})
    return fig


def sweep_lines(sweep: Mapping[str, object]) -> go.Figure:
    """Probe accuracy against the crop side (64 = the whole frame) and against DeltaT, same y axis."""
    fig = make_subplots(1, 2, subplot_titles=["crop side (px of the 64-px frame)", "DeltaT (frames)"],
                        shared_yaxes=True)
    colors = {"instance": "#d62728", "category": "#9467bd", "background": "#7f7f7f"}
    for j, what in enumerate(("crop", "delta_t")):
        rows = sweep[what]  # type: ignore[index]
        for task, col in colors.items():
            fig.add_trace(go.Scatter(x=[r[what] for r in rows], y=[r[task] for r in rows], mode="lines+markers",
                                     name=TASK_TITLES[task], line={"color": col}, showlegend=j == 0), 1, j + 1)
    fig.update_yaxes(range=[0, 1], title_text="probe accuracy", col=1)
    fig.update_layout(height=320, margin={"t": 40, "b": 10}, legend={"orientation": "h", "y": -0.2})
    return fig


# ------------------------------------------------------------------------------------------------- pictures
def _box(img: np.ndarray, box: Sequence[int], color: tuple[int, int, int]) -> None:
    x0, y0, x1, y1 = (int(v) for v in box)
    x1, y1 = min(x1, img.shape[1]) - 1, min(y1, img.shape[0]) - 1
    img[y0, x0:x1 + 1] = color
    img[y1, x0:x1 + 1] = color
    img[y0:y1 + 1, x0] = color
    img[y0:y1 + 1, x1] = color


def _grid(tiles: Sequence[np.ndarray], cols: int, gap: int = 2) -> np.ndarray:
    h, w = tiles[0].shape[:2]
    rows = -(-len(tiles) // cols)
    out = np.full((rows * h + (rows - 1) * gap, cols * w + (cols - 1) * gap, 3), 255, np.uint8)
    for i, t in enumerate(tiles):
        r, c = divmod(i, cols)
        out[r * (h + gap):r * (h + gap) + h, c * (w + gap):c * (w + gap) + w] = t
    return out


def _up(img: np.ndarray, scale: int) -> np.ndarray:
    return np.repeat(np.repeat(img, scale, 0), scale, 1)


def frame_strip(frames: np.ndarray, saliency: np.ndarray, boxes: np.ndarray, crops: np.ndarray, gaze: np.ndarray,
                every: int = 3, scale: int = 2) -> np.ndarray:
    """Three rows for every ``every``-th frame: the frame with its crop window (red) and gaze point, the saliency
    map, and the crop as the encoder sees it (32 px, shown at 64): uint8."""
    idx = range(0, len(frames), every)
    top, mid, bot = [], [], []
    for i in idx:
        f = frames[i].copy()
        _box(f, boxes[i], (220, 20, 20))
        x, y = (int(round(v)) for v in gaze[i])
        f[max(y - 1, 0):y + 2, max(x - 1, 0):x + 2] = (255, 255, 255)
        top.append(_up(f, scale))
        mid.append(_up(np.repeat(saliency[i][..., None], 3, 2), scale))
        bot.append(_up(crops[i], scale * frames.shape[1] // crops.shape[1]))
    n = len(top)
    return _grid(top + mid + bot, n)


def pair_sheet(pairs: np.ndarray, scale: int = 2) -> np.ndarray:
    """Positive pairs ``[P, 2, 32, 32, 3]`` as two rows (first and second view of each pair): uint8."""
    first = [_up(p[0], scale) for p in pairs]
    second = [_up(p[1], scale) for p in pairs]
    return _grid(first + second, len(first))


def thumbs(images: Sequence[np.ndarray], scale: int = 1) -> np.ndarray:
    """Images side by side: uint8."""
    return _grid([_up(np.asarray(i), scale) for i in images], len(images))
