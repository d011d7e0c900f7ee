"""A small CLIP-style dual encoder, its contrastive training on a planted corpus, and the model bias it carries.

- Image tower: three 3 x 3 convolutions (8, 16, 32 channels; stride 2, pool, pool), global average pooling, a linear
  map to ``dim``; input float ``[B, 3, 24, 24]`` in [0, 1].
- Text tower: a bag of words (``EmbeddingBag``, mean) over :data:`backend.data.laionaudit.planted.VOCAB` and a
  linear map to ``dim``; input token ids ``[B, L]`` padded with -1.
- Loss: symmetric InfoNCE over the batch with a learned temperature (CLIP's), AdamW.

Model bias of concept ``c`` (the paper's CLIP measure): with ``t_c`` the normalised text embedding of the concept's
prompt and ``s_i = cos(t_c, v_i)`` over the clean evaluation figures,
``d(c) = (mean_{female} s - mean_{male} s) / std_{all} s``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .planted import VOCAB


@dataclass(frozen=True)
class DualConfig:
    """Sizes and training schedule (the defaults are what ``python -m backend.train laionaudit`` uses)."""

    dim: int = 32
    width: int = 32
    epochs: int = 18
    batch: int = 512
    lr: float = 3e-3
    weight_decay: float = 1e-4
    max_scale: float = 100.0

    def to_dict(self) -> dict:
        return asdict(self)


class DualEncoder(nn.Module):
    """Image and text towers into one ``dim``-dimensional space (see the module docstring)."""

    def __init__(self, config: DualConfig = DualConfig()) -> None:
        super().__init__()
        w = config.width
        self.image = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, w, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(w, config.dim))
        self.words = nn.EmbeddingBag(len(VOCAB), w, mode="mean")
        nn.init.normal_(self.words.weight, std=0.02)  # small: a word's direction is what training puts there
        self.text_proj = nn.Linear(w, config.dim)
        self.logit_scale = nn.Parameter(torch.tensor(float(np.log(1 / 0.07))))

    def encode_image(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, 3, 24, 24]`` -> unit vectors ``[B, dim]``."""
        return F.normalize(self.image(x), dim=-1)

    def encode_text(self, ids: torch.Tensor) -> torch.Tensor:
        """Token ids ``[B, L]`` (-1 = padding) -> unit vectors ``[B, dim]``."""
        mask = ids >= 0
        flat = ids[mask]
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), mask.sum(1).cumsum(0)[:-1]])
        return F.normalize(self.text_proj(self.words(flat, offsets)), dim=-1)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def tokenize(captions: list[str], length: int = 12) -> torch.Tensor:
    """Token ids ``[B, length]`` over :data:`VOCAB` (unknown words -> 0, padding -1)."""
    index = {w: i for i, w in enumerate(VOCAB)}
    out = torch.full((len(captions), length), -1, dtype=torch.long)
    for i, c in enumerate(captions):
        ids = [index.get(w, 0) for w in c.lower().split()][:length]
        out[i, :len(ids)] = torch.tensor(ids, dtype=torch.long)
    return out


def to_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 ``[N, H, W, 3]`` -> float ``[N, 3, H, W]`` in [0, 1]."""
    return torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0)


def train(images: np.ndarray, captions: list[str], config: DualConfig = DualConfig(), seed: int = 0,
          progress=None) -> tuple[DualEncoder, list[float]]:  # noqa: ANN001 - a (fraction, message) callable
    """Train a :class:`DualEncoder` on ``(images [N, 24, 24, 3] uint8, captions [N])``; returns it and the mean loss
    per epoch. Deterministic for a given seed (initialisation and batch order)."""
    torch.manual_seed(seed)
    model = DualEncoder(config)
    x, t = to_tensor(images), tokenize(captions)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    g = torch.Generator().manual_seed(seed)
    n = len(captions)
    steps = config.epochs * max(1, n // config.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, config.lr, total_steps=steps, pct_start=0.15)
    losses, step = [], 0
    for epoch in range(config.epochs):
        perm = torch.randperm(n, generator=g)
        tot = 0.0
        for b in range(n // config.batch):
            idx = perm[b * config.batch:(b + 1) * config.batch]
            v, w = model.encode_image(x[idx]), model.encode_text(t[idx])
            logits = model.logit_scale.exp().clamp(max=config.max_scale) * v @ w.T
            labels = torch.arange(len(idx))
            loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            tot += float(loss.detach())
        losses.append(tot / max(1, n // config.batch))
        if progress is not None:
            progress((epoch + 1) / config.epochs, f"epoch {epoch + 1}: loss {losses[-1]:.3f}")
    return model.eval(), losses


@torch.no_grad()
def model_bias(model: DualEncoder, prompts: list[str], images: np.ndarray, female: np.ndarray) -> np.ndarray:
    """``d(c)`` per prompt ``[C]`` over evaluation ``images [M, 24, 24, 3]`` with ``female [M]`` (module docstring)."""
    v = model.encode_image(to_tensor(images))
    t = model.encode_text(tokenize(prompts))
    s = (t @ v.T).numpy().astype(float)  # [C, M]
    f = np.asarray(female, bool)
    return (s[:, f].mean(1) - s[:, ~f].mean(1)) / s.std(1)


@torch.no_grad()
def retrieval_accuracy(model: DualEncoder, images: np.ndarray, captions: list[str], batch: int = 256) -> float:
    """Image -> caption top-1 accuracy within batches of ``batch`` (a sanity check that the towers aligned)."""
    hits, total = 0, 0
    for s in range(0, len(captions) - batch + 1, batch):
        v = model.encode_image(to_tensor(images[s:s + batch]))
        w = model.encode_text(tokenize(captions[s:s + batch]))
        pred = (v @ w.T).argmax(1)
        cap = captions[s:s + batch]
        hits += sum(cap[int(p)] == cap[i] for i, p in enumerate(pred))
        total += batch
    return hits / max(1, total)


def linear_fit(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Least-squares line ``y = slope x + intercept`` and its R^2 (the share of variance the line explains)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((resid ** 2).sum()) / ss if ss > 0 else 0.0
    return {"slope": float(slope), "intercept": float(intercept), "r2": r2}
