"""Training the prior and the victims, and evaluating them.

- :func:`train_prior`: the small CNN on the prior's pretraining set (:func:`backend.robustness.bait.data.prior_set`:
  ten outlines that are not target classes), cross-entropy over its 10 outputs.
- :func:`train_victim`: a victim trains on a (protected) training set with the true labels, from scratch or
  fine-tuning every layer from the prior with a fresh 10-way head (:class:`VictimConfig`), no augmentation; its
  clean test accuracy is the protection's measure (lower = better protected).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ...errors import InputError
from .data import PRIOR_SHAPES
from .nets import SmallCNN, from_prior
from .perturb import accuracy, to_float

INITS = ("scratch", "pretrained")


@dataclass(frozen=True)
class VictimConfig:
    """A victim's training: ``epochs`` over the set in batches of ``batch``, Adam with ``lr`` (scratch) or
    ``finetune_lr`` (from the prior)."""

    epochs: int = 8
    batch: int = 64
    lr: float = 2e-3
    finetune_lr: float = 2e-3

    def __post_init__(self) -> None:
        if not 1 <= int(self.epochs) <= 200:
            raise InputError(f"epochs must be 1-200; got {self.epochs}.")


def train_victim(images: np.ndarray, labels: np.ndarray, init: str, prior_state: dict[str, torch.Tensor] | None,
                 seed: int, config: VictimConfig = VictimConfig()) -> SmallCNN:
    """A victim trained on uint8 ``images [N, 32, 32, 3]`` with ``labels [N]``; ``init`` ``scratch`` or
    ``pretrained``."""
    if init not in INITS:
        raise InputError(f"init must be one of {', '.join(INITS)}; got {init!r}.")
    net = from_prior(prior_state if init == "pretrained" else None, seed=1000 + seed)
    lr = config.finetune_lr if init == "pretrained" else config.lr
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    x, y = to_float(images), torch.from_numpy(np.asarray(labels, dtype=np.int64))
    gen = torch.Generator().manual_seed(2000 + seed)
    net.train()
    for _ in range(config.epochs):
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), config.batch):
            idx = perm[i:i + config.batch]
            loss = F.cross_entropy(net(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net.eval()


def train_prior(images: np.ndarray, labels: np.ndarray, epochs: int = 10, seed: int = 0, lr: float = 2e-3,
                batch: int = 64) -> tuple[SmallCNN, float]:
    """The prior: the small CNN classifying the :data:`~backend.robustness.bait.data.PRIOR_SHAPES` outlines (10
    classes, none a target class); returns it and its training accuracy."""
    torch.manual_seed(seed)
    net = SmallCNN(len(PRIOR_SHAPES))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    x, y = to_float(images), torch.from_numpy(labels)
    gen = torch.Generator().manual_seed(seed)
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch):
            idx = perm[i:i + batch]
            loss = F.cross_entropy(net(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net.eval(), accuracy(net, images, labels)


def train_effnet_victim(images: np.ndarray, labels: np.ndarray, seed: int, epochs: int = 3, size: int = 96,
                        lr: float = 1e-4, batch: int = 32) -> torch.nn.Module:
    """The full tier's real pretrained prior: the embedded ImageNet EfficientNet-Lite0 (``backend.models``) with a
    fresh 10-way head, every layer fine-tuned on uint8 ``images`` upsampled to ``size`` px (input in [-1, 1])."""
    from ...models.classifier import load_classifier

    model = load_classifier(None).model
    torch.manual_seed(1000 + seed)
    model._fc = torch.nn.Linear(model._fc.in_features, 10)
    net = _Resized(model, size)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    x, y = to_float(images), torch.from_numpy(np.asarray(labels, dtype=np.int64))
    gen = torch.Generator().manual_seed(2000 + seed)
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch):
            idx = perm[i:i + batch]
            loss = F.cross_entropy(net(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net.eval()


class _Resized(torch.nn.Module):
    """``[B, 3, h, w]`` in [0, 1] -> the wrapped ImageNet model at ``size`` px, input scaled to [-1, 1]."""

    def __init__(self, model: torch.nn.Module, size: int) -> None:
        super().__init__()
        self.model, self.size = model, size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.interpolate(x, size=(self.size, self.size), mode="bilinear", align_corners=False)
        return self.model(x * 2 - 1)
