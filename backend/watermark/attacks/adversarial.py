"""Adversarial post-processing (WEvade, Jiang, Zhang, Gong, "Evading Watermark based Detection of AI-Generated
Content", CCS 2023, arXiv 2305.03807), the ``wevade-w`` and ``wevade-bq`` steps of an attack chain:

- ``wevade-w:<eps>``: white-box, the worst case. PGD on the learned decoder within an L-inf ball of ``eps`` (in 0-255
  units) toward a random target string (WEvade-W-II), stopping once the image is no longer detected.
- ``wevade-bq:<queries>``: black-box with a query budget (WEvade-B-Q). Only the detector's yes/no answer is used: JPEG
  initialisation (lower and lower quality until the detector says no), then HopSkipJump (Chen, Jordan, Wainwright,
  S&P 2020, arXiv 1904.02144) moves the evading image back toward the watermarked one, L-inf geometry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from backend.errors import InputError
from backend.runtime import Progress, report
from backend.watermark.attacks.image import jpeg


@dataclass
class AdversarialContext:
    """What an adversarial attack may use. ``detect(images) -> bool array`` is the black-box oracle (one query per
    image); ``decoder_logits`` (torch, differentiable, images ``(B,3,H,W)`` in [0,1] -> ``(B,n)``) is the white-box
    access, available only for learned backends."""

    detect: Callable[[list[np.ndarray]], np.ndarray]
    n_bits: int
    decoder_logits: Callable | None = None
    progress: Progress | None = None
    queries_used: int = 0
    log: dict = field(default_factory=dict)


def white_box_attack(img: np.ndarray, eps: float, ctx: AdversarialContext, seed: int = 0, steps: int = 50,
                     step_size: float | None = None) -> np.ndarray:
    """WEvade-W-II: PGD (L-inf radius ``eps`` in 0-255 units) pushing the decoded bits toward a random target string;
    stops early once the detector no longer fires. Returns the attacked uint8 image."""
    import torch

    if ctx.decoder_logits is None:
        raise InputError("The white-box attack needs a differentiable decoder (the learned backend).")
    rng = np.random.default_rng(seed)
    target = torch.from_numpy(rng.integers(0, 2, (1, ctx.n_bits)).astype(np.float32))
    x0 = torch.from_numpy(img).permute(2, 0, 1).unsqueeze(0).float() / 255.0
    e = eps / 255.0
    alpha = step_size / 255.0 if step_size is not None else max(e / 10.0, 0.25 / 255.0)
    delta = torch.zeros_like(x0, requires_grad=True)
    best = img
    for step in range(steps):
        logits = ctx.decoder_logits((x0 + delta).clamp(0, 1))
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
        (grad,) = torch.autograd.grad(loss, delta)
        with torch.no_grad():
            delta -= alpha * grad.sign()
            delta.clamp_(-e, e)
            delta.copy_((x0 + delta).clamp(0, 1) - x0)
        if step % 5 == 4 or step == steps - 1:
            cand = ((x0 + delta).clamp(0, 1)[0].permute(1, 2, 0).detach().numpy() * 255.0).round().astype(np.uint8)
            best = cand
            ctx.queries_used += 1
            if not bool(ctx.detect([cand])[0]):
                break
        report(ctx.progress, (step + 1) / steps, f"white-box PGD step {step + 1}/{steps}")
    return best


def black_box_attack(img: np.ndarray, budget: float, ctx: AdversarialContext, seed: int = 0,
                     init_eval: int = 10, max_eval: int = 100) -> np.ndarray:
    """WEvade-B-Q: JPEG initialisation, then HopSkipJump (L-inf) on the detector's decision with at most ``budget``
    queries in total. Returns the best evading image found (the least perturbed), or the input if none evades."""
    budget = int(budget)
    rng = np.random.default_rng(seed)
    x = img.astype(np.float64) / 255.0
    used = 0

    def evades(batch: list[np.ndarray]) -> np.ndarray:
        nonlocal used
        used += len(batch)
        ctx.queries_used += len(batch)
        return ~np.asarray(ctx.detect([(np.clip(b, 0, 1) * 255.0).round().astype(np.uint8) for b in batch]))

    # 1) initialisation: JPEG at falling quality, then (WEvade's fallback) stronger and stronger noise
    x_adv = None
    for q in (90, 70, 50, 30, 10, 5, 3, 2, 1):
        cand = jpeg(img, q).astype(np.float64) / 255.0
        if evades([cand])[0]:
            x_adv = cand
            break
    if x_adv is None:
        for sigma in (0.1, 0.2, 0.3, 0.5):
            cand = np.clip(x + rng.normal(0, sigma, x.shape), 0, 1)
            if evades([cand])[0]:
                x_adv = cand
                break
    if x_adv is None:
        ctx.log["black_box"] = {"evaded": False, "queries": used}
        return img

    def boundary(x_out: np.ndarray) -> np.ndarray:
        """L-inf binary search between x (detected) and x_out (evading) -> a point just on the evading side."""
        dist = np.abs(x_out - x).max()
        lo, hi = 0.0, dist
        while hi - lo > max(dist * 1e-2, 0.5 / 255.0) and used < budget:
            mid = (lo + hi) / 2
            cand = x + np.clip(x_out - x, -mid, mid)
            if evades([cand])[0]:
                hi = mid
            else:
                lo = mid
        return x + np.clip(x_out - x, -hi, hi)

    x_adv = boundary(x_adv)
    best = x_adv
    it = 0
    while used < budget:
        it += 1
        dist = np.abs(x_adv - x).max()
        # HopSkipJump's probe radius is 1 % of the distance (L-inf); images reach the detector as 8-bit files, so a
        # probe must move pixels by at least 2/255 to be seen at all (a deviation for quantised black boxes)
        delta = max(0.01 * dist, 2.0 / 255.0)
        n_eval = int(min(max_eval, init_eval * np.sqrt(it), budget - used))
        if n_eval < 2:
            break
        u = rng.choice([-1.0, 1.0], size=(n_eval, *x.shape))
        phi = evades([x_adv + delta * ui for ui in u]).astype(np.float64) * 2 - 1
        if np.all(phi == phi[0]):
            grad = phi[0] * u.mean(axis=0)
        else:
            grad = ((phi - phi.mean())[:, None, None, None] * u).mean(axis=0)
        direction = np.sign(grad)
        step = 2.0 * dist / np.sqrt(it + 1)
        while used < budget:  # geometric step-size search
            cand = np.clip(x_adv + step * direction, 0, 1)
            if evades([cand])[0]:
                break
            step /= 2
            if step < 1e-4:
                break
        x_adv = boundary(np.clip(x_adv + step * direction, 0, 1)) if used < budget else x_adv
        if np.abs(x_adv - x).max() < np.abs(best - x).max():
            best = x_adv
        linf = 255 * np.abs(best - x).max()
        report(ctx.progress, used / budget, f"black-box: {used}/{budget} queries, L-inf {linf:.1f}")
    out = (np.clip(best, 0, 1) * 255.0).round().astype(np.uint8)
    ctx.log["black_box"] = {"evaded": True, "queries": used, "linf_255": float(np.abs(out.astype(int) - img).max())}
    return out


