"""Run methods on clips and score them as in the paper (long rollouts after a warm-up, MAE / OT / MMD over time,
collisions, inference time per simulated second). Used by the page, the CLI, the training script and the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from backend.runtime import Progress, report, sub_progress

from .data import WARMUP, Clip
from .generate import GeneratorConfig, generate_clip
from .methods import METHODS, get_method
from .metrics import Curves, collision_rate, summarize
from .rollout import Rollout, simulate
from .scenes import EVAL_SCENES, Scene, get_scene

METRICS = ("MAE", "OT", "MMD", "FDE", "collisions", "wall_crossings")  # wall crossings per simulated agent


@dataclass
class SceneRun:
    """Every method on one clip: rollouts, metric rows and per-frame curves."""

    clip: Clip
    rollouts: dict[str, Rollout]
    rows: dict[str, dict[str, float]]
    curves: dict[str, Curves]
    gt_collisions: float

    def table(self) -> list[dict]:
        out = []
        for m, row in self.rows.items():
            r = self.rollouts[m]
            out.append({"method": m, "label": METHODS[m].label if m in METHODS else m, **row,
                        "ms_per_sim_second": 1000 * r.wall_per_sim_second,
                        "sim_s_per_wall_s": r.sim_seconds_per_wall_second})
        return out


def run_clip(clip: Clip, methods: list[str] | None = None, stride: int = 1, warmup: int = WARMUP,
             progress: Progress | None = None, nets: dict | None = None) -> SceneRun:
    """Simulate ``clip`` with each method (registry names) and score it. ``nets`` may override learned networks."""
    methods = list(methods or METHODS)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown crowd method {m!r}; valid: {', '.join(METHODS)}")
    rollouts, rows, curves = {}, {}, {}
    n = len(methods)
    for i, m in enumerate(methods):
        kw = {"net": nets[m]} if nets and m in nets else {}
        r = simulate(clip, get_method(m, **kw), warmup, sub_progress(progress, i / n, (i + 0.8) / n))
        row, c = summarize(r.positions, clip, warmup, stride)
        report(progress, (i + 1) / n, f"{m}: MAE {row['MAE']:.2f} m")
        rollouts[m], rows[m], curves[m] = r, row, c
    return SceneRun(clip, rollouts, rows, curves, collision_rate(clip.positions, 0.5, stride))


@dataclass
class EvalResult:
    table: list[dict]  # per method, averaged over scenes
    per_scene: list[dict]  # per scene and method
    runs: dict[str, SceneRun] = field(default_factory=dict)


def eval_clip(scene: Scene, seconds: float, seed: int) -> Clip:
    return generate_clip(scene, seed, GeneratorConfig(seconds=seconds))


def evaluate(scenes: list[str] | None = None, seconds: float = 60.0, seed: int = 300, methods: list[str] | None = None,
             stride: int = 1, progress: Progress | None = None, keep_runs: bool = False,
             nets: dict | None = None) -> EvalResult:
    """Held-out evaluation: one clip per scene (seed ``seed + index``), every method, averaged over scenes.
    ``nets`` ({"stddn" | "micro": MicroNet}) overrides the shipped networks (e.g. other training seeds)."""
    sc = [get_scene(s) for s in scenes] if scenes else list(EVAL_SCENES)
    methods = list(methods or METHODS)
    per_scene, runs = [], {}
    for i, s in enumerate(sc):
        sub = sub_progress(progress, i / len(sc), (i + 1) / len(sc))
        clip = eval_clip(s, seconds, seed + i)
        run = run_clip(clip, methods, stride, progress=sub, nets=nets)
        for row in run.table():
            per_scene.append({"scene": s.name, **row, "gt_collisions": run.gt_collisions})
        if keep_runs:
            runs[s.name] = run
    table = []
    for m in methods:
        rows = [r for r in per_scene if r["method"] == m]
        agg = {"method": m, "label": METHODS[m].label}
        for k in (*METRICS, "ms_per_sim_second", "sim_s_per_wall_s"):
            agg[k] = float(np.mean([r[k] for r in rows]))
        table.append(agg)
    return EvalResult(table, per_scene, runs)


def ode_view(clip: Clip, t0: int | None = None, frames: int = 10) -> dict:
    """STDDN's macroscopic view of one training-style window of ``clip``: the density ODE's prediction after
    ``frames - 1`` steps beside the soft density (DDM) of the network's own predicted positions and of the truth.

    Returns maps ``[ny, nx]`` (``ode``, ``prediction``, ``truth``), cell centres ``cx, cy``, the window's density loss
    and the learned T. Only for clips inside the model's 20 m grid (generated scenes)."""
    import torch

    from .density import density
    from .methods import load_model
    from .stddn import window_loss
    from .training import ClipTensors, collate, make_window

    model, _ = load_model("stddn")
    grid = model.ode.grid
    if t0 is None:
        t0 = max(0, clip.num_frames // 2 - frames // 2)
    t0 = int(min(max(0, t0), clip.num_frames - frames))
    batch = collate([make_window(ClipTensors.from_clip(clip), t0, frames)], clip.dt)
    with torch.no_grad():
        out = window_loss(model, batch, 1.0, 1.0)
        pred = density(model.ode.assign(out.p[:, -1], batch.present[:, -1]))[0]
    shape = (grid.ny, grid.nx)
    cx = grid.x0 + (np.arange(grid.nx) + 0.5) * grid.cell
    cy = grid.y0 + (np.arange(grid.ny) + 0.5) * grid.cell
    return {"ode": out.rho_ode[0, -1].reshape(shape).numpy(), "prediction": pred.reshape(shape).numpy(),
            "truth": out.rho_gt[0, -1].reshape(shape).numpy(), "cx": cx, "cy": cy, "t0": t0,
            "seconds": (frames - 1) * clip.dt, "loss_rho": float(out.losses["rho"]), "T": float(model.ode.T.detach())}


def ablation_summary(assets: Path | None = None) -> dict:
    """The paper's ablation over every recorded training seed: STDDN vs the same network trained without the density
    ODE, from ``crowd_eval.json`` (seed 0, the shipped pair) and ``crowd_eval_seed<S>.json`` (other seeds, same data
    and budget). For the 60 s held-out clips (``full``) and the ci subset (``ci``): per-seed MAE and OT of both models,
    their means over seeds, the spread (min, max) and STDDN's relative difference of the means."""
    import json

    from backend.runtime import ASSETS

    assets = assets or ASSETS
    files = [assets / "crowd_eval.json", *sorted(assets.glob("crowd_eval_seed*.json"))]
    per_seed: list[dict] = []
    for f in files:
        if not f.is_file():
            continue
        ev = json.loads(f.read_text())
        seed = int(ev.get("train_seed", 0))
        rec = {"seed": seed}
        for tier, rows in (("full", ev["table"]), ("ci", ev["ci"]["table"])):
            t = {r["method"]: r for r in rows}
            if "stddn" in t and "micro" in t:
                rec[tier] = {m: {k: float(t[m][k]) for k in ("MAE", "OT", "MMD")} for m in ("stddn", "micro")}
        rec["scenes"] = {}
        for r in ev.get("per_scene", []):
            if r["method"] in ("stddn", "micro"):
                rec["scenes"].setdefault(r["scene"], {})[r["method"]] = {
                    k: float(r[k]) for k in ("MAE", "OT", "wall_crossings") if k in r}
        if "full" in rec and "ci" in rec:
            per_seed.append(rec)
    out: dict = {"seeds": [r["seed"] for r in per_seed], "per_seed": per_seed}
    for tier in ("full", "ci"):
        agg: dict = {}
        for k in ("MAE", "OT", "MMD"):
            row = {}
            for m in ("stddn", "micro"):
                vals = [r[tier][m][k] for r in per_seed]
                row[m] = {"mean": float(np.mean(vals)) if vals else float("nan"),
                          "min": float(np.min(vals)) if vals else float("nan"),
                          "max": float(np.max(vals)) if vals else float("nan")}
            row["rel"] = (row["stddn"]["mean"] - row["micro"]["mean"]) / row["micro"]["mean"] if per_seed else float("nan")
            row["wins"] = sum(r[tier]["stddn"][k] < r[tier]["micro"][k] for r in per_seed)
            agg[k] = row
        agg["holds"] = bool(per_seed) and agg["MAE"]["rel"] < 0 and agg["OT"]["rel"] < 0
        out[tier] = agg
    scenes = sorted({sc for r in per_seed for sc in r["scenes"]})
    out["scenes"] = {}
    for sc in scenes:
        out["scenes"][sc] = {}
        for m in ("stddn", "micro"):
            recs = [r["scenes"][sc][m] for r in per_seed if sc in r["scenes"]]
            out["scenes"][sc][m] = {k: float(np.mean([x[k] for x in recs])) for k in ("MAE", "OT")}
            walls = [x["wall_crossings"] for x in recs if "wall_crossings" in x]
            if walls:  # recorded from session 3 on; mean over the seeds that have it
                out["scenes"][sc][m]["wall_crossings"] = float(np.mean(walls))
    return out


def scene_text(summary: dict) -> str:
    """Per held-out scene (60 s clips), STDDN vs the ablation averaged over the recorded seeds."""
    parts = []
    for sc, v in summary.get("scenes", {}).items():
        t = (f"{sc}: MAE {v['stddn']['MAE']:.2f} vs {v['micro']['MAE']:.2f} m, OT {v['stddn']['OT']:.2f} vs "
             f"{v['micro']['OT']:.2f}")
        if "wall_crossings" in v["stddn"] and "wall_crossings" in v["micro"]:
            t += f", wall crossings per agent {v['stddn']['wall_crossings']:.2f} vs {v['micro']['wall_crossings']:.2f}"
        parts.append(t)
    return "Per held-out scene (60 s, mean over seeds, STDDN vs ablation): " + "; ".join(parts) + "."


def ablation_text(summary: dict, tier: str = "full", why: str = " (assets/MANIFEST_crowd.md explains why)") -> str:
    """One markdown sentence reading :func:`ablation_summary` (means over seeds, min-max in brackets)."""
    if not summary["seeds"]:
        return "No recorded evaluation of the ablation yet."
    f, n = summary[tier], len(summary["seeds"])
    where = "60 s held-out clips" if tier == "full" else "the ci subset"
    parts = [f"{k} {f[k]['stddn']['mean']:.3f} [{f[k]['stddn']['min']:.3f}-{f[k]['stddn']['max']:.3f}] vs "
             f"{f[k]['micro']['mean']:.3f} [{f[k]['micro']['min']:.3f}-{f[k]['micro']['max']:.3f}] "
             f"({100 * f[k]['rel']:+.1f}%; STDDN ahead for {f[k]['wins']} of {n} seeds)" for k in ("MAE", "OT")]
    verdict = ("STDDN is ahead on both means." if f["holds"] else
               f"Not reproduced on our miniature{why}.")
    return (f"**The paper's ablation** (STDDN vs the same network trained without the density ODE), mean over training "
            f"seeds {summary['seeds']} on {where} (min-max in brackets): " + "; ".join(parts) + ". " + verdict)

