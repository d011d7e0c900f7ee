"""Training STDDN (and its no-density ablation) on generated clips: windows, batches, the staged schedule.

Schedule (released code, ``st_supervisor.py``): three stages switched by early-stopping patience on the validation loss,
"trajectory" (lambda1 = 1, lambda2 = 0.1) -> "physics" (0.1, 1) -> "joint" (1, 1); two Adam optimisers (trajectory
network at ``lr``, physics parameters -- cell embeddings and T -- at ``lr / 2``) with StepLR. Windows of 10 frames with
time decay 0.9 on the trajectory terms. What each stage updates follows the released supervisor (back-propagating
``lam1 (a + p) + lam2 rho`` into both parts in every stage instead trains a different method):

* "trajectory": only the trajectory terms ``MSE(a) + MSE(p)`` are back-propagated, only the network is updated (the
  ODE's parameters, T included, are frozen; lambda2 = 0.1 only weights the logged total);
* "physics": the network is frozen and only ``L_rho`` trains the cell embeddings and T, so the ODE learns the density
  flow of the network's own rollouts before it guides the network;
* "joint": ``lam1 (MSE(a) + MSE(p)) + lam2 L_rho`` trains both (two optimisers). Gradients are clipped per part, so
  the network's update is clipped exactly as in the ablation.

Rotated copies (multiples of 90 degrees about the window centre) augment the data as in the paper's GC/UCY set-up.
The ablation uses the same network, data, epochs and seed with lambda2 = 0 throughout; its network is updated in all
30 epochs (10 batches each), STDDN's in 25 (the physics stage freezes it and runs 30 cheaper batches per epoch so the
cell embeddings can grow from their 0.01 initialisation).

The DDM temperature is projected back to ``[t_min, 1e3]`` after each physics step (see ``stddn``'s notes: the
released range let it collapse and silence the density term).

Checkpoint selection (ours): the epoch with the lowest long-rollout MAE on validation clips of the training geometries
(new seeds), for both models alike.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from backend.runtime import Progress, report

from .data import WARMUP, Clip
from .stddn import HISTORY, STDDN, WindowBatch, physics_loss, window_loss


@dataclass
class ClipTensors:
    """A clip prepared for window sampling."""

    p: torch.Tensor  # [T, N, 2] zero-filled
    v: torch.Tensor
    a: torch.Tensor
    present: torch.Tensor  # [T, N]
    goal: torch.Tensor  # [T, N, 2]
    v0: torch.Tensor  # [N]
    entry: torch.Tensor  # [N]
    obstacles: torch.Tensor  # [M, 2]
    dt: float

    @classmethod
    def from_clip(cls, clip: Clip) -> ClipTensors:
        goal = np.stack([clip.waypoint_at(t) for t in range(clip.num_frames)])
        return cls(
            p=torch.from_numpy(np.nan_to_num(clip.positions, nan=0.0)),
            v=torch.from_numpy(clip.velocities()),
            a=torch.from_numpy(clip.accelerations()),
            present=torch.from_numpy(clip.present),
            goal=torch.from_numpy(np.nan_to_num(goal, nan=0.0)),
            v0=torch.from_numpy(clip.desired_speed()),
            entry=torch.from_numpy(clip.entry_frames()),
            obstacles=torch.from_numpy(clip.obstacle_points()),
            dt=clip.dt,
        )

    @property
    def num_frames(self) -> int:
        return int(self.p.shape[0])


def make_window(ct: ClipTensors, t0: int, length: int, warmup: int = WARMUP) -> dict[str, torch.Tensor]:
    """One window of ``length`` frames from ``t0`` over the agents present in it (unpadded tensors)."""
    if not 0 <= t0 <= ct.num_frames - length:
        raise ValueError(f"window [{t0}, {t0 + length}) outside the clip's {ct.num_frames} frames")
    sl = slice(t0, t0 + length)
    agents = torch.nonzero(ct.present[sl].any(0)).flatten()
    pres = ct.present[sl][:, agents]
    frames = torch.arange(t0, t0 + length)[:, None]
    forced = pres & ((frames - ct.entry[agents][None]) < warmup)
    mask = pres & ~forced
    mask[0] = False
    hidx = torch.arange(t0 - HISTORY + 1, t0 + 1)
    ok_t = hidx >= 0
    hc = hidx.clamp_min(0)
    hist = torch.cat([ct.p[hc][:, agents], ct.v[hc][:, agents], ct.a[hc][:, agents]], -1).permute(1, 0, 2)
    hist_ok = (ct.present[hc][:, agents] & ok_t[:, None]).T
    hist = hist * hist_ok[..., None]
    obstacles = ct.obstacles
    if obstacles.shape[0]:  # only wall points an agent of this window can see (4 m plus 3 m of walking)
        pts = ct.p[sl][:, agents][pres]
        d = torch.cdist(obstacles, pts).min(dim=1).values
        obstacles = obstacles[d < 7.0]
    return {"p": ct.p[sl][:, agents], "v": ct.v[sl][:, agents], "a": ct.a[sl][:, agents], "present": pres,
            "forced": forced, "mask": mask, "hist": hist, "hist_ok": hist_ok, "goal": ct.goal[sl][:, agents],
            "v0": ct.v0[agents], "obstacles": obstacles}


def _rot(x: torch.Tensor, k: int, centre: float = 10.0, is_vector: bool = False) -> torch.Tensor:
    """Rotate ``[..., 2]`` by k * 90 degrees (about (centre, centre) for points)."""
    if k % 4 == 0:
        return x
    c = 0.0 if is_vector else centre
    y = x - c
    for _ in range(k % 4):
        y = torch.stack([-y[..., 1], y[..., 0]], -1)
    return y + c


def collate(windows: list[dict[str, torch.Tensor]], dt: float, rotations: list[int] | None = None) -> WindowBatch:
    """Pad windows to a batch (absent agents / far-away obstacle points), optionally rotating each window."""
    B = len(windows)
    K1 = windows[0]["p"].shape[0]
    N = max(w["p"].shape[1] for w in windows)
    M = max(w["obstacles"].shape[0] for w in windows)
    out = {
        "p": torch.zeros(B, K1, N, 2), "v": torch.zeros(B, K1, N, 2), "a": torch.zeros(B, K1, N, 2),
        "present": torch.zeros(B, K1, N, dtype=torch.bool), "forced": torch.zeros(B, K1, N, dtype=torch.bool),
        "mask": torch.zeros(B, K1, N, dtype=torch.bool), "hist": torch.zeros(B, N, HISTORY, 6),
        "hist_ok": torch.zeros(B, N, HISTORY, dtype=torch.bool), "goal": torch.zeros(B, K1, N, 2),
        "v0": torch.zeros(B, N), "obstacles": torch.full((B, M, 2), 1.0e4),
    }
    for b, w in enumerate(windows):
        k = 0 if rotations is None else rotations[b]
        n = w["p"].shape[1]
        pres = w["present"][..., None]
        out["p"][b, :, :n] = _rot(w["p"], k) * pres
        out["v"][b, :, :n] = _rot(w["v"], k, is_vector=True)
        out["a"][b, :, :n] = _rot(w["a"], k, is_vector=True)
        for key in ("present", "forced", "mask"):
            out[key][b, :, :n] = w[key]
        h = w["hist"]
        hr = torch.cat([_rot(h[..., :2], k), _rot(h[..., 2:4], k, is_vector=True),
                        _rot(h[..., 4:6], k, is_vector=True)], -1)
        out["hist"][b, :n] = hr * w["hist_ok"][..., None]
        out["hist_ok"][b, :n] = w["hist_ok"]
        out["goal"][b, :, :n] = _rot(w["goal"], k)
        out["v0"][b, :n] = w["v0"]
        m = w["obstacles"].shape[0]
        if m:
            out["obstacles"][b, :m] = _rot(w["obstacles"], k)
    return WindowBatch(dt=dt, **out)


@dataclass
class TrainConfig:
    seed: int = 0
    window: int = 10  # frames per window (valid_steps 10)
    batch: int = 16  # 16 on GC in the paper
    lr: float = 0.01  # trajectory network; physics parameters at lr / 2
    lr_step_epochs: int = 8
    lr_gamma: float = 0.7
    batches_per_epoch: int = 10
    # "physics" stage (network frozen, no backward through it): more batches so the ODE's cell embeddings can grow from
    # their 0.01 initialisation; the released stage lasts `patience` full epochs. The network's budget is unchanged.
    physics_batches_per_epoch: int = 30
    stage_epochs: dict[str, int] = field(default_factory=lambda: {"trajectory": 10, "physics": 5, "joint": 15})
    patience: int = 4
    density: bool = True  # False: the no-density ablation (lambda2 = 0 throughout)
    val_windows: int = 32
    val_rollout_seconds: float = 5.0
    grad_clip: float = 1.0
    augment: bool = True


@dataclass
class TrainResult:
    model: STDDN
    history: list[dict]
    best_epoch: int
    best_val_mae: float
    seconds: float


def _val_rollout_mae(model: STDDN, val_clips: list[Clip], seconds: float) -> float:
    from .methods import Learned
    from .metrics import valid_mask
    from .rollout import simulate

    errs = []
    for clip in val_clips:
        c = clip.crop(0, min(clip.num_frames, int(round(seconds / clip.dt))))
        r = simulate(c, Learned(model.micro, "val"))
        m = valid_mask(r.positions, c, WARMUP)
        e = np.linalg.norm(r.positions - c.positions, axis=-1)[m]
        errs.append(float(e.mean()) if e.size else 0.0)
    model.micro.train()
    return float(np.mean(errs))


def train(model: STDDN, train_clips: list[Clip], val_clips: list[Clip], cfg: TrainConfig,
          val_rollout_clips: list[Clip] | None = None, progress: Progress | None = None,
          log: Callable[[dict], None] | None = None) -> TrainResult:
    """Train ``model`` in place (the best validation checkpoint is loaded at the end). Validation windows come from
    ``val_clips``, the checkpoint criterion from rollouts of ``val_rollout_clips`` (default: ``val_clips``)."""
    roll_clips = val_rollout_clips if val_rollout_clips is not None else val_clips
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    cts = [ClipTensors.from_clip(c) for c in train_clips]
    vts = [ClipTensors.from_clip(c) for c in val_clips]
    dt = train_clips[0].dt
    vrng = np.random.default_rng(12345)
    val_w = []
    for i in range(cfg.val_windows):
        ct = vts[i % len(vts)]
        val_w.append(make_window(ct, int(vrng.integers(0, ct.num_frames - cfg.window)), cfg.window))
    val_batches = [collate(val_w[i:i + cfg.batch], dt) for i in range(0, len(val_w), cfg.batch)]
    phys_params = [model.ode.node_w, model.ode.node_b, model.ode.temperature]
    opt_traj = torch.optim.Adam(model.micro.parameters(), lr=cfg.lr)
    opt_phys = torch.optim.Adam(phys_params, lr=cfg.lr / 2)
    sched = [torch.optim.lr_scheduler.StepLR(o, cfg.lr_step_epochs, cfg.lr_gamma)
             for o in ((opt_traj, opt_phys) if cfg.density else (opt_traj,))]
    stages = list(model.cfg.stages) if cfg.density else ["trajectory", "joint"]
    stage_epochs = dict(cfg.stage_epochs)
    if not cfg.density:  # same number of epochs, lambda2 = 0
        stage_epochs = {"trajectory": cfg.stage_epochs["trajectory"],
                        "joint": cfg.stage_epochs["physics"] + cfg.stage_epochs["joint"]}
    total_epochs = sum(stage_epochs[s] for s in stages)
    history: list[dict] = []
    best = (math.inf, -1, copy.deepcopy(model.state_dict()))
    t_start = time.perf_counter()
    epoch = 0
    for stage in stages:
        lam1, lam2 = model.cfg.stages[stage]
        if not cfg.density:
            lam1, lam2 = 1.0, 0.0
        best_stage, since = math.inf, 0
        for _ in range(stage_epochs[stage]):
            model.train()
            sums: dict[str, float] = {}
            n_batches = cfg.physics_batches_per_epoch if (cfg.density and stage == "physics") else cfg.batches_per_epoch
            for _b in range(n_batches):
                ws = []
                for _k in range(cfg.batch):
                    ct = cts[int(rng.integers(len(cts)))]
                    ws.append(make_window(ct, int(rng.integers(0, ct.num_frames - cfg.window)), cfg.window))
                rots = [int(r) for r in rng.integers(0, 4, cfg.batch)] if cfg.augment else None
                batch = collate(ws, dt, rots)
                opt_traj.zero_grad()
                opt_phys.zero_grad()
                # what each stage back-propagates and updates (released supervisor); the ablation (lambda2 = 0
                # throughout) updates the network alone, as the "trajectory" stage does
                train_net = not (cfg.density and stage == "physics")  # physics: network frozen, L_rho trains the ODE
                train_ode = cfg.density and stage != "trajectory"
                if cfg.density and stage == "trajectory":
                    l1, l2 = 1.0, 0.0  # trajectory terms only
                elif cfg.density and stage == "physics":
                    l1, l2 = 0.0, 1.0
                else:
                    l1, l2 = lam1, lam2
                out = window_loss(model, batch, l1, l2, train_net=train_net)
                out.losses["total" if train_net else "rho"].backward()
                if train_net:
                    torch.nn.utils.clip_grad_norm_(model.micro.parameters(), cfg.grad_clip)
                    opt_traj.step()
                if train_ode:
                    torch.nn.utils.clip_grad_norm_(phys_params, cfg.grad_clip)
                    opt_phys.step()
                    model.ode.project_temperature()
                for k, v in out.losses.items():
                    sums[k] = sums.get(k, 0.0) + float(v.detach())
            for s in sched:
                s.step()
            model.eval()
            vs: dict[str, float] = {}
            with torch.no_grad():
                for vb in val_batches:
                    vo = window_loss(model, vb, 1.0, 1.0 if cfg.density else 0.0)
                    for k, v in vo.losses.items():
                        vs[k] = vs.get(k, 0.0) + float(v) / len(val_batches)
            val_mae = _val_rollout_mae(model, roll_clips, cfg.val_rollout_seconds)
            rec = {"epoch": epoch, "stage": stage, "lam1": lam1, "lam2": lam2,
                   **{f"train_{k}": v / n_batches for k, v in sums.items()},
                   **{f"val_{k}": v for k, v in vs.items()}, "val_rollout_mae": val_mae,
                   "T": float(model.ode.T.detach()), "elapsed_s": round(time.perf_counter() - t_start, 1)}
            history.append(rec)
            if log is not None:
                log(rec)
            if val_mae < best[0]:
                best = (val_mae, epoch, copy.deepcopy(model.state_dict()))
            metric = {"trajectory": vs["a"] + vs["p"], "physics": vs.get("rho", 0.0),
                      "joint": vs["a"] + vs["p"] + vs.get("rho", 0.0)}[stage]
            epoch += 1
            report(progress, epoch / total_epochs, f"{stage} epoch {epoch}/{total_epochs}: val MAE {val_mae:.3f} m")
            if metric < best_stage - 1e-6:
                best_stage, since = metric, 0
            else:
                since += 1
                if since >= cfg.patience:
                    break
    model.load_state_dict(best[2])
    model.eval()
    return TrainResult(model, history, best[1], best[0], time.perf_counter() - t_start)


def loss_gradient_norms(model: STDDN, batch: WindowBatch) -> dict[str, float]:
    """How strongly each loss term pulls on the trajectory network: the gradient norm over ``model.micro``'s
    parameters of the acceleration term, the position term and the density term (lambda = 1 each), and the density
    term relative to the other two. Diagnoses whether the density ODE can guide the network at all."""
    was_training = model.training
    model.eval()
    out = window_loss(model, batch, 1.0, 1.0)
    norms = {}
    for key in ("a", "p", "rho"):
        model.zero_grad()
        out.losses[key].backward(retain_graph=True)
        sq = sum(float((p.grad**2).sum()) for p in model.micro.parameters() if p.grad is not None)
        norms[key] = math.sqrt(sq)
    model.zero_grad()
    model.train(was_training)
    with torch.no_grad():  # how well the ODE models the density flow: vs "the density stays as at the window's start"
        rg = out.rho_gt
        still = physics_loss(rg[:, :1].expand_as(rg)[:, 1:], rg[:, 1:], model.cfg.density_weight)
    return {"grad_a": norms["a"], "grad_p": norms["p"], "grad_rho": norms["rho"],
            "rho_over_a": norms["rho"] / max(norms["a"], 1e-30), "rho_over_p": norms["rho"] / max(norms["p"], 1e-30),
            "T": float(model.ode.T.detach()), "loss_rho": float(out.losses["rho"].detach()),
            "loss_rho_still": float(still)}
