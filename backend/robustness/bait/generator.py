"""BAIT's perturbation generator and its bi-level training through unrolled inner steps.

The generator ``G(x, y) -> delta`` (:class:`Generator`) is conditioned on the image and on its label (the designated
wrong label is the fixed function ``t(y) = (y + 1) mod 10`` of it): a learned per-class pattern (32 x 32, tiled over
larger images) plus an image-conditioned residual from a small U-Net (one down / up level, a skip connection, the
label embedded as a bias of the first layer), squashed by ``eps * tanh``; :func:`perturb.protect_uint8` then makes the
bound exact in uint8.

Training (:func:`train_generator`), each outer step on a batch ``(x, y)``:

1. inner level (normal alignment): the surrogate restarts from its warm start ``theta0`` (the prior fine-tuned on
   the clean training set, with its 10-way head: where a victim fine-tuning the prior ends up on clean data) and
   takes ``unroll`` SGD steps (learning rate ``inner_lr``) on ``(x + G(x, y), y)`` with the TRUE labels,
   functionally (:func:`torch.func.functional_call`, ``create_graph=True``), so the outer gradient flows through
   every inner step;
2. outer level (binding): the cross-entropy of the inner-trained surrogate towards ``t(y)`` on ``x + G(x, y)``;
   Adam on the generator's weights lowers it.

``unroll = 0`` is the ablation without the inner level (then the generator only makes targeted adversarial
perturbations against ``theta0``). The outer loss starts far above chance (``ln 10``: the warm start predicts the
true label confidently) and falls below it only once the perturbations bind the wrong label through the inner steps.
The inner learning rate is small because the surrogate's loss surface is sharp: three SGD steps of 0.01 already
raise its loss on the true labels (0.11 -> 0.57 on a protected-free batch), 0.1 collapses it to a uniform output
(the outer loss then sits at ``ln 10`` with no gradient), so larger rates stop being training.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, report
from .data import N_CLASSES
from .nets import SmallCNN
from .perturb import check_eps, protect_uint8, target_of, to_float

PATTERN = 32  # side of the per-class pattern (tiled over larger images)


class Generator(nn.Module):
    """``(x [B, 3, H, W] in [0, 1], y [B]) -> delta [B, 3, H, W]`` with ``|delta| < eps`` (``eps`` in [0, 1]
    units); any ``H, W >= 2``."""

    def __init__(self, n_classes: int = N_CLASSES, width: int = 8) -> None:
        super().__init__()
        w = width
        self.pattern = nn.Parameter(torch.zeros(n_classes, 3, PATTERN, PATTERN))
        self.embed = nn.Embedding(n_classes, w)
        self.enc = nn.Conv2d(3, w, 3, padding=1)
        self.down = nn.Conv2d(w, 2 * w, 3, stride=2, padding=1)
        self.mid = nn.Conv2d(2 * w, 2 * w, 3, padding=1)
        self.dec = nn.Conv2d(3 * w, w, 3, padding=1)
        self.out = nn.Conv2d(w, 3, 3, padding=1)
        nn.init.normal_(self.embed.weight, std=0.1)

    def forward(self, x: torch.Tensor, y: torch.Tensor, eps: float) -> torch.Tensor:
        h, w = x.shape[-2:]
        h1 = F.relu(self.enc(x * 2 - 1) + self.embed(y)[:, :, None, None])
        h2 = F.relu(self.mid(F.relu(self.down(h1))))
        up = F.interpolate(h2, size=(h, w), mode="bilinear", align_corners=False)
        res = self.out(F.relu(self.dec(torch.cat([up, h1], 1))))
        pat = self.pattern[y]
        if (h, w) != (PATTERN, PATTERN):
            reps = (-(-h // PATTERN), -(-w // PATTERN))
            pat = pat.repeat(1, 1, *reps)[..., :h, :w]
        return eps * torch.tanh(pat + res)


@dataclass(frozen=True)
class BaitConfig:
    """BAIT's bi-level training: ``iters`` outer Adam steps (learning rate ``lr``) on the generator over batches of
    ``batch`` images; each through ``unroll`` unrolled inner SGD steps (learning rate ``inner_lr``) of the
    surrogate, restarted from its warm start every outer step. The per-class pattern learns with ``pattern_lr``."""

    iters: int = 500
    unroll: int = 3
    inner_lr: float = 0.003
    lr: float = 0.005
    pattern_lr: float = 0.05
    batch: int = 128
    width: int = 8

    def __post_init__(self) -> None:
        if not 0 <= int(self.unroll) <= 10:
            raise InputError(f"unroll must be 0-10 inner steps; got {self.unroll}.")
        if int(self.iters) < 1:
            raise InputError(f"iters must be >= 1; got {self.iters}.")


def unrolled_outer_loss(surrogate: SmallCNN, theta0: dict[str, torch.Tensor], xp: torch.Tensor, y: torch.Tensor,
                        unroll: int, inner_lr: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The outer loss of protected images ``xp`` ``[B, 3, H, W]`` (a function of the generator's output): ``unroll``
    SGD steps from ``theta0`` on ``(xp, y)`` taken functionally with ``create_graph=True``, then the cross-entropy
    of the inner-trained surrogate towards ``t(y)`` on ``xp``; (loss, the inner-trained surrogate's logits)."""
    params = {k: v.detach().requires_grad_(True) for k, v in theta0.items()}
    for _ in range(int(unroll)):
        inner = F.cross_entropy(functional_call(surrogate, params, (xp,)), y)
        grads = torch.autograd.grad(inner, tuple(params.values()), create_graph=True)
        params = {k: v - inner_lr * g for (k, v), g in zip(params.items(), grads, strict=True)}
    logits = functional_call(surrogate, params, (xp,))
    return F.cross_entropy(logits, target_of(y)), logits


def train_generator(x: torch.Tensor, y: torch.Tensor, theta0: dict[str, torch.Tensor], eps: float,
                    config: BaitConfig = BaitConfig(), seed: int = 0, progress: Progress | None = None,
                    token: CancelToken | None = None) -> tuple[Generator, dict[str, Any]]:
    """Train a generator on images ``x`` ``[N, 3, 32, 32]`` in [0, 1] with labels ``y`` ``[N]`` against a
    surrogate warm-started from ``theta0`` (a :class:`SmallCNN` state with a 10-way head); ``eps`` in [0, 1] units.
    Returns the generator and its log (per outer step: outer loss, rate of the inner-trained surrogate predicting
    ``t(y)``)."""
    progress = checked(progress, token)
    torch.manual_seed(int(seed))
    gen = Generator(width=config.width)
    net_params = [p for n, p in gen.named_parameters() if n != "pattern"]
    opt = torch.optim.Adam([{"params": [gen.pattern], "lr": config.pattern_lr}, {"params": net_params}], lr=config.lr)
    surrogate = SmallCNN()
    surrogate.load_state_dict(theta0)
    surrogate.train()
    for p in surrogate.parameters():
        p.requires_grad_(False)
    rng = torch.Generator().manual_seed(int(seed))
    n, b = len(x), min(config.batch, len(x))
    order, pos = torch.randperm(n, generator=rng), 0
    outer_log, hit_log = [], []
    for it in range(config.iters):
        if pos + b > n:
            order, pos = torch.randperm(n, generator=rng), 0
        idx = order[pos:pos + b]
        pos += b
        xb, yb = x[idx], y[idx]
        xp = (xb + gen(xb, yb, eps)).clamp(0, 1)
        outer, logits = unrolled_outer_loss(surrogate, theta0, xp, yb, config.unroll, config.inner_lr)
        opt.zero_grad()
        outer.backward()
        opt.step()
        outer_log.append(float(outer.detach()))
        hit_log.append(float((logits.detach().argmax(1) == target_of(yb)).float().mean()))
        if it % 10 == 9 or it == config.iters - 1:
            report(progress, (it + 1) / config.iters, f"BAIT generator step {it + 1}: outer loss {outer_log[-1]:.3f}")
    tail = slice(-max(1, config.iters // 10), None)
    summary = {"iters": config.iters, "unroll": config.unroll, "chance_loss": round(float(np.log(N_CLASSES)), 4),
               "first_outer_loss": round(float(np.mean(outer_log[:5])), 4),
               "final_outer_loss": round(float(np.mean(outer_log[tail])), 4),
               "final_target_rate": round(float(np.mean(hit_log[tail])), 4)}
    return gen.eval(), {"summary": summary, "curve": [round(v, 4) for v in outer_log],
                        "target_rate": [round(v, 4) for v in hit_log]}


def train_bait(images: np.ndarray, labels: np.ndarray, theta0: dict[str, torch.Tensor], eps: int,
               config: BaitConfig = BaitConfig(), seed: int = 0, progress: Progress | None = None,
               token: CancelToken | None = None) -> tuple[np.ndarray, Generator, dict[str, Any]]:
    """BAIT on uint8 ``images`` ``[N, 32, 32, 3]`` with ``labels`` ``[N]`` at ``eps`` (/255): (the protected uint8
    images, the trained generator, its log)."""
    eps = check_eps(eps)
    x, y = to_float(images), torch.from_numpy(np.asarray(labels, dtype=np.int64))
    gen, log = train_generator(x, y, theta0, eps / 255.0, config, seed=seed, progress=progress, token=token)
    return protect_uint8(images, generate(gen, x, y, eps / 255.0), eps), gen, log


def bait_apply(gen: Generator, images: np.ndarray, labels: np.ndarray, eps: int) -> np.ndarray:
    """A trained generator's protection of new uint8 images ``[N, H, W, 3]`` (any size) with ``labels`` at ``eps``
    (/255): one forward pass, then the exact uint8 projection."""
    eps = check_eps(eps)
    x, y = to_float(images), torch.as_tensor(np.asarray(labels), dtype=torch.long)
    return protect_uint8(images, generate(gen, x, y, eps / 255.0), eps)


@torch.no_grad()
def generate(gen: Generator, x: torch.Tensor, y: torch.Tensor, eps: float, batch: int = 256) -> torch.Tensor:
    """The generator's perturbations ``[N, 3, H, W]`` (float, [0, 1] units) of images ``x`` with labels ``y``."""
    gen.eval()
    return torch.cat([gen(x[i:i + batch], y[i:i + batch], eps) for i in range(0, len(x), batch)])
