"""Training of the Lyra miniature: the teacher on true renders, then students on the frozen teacher's decoded views
(Lyra's self-distillation) or on true renders (the upper bound), and the depth network of the warp baseline.

- :func:`train_depth`: the monocular depth network, L1 on inverse depth of the first view (true depth).
- :func:`train_teacher` ``(viewset, depth)``: the teacher's 3-D caches of every training view (the first view splatted
  at that depth), then L1 between the teacher's view at a random training offset and the true render there.
- :func:`teacher_views` ``(teacher, viewset)``: the frozen teacher's views ``[B, V, 3, H, W]`` at the viewset's
  offsets (computed once; the student's only supervision).
- :func:`train_student` ``(viewset, targets)``: the student's Gaussians rendered (:mod:`backend.scenes.splat`) at
  ``views`` random training offsets of each scene plus the first view, MSE to ``targets`` (the teacher's views, or the
  true renders for the upper bound) and to the first view.

Shapes: ``ViewSet.first [B, 3, H, W]``, targets ``[B, V, 3, H, W]``, offsets ``[B, V]`` degrees.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from ...runtime import CancelToken, Progress, checked, report
from ..splat import Gaussians
from .models import DepthNet, NetConfig, Student, Teacher, gaussians_from_maps, to_disparity
from .views import FAR, ViewSet, intrinsics, render_at, sky_colour


def student_gaussians(student: Student, teacher: Teacher, image: torch.Tensor) -> Gaussians:
    """One forward pass: first views ``[B, 3, H, W]`` (with the teacher's latent and depth of them) -> Gaussians
    ``[B, N, ...]``."""
    with torch.no_grad():
        latent = teacher.encode(image)
        disp = to_disparity(teacher.depth(image))
    return gaussians_from_maps(student(image, latent, disp), image, intrinsics(image.shape[-1]), disp)


@torch.no_grad()
def caches(teacher: Teacher, vs: ViewSet, chunk: int = 64) -> torch.Tensor:
    """The teacher's 3-D cache renders at every offset of ``vs``: ``[B, V, 4, H, W]``."""
    B, V = vs.deltas.shape
    out = []
    for s in range(0, B, chunk):
        img = vs.first[s:s + chunk]
        b = img.shape[0]
        out.append(teacher.cache(img.repeat_interleave(V, 0), vs.deltas[s:s + chunk].reshape(-1))
                   .view(b, V, 4, *img.shape[2:]))
    return torch.cat(out)


def train_teacher(vs: ViewSet, depth: DepthNet, cfg: NetConfig, steps: int, batch: int = 24, lr: float = 2e-3,
                  seed: int = 0, progress: Progress | None = None,
                  token: CancelToken | None = None) -> tuple[Teacher, dict, torch.Tensor]:
    """The teacher (its depth network given, frozen) and the 3-D caches of the training views ``[B, V, 4, H, W]``."""
    progress = checked(progress, token)
    torch.manual_seed(seed)
    size = vs.first.shape[-1]
    teacher = Teacher(cfg, size)
    teacher.depth.load_state_dict(depth.state_dict())
    teacher.depth.requires_grad_(False)
    report(progress, 0.0, "3-D caches of the training views")
    cache = caches(teacher, vs)
    opt = torch.optim.AdamW([p for p in teacher.parameters() if p.requires_grad], lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps, pct_start=0.1)
    g = torch.Generator().manual_seed(seed)
    B, V = vs.deltas.shape
    t0, losses = time.perf_counter(), []
    for step in range(steps):
        i = torch.randint(0, B, (batch,), generator=g)
        j = torch.randint(0, V, (batch,), generator=g)
        out = teacher(vs.first[i], vs.deltas[i, j], cache[i, j])
        loss = (out - vs.targets[i, j]).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if step % 20 == 0:
            report(progress, step / steps, f"teacher step {step}: L1 {sum(losses[-50:]) / len(losses[-50:]):.4f}")
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher, {"steps": steps, "final_l1": round(sum(losses[-50:]) / min(50, len(losses)), 5),
                     "seconds": round(time.perf_counter() - t0, 1)}, cache


@torch.no_grad()
def teacher_views(teacher: Teacher, vs: ViewSet, cache: torch.Tensor | None = None, chunk: int = 128) -> torch.Tensor:
    """The frozen teacher's decoded views at every offset of ``vs``: ``[B, V, 3, H, W]`` (``cache``: its 3-D caches
    there, computed when None)."""
    B, V = vs.deltas.shape
    out = []
    for s in range(0, B, chunk):
        img = vs.first[s:s + chunk]
        b = img.shape[0]
        c = None if cache is None else cache[s:s + chunk].reshape(b * V, 4, *img.shape[2:])
        out.append(teacher(img.repeat_interleave(V, 0), vs.deltas[s:s + chunk].reshape(-1), c)
                   .view(b, V, *img.shape[1:]))
    return torch.cat(out)


def train_student(vs: ViewSet, targets: torch.Tensor, teacher: Teacher, cfg: NetConfig, steps: int, batch: int = 6,
                  views: int = 3, lr: float = 2e-3, seed: int = 0, progress: Progress | None = None,
                  token: CancelToken | None = None) -> tuple[Student, dict]:
    """A student trained to render ``targets [B, V, 3, H, W]`` at the offsets ``vs.deltas`` (plus the first view,
    which is the input itself)."""
    progress = checked(progress, token)
    torch.manual_seed(seed)
    size = vs.first.shape[-1]
    student = Student(cfg)
    opt = torch.optim.AdamW(student.parameters(), lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps, pct_start=0.1)
    g = torch.Generator().manual_seed(seed + 1000)
    B, V = vs.deltas.shape
    t0, losses = time.perf_counter(), []
    for step in range(steps):
        i = torch.randint(0, B, (batch,), generator=g)
        j = torch.stack([torch.randperm(V, generator=g)[:views] for _ in range(batch)])
        img = vs.first[i]
        gs = student_gaussians(student, teacher, img)
        d = torch.cat([torch.zeros(batch, 1), vs.deltas[i[:, None], j]], 1)
        tg = torch.cat([img[:, None], targets[i[:, None], j]], 1)
        pred = render_at(gs, d, sky_colour(img), size)
        loss = ((pred - tg) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if step % 20 == 0:
            report(progress, step / steps, f"student step {step}: MSE {sum(losses[-20:]) / len(losses[-20:]):.5f}")
    student.eval()
    return student, {"steps": steps, "final_mse": round(sum(losses[-20:]) / min(20, len(losses)), 6),
                     "seconds": round(time.perf_counter() - t0, 1)}


def train_depth(vs: ViewSet, cfg: NetConfig, steps: int, batch: int = 16, lr: float = 2e-3, seed: int = 0,
                progress: Progress | None = None, token: CancelToken | None = None) -> tuple[DepthNet, dict]:
    progress = checked(progress, token)
    torch.manual_seed(seed)
    net = DepthNet(cfg)
    report(progress, 0.0, "depth")
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps, pct_start=0.1)
    g = torch.Generator().manual_seed(seed + 2000)
    t0, losses = time.perf_counter(), []
    for step in range(steps):
        if step % 20 == 0:
            report(progress, step / steps, f"depth step {step}")
        i = torch.randint(0, vs.first.shape[0], (batch,), generator=g)
        pred = net(vs.first[i])
        loss = (1 / pred - 1 / vs.first_depth[i].clamp(max=FAR)).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    net.eval()
    return net, {"steps": steps, "final_inverse_depth_l1": round(sum(losses[-50:]) / min(50, len(losses)), 5),
                 "seconds": round(time.perf_counter() - t0, 1)}


def state_half(module: Any) -> dict[str, torch.Tensor]:
    """A module's state dict in float16 (the shipped files)."""
    return {k: v.detach().to(torch.float16) for k, v in module.state_dict().items()}


def load_half(module: Any, tensors: dict[str, torch.Tensor]) -> Any:
    module.load_state_dict({k: v.float() for k, v in tensors.items()})
    module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    return module
