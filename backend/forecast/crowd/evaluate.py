"""Run methods on clips and score them as in the paper (long rollouts after a warm-up, MAE / OT / MMD over time,
collisions, inference time per simulated second). Used by the page, the CLI, the training script and the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from backend.runtime import Progress, report, sub_progress

from .data import WARMUP, Clip
from .generate import GeneratorConfig, generate_clip
from .interface import METHODS, canonical, get_method
from .metrics import Curves, collision_rate, summarize
from .rollout import Rollout, simulate
from .scenes import EVAL_SCENES, Scene, get_scene

METRICS = ("MAE", "OT", "MMD", "FDE", "collisions", "wall_crossings")  # wall crossings per simulated agent
OURS, ABLATION = METHODS.names("ours")[0], METHODS.names("ablation")[0]  # STDDN and its no-density ablation
PAIR = (OURS, ABLATION)


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
            out.append({"method": m, "label": METHODS.label(m), **row,
                        "ms_per_sim_second": 1000 * r.wall_per_sim_second,
                        "sim_s_per_wall_s": r.sim_seconds_per_wall_second})
        return out


def run_clip(clip: Clip, methods: list[str] | None = None, stride: int = 1, warmup: int = WARMUP,
             progress: Progress | None = None, nets: dict | None = None, guard_walls: bool = False) -> SceneRun:
    """Simulate ``clip`` with each method (registry names) and score it. ``nets`` may override learned networks.
    ``guard_walls`` wraps every method in :class:`WallGuard` (a diagnostic, not part of any method)."""
    methods = [canonical(m) for m in (methods or METHODS)]
    rollouts, rows, curves = {}, {}, {}
    n = len(methods)
    for i, m in enumerate(methods):
        kw = {"net": nets[m]} if nets and m in nets else {}
        sim = get_method(m, **kw)
        r = simulate(clip, WallGuard(sim) if guard_walls else sim, warmup,
                     sub_progress(progress, i / n, (i + 0.8) / n))
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
             nets: dict | None = None, guard_walls: bool = False) -> EvalResult:
    """Held-out evaluation: one clip per scene (seed ``seed + index``), every method, averaged over scenes.
    ``nets`` ({"stddn" | "micro": MicroNet}) overrides the shipped networks (e.g. other training seeds)."""
    sc = [get_scene(s) for s in scenes] if scenes else list(EVAL_SCENES)
    methods = [canonical(m) for m in (methods or METHODS)]
    per_scene, runs = [], {}
    for i, s in enumerate(sc):
        sub = sub_progress(progress, i / len(sc), (i + 1) / len(sc))
        clip = eval_clip(s, seconds, seed + i)
        run = run_clip(clip, methods, stride, progress=sub, nets=nets, guard_walls=guard_walls)
        for row in run.table():
            per_scene.append({"scene": s.name, **row, "gt_collisions": run.gt_collisions})
        if keep_runs:
            runs[s.name] = run
    table = []
    for m in methods:
        rows = [r for r in per_scene if r["method"] == m]
        agg = {"method": m, "label": METHODS.label(m)}
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

    model, _ = load_model(OURS)
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
            if OURS in t and ABLATION in t:
                rec[tier] = {m: {k: float(t[m][k]) for k in ("MAE", "OT", "MMD")} for m in PAIR}
        rec["scenes"] = {}
        for r in ev.get("per_scene", []):
            if r["method"] in PAIR:
                rec["scenes"].setdefault(r["scene"], {})[r["method"]] = {
                    k: float(r[k]) for k in ("MAE", "OT", "wall_crossings") if k in r}
        if "full" in rec and "ci" in rec:
            per_seed.append(rec)
    out: dict = {"seeds": [r["seed"] for r in per_seed], "per_seed": per_seed}
    for tier in ("full", "ci"):
        agg: dict = {}
        for k in ("MAE", "OT", "MMD"):
            row = {}
            for m in PAIR:
                vals = [r[tier][m][k] for r in per_seed]
                row[m] = {"mean": float(np.mean(vals)) if vals else float("nan"),
                          "min": float(np.min(vals)) if vals else float("nan"),
                          "max": float(np.max(vals)) if vals else float("nan")}
            row["rel"] = (row[OURS]["mean"] - row[ABLATION]["mean"]) / row[ABLATION]["mean"] if per_seed else float("nan")
            row["wins"] = sum(r[tier][OURS][k] < r[tier][ABLATION][k] for r in per_seed)
            agg[k] = row
        agg["holds"] = bool(per_seed) and agg["MAE"]["rel"] < 0 and agg["OT"]["rel"] < 0
        out[tier] = agg
    scenes = sorted({sc for r in per_seed for sc in r["scenes"]})
    out["scenes"] = {}
    for sc in scenes:
        out["scenes"][sc] = {}
        for m in PAIR:
            recs = [r["scenes"][sc][m] for r in per_seed if sc in r["scenes"]]
            out["scenes"][sc][m] = {k: float(np.mean([x[k] for x in recs])) for k in ("MAE", "OT")}
            walls = [x["wall_crossings"] for x in recs if "wall_crossings" in x]
            if walls:  # not every recorded evaluation has them; mean over the seeds that do
                out["scenes"][sc][m]["wall_crossings"] = float(np.mean(walls))
    return out


def scene_text(summary: dict) -> str:
    """Per held-out scene (60 s clips), STDDN vs the ablation averaged over the recorded seeds."""
    parts = []
    for sc, v in summary.get("scenes", {}).items():
        t = (f"{sc}: MAE {v[OURS]['MAE']:.2f} vs {v[ABLATION]['MAE']:.2f} m, OT {v[OURS]['OT']:.2f} vs "
             f"{v[ABLATION]['OT']:.2f}")
        if "wall_crossings" in v[OURS] and "wall_crossings" in v[ABLATION]:
            t += f", wall crossings per agent {v[OURS]['wall_crossings']:.2f} vs {v[ABLATION]['wall_crossings']:.2f}"
        parts.append(t)
    return "Per held-out scene (60 s, mean over seeds, STDDN vs ablation): " + "; ".join(parts) + "."


def ablation_text(summary: dict, tier: str = "full", why: str = " (the wall and density-control diagnostics say why)"
                  ) -> str:
    """One markdown sentence reading :func:`ablation_summary` (means over seeds, min-max in brackets)."""
    if not summary["seeds"]:
        return "No recorded evaluation of the ablation yet."
    f, n = summary[tier], len(summary["seeds"])
    where = "60 s held-out clips" if tier == "full" else "the ci subset"
    parts = [f"{k} {f[k][OURS]['mean']:.3f} [{f[k][OURS]['min']:.3f}-{f[k][OURS]['max']:.3f}] vs "
             f"{f[k][ABLATION]['mean']:.3f} [{f[k][ABLATION]['min']:.3f}-{f[k][ABLATION]['max']:.3f}] "
             f"({100 * f[k]['rel']:+.1f}%; STDDN ahead for {f[k]['wins']} of {n} seeds)" for k in ("MAE", "OT")]
    verdict = ("STDDN is ahead on both means." if f["holds"] else
               f"Not reproduced on our miniature{why}.")
    return (f"**The paper's ablation** (STDDN vs the same network trained without the density ODE), mean over training "
            f"seeds {summary['seeds']} on {where} (min-max in brackets): " + "; ".join(parts) + ". " + verdict)



# ------------------------------------------------------------------------------------------- wall diagnostics
WALL_PROBE_DISTANCES = (0.3, 0.5, 0.8, 1.2)


def wall_response(net, distances: tuple[float, ...] = WALL_PROBE_DISTANCES, v0: float = 1.3) -> dict:
    """How strongly a trained trajectory network (:class:`~.stddn.MicroNet`) turns away from a wall.

    A lone agent at distance ``d`` from a 40 m straight wall (sampled as obstacle points every 0.3 m, as in the scenes)
    walks at its desired speed ``v0`` with its goal 20 m ahead along the wall, either parallel to the wall or
    approaching it at 30 degrees (constant-velocity history). For each ``d``: the network's acceleration component
    along the wall normal (away from the wall, m/s^2) with the wall minus without it, averaged over the two cases
    (``learned``), beside the generator's social-force wall term ``A_w exp((r - d) / B_w)`` for a walker of radius
    0.25 m (``generator_sf``; ORCA walkers, 35% of the ground truth, treat walls as hard constraints instead)."""
    import math

    import torch

    from .physics import SocialForceConfig
    from .scenes import Scene
    from .stddn import HISTORY

    pts = torch.from_numpy(Scene("probe", "probe", ((-20.0, 0.0, 20.0, 0.0),), ()).obstacle_points())[None]
    none = torch.zeros(1, 0, 2)
    sf = SocialForceConfig()
    out: dict = {"distances": list(distances), "learned": [], "generator_sf": []}
    cases = ((1.0, 0.0), (math.cos(math.radians(30)), -math.sin(math.radians(30))))
    with torch.no_grad():
        for d in distances:
            effects = []
            for cx, cy in cases:
                p = torch.tensor([[[0.0, d]]])
                v = torch.tensor([[[v0 * cx, v0 * cy]]])
                a = torch.zeros(1, 1, 2)
                back = torch.arange(HISTORY - 1, -1, -1, dtype=torch.float32)[:, None] * v[0, 0] * 0.08
                hist = torch.cat([p[0, 0] - back, v[0, 0].expand(HISTORY, 2), torch.zeros(HISTORY, 2)], -1)[None, None]
                ok = torch.ones(1, 1, HISTORY, dtype=torch.bool)
                goal = torch.tensor([[[20.0, d]]])
                args = (p, v, a, hist, ok, goal, torch.tensor([[v0]]), torch.ones(1, 1, dtype=torch.bool))
                effects.append(float(net(*args, pts)[0, 0, 1] - net(*args, none)[0, 0, 1]))
            out["learned"].append(float(np.mean(effects)))
            out["generator_sf"].append(float(sf.A_wall * math.exp((0.25 - d) / sf.B_wall)))
    return out


def near_wall_bias(net, clip: Clip, max_dist: float = 1.2, every: int = 5) -> dict:
    """One-step check on a clip: for agents past their warm-up within ``max_dist`` of a wall (one frame in ``every``),
    the mean acceleration component along the nearest wall's normal (away from the wall, m/s^2) that the network
    predicts from the true state and that the ground truth has (the training label). Negative = toward the wall."""
    import torch

    from .physics import segment_distance
    from .training import ClipTensors, collate, make_window

    ct = ClipTensors.from_clip(clip)
    walls = torch.from_numpy(clip.walls())
    pred, true = [], []
    with torch.no_grad():
        for t0 in range(WARMUP, ct.num_frames - 2, every):
            b = collate([make_window(ct, t0, 2)], clip.dt)
            keep = b.present[0, 0] & b.mask[0, 1]
            if not keep.any():
                continue
            d, n = segment_distance(b.p[0, 0], walls)
            dmin, j = d.min(1)
            normal = n[torch.arange(len(dmin)), j]
            keep &= dmin < max_dist
            a = net(b.p[:, 0], b.v[:, 0], b.a[:, 0], b.hist, b.hist_ok, b.goal[:, 0], b.v0, b.present[:, 0],
                    b.obstacles)[0]
            pred.append((a * normal).sum(-1)[keep])
            true.append((b.a[0, 1] * normal).sum(-1)[keep])
    p, t = torch.cat(pred), torch.cat(true)
    return {"samples": int(len(p)), "predicted": float(p.mean()), "truth": float(t.mean())}


def wall_text(walls: dict) -> str:
    """One markdown sentence reading the recorded wall diagnostic (``crowd_eval.json["walls"]``, means over seeds)."""
    seeds = sorted(walls["seeds"], key=int)
    i = walls["distances"].index(0.5) if 0.5 in walls["distances"] else 0
    d = walls["distances"][i]

    def mean(kind: str, key: str) -> float:
        vals = [walls["seeds"][s][kind][key] for s in seeds]
        return float(np.mean([v[i] if isinstance(v, list) else v for v in vals]))

    def spread(kind: str, key: str) -> str:
        vals = [walls["seeds"][s][kind][key] for s in seeds]
        vals = [v[i] if isinstance(v, list) else v for v in vals]
        return f"{min(vals):+.3f} to {max(vals):+.3f}"

    return (f"**Walls** (diagnostic over training seeds {[int(s) for s in seeds]}): the trajectory network gets the "
            "released code's obstacle context (the 5 nearest wall points within 4 m in its field of view, through an "
            "obstacle EGNN) and nothing at inference stops an agent at a wall, as in the released code; the trained "
            f"networks barely use it. A lone walker {d:g} m from a wall is pushed away by "
            f"{mean(OURS, 'wall_response'):+.3f} m/s² (STDDN; seeds {spread(OURS, 'wall_response')}) and "
            f"{mean(ABLATION, 'wall_response'):+.3f} m/s² (ablation; {spread(ABLATION, 'wall_response')}), against "
            f"{walls['generator_sf'][i]:.2f} m/s² for the generator's social-force walkers. Near the walls of the "
            f"held-out bottleneck (agents within 1.2 m, one-step predictions from the true state, "
            f"{walls['near_wall_samples']} samples) the mean acceleration along the wall normal is "
            f"{mean(OURS, 'near_wall'):+.3f} m/s² for STDDN ({spread(OURS, 'near_wall')}) and "
            f"{mean(ABLATION, 'near_wall'):+.3f} for the ablation ({spread(ABLATION, 'near_wall')}) against "
            f"{walls['near_wall_truth']:+.3f} in the ground truth (negative = toward the wall)."
            + (_crossing_text(walls, seeds) if "gap_wall" in walls else ""))


def _crossing_text(walls: dict, seeds: list[str]) -> str:
    def counts(kind: str) -> tuple[list[int], list[int]]:
        per = [walls["seeds"][s][kind]["crossings_per_wall"] for s in seeds]
        return [sum(c[i] for i in walls["gap_wall"]) for c in per], [sum(c) for c in per]

    (sg, st), (mg, mt) = counts(OURS), counts(ABLATION)
    return (f" In that clip's 60 s rollouts, {sum(sg) + sum(mg)} of {sum(st) + sum(mt)} wall crossings go through "
            f"the wall that holds the gap, beside it: STDDN {'/'.join(map(str, sg))} and the ablation "
            f"{'/'.join(map(str, mg))} for seeds {'/'.join(seeds)}.")


class WallGuard:
    """Diagnostic wrapper (not part of STDDN, its released code or any baseline): a step that would carry an agent
    through a wall is cancelled -- the agent stays where it was and loses the velocity component along that wall's
    normal (it slides). Used only to ask how much of a learned model's error comes from leaking through walls."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.name = sim.name
        self.walls = None

    def reset(self, clip: Clip) -> None:
        import torch

        self.sim.reset(clip)
        self.walls = torch.from_numpy(clip.walls())

    def step(self, s, dt: float):
        import torch

        p, v, a = self.sim.step(s, dt)
        if self.walls is None or not len(self.walls):
            return p, v, a
        from .metrics import segment_hits

        hit = torch.from_numpy(segment_hits(s.p.detach().numpy(), p.detach().numpy(), self.walls.numpy()))  # [N, W]
        if not hit.any():
            return p, v, a
        seg = self.walls[:, 2:] - self.walls[:, :2]
        normal = torch.stack([-seg[:, 1], seg[:, 0]], -1) / seg.norm(dim=-1, keepdim=True).clamp_min(1e-9)  # [W, 2]
        first = hit.float().argmax(1)
        n = normal[first]
        crossed = hit.any(1)[:, None]
        v_slide = v - (v * n).sum(-1, keepdim=True) * n
        return torch.where(crossed, s.p, p), torch.where(crossed, v_slide, v), a


def guard_text(wg: dict) -> str:
    """One markdown sentence reading the recorded walls-enforced diagnostic (``crowd_eval.json["wall_guard"]``)."""
    seeds = sorted(wg["seeds"], key=int)
    parts = []
    for k in ("MAE", "OT"):
        vals = {m: [wg["seeds"][s]["table"][m][k] for s in seeds] for m in PAIR}
        ms, mm = float(np.mean(vals[OURS])), float(np.mean(vals[ABLATION]))
        wins = sum(a < b for a, b in zip(vals[OURS], vals[ABLATION], strict=True))
        parts.append(f"{k} {ms:.3f} [{min(vals[OURS]):.3f}-{max(vals[OURS]):.3f}] vs {mm:.3f} "
                     f"[{min(vals[ABLATION]):.3f}-{max(vals[ABLATION]):.3f}] ({100 * (ms - mm) / mm:+.1f}%; STDDN ahead "
                     f"for {wins} of {len(seeds)} seeds)")
    scenes = sorted({r["scene"] for s in seeds for r in wg["seeds"][s]["per_scene"]})
    per, ahead = [], []
    for sc in scenes:
        v = {m: float(np.mean([r["OT"] for s in seeds for r in wg["seeds"][s]["per_scene"]
                               if r["scene"] == sc and r["method"] == m])) for m in PAIR}
        per.append(f"{sc} {v[OURS]:.2f} vs {v[ABLATION]:.2f}")
        if v[OURS] < v[ABLATION]:
            ahead.append(sc)
    return (f"**With walls enforced** (diagnostic only: `evaluate.WallGuard` cancels any step through a wall for both "
            f"models; neither the paper nor the released code has it), mean over seeds {[int(s) for s in seeds]} on "
            f"the same {wg['seconds']:.0f} s held-out clips, STDDN vs ablation: " + "; ".join(parts)
            + ". OT per scene: " + ", ".join(per) + f"; STDDN's is lower on {len(ahead)} of {len(scenes)} scenes"
            + (f" ({', '.join(ahead)})." if ahead else "."))


def control_text(control: dict, summary: dict, walls: dict | None = None) -> str:
    """One markdown sentence on the density control (``crowd_eval.json["density_control"]``): STDDN's schedule with
    the density term kept away from the network, beside STDDN and the ablation (means over the common seeds)."""
    seeds = [s for s in summary["seeds"] if str(s) in control["seeds"]]
    if not seeds:
        return "No recorded density control yet."
    per = {r["seed"]: r for r in summary["per_seed"]}

    def m(vals: list[float]) -> float:
        return float(np.mean(vals))

    def scene_ot(rows: list[dict], name: str = "bottleneck") -> float:
        return m([r["OT"] for r in rows if r["scene"].startswith(name)])

    c = {k: m([control["seeds"][str(s)]["table"][k] for s in seeds]) for k in ("MAE", "OT")}
    st = {k: m([per[s]["full"][OURS][k] for s in seeds]) for k in ("MAE", "OT")}
    ab = {k: m([per[s]["full"][ABLATION][k] for s in seeds]) for k in ("MAE", "OT")}
    b = {"control": m([scene_ot(control["seeds"][str(s)]["per_scene"]) for s in seeds]),
         OURS: m([v[OURS]["OT"] for sc, v in summary["scenes"].items() if sc.startswith("bottleneck")]),
         ABLATION: m([v[ABLATION]["OT"] for sc, v in summary["scenes"].items() if sc.startswith("bottleneck")])}
    text = (f"**Density control** (STDDN's stages, frozen physics epochs and batches, but the density term never "
            f"reaches the network: `--joint-lambda2 0`), mean over seeds {seeds} on the 60 s held-out clips: MAE "
            f"{c['MAE']:.3f} m and OT {c['OT']:.3f}, beside STDDN {st['MAE']:.3f} / {st['OT']:.3f} and the ablation "
            f"{ab['MAE']:.3f} / {ab['OT']:.3f}; bottleneck OT {b['control']:.2f} (STDDN {b[OURS]:.2f}, ablation "
            f"{b[ABLATION]:.2f})")
    if walls is not None and all(str(s) in walls["seeds"] for s in seeds):
        i = walls["distances"].index(0.5) if 0.5 in walls["distances"] else 0
        cw = m([control["seeds"][str(s)]["wall_response"][i] for s in seeds])
        cn = m([control["seeds"][str(s)]["near_wall"] for s in seeds])
        sw = m([walls["seeds"][str(s)][OURS]["wall_response"][i] for s in seeds])
        sn = m([walls["seeds"][str(s)][OURS]["near_wall"] for s in seeds])
        aw = m([walls["seeds"][str(s)][ABLATION]["wall_response"][i] for s in seeds])
        an = m([walls["seeds"][str(s)][ABLATION]["near_wall"] for s in seeds])
        text += (f"; wall response at {walls['distances'][i]:g} m {cw:+.3f} m/s² (STDDN {sw:+.3f}, ablation "
                 f"{aw:+.3f}), near-wall normal acceleration in the bottleneck {cn:+.3f} (STDDN {sn:+.3f}, ablation "
                 f"{an:+.3f})")
    rel = {k: 100 * (st[k] - c[k]) / c[k] for k in ("MAE", "OT")}
    text += (f". STDDN against this control (same schedule and batches; only the density gradient differs): MAE "
             f"{rel['MAE']:+.1f}%, OT {rel['OT']:+.1f}%")
    if all("best_epoch" in control["seeds"][str(s)] for s in seeds):
        text += ("; best checkpoints (epoch of the lowest validation rollout MAE; physics stage = epochs 10-14, joint "
                 "from 15) STDDN " + "/".join(str(control["seeds"][str(s)]["stddn_best_epoch"]) for s in seeds)
                 + ", control " + "/".join(str(control["seeds"][str(s)]["best_epoch"]) for s in seeds))
    return text + "."
