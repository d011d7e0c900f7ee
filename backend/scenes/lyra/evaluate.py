"""Metrics, the baselines and the evaluation of the Lyra miniature.

- :func:`psnr`, :func:`ssim` ``(pred [..., 3, H, W], target) -> [...]``: PSNR in dB (peak 1) and SSIM (Gaussian
  window 7, sigma 1.5, the usual constants; per channel, averaged).
- :func:`depth_warp` ``(image, depth, deltas)``: the first view splatted at predicted depth into the path's views.
- :func:`optimise_scene` ``(image, views, deltas, ...)``: per-scene optimisation of Gaussians on the teacher's views
  (Adam on every Gaussian parameter, initialised from the depth warp's discs), with a trace of (seconds, held-out
  PSNR) for time-to-equal-PSNR.
- :func:`evaluate_student`: a student's PSNR per held-out scene, averaged over the held-out views.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..splat import Gaussians
from .distill import student_gaussians
from .models import DepthNet, Student, Teacher, depth_warp_gaussians
from .views import ViewSet, intrinsics, render_at, sky_colour


def psnr(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """PSNR (dB, peak 1) over the last three dimensions ``[..., 3, H, W]``."""
    mse = ((pred.clamp(0, 1) - target) ** 2).mean((-3, -2, -1)).clamp_min(1e-10)
    return -10 * torch.log10(mse)


def _window(size: int = 7, sigma: float = 1.5) -> torch.Tensor:
    x = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    g = torch.exp(-x ** 2 / (2 * sigma ** 2))
    g = g / g.sum()
    return (g[:, None] * g[None, :])[None, None]


def ssim(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """SSIM over ``[..., 3, H, W]`` (Gaussian window 7, sigma 1.5, C1 = 0.01^2, C2 = 0.03^2; valid region), ``[...]``."""
    lead = pred.shape[:-3]
    C, H, W = pred.shape[-3:]
    x = pred.clamp(0, 1).reshape(-1, 1, H, W)
    y = target.reshape(-1, 1, H, W).to(x.dtype)
    w = _window().to(x.dtype)
    mx, my = F.conv2d(x, w), F.conv2d(y, w)
    sxx = F.conv2d(x * x, w) - mx ** 2
    syy = F.conv2d(y * y, w) - my ** 2
    sxy = F.conv2d(x * y, w) - mx * my
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    m = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx ** 2 + my ** 2 + c1) * (sxx + syy + c2))
    return m.mean((-3, -2, -1)).reshape(*lead, C).mean(-1)


@torch.no_grad()
def depth_warp(image: torch.Tensor, depth: torch.Tensor, deltas: torch.Tensor) -> torch.Tensor:
    """First views ``[B, 3, H, W]`` splatted at ``depth [B, H, W]`` into the views at ``deltas [B, V]``:
    ``[B, V, 3, H, W]``."""
    g = depth_warp_gaussians(image, depth, intrinsics(image.shape[-1]))
    return render_at(g, deltas, sky_colour(image), image.shape[-1])


@torch.no_grad()
def evaluate_student(student: Student, teacher: Teacher, ev: ViewSet) -> torch.Tensor:
    """PSNR per held-out scene ``[B]`` of a student's renders at ``ev``'s offsets against its true views."""
    g = student_gaussians(student, teacher, ev.first)
    pred = render_at(g, ev.deltas, sky_colour(ev.first), ev.first.shape[-1])
    return psnr(pred, ev.targets).mean(1)


@dataclass
class Optimised:
    """Per-scene optimisation of one scene: the final Gaussians, the trace ``[(seconds, psnr)]`` (seconds of
    optimisation only, the held-out evaluation excluded) and the steps."""

    gaussians: Gaussians
    trace: list[tuple[float, float]] = field(default_factory=list)
    steps: int = 0


def optimise_scene(image: torch.Tensor, views: torch.Tensor, deltas: torch.Tensor, depth_net: DepthNet,
                   steps: int = 200, lr: float = 0.02, eval_every: int = 10, eval_views: torch.Tensor | None = None,
                   eval_deltas: torch.Tensor | None = None, seed: int = 0, stride: int = 2) -> Optimised:
    """Fit Gaussians to one scene's supervision ``views [V, 3, H, W]`` at ``deltas [V]`` (the teacher's views; the
    first view ``image [3, H, W]`` is added at offset 0), from the depth warp's discs (``depth_net``'s depth, one disc
    per ``stride x stride`` cell: as many Gaussians as the student makes): Adam on
    positions, log-scales, quaternions, opacity and colour logits. With ``eval_views [E, 3, H, W]`` at
    ``eval_deltas [E]`` the trace records the held-out PSNR every ``eval_every`` steps."""
    torch.manual_seed(seed)
    size = image.shape[-1]
    K = intrinsics(size)
    t0 = time.perf_counter()
    with torch.no_grad():
        init = depth_warp_gaussians(image[None], depth_net(image[None]), K, stride=stride)
    means = init.means[0].clone().requires_grad_(True)
    log_s = torch.log(init.scales[0]).clone().requires_grad_(True)
    quats = init.quats[0].clone().requires_grad_(True)
    op = torch.logit(init.opacities[0].clamp(0.02, 0.9)).clone().requires_grad_(True)
    col = torch.logit(init.colors[0].clamp(0.02, 0.98)).clone().requires_grad_(True)
    opt = torch.optim.Adam([{"params": [means], "lr": lr * 0.1}, {"params": [log_s, quats, op, col], "lr": lr}])
    d = torch.cat([torch.zeros(1), deltas])[None]
    tg = torch.cat([image[None], views])[None]
    bg = sky_colour(image[None])

    def current() -> Gaussians:
        return Gaussians(means[None], torch.exp(log_s)[None], quats[None], torch.sigmoid(op)[None],
                         torch.sigmoid(col)[None])

    res = Optimised(current())
    elapsed = time.perf_counter() - t0
    for step in range(steps + 1):
        if eval_views is not None and step % eval_every == 0:
            with torch.no_grad():
                p = psnr(render_at(current(), eval_deltas[None], bg, size)[0], eval_views).mean()
            res.trace.append((elapsed, float(p)))
        if step == steps:
            break
        t = time.perf_counter()
        loss = ((render_at(current(), d, bg, size) - tg) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        elapsed += time.perf_counter() - t
    res.gaussians = current().detach()
    res.steps = steps
    return res


def time_to_reach(trace: list[tuple[float, float]], level: float) -> float | None:
    """The first time in ``trace`` at which the PSNR reaches ``level`` (None: never)."""
    for t, p in trace:
        if p >= level:
            return t
    return None
