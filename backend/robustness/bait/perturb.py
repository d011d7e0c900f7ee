"""The perturbations: exact L-infinity projection in /255 units, sample-wise error-minimising noise (EMN) and the
targeted-poisoning baseline (BAIT's generator is :mod:`backend.robustness.bait.generator`).

Every method maps clean uint8 images ``[N, 32, 32, 3]`` (and labels ``[N]``) to protected uint8 images of the same
shape whose difference from the clean ones is at most ``eps`` grey levels per channel, exactly (:func:`protect_uint8`
rounds, clips to ``[-eps, eps]`` and then to ``[0, 255]``; clipping to the pixel range only shrinks the difference).

- EMN (Huang et al., "Unlearnable Examples", ICLR 2021, arXiv 2101.04898), sample-wise: min-min over the noise and a
  surrogate trained from scratch, alternating ``train_steps`` surrogate batches on the protected images with
  ``pgd_steps`` signed-gradient steps that lower each image's loss under its true label, until the surrogate fits
  the protected set (``stop_accuracy``) or ``rounds`` run out.
- Targeted poisoning (Fowl et al., "Adversarial Examples Make Strong Poisons", NeurIPS 2021, arXiv 2106.10807), the
  class-targeted variant: PGD towards the designated wrong label ``t(y) = (y + 1) mod 10`` against a crafting model
  fine-tuned on the clean set from the prior.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ...errors import InputError
from ...runtime import CancelToken, Progress, checked, report
from .data import N_CLASSES
from .nets import SmallCNN, from_prior

MAX_EPS = 32


def check_eps(eps: int) -> int:
    """``eps`` in /255 units: a whole number 1-32 (InputError otherwise)."""
    if isinstance(eps, bool) or not isinstance(eps, (int, np.integer)) or not 1 <= int(eps) <= MAX_EPS:
        raise InputError(f"epsilon is in /255 units and must be a whole number from 1 to {MAX_EPS}; got {eps!r}.")
    return int(eps)


def target_of(y: torch.Tensor, n_classes: int = N_CLASSES) -> torch.Tensor:
    """The designated wrong label of each true label: ``(y + 1) mod C``."""
    return (y + 1) % n_classes


def to_float(images: np.ndarray) -> torch.Tensor:
    """uint8 ``[N, H, W, 3]`` -> float ``[N, 3, H, W]`` in [0, 1]."""
    return torch.from_numpy(np.array(images, dtype=np.uint8)).permute(0, 3, 1, 2).float() / 255.0


def protect_uint8(images: np.ndarray, delta: torch.Tensor | np.ndarray, eps: int) -> np.ndarray:
    """Clean uint8 ``[N, H, W, 3]`` plus ``delta`` (float, [0, 1] units, ``[N, 3, H, W]`` or ``[N, H, W, 3]``) ->
    protected uint8, with ``|protected - clean| <= eps`` exactly: ``delta * 255`` rounded, clipped to ``[-eps, eps]``,
    added, clipped to ``[0, 255]``."""
    d = delta.detach().cpu().numpy() if isinstance(delta, torch.Tensor) else np.asarray(delta)
    if d.shape != images.shape:
        d = np.transpose(d, (0, 2, 3, 1))
    step = np.clip(np.rint(d.astype(np.float64) * 255.0), -eps, eps).astype(np.int16)
    return np.clip(images.astype(np.int16) + step, 0, 255).astype(np.uint8)


def linf(clean: np.ndarray, protected: np.ndarray) -> int:
    """The realised L-infinity distance in grey levels (/255 units)."""
    return int(np.abs(clean.astype(np.int16) - protected.astype(np.int16)).max()) if clean.size else 0


def _batches(n: int, batch: int, gen: torch.Generator):
    while True:
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n - batch + 1, batch):
            yield perm[i:i + batch]


# ----------------------------------------------------------------------------------------------------------- EMN
@dataclass(frozen=True)
class EMNConfig:
    """Huang et al.'s sample-wise min-min (their CIFAR-10 values: 10 surrogate steps per round, 20 PGD steps of
    0.8/255 at eps 8/255, stop at 99% accuracy); ours takes 5 PGD steps of ``eps / 5`` per round and at most 10 rounds."""

    train_steps: int = 10
    pgd_steps: int = 5
    rounds: int = 10
    stop_accuracy: float = 0.99
    lr: float = 2e-3
    batch: int = 64


def emn(images: np.ndarray, labels: np.ndarray, eps: int, config: EMNConfig = EMNConfig(), seed: int = 0,
        progress: Progress | None = None, token: CancelToken | None = None) -> tuple[np.ndarray, SmallCNN, dict]:
    """Sample-wise error-minimising noise: (protected uint8 images, the surrogate, log)."""
    eps = check_eps(eps)
    progress = checked(progress, token)
    x, y = to_float(images), torch.from_numpy(labels)
    gen = torch.Generator().manual_seed(seed)
    net = from_prior(None, seed=seed)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    e = eps / 255.0
    delta = torch.zeros_like(x)
    batches = _batches(len(x), config.batch, gen)
    acc = 0.0
    for r in range(config.rounds):
        net.train()
        for _ in range(config.train_steps):
            idx = next(batches)
            loss = F.cross_entropy(net((x[idx] + delta[idx]).clamp(0, 1)), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        for p in net.parameters():
            p.requires_grad_(False)
        for i in range(0, len(x), 256):
            xb, yb, db = x[i:i + 256], y[i:i + 256], delta[i:i + 256].clone()
            for _ in range(config.pgd_steps):
                db.requires_grad_(True)
                loss = F.cross_entropy(net((xb + db).clamp(0, 1)), yb)
                (g,) = torch.autograd.grad(loss, db)
                db = (db.detach() - e / 5 * g.sign()).clamp(-e, e)
                db = (xb + db).clamp(0, 1) - xb
            delta[i:i + 256] = db.detach()
        with torch.no_grad():
            acc = float((_predict(net, (x + delta).clamp(0, 1)) == y).float().mean())
        for p in net.parameters():
            p.requires_grad_(True)
        report(progress, min(1.0, (r + 1) / config.rounds), f"EMN round {r + 1}: surrogate accuracy {acc:.3f}")
        if acc >= config.stop_accuracy:
            break
    return protect_uint8(images, delta, eps), net.eval(), {"rounds": r + 1, "surrogate_accuracy": round(acc, 4)}


def emn_apply(net: SmallCNN, images: np.ndarray, labels: np.ndarray, eps: int, steps: int = 20) -> np.ndarray:
    """EMN noise for new images against a fixed (shipped) min-min surrogate: ``steps`` signed-gradient steps of
    ``eps / 5`` lowering the loss under ``labels``."""
    return _pgd(net, images, labels, eps, steps, sign=-1.0)


def _pgd(net: torch.nn.Module, images: np.ndarray, labels: np.ndarray, eps: int, steps: int, sign: float
         ) -> np.ndarray:
    eps = check_eps(eps)
    x, y, e = to_float(images), torch.as_tensor(labels, dtype=torch.long), eps / 255.0
    net.eval()
    for p in net.parameters():
        p.requires_grad_(False)
    d = torch.zeros_like(x)
    for _ in range(steps):
        d.requires_grad_(True)
        loss = F.cross_entropy(net((x + d).clamp(0, 1)), y)
        (g,) = torch.autograd.grad(loss, d)
        d = (d.detach() + sign * e / 5 * g.sign()).clamp(-e, e)
        d = (x + d).clamp(0, 1) - x
    for p in net.parameters():
        p.requires_grad_(True)
    return protect_uint8(images, d, eps)


# ------------------------------------------------------------------------------------------ targeted poisoning
def targeted_poison(crafting: SmallCNN, images: np.ndarray, labels: np.ndarray, eps: int, steps: int = 20
                    ) -> np.ndarray:
    """Fowl et al.'s class-targeted adversarial poison: PGD lowering the loss of ``t(y)`` under ``crafting``."""
    return _pgd(crafting, images, target_of(torch.as_tensor(labels)).numpy(), eps, steps, sign=-1.0)


@torch.no_grad()
def _predict(net: torch.nn.Module, x: torch.Tensor, batch: int = 512) -> torch.Tensor:
    net.eval()
    return torch.cat([net(x[i:i + batch]).argmax(1) for i in range(0, len(x), batch)])


def accuracy(net: torch.nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    """Top-1 accuracy on uint8 images."""
    return float((_predict(net, to_float(images)) == torch.from_numpy(labels)).float().mean())
